#!/bin/sh
# Compiles the probe's benchmark kernels into one fatbin: SASS for each
# architecture below and PTX for the lowest, which later GPUs JIT. The one
# list of architectures: CMake runs this, and so does the Dockerfile's
# kernels stage, where nvcc lives in NVIDIA's devel image.
# Usage: build-fatbin.sh NVCC KERNELS_CU OUT_FATBIN
set -eu
nvcc=$1
source=$2
out=$3
archs="75 80 86 89 90 100 120"
lowest=${archs%% *}
set --
for arch in $archs; do
  set -- "$@" -gencode "arch=compute_$arch,code=sm_$arch"
done
exec "$nvcc" -fatbin -O3 "$@" -gencode "arch=compute_$lowest,code=compute_$lowest" -o "$out" "$source"
