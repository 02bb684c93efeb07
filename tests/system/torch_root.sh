#!/usr/bin/env bash
# Prints the path of a tar of the debootstrapped bookworm root plus
# `apt-get install python3-torch python3-numpy` (in a chroot, from Debian's
# mirror), made once (a few minutes) and cached in CACHE_DIR beside the root
# (debootstrap_root.sh). Runs that ask at the same time wait for one another.
# Usage: torch_root.sh CACHE_DIR
# Exit status: 0 with the path on stdout; 3 (and why on stderr) when it
# cannot be made here: no root, no debootstrap, no mirror.
set -euo pipefail
cache=$1
here=$(cd "$(dirname "$0")" && pwd)
root_tar=$("$here/debootstrap_root.sh" "$cache") || exit 3
torch_tar="$cache/bookworm-python3-torch.tar"
exec 8>"$cache/.torch-lock"
flock 8
if [ ! -s "$torch_tar" ]; then
  work=$(mktemp -d)
  trap 'umount "$work/root/proc" 2>/dev/null || true; rm -rf "$work"' EXIT
  mkdir "$work/root"
  tar -C "$work/root" -xf "$root_tar"
  cp /etc/resolv.conf "$work/root/etc/resolv.conf"
  mount -t proc proc "$work/root/proc" 2>/dev/null || true
  echo "apt-get install python3-torch python3-numpy in the bookworm root (a few minutes, once)" >&2
  if ! chroot "$work/root" /bin/sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends \
        -o Dpkg::Options::=--force-unsafe-io python3-torch python3-numpy && apt-get clean' \
        >"$work/log" 2>&1; then
    tail -5 "$work/log" >&2
    echo "apt-get in the chroot failed (no mirror?)" >&2
    exit 3
  fi
  umount "$work/root/proc" 2>/dev/null || true
  tar -C "$work/root" --numeric-owner -cf "$torch_tar.tmp" .
  mv "$torch_tar.tmp" "$torch_tar"
fi
echo "$torch_tar"
