#!/usr/bin/env bash
# Makes what the system tests build on, before they run: the debootstrapped
# Debian root, the shared Docker engine with its stand-in base images
# (docker_engine.sh start), the root with python3-torch (torch_root.sh) and
# the arm64 root (arm64_test.sh --root-only).
# None of it needs imgsmith, and most of it waits on Debian's mirror and
# the disk, so scripts/test.sh runs this while imgsmith compiles; the tests
# then find it made (the engine's ctest fixture keeps an engine that
# answers, and stops it after the tests).
# Never fails: what cannot be made here is the tests' to report.
# Usage: warm_caches.sh CACHE_DIR ENGINE_STATE_FILE
set -uo pipefail
cache=${1:?usage: warm_caches.sh CACHE_DIR ENGINE_STATE_FILE}
state=${2:?usage: warm_caches.sh CACHE_DIR ENGINE_STATE_FILE}
here=$(cd "$(dirname "$0")" && pwd)
started=$SECONDS
"$here/debootstrap_root.sh" "$cache/debootstrap" || exit 0
echo "warm_caches: the Debian root after $((SECONDS - started))s"
"$here/docker_engine.sh" start "$cache" "$state" &
engine=$!
# The arm64 root, debootstrapped under QEMU: minutes of the arm64 test's
# otherwise, which is among the longest system tests.
("$here/arm64_test.sh" --root-only "$cache" >/dev/null 2>&1 &&
  echo "warm_caches: the arm64 root after $((SECONDS - started))s") &
arm64=$!
"$here/torch_root.sh" "$cache/debootstrap" >/dev/null &&
  echo "warm_caches: the root with python3-torch after $((SECONDS - started))s"
wait "$arm64"
wait "$engine"
echo "warm_caches: the Docker engine and its stand-ins after $((SECONDS - started))s"
exit 0
