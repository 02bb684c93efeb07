#!/usr/bin/env bash
# A local stand-in for Docker's python image, in the Docker daemon at
# $DOCKER_HOST, since no image can be pulled here:
#   imgsmith-test/bookworm:minbase          the debootstrapped Debian root
#   standin/library/python:3.11-slim-bookworm
#                                           + Debian's Python 3.11 and venv,
#                                           python/python3 in /usr/local/bin
# The stand-in carries a label with a digest of its inputs; one already there
# with the same digest is kept. Building it reaches Debian's mirror.
# Usage: python_standin.sh ROOT_TAR
set -euo pipefail
root_tar=$1
docker=/usr/bin/docker
name=standin/library/python:3.11-slim-bookworm
inputs=$( { sha256sum "$0"; stat -c '%s %Y' "$root_tar"; } | sha256sum | cut -c1-32)
label=org.imgsmith.standin.inputs
[ "$("$docker" image inspect -f "{{index .Config.Labels \"$label\"}}" "$name" 2>/dev/null)" = "$inputs" ] && exit 0
# The root is imported only to build on it (the Docker test imports it for
# its own images anyway).
"$docker" import "$root_tar" imgsmith-test/bookworm:minbase >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/Dockerfile" <<DOCKERFILE
FROM imgsmith-test/bookworm:minbase
RUN apt-get update && apt-get install -y --no-install-recommends python3.11 python3.11-venv \\
 && for n in python python3 python3.11; do ln -sf /usr/bin/python3.11 /usr/local/bin/\$n; done \\
 && rm -rf /var/lib/apt/lists/*
LABEL $label=$inputs
DOCKERFILE
echo "python stand-in $name: building" >&2
DOCKER_BUILDKIT=1 "$docker" build -q --network host -t "$name" "$work" >"$work/log" 2>&1 || { tail -10 "$work/log" >&2; exit 1; }
