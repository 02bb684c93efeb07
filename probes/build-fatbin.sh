#!/bin/sh
# Compiles the probe's benchmark kernels twice:
#   OUT_FATBIN      SASS for each architecture below and PTX for the lowest,
#                   which later GPUs JIT: the fast path, loadable by drivers
#                   of nvcc's CUDA major release or newer (R580+ for CUDA 13);
#   OUT_FATBIN.ptx  the same kernels as PTX text declared at ISA $PTX_ISA
#                   (CUDA 11.0: R450+), which older drivers compile
#                   themselves. nvcc writes its own CUDA's ISA into the
#                   header; the kernels use nothing newer, and ptxas checks
#                   that claim below for the oldest and a current
#                   architecture, so the build fails if they ever do;
#   OUT_FATBIN.cuda the CUDA release nvcc is, as 13000 for 13.0.
# The one list of architectures: CMake runs this, and so does the
# Dockerfile's kernels stage, where nvcc lives in NVIDIA's devel image.
# Usage: build-fatbin.sh NVCC KERNELS_CU OUT_FATBIN
set -eu
nvcc=$1
source=$2
out=$3
archs="75 80 86 89 90 100 120"
lowest=${archs%% *}
PTX_ISA=7.0

release=$("$nvcc" --version | sed -n 's/.*release \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p')
[ -n "$release" ] || { echo "build-fatbin.sh: no release in '$nvcc --version'" >&2; exit 1; }
set -- $release
echo $(($1 * 1000 + $2 * 10)) >"$out.cuda.tmp"

"$nvcc" -ptx -O3 -arch="compute_$lowest" -o "$out.ptx.tmp" "$source"
grep -q '^\.version ' "$out.ptx.tmp" || { echo "build-fatbin.sh: nvcc's PTX has no .version line" >&2; exit 1; }
sed "s/^\.version .*/.version $PTX_ISA/" "$out.ptx.tmp" >"$out.ptx.low"
ptxas=$(dirname "$nvcc")/ptxas
for arch in "sm_$lowest" sm_90; do
  "$ptxas" -arch="$arch" -o /dev/null "$out.ptx.low" ||
    { echo "build-fatbin.sh: the kernels need more than PTX ISA $PTX_ISA ($arch): raise PTX_ISA" >&2; exit 1; }
done

set --
for arch in $archs; do
  set -- "$@" -gencode "arch=compute_$arch,code=sm_$arch"
done
"$nvcc" -fatbin -O3 "$@" -gencode "arch=compute_$lowest,code=compute_$lowest" -o "$out.tmp" "$source"
# Renamed last, each whole: a build stopped midway leaves no half file.
mv "$out.ptx.low" "$out.ptx"
mv "$out.cuda.tmp" "$out.cuda"
rm -f "$out.ptx.tmp"
mv "$out.tmp" "$out"
