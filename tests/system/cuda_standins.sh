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
#   cudnn-runtime, cudnn-devel
#            runtime or devel + this machine's cuDNN (where it has one)
# cuda_standin_alias.sh gives them the names of other releases.
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

# cuDNN and NCCL come as Ubuntu packages in NVIDIA's images (libcudnn9*,
# libnccl2, libnccl-dev), so they live in the OS's directories, not the
# toolkit's: a CMake project finds them there without hints.
os_lib=usr/lib/x86_64-linux-gnu
not_toolkit() { case "$(basename "$1")" in libcudnn* | libnccl* | cudnn* | nccl*) return 0 ;; esac; return 1; }

# copy_libs DEST GLOB...: shared or static libraries, symlinks kept; the
# toolkit's own directory ($target) never gets cuDNN's or NCCL's.
copy_libs() {
  local dest=$1 f
  shift
  for pattern in "$@"; do
    for f in "$cuda"/lib/$pattern; do
      [ -e "$f" ] || [ -L "$f" ] || continue
      [ "$dest" = "$target" ] && not_toolkit "$f" && continue
      cp -a "$f" "$dest/"
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

copy_libs "$target" 'libcudart.so.*'
standin base

copy_libs "$target" 'libcublas.so.*' 'libcublasLt.so.*' 'libcufft.so.*' 'libcufftw.so.*' 'libcurand.so.*' \
  'libcusolver.so.*' 'libcusolverMg.so.*' 'libcusparse.so.*' 'libnvrtc.so.*' 'libnvrtc-builtins.so.*' \
  'libnvJitLink.so.*'
copy_libs "$work/root/$os_lib" 'libnccl.so.*'
standin runtime

copy_libs "$target" '*.so' '*.a'
copy_libs "$work/root/$os_lib" 'libnccl.so' 'libnccl_static.a'
cp -a "$cuda/lib/stubs" "$target/stubs"
[ -d "$cuda/lib/cmake" ] && cp -a "$cuda/lib/cmake" "$target/cmake"
for f in "$cuda"/include/*; do
  name=$(basename "$f")
  case "$name" in
    nccl*) cp -a "$f" "$work/root/usr/include/" ;;
    cudnn*) ;;  # the cudnn-devel stand-in's
    *) cp -a "$f" "$cuda_root/targets/x86_64-linux/include/" ;;
  esac
done
cp -a "$cuda/bin" "$cuda/nvvm" "$cuda_root/"
standin devel

# cuDNN on top of runtime and devel, one layer each, as NVIDIA's cudnn images
# are their runtime or devel image plus libcudnn's packages: the libraries
# (devel: with their unversioned names and the headers, in /usr/include).
# Made only where the toolkit has cuDNN.
if ls "$cuda"/lib/libcudnn.so.[0-9]* >/dev/null 2>&1; then
  cudnn_major=$(cd "$cuda/lib" && ls libcudnn.so.[0-9]* | head -1 | sed 's/^libcudnn\.so\.//; s/\..*//')
  mkdir -p "$work/cudnn/lib" "$work/cudnn/dev/lib" "$work/cudnn/dev/include"
  copy_libs "$work/cudnn/lib" 'libcudnn*.so.[0-9]*'
  copy_libs "$work/cudnn/dev/lib" 'libcudnn*.so'
  cp -a "$cuda"/include/cudnn*.h "$work/cudnn/dev/include/"
  for flavour in runtime devel; do
    name="$prefix/nvidia/cuda:$release-cudnn-$flavour-ubuntu24.04"
    if [ "$("$docker" image inspect -f "{{index .Config.Labels \"$label\"}}" "$name" 2>/dev/null)" = "$inputs" ]; then
      echo "cuda stand-in $name: cached" >&2
      continue
    fi
    dev=()
    [ "$flavour" = devel ] && dev=("COPY dev/lib/ /$os_lib/" "COPY dev/include/ /usr/include/")
    printf '%s\n' "FROM $prefix/nvidia/cuda:$release-$flavour-ubuntu24.04" "COPY lib/ /$os_lib/" "${dev[@]}" \
      "RUN ldconfig" "ENV NV_CUDNN_VERSION=$cudnn_major" "LABEL $label=$inputs" >"$work/cudnn/Dockerfile"
    echo "cuda stand-in $name: $flavour with cuDNN $cudnn_major" >&2
    DOCKER_BUILDKIT=1 "$docker" build -q --network none -t "$name" "$work/cudnn" >/dev/null
  done
fi

# A stand-in made again leaves the one it replaced untagged: removed, with
# every other untagged image of this daemon (the tests' own data root).
"$docker" image prune -f >/dev/null
