#!/usr/bin/env bash
# Sets up, builds imgsmith, renders the Dockerfile for the example PyTorch
# API (imgsmith gen), then assembles the example image (a small GPU app image
# with the classic mistakes: caches deleted in a later layer, weights copied
# twice) as an OCI archive with gzip layers, and analyses it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
echo "\$ build/imgsmith gen examples/pytorch-api --stdout"
build/imgsmith gen examples/pytorch-api --stdout
echo
mkdir -p build/example
image=build/example/gpu-app.oci.tar
if [ ! -f "$image" ] || [ examples/images/gpu-app.json -nt "$image" ]; then
  python3 examples/make_image.py examples/images/gpu-app.json "$image" \
    --format oci-archive --layer-compression gzip -q
fi
echo "\$ build/imgsmith analyze $image --max-wasted 10%"
status=0
build/imgsmith analyze "$image" --max-wasted 10% || status=$?
echo
echo "exit status $status (0: gates passed, 1: a gate failed, 2: bad input)"
