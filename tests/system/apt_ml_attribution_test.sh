#!/usr/bin/env bash
# Attribution of a real apt-installed ML stack: the debootstrapped bookworm
# root plus `apt-get install python3-torch python3-numpy` (in a chroot, from
# Debian's mirror), saved as a one-layer image. The expected bytes come from
# dpkg's own file lists, each inode once, with byte code following its
# source as py3compile writes it; never from imgsmith.
# Checks: framework/torch holds python3-torch and libtorch*, from apt;
# python/numpy holds python3-numpy; python/interpreter holds the python3.X
# packages; each within 1%.
# Usage: apt_ml_attribution_test.sh IMGSMITH CACHE_DIR
# Skips (exit 77, which ctest shows as skipped; one line) without root, debootstrap or the Debian mirror.
set -euo pipefail
bin=$1
cache=$2

# shellcheck source=skip.sh
source "$(dirname "$0")/skip.sh" "apt ML attribution"

root_tar=$("$(dirname "$0")/debootstrap_root.sh" "$cache") || skip "no Debian root could be made"
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
    skip "apt-get in the chroot failed (no mirror?)"
  fi
  umount "$work/root/proc" 2>/dev/null || true
  tar -C "$work/root" --numeric-owner -cf "$torch_tar.tmp" .
  mv "$torch_tar.tmp" "$torch_tar"
  rm -rf "$work"
  trap - EXIT
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root"
tar -C "$tmp/root" -xf "$torch_tar"
"$(dirname "$0")/one_layer_image.sh" "$torch_tar" "$tmp/image.tar" debian:bookworm-torch \
  "apt-get install python3-torch python3-numpy"

"$bin" analyze "$tmp/image.tar" --format json -o "$tmp/report.json" -q

python3 - "$tmp/report.json" "$tmp/root" "$(dirname "$0")" <<'PY'
import re, sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[3])
from dpkg_lists import load, package_bytes as list_bytes

report, root, lists, cats = load(sys.argv)

def package_bytes(packages):
    return list_bytes(root, lists, packages, with_bytecode=True)

def child(category, name):
    for c in cats[category].get("children", []):
        if c["name"] == name:
            return c
    raise AssertionError(f"{category}/{name} is missing; {category} has "
                         f"{[c['name'] for c in cats[category].get('children', [])]}")

def close(label, got, expected):
    assert expected > 0, f"{label}: nothing expected"
    off = abs(got - expected) / expected
    print(f"  {label:22} imgsmith {got:>12,}  dpkg lists {expected:>12,}  ({off * 100:.3f}% apart)")
    assert off <= 0.01, f"{label}: imgsmith {got}, dpkg lists {expected}"

# libtorch* as Debian names torch's native packages (libtorch1.13, and
# libtorch-test, which python3-torch depends on); -dev is a build tool.
torch_pkgs = ["python3-torch"] + [p for p in lists if p.startswith("libtorch") and not p.endswith("-dev")]
# The interpreter's packages, and the parts of the standard library Debian
# packages apart (python3-lib2to3, python3-distutils, python3-venv).
interp_pkgs = [p for p in lists if re.fullmatch(r"(lib)?python3(\.[0-9]+)?(-minimal|-stdlib)?", p)
               or p in ("python3-lib2to3", "python3-distutils", "python3-venv")]
torch = child("framework", "torch")
close("framework/torch", torch["bytes"], package_bytes(torch_pkgs))
assert torch.get("origins", {}).get("apt", 0) >= 0.99 * torch["bytes"], f"torch origins {torch.get('origins')}"
close("python/numpy", child("python", "numpy")["bytes"], package_bytes(["python3-numpy"]))
close("python/interpreter", child("python", "interpreter")["bytes"], package_bytes(interp_pkgs))
assert not any(f["id"] == "static-libs" and not f.get("info") for f in report["findings"]), \
    "numpy's own static archives reported as static-libs"
print("apt ML attribution: torch from %s; interpreter packages %s" % (", ".join(sorted(torch_pkgs)), ", ".join(sorted(interp_pkgs))))
PY
echo "apt ML attribution: 1 passed, 0 failed"
