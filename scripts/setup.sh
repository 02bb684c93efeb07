#!/usr/bin/env bash
# Installs everything imgsmith needs to build and test, from Debian's
# packages. Safe to run again: it installs only what is missing.
set -euo pipefail

# --build-only: what building the imgsmith binary needs (with
# -DIMGSMITH_BUILD_TESTS=OFF), as a CI job that only runs imgsmith wants.
build_packages=(
  build-essential cmake pkg-config
  # CI's builds (scripts/test.sh, scripts/fuzz.sh): a no-op check of unit_tests
  # in 0.1 s where make takes 4, which the mutation check pays twenty times
  ninja-build
  # the linker (CMakeLists.txt: GNU ld where it is missing, 4x slower)
  lld
  # the man pages (help2man) and the Debian package (CPack reads binaries with file)
  help2man file
  # the arm64 imgsmith-probe, cross-compiled and embedded beside the x86-64 one
  g++-aarch64-linux-gnu
  libarchive-dev nlohmann-json3-dev libcurl4-openssl-dev libssl-dev
  libcli11-dev libkainjow-mustache-dev libtomlplusplus-dev libsqlite3-dev
  zlib1g-dev libzstd-dev
  # gzip layers inflated with ISA-L (without it, zlib through libarchive)
  libisal-dev
)
packages=(
  "${build_packages[@]}"
  # the format check (.clang-format, scripts/check_format.sh)
  clang-format-14
  catch2
  # used by the tests, the example and the benchmark
  zstd gzip tar python3 time debootstrap rpm
  # the benchmark's baseline for gzip layers: ISA-L's igzip
  isal
  # real model writers for the models test: torch.save and onnx
  python3-torch python3-onnx
  # a terminal emulator, to show that reports of hostile file names have no effect on one
  tmux
  # the HTML report in a real browser, the ncdu export in ncdu
  chromium ncdu
  # the fuzz targets (scripts/fuzz.sh): libFuzzer under ASan+UBSan
  clang-14 libfuzzer-14-dev
  # the shell completions, in the shells they are for
  fish zsh
  # the arm64 probe run under QEMU
  qemu-user-static
  # gen --k8s's manifests checked against the Kubernetes API's types; the CI recipes' YAML
  python3-kubernetes python3-yaml
  # the registry tests: a real registry, a pusher, htpasswd, token signing, curl
  docker-registry skopeo apache2-utils openssl curl
  # the Docker engine tests (the test starts dockerd itself, on a bridge it makes with ip)
  docker.io iproute2
  # podman:// and podman save (the test runs Podman on storage of its own);
  # podman kube play of gen's manifests (its pods' network is slirp4netns,
  # its pause container's init catatonit: both only recommended by podman)
  podman slirp4netns catatonit
)

if [ "${1:-}" = "--build-only" ]; then
  packages=("${build_packages[@]}")
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/setup.sh [--build-only]" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
