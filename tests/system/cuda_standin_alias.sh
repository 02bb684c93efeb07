#!/usr/bin/env bash
# Names a local stand-in of NVIDIA's CUDA images (cuda_standins.sh) as
# another of NVIDIA's tags, so that a Dockerfile gen wrote for that tag builds
# here: PREFIX/nvidia/cuda:TAG is the stand-in of RELEASE in TAG's flavour,
# with TAG's CUDA_VERSION and NVIDIA_REQUIRE_CUDA in its environment, as
# NVIDIA's image of TAG has them. The files stay RELEASE's (this machine's
# toolkit and cuDNN, also under a cudnn8 tag): a build on it checks the
# Dockerfile, not the CUDA release. It adds no layer.
# Usage: cuda_standin_alias.sh PREFIX RELEASE TAG
#   e.g. cuda_standin_alias.sh standin 13.0.0 11.8.0-cudnn8-runtime-ubuntu22.04
# Exit status: 0 when PREFIX/nvidia/cuda:TAG is there; 1 when the stand-in
# to name is missing; 2 for a TAG not of NVIDIA's form
# <X.Y.Z>-[cudnn[N]-]{base,runtime,devel}-<os>.
set -euo pipefail
prefix=$1
release=$2
tag=$3
docker=/usr/bin/docker
if [[ ! "$tag" =~ ^(([0-9]+)\.([0-9]+)\.[0-9]+)-(cudnn[0-9]*-)?(base|runtime|devel)-[a-z]+[0-9.]+$ ]]; then
  echo "cuda_standin_alias.sh: '$tag' is not of NVIDIA's form <X.Y.Z>-[cudnn[N]-]{base,runtime,devel}-<os>" >&2
  exit 2
fi
tag_release=${BASH_REMATCH[1]}
major_minor="${BASH_REMATCH[2]}.${BASH_REMATCH[3]}"
cudnn=${BASH_REMATCH[4]:+cudnn-}
flavour=${BASH_REMATCH[5]}
source_image="$prefix/nvidia/cuda:$release-$cudnn$flavour-ubuntu24.04"
name="$prefix/nvidia/cuda:$tag"
[ "$name" = "$source_image" ] && exit 0
source_id=$("$docker" image inspect -f '{{.Id}}' "$source_image" 2>/dev/null) ||
  { echo "cuda_standin_alias.sh: no stand-in $source_image to name (cuda_standins.sh makes it)" >&2; exit 1; }
# An alias made from this very stand-in is kept.
label=org.imgsmith.standin.alias-of
[ "$("$docker" image inspect -f "{{index .Config.Labels \"$label\"}}" "$name" 2>/dev/null)" = "$source_id" ] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%s\n' "FROM $source_image" "ENV CUDA_VERSION=$tag_release NVIDIA_REQUIRE_CUDA=cuda>=$major_minor" \
  "LABEL $label=$source_id" >"$work/Dockerfile"
echo "cuda stand-in $name: $source_image under that name" >&2
DOCKER_BUILDKIT=1 "$docker" build -q --network none -t "$name" "$work" >/dev/null
