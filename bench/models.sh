#!/usr/bin/env bash
# What reading model headers costs `imgsmith analyze`: the same image read
# with the models (the default) and with --no-models, side by side,
# alternating, on an image with multi-GB weights (two safetensors shards, a
# GGUF file, a torch.save-layout zip and an ONNX graph with inline weights,
# random bytes as weights are), stored uncompressed (the reader seeks over
# the weights) and with gzip layers (every byte is inflated either way).
# Prints the median times and their ratio against the 1.05 target.
#
# The exit status is 0 when every command ran, whether or not the target was
# met: the output is a report.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)
imgsmith="$repo_root/build/imgsmith"
workdir=/tmp/imgsmith-bench-models
gb=2
rounds=5

usage() {
  cat <<EOF
Usage: bench/models.sh [--imgsmith PATH] [--workdir DIR] [--gb N] [--rounds N]

  --imgsmith PATH  imgsmith binary (default: build/imgsmith in the repository)
  --workdir DIR    where the images are written and kept (default: $workdir)
  --gb N           bytes of weights in the image, in GB (default: $gb)
  --rounds N       runs of each variant; the median is reported (default: $rounds)
EOF
}

while (($#)); do
  case "$1" in
    --imgsmith) imgsmith=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --gb) gb=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/models.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ -x "$imgsmith" ] || { echo "bench/models.sh: no imgsmith at $imgsmith (build it first)" >&2; exit 2; }
mkdir -p "$workdir"
cd "$workdir"

if [ ! -f "models-$gb.tar" ] || [ ! -f "models-$gb.oci.tar" ]; then
  echo "writing an image with $gb GB of weights in $workdir ..." >&2
  python3 - "$gb" <<'PY'
import gzip, hashlib, io, json, os, struct, tarfile, zipfile
gb = float(__import__("sys").argv[1])
total = int(gb * 1e9)
chunk = os.urandom(1 << 24)
def random_bytes(n):
    reps, rest = divmod(n, len(chunk))
    return chunk * reps + chunk[:rest]
files = {}
# safetensors: two shards of F16 tensors, 40% of the weights each.
def safetensors(n_bytes, tensors):
    per = n_bytes // tensors // 2 * 2
    header, offset = {}, 0
    for i in range(tensors):
        header["layers.%d.weight" % i] = {"dtype": "F16", "shape": [per // 2], "data_offsets": [offset, offset + per]}
        offset += per
    text = json.dumps(header).encode(); text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + random_bytes(offset)
files["models/llm/model-00001-of-00002.safetensors"] = safetensors(int(total * 0.4), 200)
files["models/llm/model-00002-of-00002.safetensors"] = safetensors(int(total * 0.4), 200)
files["models/llm/config.json"] = json.dumps({"num_hidden_layers": 32, "num_attention_heads": 32,
    "hidden_size": 4096, "max_position_embeddings": 4096}).encode()
# GGUF: F32 tensors, 10%.
def gstr(s): s = s.encode(); return struct.pack("<Q", len(s)) + s
n = int(total * 0.1) // 4 // 256 * 256
head = b"GGUF" + struct.pack("<IQQ", 3, 1, 1) + gstr("general.architecture") + struct.pack("<I", 8) + gstr("llama")
head += gstr("w") + struct.pack("<IQIQ", 1, n, 0, 0)
head += b"\0" * (-len(head) % 32)
files["models/gguf/model.gguf"] = head + random_bytes(n * 4)
# torch.save's layout: data.pkl and one stored storage per tensor, 10%.
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
    z.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    for i in range(8):
        z.writestr("archive/data/%d" % i, random_bytes(int(total * 0.1) // 8))
    z.writestr("archive/version", b"3\n")
files["models/torch/model.pt"] = buf.getvalue()
def layer(compress):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as t:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
    plain = raw.getvalue()
    return plain, (gzip.compress(plain, compresslevel=1) if compress else plain)
plain, _ = layer(False)
diff_id = "sha256:" + hashlib.sha256(plain).hexdigest()
config = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                     "rootfs": {"type": "layers", "diff_ids": [diff_id]},
                     "history": [{"created_by": "COPY models /models"}]}).encode()
def add(t, name, data):
    info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
with tarfile.open("models-%s.tar" % __import__("sys").argv[1], "w") as t:
    add(t, "l0/layer.tar", plain); add(t, "config.json", config)
    add(t, "manifest.json", json.dumps([{"Config": "config.json", "RepoTags": ["models:bench"], "Layers": ["l0/layer.tar"]}]).encode())
gz = gzip.compress(plain, compresslevel=1)
def blob(data): return "sha256:" + hashlib.sha256(data).hexdigest()
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": blob(config), "size": len(config)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": blob(gz), "size": len(gz)}]}).encode()
index = json.dumps({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
    "digest": blob(manifest), "size": len(manifest), "annotations": {"org.opencontainers.image.ref.name": "bench"}}]}).encode()
with tarfile.open("models-%s.oci.tar" % __import__("sys").argv[1], "w") as t:
    add(t, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
    add(t, "index.json", index)
    for data in (config, manifest, gz):
        add(t, "blobs/sha256/" + blob(data)[7:], data)
PY
fi

# One sample is one run, timed alone; the two variants alternate run by run
# (which goes first alternates too), so that drift in the machine's speed
# falls on both alike. The uncompressed image, read in milliseconds, gets
# 40 times the rounds: one run's jitter is as large as the difference.
time_run() {
  local start end
  start=$(date +%s%N)
  "$imgsmith" analyze "$@" -q --format json -o /dev/null
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.6f\n", ns / 1e9 }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "bench/models.sh: imgsmith analyze with model headers vs --no-models, alternating run by run"
printf '%-34s %8s %12s %12s %8s  %s\n' "image" "runs" "--no-models" "models" "ratio" "target <= 1.05"
for image in "models-$gb.tar" "models-$gb.oci.tar"; do
  runs=$rounds
  [ "$image" = "models-$gb.tar" ] && runs=$((rounds * 40))
  "$imgsmith" analyze "$image" -q --format json -o /dev/null  # warm the page cache
  with=() without=()
  for i in $(seq "$runs"); do
    if ((i % 2)); then
      without+=("$(time_run "$image" --no-models)")
      with+=("$(time_run "$image")")
    else
      with+=("$(time_run "$image")")
      without+=("$(time_run "$image" --no-models)")
    fi
  done
  a=$(median "${without[@]}")
  b=$(median "${with[@]}")
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')
  verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.05) ? "PASS" : "FAIL" }')
  printf '%-34s %8s %11.4fs %11.4fs %8s  %s\n' "$image ($(du -h "$image" | cut -f1))" "$runs" "$a" "$b" "$ratio" "$verdict"
done
"$imgsmith" analyze "models-$gb.tar" -q | sed -n '/^MODELS/,/^  TOTAL/p'
