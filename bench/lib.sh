# Shared by the benchmark scripts (sourced, not run). The caller sets
# make_image (examples/make_image.py), defines log(), works inside its
# workdir, and declares the array `generated`.

# many_files_spec TAG COUNT SIZE_MIN SIZE_MAX: an image spec on stdout.
# Layer 0 holds COUNT files of SIZE_MIN..SIZE_MAX bytes under
# usr/share/bench (subdirectories of 1,000); layer 1 overwrites every 100th
# from index 1001 on (~1%) and whites out subdirectory d0000, so there is
# waste and dive's inefficient list is long; layer 2 adds two files.
many_files_spec() {
    python3 - "$@" <<'PY'
import json, sys
tag, n, size_min, size_max = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
many = {"generate": "many", "dir": "usr/share/bench", "count": n,
        "size_min": size_min, "size_max": size_max}
json.dump({"tag": tag, "layers": [
    {"created_by": "ADD files.tar /usr/share/bench/", "entries": [
        {"path": "etc/os-release", "content": "ID=bench\nVERSION_ID=1\n"},
        dict(many, seed=1),
    ]},
    {"created_by": "RUN update-files", "entries": [
        dict(many, seed=2, start=1001, step=100),
        {"path": "usr/share/bench/.wh.d0000", "type": "whiteout"},
    ]},
    {"created_by": "RUN install-tool", "entries": [
        {"path": "usr/local/bin/tool", "size": 64 << 10, "seed": 3, "mode": "0755"},
        {"path": "etc/bench-done", "content": "done\n"},
    ]},
]}, sys.stdout, indent=1)
PY
}

# generate SPEC OUT MAKE_IMAGE_ARGS...: build OUT unless OUT.stamp records
# the same spec, generator and arguments.
generate() {
    local spec=$1 out=$2
    shift 2
    generated+=("$out")
    local want
    want=$({ cat -- "$spec" "$make_image"; printf '%s\n' "$@"; } | sha256sum | cut -d' ' -f1)
    if [[ -f "$out" && -f "$out.stamp" && "$(cat -- "$out.stamp")" == "$want" ]]; then
        log "using cached $PWD/$out"
        return
    fi
    log "generating $PWD/$out (minutes for millions of files) ..."
    rm -f -- "$out.stamp"
    python3 "$make_image" "$spec" "$out" "$@"
    printf '%s\n' "$want" >"$out.stamp"
}

# layer_members ARCHIVE FORMAT: the archive member of every layer, in
# manifest order, one per line (FORMAT: docker-legacy or oci-archive).
layer_members() {
    python3 - "$1" "$2" <<'PY'
import json, sys, tarfile
path, fmt = sys.argv[1:]
with tarfile.open(path, "r:") as tf:
    def load(name):
        return json.load(tf.extractfile(name))
    if fmt == "docker-legacy":
        layers = load("manifest.json")[0]["Layers"]
    else:
        digest = load("index.json")["manifests"][0]["digest"]
        manifest = load("blobs/sha256/" + digest.split(":", 1)[1])
        layers = ["blobs/sha256/" + l["digest"].split(":", 1)[1] for l in manifest["layers"]]
for name in layers:
    print(name)
PY
}
