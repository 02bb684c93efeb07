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

torch_tar=$("$(dirname "$0")/torch_root.sh" "$cache") || skip "no Debian root with python3-torch could be made"

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
