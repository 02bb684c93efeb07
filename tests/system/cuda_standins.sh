#!/usr/bin/env bash
# Local stand-ins for NVIDIA's CUDA images, in the Docker daemon at
# $DOCKER_HOST, since no image can be pulled here:
#   PREFIX/nvidia/cuda:<release>-{base,runtime,devel}-ubuntu24.04
# made from a debootstrapped Debian root and this machine's real CUDA
# libraries, laid out as NVIDIA's images are (docs/cuda-images.md):
#   base     cudart, /usr/local/cuda -> cuda-X.Y, NVIDIA's environment
#   runtime  + cuBLAS, cuFFT, cuRAND, cuSOLVER, cuSPARSE, NVRTC, nvJitLink, NCCL
#   devel    + nvcc and the toolchain, headers, unversioned and static libraries,
#            the driver stub, LIBRARY_PATH
# Each image carries a label with a digest of its inputs; an image already
# there with the same digest is kept (a persistent daemon data root makes
# that a cache between runs).
# Usage: cuda_standins.sh PREFIX ROOT_TAR CUDA_DIR RELEASE
set -euo pipefail
prefix=$1
root_tar=$2
cuda=$3
release=$4  # e.g. 13.0.0
docker=/usr/bin/docker
major_minor=${release%.*}
label=org.imgsmith.standin.inputs

# What the images are made of: this script, the root, the library files.
inputs=$( {
  sha256sum "$0"
  stat -c '%s %Y' "$root_tar"
  (cd "$cuda" && find lib bin nvvm include -printf '%p %s %l\n' 2>/dev/null | sort)
  echo "$release"
} | sha256sum | cut -c1-32)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

standin() {  # standin FLAVOUR: imports $work/root as the FLAVOUR image
  local flavour=$1
  local name="$prefix/nvidia/cuda:$release-$flavour-ubuntu24.04"
  if [ "$("$docker" image inspect -f "{{index .Config.Labels \"$label\"}}" "$name" 2>/dev/null)" = "$inputs" ]; then
    echo "cuda stand-in $name: cached" >&2
    return
  fi
  ldconfig -r "$work/root" 2>/dev/null || true
  local changes=(
    -c "ENV PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    -c "ENV LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64"
    -c "ENV NVIDIA_VISIBLE_DEVICES=all"
    -c "ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility"
    -c "ENV CUDA_VERSION=$release"
    -c "ENV NVIDIA_REQUIRE_CUDA=cuda>=$major_minor"
    -c "LABEL $label=$inputs"
  )
  [ "$flavour" = devel ] && changes+=(-c "ENV LIBRARY_PATH=/usr/local/cuda/lib64/stubs")
  echo "cuda stand-in $name: importing $(du -sh "$work/root" | cut -f1)" >&2
  tar -C "$work/root" --numeric-owner -cf - . | "$docker" import "${changes[@]}" - "$name" >/dev/null
}

copy_libs() {  # copy_libs GLOB...: versioned shared libraries, symlinks kept
  for pattern in "$@"; do
    for f in "$cuda"/lib/$pattern; do
      [ -e "$f" ] && cp -a "$f" "$target/"
    done
  done
}

mkdir -p "$work/root"
tar -C "$work/root" -xf "$root_tar"
cuda_root="$work/root/usr/local/cuda-$major_minor"
target="$cuda_root/targets/x86_64-linux/lib"
mkdir -p "$target" "$cuda_root/targets/x86_64-linux/include"
ln -s "cuda-$major_minor" "$work/root/usr/local/cuda"
ln -s targets/x86_64-linux/lib "$cuda_root/lib64"
ln -s targets/x86_64-linux/include "$cuda_root/include"
echo "/usr/local/cuda/targets/x86_64-linux/lib" >"$work/root/etc/ld.so.conf.d/000_cuda.conf"

copy_libs 'libcudart.so.*'
standin base

copy_libs 'libcublas.so.*' 'libcublasLt.so.*' 'libcufft.so.*' 'libcufftw.so.*' 'libcurand.so.*' \
  'libcusolver.so.*' 'libcusolverMg.so.*' 'libcusparse.so.*' 'libnvrtc.so.*' 'libnvrtc-builtins.so.*' \
  'libnvJitLink.so.*' 'libnccl.so.*'
standin runtime

copy_libs '*.so' '*.a'
cp -a "$cuda/lib/stubs" "$target/stubs"
[ -d "$cuda/lib/cmake" ] && cp -a "$cuda/lib/cmake" "$target/cmake"
cp -a "$cuda/include/." "$cuda_root/targets/x86_64-linux/include/"
cp -a "$cuda/bin" "$cuda/nvvm" "$cuda_root/"
standin devel
