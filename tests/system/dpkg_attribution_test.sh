#!/usr/bin/env bash
# Attribution on a real Debian root: debootstrap a minbase bookworm, save it
# as a one-layer image, and check that every byte imgsmith puts in `os`
# belongs to a real package, with the bytes dpkg's own file lists give; and
# that the CycloneDX SBOM lists every package dpkg-query lists, with its
# version and architecture in the package URL.
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
"$bin" analyze "$tmp/image.tar" --format cyclonedx -o "$tmp/sbom.json" -q
dpkg-query --admindir="$tmp/root/var/lib/dpkg" -W -f '${Package}\t${Version}\t${Architecture}\t${db:Status-Abbrev}\n' \
  >"$tmp/dpkg-query.txt"

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

python3 - "$tmp/sbom.json" "$tmp/dpkg-query.txt" "$tmp/root" "$(dirname "$0")" "$tmp/report.json" <<'PY'
import json
import sys
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[4])
from dpkg_lists import load, package_bytes

sbom = json.load(open(sys.argv[1]))
assert sbom["bomFormat"] == "CycloneDX" and sbom["specVersion"] == "1.5", sbom.get("specVersion")
system = [c for c in sbom["components"] if c["type"] == "operating-system"]
assert [(c["name"], c.get("version")) for c in system] == [("debian", "12")], system
debs = {}
for c in sbom["components"]:
    props = {p["name"]: p["value"] for p in c.get("properties", [])}
    if props.get("imgsmith:installer") == "apt":
        debs[c["name"]] = (c.get("version", ""), c.get("purl", ""), int(props["imgsmith:bytes"]))
# dpkg-query's own list: every installed package, version and architecture.
installed = {}
for line in open(sys.argv[2]):
    name, version, arch, status = line.rstrip("\n").split("\t")
    if status.startswith("ii"):
        installed[name] = (version, arch)
assert len(installed) > 80, f"dpkg-query lists only {len(installed)} installed packages"
missing = sorted(set(installed) - set(debs))
extra = sorted(set(debs) - set(installed))
assert not missing and not extra, f"missing from the SBOM: {missing}; not installed: {extra}"
for name, (version, arch) in installed.items():
    got_version, purl, _ = debs[name]
    assert got_version == version, f"{name}: SBOM {got_version}, dpkg {version}"
    expected = (f"pkg:deb/debian/{urllib.parse.quote(name)}@{urllib.parse.quote(version, safe=':')}"
                f"?arch={arch}&distro=debian-12")
    assert purl == expected, f"{name}: {purl} != {expected}"
# Bytes per package as dpkg's file lists give them (the largest five).
argv = [sys.argv[0], sys.argv[5], sys.argv[3]]
_, root, packages, _ = load(argv)
for name in sorted(debs, key=lambda n: -debs[n][2])[:5]:
    assert debs[name][2] == package_bytes(root, packages, [name]), name
print(f"dpkg attribution: SBOM lists the {len(installed)} packages dpkg-query lists, versions and arch in each purl")
PY
echo "dpkg attribution: 2 passed, 0 failed"
