#!/usr/bin/env bash
# Configures and builds imgsmith into DIR (default build/). Extra arguments go
# to cmake's configure step, e.g. -DIMGSMITH_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
# A unity build: compiled once from cold, each batch of sources as one file
# (the headers and templates they share compiled once per batch);
# -DCMAKE_UNITY_BUILD=OFF for one file at a time.
cmake -S . -B "$dir" -DIMGSMITH_WERROR=ON -DCMAKE_UNITY_BUILD=ON "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
