#!/usr/bin/env bash
# Prints the path of a tar of a debootstrapped minimal Debian bookworm root,
# made once (about a minute) and cached in CACHE_DIR. Tests that run at the
# same time wait for one another instead of debootstrapping twice.
# Usage: debootstrap_root.sh CACHE_DIR
# Exit status: 0 with the path on stdout; 3 (and why on stderr) when it
# cannot be made here: no root, no debootstrap, no mirror.
set -euo pipefail
cache=$1
mirror=${IMGSMITH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# (-speedup: made with Docker's dpkg setting below; a root made before it
# is not reused)
root_tar="$cache/bookworm-minbase-speedup.tar"
[ "$(id -u)" -eq 0 ] || { echo "debootstrap needs root" >&2; exit 3; }
command -v debootstrap >/dev/null || { echo "debootstrap is not installed (scripts/setup.sh installs it)" >&2; exit 3; }
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ ! -s "$root_tar" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "debootstrap --variant=minbase bookworm (about a minute, once)" >&2
  if ! debootstrap --variant=minbase bookworm "$work/root" "$mirror" >"$work/log" 2>&1; then
    tail -3 "$work/log" >&2
    echo "debootstrap could not reach $mirror" >&2
    exit 3
  fi
  # As in the images Docker's debian and ubuntu images are (and NVIDIA's
  # CUDA images are built on): dpkg does not fsync each file it unpacks
  # (docker-library repo-info, ubuntu:bionic's history: `echo
  # 'force-unsafe-io' > /etc/dpkg/dpkg.cfg.d/docker-apt-speedup`). Without
  # it, each apt-get install in a generated Dockerfile's build waited tens
  # of seconds on the disk.
  echo force-unsafe-io >"$work/root/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
  tar -C "$work/root" --numeric-owner -cf "$root_tar.tmp" .
  mv "$root_tar.tmp" "$root_tar"
fi
echo "$root_tar"
