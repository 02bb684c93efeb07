#!/usr/bin/env bash
# gen's Dockerfile built for linux/arm64 on a real Docker engine, under QEMU
# user emulation: `DOCKER_BUILDKIT=1 docker build --platform linux/arm64` of a
# GPU Python project (tests/gen-corpus/hf-fastapi, stand-in wheels), on an
# arm64 stand-in of NVIDIA's base image made from a debootstrapped arm64
# Debian root. The image's entrypoint must be the arm64 probe (BuildKit's
# TARGETARCH picked it): it runs, gives its no-GPU advice and execs the app,
# which serves; the x86-64 probe there would end in "exec format error".
# QEMU runs arm64 programs through binfmt_misc: the test registers
# qemu-aarch64-static (flag F, so containers need no QEMU of their own) when
# no handler is there, and removes what it added at the end.
# Usage: arm64_test.sh IMGSMITH CACHE_DIR SOURCE_DIR
#        arm64_test.sh --root-only CACHE_DIR
# (--root-only: only the arm64 root, made and cached; warm_caches.sh makes
# it so while imgsmith compiles.)
# Without root, dockerd, QEMU or the mirror it skips with one line; in CI
# (CI=true) that is a failure instead.
set -u
root_only=""
if [ "${1:-}" = --root-only ]; then
  root_only=yes
  set -- "" "${2:?usage: arm64_test.sh --root-only CACHE_DIR}" ""
fi
bin=$1
cache=$2
source_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
docker=/usr/bin/docker
mirror=${IMGSMITH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
binfmt=/proc/sys/fs/binfmt_misc

# shellcheck source=skip.sh
source "$here/skip.sh" arm64
[ "$(id -u)" -eq 0 ] || skip "dockerd and binfmt_misc need root"
command -v dockerd >/dev/null && [ -x "$docker" ] || skip "docker.io is not installed (scripts/setup.sh installs it)"
qemu=$(command -v qemu-aarch64-static) || skip "qemu-user-static is not installed (scripts/setup.sh installs it)"
command -v debootstrap >/dev/null || skip "debootstrap is not installed"
command -v ip >/dev/null || skip "ip (iproute2) is not installed (scripts/setup.sh installs it)"
[ -n "$root_only" ] || "$bin" probe --write /dev/null --arch arm64 2>/dev/null ||
  skip "this imgsmith carries no arm64 probe"
# shellcheck source=../cli/assert.sh
source "$here/../cli/assert.sh"

# ----- binfmt_misc: arm64 programs run under QEMU ---------------------------------
mounted_binfmt="" registered=""
binfmt_cleanup() {
  [ -n "$registered" ] && echo -1 >"$binfmt/imgsmith-aarch64" 2>/dev/null
  [ -n "$mounted_binfmt" ] && umount "$binfmt" 2>/dev/null
  return 0
}
if [ ! -e "$binfmt/register" ]; then
  mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || skip "binfmt_misc cannot be mounted here"
  mounted_binfmt=yes
fi
if ! grep -qs "magic 7f454c460201010000000000000000000200b700" "$binfmt"/*; then
  # ELF, 64-bit, little-endian, e_machine 183 (AArch64); F: the kernel opens
  # QEMU now, so it works inside any container's root.
  printf '%s' ':imgsmith-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:'"$qemu"':F' \
    >"$binfmt/register" 2>/dev/null || { binfmt_cleanup; skip "qemu-aarch64 cannot be registered with binfmt_misc"; }
  registered=yes
fi
trap 'binfmt_cleanup; rm -rf "$tmp"' EXIT

# ----- an arm64 Debian root, debootstrapped once ------------------------------------
root_tar="$cache/debootstrap/bookworm-minbase-arm64-speedup.tar"
mkdir -p "$cache/debootstrap"
exec 9>"$cache/debootstrap/.lock-arm64"
flock 9
if [ ! -s "$root_tar" ]; then
  echo "arm64: debootstrap --arch=arm64 --variant=minbase bookworm under QEMU (minutes, once)"
  if ! debootstrap --arch=arm64 --variant=minbase bookworm "$tmp/root" "$mirror" >"$tmp/debootstrap.log" 2>&1; then
    tail -3 "$tmp/debootstrap.log"
    skip "debootstrap of an arm64 root failed (no mirror at $mirror?)"
  fi
  # Docker's dpkg setting, as in the amd64 root (debootstrap_root.sh): under
  # QEMU, each fsync'd file of the build's apt-get install costs more still.
  echo force-unsafe-io >"$tmp/root/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
  tar -C "$tmp/root" --numeric-owner -cf "$root_tar.tmp" . && mv "$root_tar.tmp" "$root_tar"
  rm -rf "$tmp/root"
fi
exec 9>&-
[ -z "$root_only" ] || exit 0

# shellcheck source=dockerd.sh
source "$here/dockerd.sh"
start_test_dockerd "$cache/docker"
# start_test_dockerd's trap stops the daemon; binfmt goes after it.
trap 'cleanup_test_dockerd; binfmt_cleanup' EXIT

# ----- the project, gen, and its arm64 base stand-in ---------------------------------
project=$tmp/hf-fastapi
cp -r "$source_dir/tests/gen-corpus/hf-fastapi" "$project"
python3 "$here/standin_wheels.py" "$project/wheels" "$project"/requirements*.txt || { echo "FAIL: stand-in wheels"; exit 1; }
# gen's tables as the Debian stand-ins make them true.
python3 "$here/standin_gen_tables.py" "$source_dir/data/cuda-images.json" "$tmp/tables"
expect "gen" 0 env IMGSMITH_GEN_TABLES="$tmp/tables" "$bin" gen "$project" --registry-mirror standin-arm64 --wheelhouse wheels
check "gen wrote the arm64 probe" sh -c "readelf -h '$project/.imgsmith/imgsmith-probe-arm64' | grep -q 'Machine: *AArch64'"
# NVIDIA's base image as far as the probe and gen's Dockerfile need it: the
# arm64 root and the image's environment (no CUDA library: none is for arm64
# here). Built FROM scratch for linux/arm64, so that the image says arm64
# (docker import would label it with this machine's architecture).
mkdir -p "$tmp/standin"
ln "$root_tar" "$tmp/standin/root.tar" 2>/dev/null || cp "$root_tar" "$tmp/standin/root.tar"
for tag in $(sed -n 's|^FROM standin-arm64/nvidia/cuda:\([^ ]*\).*|\1|p' "$project/Dockerfile" | sort -u); do
  printf '%s\n' "FROM scratch" "ADD root.tar /" \
    "ENV PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility CUDA_VERSION=${tag%%-*}" \
    'CMD ["bash"]' >"$tmp/standin/Dockerfile"
  DOCKER_BUILDKIT=1 "$docker" build -q --platform linux/arm64 --network none -t "standin-arm64/nvidia/cuda:$tag" \
    "$tmp/standin" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; echo "FAIL: the arm64 stand-in $tag"; exit 1; }
done

# ----- docker build --platform linux/arm64, and run ---------------------------------
image=imgsmith-test/hf-fastapi-arm64:1
echo "arm64: building the generated Dockerfile for linux/arm64 under QEMU (minutes)"
if ! DOCKER_BUILDKIT=1 "$docker" build --platform linux/arm64 --network host -t "$image" "$project" \
     >"$tmp/build.log" 2>&1; then
  echo "FAIL: docker build --platform linux/arm64"; tail -20 "$tmp/build.log"; exit 1
fi
pass=$((pass + 1))
check "the image is arm64" test "$("$docker" image inspect -f '{{.Architecture}}' "$image")" = arm64
cid=$("$docker" create "$image")
"$docker" cp "$cid:/usr/local/bin/imgsmith-probe" "$tmp/image-probe" >/dev/null
"$docker" rm "$cid" >/dev/null
check "its entrypoint's probe is the arm64 one gen wrote (TARGETARCH)" cmp -s "$tmp/image-probe" "$project/.imgsmith/imgsmith-probe-arm64"
"$docker" run --rm --platform linux/arm64 --network none --entrypoint /usr/local/bin/imgsmith-probe "$image" --check \
  >"$tmp/out" 2>"$tmp/err"
status=$?
check "the probe runs there: --check without a GPU exits 3 (got $status)" test "$status" = 3
check "no exec format error" sh -c "! grep -qi 'exec format error' '$tmp/err'"
cid=$("$docker" run -d --platform linux/arm64 --network none "$image")
served=""
for _ in $(seq 1 120); do
  served=$("$docker" exec "$cid" python -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8000/', timeout=2).read().decode().strip())" 2>/dev/null) && break
  sleep 1
done
"$docker" logs "$cid" >"$tmp/logs" 2>&1
"$docker" rm -f "$cid" >/dev/null
check "the probe gave its advice at start" grep -q "imgsmith-probe: no-gpu" "$tmp/logs"
check "then exec'd the app, which serves ($served)" test -n "$served"
[ -n "$served" ] || tail -5 "$tmp/logs"
"$docker" image rm "$image" >/dev/null 2>&1

echo "arm64: $pass passed, $fail failed"
finish
