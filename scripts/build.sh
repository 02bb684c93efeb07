#!/usr/bin/env bash
# Configures and builds imgsmith into DIR (default build/). Extra arguments go
# to cmake's configure step, e.g. -DIMGSMITH_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DIMGSMITH_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
