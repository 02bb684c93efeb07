#!/usr/bin/env bash
# Attribution on a real Debian root: debootstrap a minbase bookworm, save it
# as a one-layer image, and check that every byte imgsmith puts in `os`
# belongs to a real package, with the bytes dpkg's own file lists give.
# Usage: dpkg_attribution_test.sh IMGSMITH CACHE_DIR
# Skips (exit 77, which ctest shows as skipped; one line) without root, debootstrap or the Debian mirror.
set -euo pipefail
bin=$1
cache=$2

# shellcheck source=skip.sh
source "$(dirname "$0")/skip.sh" "dpkg attribution"

root_tar=$("$(dirname "$0")/debootstrap_root.sh" "$cache") || skip "no Debian root could be made"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root"
tar -C "$tmp/root" -xf "$root_tar"

"$(dirname "$0")/one_layer_image.sh" "$root_tar" "$tmp/image.tar" debian:bookworm-minbase \
  "debootstrap --variant=minbase bookworm"

"$bin" analyze "$tmp/image.tar" --format json -o "$tmp/report.json" -q

python3 - "$tmp/report.json" "$tmp/root" "$(dirname "$0")" <<'PY'
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[3])
from dpkg_lists import load, package_bytes

_, root, packages, cats = load(sys.argv)
os_cat = cats["os"]
assert os_cat["bytes"] > 10_000_000, f"os holds only {os_cat['bytes']} bytes"
children = os_cat["children"]
assert sum(c["bytes"] for c in children) == os_cat["bytes"]
unknown = [c["name"] for c in children if c["name"] not in packages]
assert not unknown, f"os children that are not packages: {unknown}"

top = children[:5]
for child in top:
    expected = package_bytes(root, packages, [child["name"]])
    assert child["bytes"] == expected, f"{child['name']}: imgsmith {child['bytes']}, dpkg lists {expected}"
print("dpkg attribution: %d packages, os %d bytes; top: %s" % (
    len(children), os_cat["bytes"], ", ".join(f"{c['name']} {c['bytes']}" for c in top)))
PY
echo "dpkg attribution: 1 passed, 0 failed"
