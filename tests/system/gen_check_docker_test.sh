#!/usr/bin/env bash
# gen's build-time check on a real Docker engine (started here on its own
# data root and stopped by its PID): a project whose wheel ships an
# extension linking libGL builds when gen knows the wheel (opencv-python:
# libgl1 installed in the final stage) and fails `docker build`, naming the
# file, libGL and libgl1, when gen does not know it. The wheel is a stand-in
# made here (a real ELF linking libGL.so.1); the base is the local stand-in
# of Docker's python image; apt reaches Debian's mirror.
# Usage: gen_check_docker_test.sh IMGSMITH CACHE_DIR
set -u
bin=$1
cache=$2
here=$(cd "$(dirname "$0")" && pwd)
docker=/usr/bin/docker

# shellcheck source=skip.sh
source "$here/skip.sh" gen_check_docker
[ "$(id -u)" -eq 0 ] || skip "dockerd needs root"
command -v dockerd >/dev/null && [ -x "$docker" ] || skip "docker.io is not installed (scripts/setup.sh installs it)"
command -v cc >/dev/null || skip "no C compiler for the stand-in extension"
root_tar=$("$here/debootstrap_root.sh" "$cache/debootstrap") || skip "no Debian root could be made"
# shellcheck source=../cli/assert.sh
source "$here/../cli/assert.sh"
# shellcheck source=dockerd.sh
source "$here/dockerd.sh"
start_test_dockerd "$cache/docker"
"$here/python_standin.sh" "$root_tar" || { echo "FAIL: the Python stand-in"; exit 1; }
python3 "$here/standin_gen_tables.py" "$here/../../data/cuda-images.json" "$tmp/tables"

# The extension: cv2/_native.cpython-311-x86_64-linux-gnu.so, linked
# against a stub that only lends it the soname libGL.so.1.
native=$tmp/native
mkdir -p "$native"
printf 'void glFlush(void) {}\n' >"$native/gl.c"
cc -shared -fPIC -Wl,-soname,libGL.so.1 -o "$native/libGL.so.1" "$native/gl.c"
printf 'extern void glFlush(void); void cv2_native(void) { glFlush(); }\n' >"$native/ext.c"
cc -shared -fPIC -Wl,--no-as-needed -o "$native/_native.cpython-311-x86_64-linux-gnu.so" \
  "$native/ext.c" "$native/libGL.so.1"

# make_project DIR DISTRIBUTION: a script importing cv2, and a wheelhouse
# with DISTRIBUTION's wheel carrying cv2 and the extension.
make_project() {
  local dir=$1 dist=$2
  mkdir -p "$dir/wheels"
  printf '%s==4.9.0.80\n' "$dist" >"$dir/requirements.txt"
  printf 'import cv2\nprint("cv2 loaded")\n' >"$dir/run.py"
  python3 - "$dir/wheels" "$dist" "$native/_native.cpython-311-x86_64-linux-gnu.so" <<'PY'
import base64, hashlib, sys, zipfile
out, dist, native = sys.argv[1:]
name = dist.replace("-", "_")
files = {
    "cv2/__init__.py": b"import ctypes, os\nctypes.CDLL(os.path.join(os.path.dirname(__file__), '_native.cpython-311-x86_64-linux-gnu.so'))\n",
    "cv2/_native.cpython-311-x86_64-linux-gnu.so": open(native, "rb").read(),
    f"{name}-4.9.0.80.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: 4.9.0.80\n".encode(),
    f"{name}-4.9.0.80.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: imgsmith-test\nRoot-Is-Purelib: false\nTag: py3-none-any\n",
}
record = f"{name}-4.9.0.80.dist-info/RECORD"
lines = []
for path, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    lines.append(f"{path},sha256={digest},{len(data)}")
lines.append(f"{record},,")
with zipfile.ZipFile(f"{out}/{name}-4.9.0.80-py3-none-any.whl", "w") as z:
    for path, data in files.items():
        z.writestr(path, data)
    z.writestr(record, "\n".join(lines) + "\n")
PY
}

build() {  # build DIR: docker build of gen's Dockerfile, log in $tmp/build.log
  DOCKER_BUILDKIT=1 "$docker" build --network host -t imgsmith-check-test:1 "$1" >"$tmp/build.log" 2>&1
}

known=$tmp/known
make_project "$known" opencv-python
expect "gen on a project with opencv-python" 0 env IMGSMITH_GEN_TABLES="$tmp/tables" \
  "$bin" gen "$known" --registry-mirror standin --wheelhouse wheels
check "gen installs libgl1 in the final stage" grep -q "apt-get install .*libgl1" "$known/Dockerfile"
if build "$known"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: the known wheel's image does not build"; tail -20 "$tmp/build.log"; fi
"$docker" run --rm --network none imgsmith-check-test:1 >"$tmp/out" 2>&1
check "the image runs and loads the extension" grep -q "cv2 loaded" "$tmp/out"

unknown=$tmp/unknown
make_project "$unknown" acme-vision
expect "gen on a project with a wheel it does not know" 0 env IMGSMITH_GEN_TABLES="$tmp/tables" \
  "$bin" gen "$unknown" --registry-mirror standin --wheelhouse wheels
check "gen warns that it does not know the wheel" grep -q "gen does not know what acme-vision" "$tmp/out"
if build "$unknown"; then
  fail=$((fail + 1)); echo "FAIL: the image without libGL built"
else
  pass=$((pass + 1))
fi
check "the build names the extension, libGL and its package" \
  grep -q "cv2/_native.cpython-311-x86_64-linux-gnu.so needs libGL.so.1, which is not in the image: install the package libgl1" "$tmp/build.log"
expect "--no-verify leaves the check out" 0 env IMGSMITH_GEN_TABLES="$tmp/tables" \
  "$bin" gen "$unknown" --registry-mirror standin --wheelhouse wheels --no-verify --force
if build "$unknown"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: --no-verify still checks"; tail -5 "$tmp/build.log"; fi
"$docker" run --rm --network none imgsmith-check-test:1 >"$tmp/out" 2>&1
check "and the container then fails at its start, as the check foretold" grep -q "libGL.so.1: cannot open shared object file" "$tmp/out"
"$docker" image rm imgsmith-check-test:1 >/dev/null 2>&1

stop_dockerd
echo "gen_check_docker: $pass passed, $fail failed"
finish
