#!/usr/bin/env bash
# imgsmith with a real Docker engine (Debian's docker.io), started here on
# its own data root and socket and stopped by its PID:
#   - an image built with BuildKit from a debootstrapped Debian base, with
#     imgsmith-probe as its entrypoint;
#   - `analyze docker://NAME` equals `analyze` of the `docker save` file;
#   - final_bytes equals the regular-file bytes of `docker export`;
#   - `docker run`: the probe's advice on stderr, the app's output and exit
#     status unchanged, IMGSMITH_PROBE=require exits 3 without the app;
#   - gen's Dockerfile for examples/cuda-saxpy, built on local stand-ins of
#     NVIDIA's images (cuda_standins.sh), against a naive one-stage devel
#     Dockerfile: no devel in the final image, smaller, at most 50 MB over
#     its base. (gen's whole corpus is built and run by gen_corpus_test.sh.)
# The daemon's data root lives in CACHE_DIR/docker, so the stand-ins and
# BuildKit's cache survive between runs.
# Usage: docker_test.sh IMGSMITH CACHE_DIR SOURCE_DIR
# Without root, dockerd or a Debian root it skips with one line; in CI
# (CI=true) that is a failure instead.
set -u
bin=$1
cache=$2
source_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
docker=/usr/bin/docker  # Debian's client: the one with BuildKit (docs/docker-engine.md)

# shellcheck source=skip.sh
source "$here/skip.sh" docker
[ "$(id -u)" -eq 0 ] || skip "dockerd needs root"
command -v dockerd >/dev/null && [ -x "$docker" ] || skip "docker.io is not installed (scripts/setup.sh installs it)"
root_tar=$("$here/debootstrap_root.sh" "$cache/debootstrap") || skip "no Debian root could be made"

# shellcheck source=../cli/assert.sh
source "$here/../cli/assert.sh"
command -v ip >/dev/null || skip "ip (iproute2) is not installed (scripts/setup.sh installs it)"
# shellcheck source=dockerd.sh
source "$here/dockerd.sh"
start_test_dockerd "$cache/docker"


# ----- a base image and an app image built with BuildKit -----------------------
"$docker" import "$root_tar" imgsmith-test/bookworm:minbase >/dev/null ||
  { echo "FAIL: docker import"; exit 1; }
mkdir -p "$tmp/ctx"
"$bin" probe --write "$tmp/ctx/imgsmith-probe"
cat >"$tmp/ctx/Dockerfile" <<'EOF'
FROM imgsmith-test/bookworm:minbase
COPY imgsmith-probe /usr/local/bin/imgsmith-probe
RUN mkdir -p /opt/app && head -c 3000000 /dev/urandom > /opt/app/model.bin \
 && echo keep > /opt/app/keep.txt && cp /opt/app/keep.txt /opt/app/overwritten.txt
RUN rm /opt/app/model.bin && ln /opt/app/keep.txt /opt/app/keep-link.txt \
 && echo changed > /opt/app/overwritten.txt && rm -rf /usr/share/doc
ENTRYPOINT ["/usr/local/bin/imgsmith-probe", "--"]
CMD ["sh", "-c", "echo hello from the app; exit 7"]
EOF
DOCKER_BUILDKIT=1 "$docker" build -q --network none -t imgsmith-test/app:1 "$tmp/ctx" >"$tmp/build.log" 2>&1 ||
  { echo "FAIL: docker build"; tail -20 "$tmp/build.log"; exit 1; }

# ----- docker:// equals the docker save file -----------------------------------
expect "analyze docker://" 0 "$bin" analyze docker://imgsmith-test/app:1 --format json -o "$tmp/daemon.json" -q
"$docker" save -o "$tmp/app.tar" imgsmith-test/app:1
expect "analyze the docker save file" 0 "$bin" analyze "$tmp/app.tar" --format json -o "$tmp/file.json" -q
for field in "d['size']['final_bytes']" "d['size']['layers_bytes']" "d['size']['wasted_bytes']" \
             "d['dive']['efficiency']" "[l['size_bytes'] for l in d['layers']]" "d['image']['config_digest']" \
             "[(c['name'], c['bytes']) for c in d['categories']]" "d['format']"; do
  same "docker:// and the saved file agree on $field" "$field" "$tmp/daemon.json" "$tmp/file.json"
done
check "the 3 MB deleted in a later layer is waste" test "$(json_field "$tmp/daemon.json" "d['size']['wasted_bytes']")" -ge 3000000
expect "docker:// of an image the daemon lacks" 2 "$bin" analyze docker://imgsmith-test/none:1
check "it names the image and the daemon" grep -q "has no image 'imgsmith-test/none:1'" "$tmp/err"

# ----- docker:// read in place from the daemon's overlay2 storage ----------------
# An image with each kind of entry the storage keeps otherwise than a tar does:
# whiteouts (0/0 character devices), an opaque directory (an xattr), hard links
# (one inode), names that are not UTF-8 or hold a newline, a sparse file, a
# FIFO, a name longer than a tar header holds. Read in place (tar-split), by
# walking the layer directories, and streamed from `docker save`: the reports
# are the same but for how they were read.
mkdir -p "$tmp/odd"
cat >"$tmp/odd/Dockerfile" <<'EOF'
FROM imgsmith-test/bookworm:minbase
RUN mkdir -p /opt/s/keep /opt/s/gone /opt/o && head -c 200000 /dev/urandom > /opt/s/keep/big \
 && ln /opt/s/keep/big /opt/s/keep/big-link && echo x > /opt/s/gone/f && echo 1 > /opt/o/old1 && echo 2 > /opt/o/old2 \
 && printf latin > "$(printf '/opt/s/caf\351')" && printf nl > "$(printf '/opt/s/new\nline')" \
 && truncate -s 50M /opt/s/sparse && mkfifo /opt/s/fifo && d=/opt/s/$(printf 'd%.0s' $(seq 120)) \
 && mkdir -p "$d" && echo long > "$d/$(printf 'f%.0s' $(seq 150))"
RUN rm -rf /opt/s/gone /opt/o && mkdir /opt/o && echo new > /opt/o/n && ln /opt/s/keep/big /opt/s/third-link \
 && chmod 600 /opt/s/keep/big-link && rm -rf /usr/share/doc
EOF
DOCKER_BUILDKIT=1 "$docker" build -q --network none -t imgsmith-test/odd:1 "$tmp/odd" >"$tmp/build.log" 2>&1 ||
  { echo "FAIL: docker build of the odd-entries image"; tail -20 "$tmp/build.log"; exit 1; }
for mode in auto walk save; do
  expect "analyze docker:// --docker-read $mode" 0 "$bin" analyze docker://imgsmith-test/odd:1 --docker-read "$mode" \
    --format json -o "$tmp/odd-$mode.json" -q --top 1000
done
check "auto reads the daemon's storage in place, through tar-split" \
  grep -q '"read_via": *"docker storage (overlay2, tar-split)"' "$tmp/odd-auto.json"
check "tar-split reads are checked against the records" \
  grep -q '"verified": *"each file read against its size and CRC-64' "$tmp/odd-auto.json"
check "walk walks the layer directories" grep -q '"read_via": *"docker storage (overlay2, walked)"' "$tmp/odd-walk.json"
check "save streams docker save" grep -q '"read_via": *"docker save stream"' "$tmp/odd-save.json"
same_report() { python3 "$here/same_report.py" "$@"; }  # A B [KEY...]: agree but for io, source and the KEYs
check "in place (tar-split) and docker save give the same report" same_report "$tmp/odd-auto.json" "$tmp/odd-save.json"
# The imported base layer's tar lists its hard-linked files in tar's own
# order, which a walk cannot know: which name is "the file" may differ there,
# and so may that layer's listing (a hard link's entry names the file).
check "a walk gives the same report but for which hard-linked name is listed" \
  same_report "$tmp/odd-walk.json" "$tmp/odd-save.json" largest_files 'layers[].listing'
check "the walk saw the whiteouts, the opaque directory and the re-linked file" python3 - "$tmp/odd-walk.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
waste = {w["path"] for w in d["waste"]}
print(sorted(waste))
sys.exit(0 if {"/opt/s/gone", "/opt/o", "/opt/s/keep/big-link"} <= waste else 1)
EOF
expect "the text report says how the image was read" 0 "$bin" analyze docker://imgsmith-test/odd:1 -q
check "SOURCE names the daemon's storage" grep -q "read via docker storage (overlay2, tar-split)" "$tmp/out"

# A user who may use the socket but not read the storage gets docker save,
# and is told why; --docker-read storage then fails with the reason. The
# socket is opened to that user's group (65534) alone, never to everyone.
chgrp 65534 "$run" "$run/sock" && chmod 710 "$run" && chmod 660 "$run/sock" && install -m 755 "$bin" "$run/imgsmith"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$run/imgsmith" "$@"; }
expect "analyze docker:// as a user who cannot read the storage" 0 as_nobody analyze docker://imgsmith-test/odd:1 \
  --format json -q --top 1000
cp "$tmp/out" "$tmp/odd-nobody.json"
check "it falls back to docker save" grep -q '"read_via": *"docker save stream"' "$tmp/odd-nobody.json"
check "with the same report" same_report "$tmp/odd-nobody.json" "$tmp/odd-save.json"
expect "--docker-read storage as that user" 2 as_nobody analyze docker://imgsmith-test/odd:1 --docker-read storage -q
check "it says why the storage cannot be read" grep -q "cannot read the daemon's storage in place: this user may not read" "$tmp/err"
rm -f "$run/imgsmith"
chgrp 0 "$run" "$run/sock" && chmod 700 "$run"

# ----- final_bytes equals docker export ------------------------------------------
export_matches() {  # export_matches IMAGE: analyze's final_bytes against docker export
  local image=$1 cid verdict
  cid=$("$docker" create --network none "$image" sh)
  "$docker" export -o "$tmp/export.tar" "$cid"
  "$docker" rm "$cid" >/dev/null
  "$bin" analyze "docker://$image" --format json -o "$tmp/image.json" -q --top 100000
  verdict=$(python3 - "$tmp/export.tar" "$tmp/image.json" <<'EOF'
import json, sys, tarfile
# Docker writes (or mounts) these in every container, hiding the image's own
# copies (debootstrap leaves /etc/hostname and /etc/resolv.conf in a root):
# they are left out of both sides.
added = {"etc/hosts", "etc/hostname", "etc/resolv.conf", ".dockerenv"}
exported = 0
with tarfile.open(sys.argv[1]) as t:
    for m in t:
        if m.isreg() and m.name.lstrip("./") not in added:  # hard links are LNKTYPE: counted once
            exported += m.size
report = json.load(open(sys.argv[2]))
own = sum(f["bytes"] for f in report["largest_files"] if f["path"].lstrip("/") in added)
final = report["size"]["final_bytes"] - own
print(f"{final} {exported}")
EOF
)
  check "$image: final_bytes equals docker export's regular files (imgsmith, export: $verdict)" \
    test "${verdict% *}" = "${verdict#* }" -a -n "${verdict% *}"
}
for image in imgsmith-test/bookworm:minbase imgsmith-test/app:1 imgsmith-test/odd:1; do export_matches "$image"; done

# ----- docker run: the probe as entrypoint -----------------------------------------
"$docker" run --rm --network none imgsmith-test/app:1 >"$tmp/out" 2>"$tmp/err"
status=$?
check "the app's exit status comes through (7)" test "$status" = 7
check "the app's stdout comes through unchanged" test "$(cat "$tmp/out")" = "hello from the app"
check "the probe says there is no GPU, with the --gpus advice" grep -q -- "--gpus" "$tmp/err"
"$docker" run --rm --network none -e IMGSMITH_PROBE=require imgsmith-test/app:1 >"$tmp/out" 2>"$tmp/err"
status=$?
check "IMGSMITH_PROBE=require exits 3" test "$status" = 3
check "and never runs the app" test ! -s "$tmp/out"

# ----- findings true for the image at hand ------------------------------------------
# Two apt-get installs and a useradd rewrite dpkg's status, debconf's
# templates, ld.so.cache and /etc/passwd: waste dive counts, no finding. The
# installs reach Debian's mirror (--network host).
# build_image TAG DIR NETWORK: a BuildKit build, or a FAIL with its log's end.
build_image() {
  DOCKER_BUILDKIT=1 "$docker" build -q --network "$3" -t "$1" "$2" >"$tmp/build.log" 2>&1 && return 0
  echo "FAIL: docker build of $1 (--network $3)"
  tail -5 "$tmp/build.log"
  fail=$((fail + 1))
  return 1
}
mkdir -p "$tmp/churn"
printf '%s\n' "FROM imgsmith-test/bookworm:minbase" \
  "RUN apt-get update && apt-get install -y --no-install-recommends jq && rm -rf /var/lib/apt/lists/*" \
  "RUN apt-get update && apt-get install -y --no-install-recommends bzip2 && rm -rf /var/lib/apt/lists/*" \
  "RUN useradd --system --no-create-home svc" >"$tmp/churn/Dockerfile"
if build_image imgsmith-test/churn:1 "$tmp/churn" host; then
  expect "analyze the apt churn image" 0 "$bin" analyze docker://imgsmith-test/churn:1 --format json -o "$tmp/churn.json" -q
  check "apt churn: the state files' waste is counted and marked, and no finding names one" \
    python3 "$here/package_state_findings.py" "$tmp/churn.json"
  "$bin" analyze docker://imgsmith-test/churn:1 -q >"$tmp/churn.txt" 2>&1
  check "apt churn: the text report marks the state files' waste" grep -q "/var/lib/dpkg/status  \[package-manager state\]" "$tmp/churn.txt"
  sed -n '/^TOP WASTE/,/^$/p;/^FINDINGS/,/^$/p' "$tmp/churn.txt"
  "$docker" image rm imgsmith-test/churn:1 >/dev/null 2>&1
fi
# FROM scratch: what the user copied is the app wherever it lies, and a
# numpy feature matrix is data, not model weights.
mkdir -p "$tmp/scratch/data"
cp /bin/true "$tmp/scratch/hello"
# numpy's .npy format 1.0: magic, version, header length, the header padded
# to 128 bytes, then 500,000 float32 (numpy.save writes the same).
python3 -c 'import struct, sys
header = b"{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: (500000,), }".ljust(117) + b"\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + bytes(2000000))' \
  "$tmp/scratch/data/features.npy"
printf '%s\n' "FROM scratch" "COPY hello /bin/hello" "COPY data /data" >"$tmp/scratch/Dockerfile"
if build_image imgsmith-test/scratch:1 "$tmp/scratch" none; then
  expect "analyze the scratch image" 0 "$bin" analyze docker://imgsmith-test/scratch:1 --format csv -o "$tmp/scratch.csv" -q
  check "scratch: the copied /bin/hello is the app ($(grep '^/bin/hello,' "$tmp/scratch.csv"))" \
    grep -q '^/bin/hello,,[0-9]*,0,app,copied,' "$tmp/scratch.csv"
  check "scratch: numpy features are data ($(grep '^/data/features.npy,' "$tmp/scratch.csv"))" \
    grep -q '^/data/features.npy,,2000128,1,app,copied,' "$tmp/scratch.csv"
  "$docker" image rm imgsmith-test/scratch:1 >/dev/null 2>&1
fi

# ----- gen's Dockerfile, built on stand-ins of NVIDIA's images -------------------
cuda_dir=$(readlink -f /usr/local/cuda 2>/dev/null || true)
if [ ! -x "$cuda_dir/bin/nvcc" ]; then
  skip_part "the gen build of the CUDA example: no CUDA toolkit in /usr/local/cuda for the stand-ins"
else
  "$here/cuda_standins.sh" standin "$root_tar" "$cuda_dir" 13.0.0 || { echo "FAIL: the CUDA stand-ins"; fail=$((fail + 1)); }
  # The stand-ins are Debian inside: gen's package table for their OS says so.
  mkdir -p "$tmp/tables"
  python3 - "$source_dir/data/cuda-images.json" "$tmp/tables/cuda-images.json" <<'EOF'
import json, sys
tables = json.load(open(sys.argv[1]))
tables["os"]["ubuntu24.04"] = {
    "python": "3.11",
    "python_runtime": ["python3.11=3.11.*"],
    "python_build": ["python3.11=3.11.*", "python3.11-venv=3.11.*"],
    "cmake_build": ["cmake=3.25.*", "make=4.3-*", "g++=4:12.*"],
}
json.dump(tables, open(sys.argv[2], "w"))
EOF
  cp -r "$source_dir/examples/cuda-saxpy" "$tmp/saxpy"
  expect "gen for the CUDA example, on the stand-ins" 0 env IMGSMITH_GEN_TABLES="$tmp/tables" \
    "$bin" gen "$tmp/saxpy" --cuda 13.0 --os ubuntu24.04 --registry-mirror standin
  check "gen builds on the devel stand-in" grep -q "^FROM standin/nvidia/cuda:13.0.0-devel-ubuntu24.04 AS builder$" "$tmp/saxpy/Dockerfile"
  check "gen ships on the runtime stand-in" grep -q "^FROM standin/nvidia/cuda:13.0.0-runtime-ubuntu24.04$" "$tmp/saxpy/Dockerfile"
  if DOCKER_BUILDKIT=1 "$docker" build --network host -t imgsmith-test/saxpy:gen "$tmp/saxpy" >"$tmp/gen-build.log" 2>&1; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: docker build of gen's Dockerfile"; tail -25 "$tmp/gen-build.log"
  fi
  if DOCKER_BUILDKIT=1 "$docker" build --network host -f "$here/naive-devel.Dockerfile" -t imgsmith-test/saxpy:naive \
       "$tmp/saxpy" >"$tmp/naive-build.log" 2>&1; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: docker build of the naive Dockerfile"; tail -25 "$tmp/naive-build.log"
  fi
  expect "analyze docker:// of gen's image, gated" 0 "$bin" analyze docker://imgsmith-test/saxpy:gen \
    --deny devel-in-final --max-size 3GB --format json -o "$tmp/gen.json" -q
  check "no devel-in-final finding" test "$(json_field "$tmp/gen.json" "[f['id'] for f in d['findings'] if f['id'] == 'devel-in-final']")" = "[]"
  "$bin" analyze docker://imgsmith-test/saxpy:naive --format json -o "$tmp/naive.json" -q
  check "the naive image has devel-in-final" grep -q '"devel-in-final"' "$tmp/naive.json"
  "$bin" analyze docker://standin/nvidia/cuda:13.0.0-runtime-ubuntu24.04 --format json -o "$tmp/runtime.json" -q
  gen_bytes=$(json_field "$tmp/gen.json" "d['size']['final_bytes']")
  naive_bytes=$(json_field "$tmp/naive.json" "d['size']['final_bytes']")
  base_bytes=$(json_field "$tmp/runtime.json" "d['size']['final_bytes']")
  echo "docker: sizes (final bytes): gen's image $gen_bytes, naive devel image $naive_bytes, runtime stand-in $base_bytes"
  check "gen's image is smaller than the naive one" test "$gen_bytes" -lt "$naive_bytes"
  check "gen's image adds at most 50 MB to its base" test "$((gen_bytes - base_bytes))" -le 50000000
  "$docker" run --rm --network none imgsmith-test/saxpy:gen >"$tmp/out" 2>"$tmp/err"
  status=$?
  check "the generated image runs saxpy after the probe (exit $status: no GPU here)" grep -q "saxpy:" "$tmp/err"
  check "the probe's --gpus advice comes first" grep -q -- "--gpus" "$tmp/err"
  "$docker" run --rm --network none -e IMGSMITH_PROBE=require imgsmith-test/saxpy:gen >"$tmp/out" 2>"$tmp/err"
  status=$?
  check "the generated image under IMGSMITH_PROBE=require exits 3 ($status)" test "$status" = 3
  check "and never starts saxpy" test -z "$(grep "saxpy:" "$tmp/err")"
  export_matches imgsmith-test/saxpy:gen
  export_matches imgsmith-test/saxpy:naive
  "$docker" image rm imgsmith-test/saxpy:gen imgsmith-test/saxpy:naive >/dev/null 2>&1
fi
# ----- a Python project built offline from a wheelhouse ---------------------------
# No PyPI here: the project's one dependency is a wheel the test makes, and
# gen --wheelhouse has pip install from it alone, in a build with no network.
py_standin=standin/library/python:3.11-slim-bookworm
"$here/python_standin.sh" "$root_tar" || { echo "FAIL: the Python stand-in"; fail=$((fail + 1)); }
mkdir -p "$tmp/greeter/wheels" "$tmp/pytables"
printf 'greeting==1.0.0\n' >"$tmp/greeter/requirements.txt"
printf 'import greeting\nprint(greeting.hello())\n' >"$tmp/greeter/main.py"
python3 - "$tmp/greeter/wheels/greeting-1.0.0-py3-none-any.whl" <<'EOF'
import base64, hashlib, sys, zipfile
files = {
    "greeting/__init__.py": 'def hello():\n    return "hello from a wheel"\n',
    "greeting-1.0.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: greeting\nVersion: 1.0.0\n",
    "greeting-1.0.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: imgsmith-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = ""
for name, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record += f"{name},sha256={digest},{len(text.encode())}\n"
files["greeting-1.0.0.dist-info/RECORD"] = record + "greeting-1.0.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name, text in files.items():
        z.writestr(name, text)
EOF
python3 - "$source_dir/data/cuda-images.json" "$tmp/pytables/cuda-images.json" <<'EOF'
import json, sys
tables = json.load(open(sys.argv[1]))
tables["python"]["preferred"] = "3.11"  # the stand-in is Debian's Python
json.dump(tables, open(sys.argv[2], "w"))
EOF
expect "gen for an offline Python project" 0 env IMGSMITH_GEN_TABLES="$tmp/pytables" \
  "$bin" gen "$tmp/greeter" --wheelhouse wheels --registry-mirror standin
check "it is a CPU image on the Python stand-in" grep -q "^FROM $py_standin$" "$tmp/greeter/Dockerfile"
if DOCKER_BUILDKIT=1 "$docker" build --network none -t imgsmith-test/greeter:1 "$tmp/greeter" >"$tmp/greeter-build.log" 2>&1; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: the offline build of gen's Python Dockerfile"; tail -25 "$tmp/greeter-build.log"
fi
"$docker" run --rm --network none imgsmith-test/greeter:1 >"$tmp/out" 2>"$tmp/err"
check "the Python app runs from its venv" test "$(cat "$tmp/out")" = "hello from a wheel"
expect "analyze the Python image" 0 "$bin" analyze docker://imgsmith-test/greeter:1 --deny pip-cache --format json -o "$tmp/greeter.json" -q
check "the wheel's files are attributed to their distribution" \
  test "$(json_field "$tmp/greeter.json" "[c['bytes'] > 0 for k in d['categories'] if k['name'] == 'python' for c in k['children'] if c['name'] == 'greeting']")" = "[True]"
export_matches imgsmith-test/greeter:1
"$docker" image rm imgsmith-test/greeter:1 >/dev/null 2>&1

"$docker" image rm imgsmith-test/app:1 >/dev/null 2>&1

# ----- the machine as it was --------------------------------------------------------
stop_dockerd
check "docker0 survives the test's own daemon" ip link show docker0
check "the daemon's own bridge is gone" sh -c "! ip link show imgsm$$ >/dev/null 2>&1"

echo "docker: $pass passed, $fail failed"
finish
