#!/bin/sh
# Compiles tests/kernels/kernel.cu into CUDA binaries whose GPU code the
# build flags below fix, for the kernel inventory's tests (the tests state
# what each must hold, from these flags):
#   sass.so            SASS sm_75, sm_90
#   ptx.so             PTX compute_80 only
#   arch90a.so         SASS sm_90a (arch-specific)
#   arch100a.so        SASS sm_100a (B200's alone: not B300's 10.3)
#   family100f.so      SASS sm_100f (family-specific)
#   old-torch.so       SASS sm_75..sm_90 + PTX compute_90 (a cu12x wheel's shape)
#   new-torch.so       SASS sm_75..sm_120 + PTX compute_120
#   compressed.so      SASS sm_80 + PTX compute_80, every entry compressed
#   plain.so           the same, nothing compressed
#   ext.cpython-311-x86_64-linux-gnu.so   SASS sm_86, shared cudart
#   app                an executable, static cudart, SASS sm_89
#   runtime-name.so    SASS sm_86, static cudart, linked -z noseparate-code,
#                      "libcudart.so.12" in its .rodata (first segment)
#   kernel.fatbin      SASS sm_80 + PTX compute_80, a standalone fatbin
#   kernel.cubin       SASS sm_120
#   kernel.ptx         PTX for sm_90
# Usage: build-fixtures.sh NVCC KERNEL_CU OUT_DIR
set -eu
nvcc=$1
source=$2
out=$3
work="$out.tmp"
rm -rf "$work"
mkdir -p "$work"
lib() {
  name=$1
  shift
  "$nvcc" -shared -Xcompiler -fPIC -O2 -o "$work/$name" "$source" "$@"
}
g() { echo "-gencode arch=compute_$1,code=$2"; }
# shellcheck disable=SC2046
{
  lib sass.so $(g 75 sm_75) $(g 90 sm_90)
  lib ptx.so $(g 80 compute_80)
  lib arch90a.so $(g 90a sm_90a)
  lib arch100a.so $(g 100a sm_100a)
  lib family100f.so $(g 100f sm_100f)
  lib old-torch.so $(g 75 sm_75) $(g 80 sm_80) $(g 86 sm_86) $(g 90 sm_90) $(g 90 compute_90)
  lib new-torch.so $(g 75 sm_75) $(g 80 sm_80) $(g 86 sm_86) $(g 90 sm_90) $(g 100 sm_100) \
    $(g 120 sm_120) $(g 120 compute_120)
  lib compressed.so $(g 80 sm_80) $(g 80 compute_80) -Xfatbin=-compress-all
  lib plain.so $(g 80 sm_80) $(g 80 compute_80) -Xfatbin=-compress=false
  lib ext.cpython-311-x86_64-linux-gnu.so $(g 86 sm_86) -cudart shared
  lib runtime-name.so $(g 86 sm_86) -cudart static -DWITH_RUNTIME_NAME -Xlinker -z,noseparate-code
  "$nvcc" -O2 -DWITH_MAIN -o "$work/app" "$source" $(g 89 sm_89) -cudart static
  "$nvcc" -fatbin -o "$work/kernel.fatbin" "$source" $(g 80 sm_80) $(g 80 compute_80)
  "$nvcc" -cubin -arch=sm_120 -o "$work/kernel.cubin" "$source"
  "$nvcc" -ptx -arch=compute_90 -o "$work/kernel.ptx" "$source"
}
# Replaced whole: a build stopped midway leaves no half set.
rm -rf "$out"
mv "$work" "$out"
