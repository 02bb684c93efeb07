#!/usr/bin/env bash
# Attribution from rpm's database, as NVIDIA's UBI and Rocky Linux CUDA
# images keep it: rpmbuild two small packages (a CUDA library in the
# toolkit's place and one in /usr/lib64, and a Python distribution), install
# them with `rpm --root` into an empty root, save the root as a one-layer
# image and check the owners imgsmith reads back from rpmdb.sqlite.
# Usage: rpm_attribution_test.sh IMGSMITH
# Skips (exit 77, which ctest shows as skipped; one line) where rpm's tools are missing.
set -euo pipefail
bin=$1
# shellcheck source=skip.sh
source "$(dirname "$0")/skip.sh" "rpm attribution"
command -v rpmbuild >/dev/null && command -v rpm >/dev/null || skip "rpm and rpmbuild are not installed (scripts/setup.sh installs them)"
[ "$(rpm --eval '%_db_backend')" = sqlite ] || skip "this rpm does not keep its database in SQLite"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
spec() {  # NAME VERSION then "path size" lines on stdin
  local name=$1 version=$2 files="" install=""
  while read -r path size; do
    install+="mkdir -p %{buildroot}$(dirname "$path")"$'\n'"head -c $size /dev/zero > %{buildroot}$path"$'\n'
    files+="$path"$'\n'
  done
  cat >"$tmp/$name.spec" <<SPEC
Name: $name
Version: $version
Release: 1.el9
Summary: imgsmith test package
License: MIT
BuildArch: x86_64
%description
imgsmith test package
%install
$install
%files
$files
SPEC
  rpmbuild --quiet --define "_topdir $tmp/top" --define "__os_install_post %{nil}" -bb "$tmp/$name.spec" >"$tmp/$name.log" 2>&1 ||
    { tail -5 "$tmp/$name.log"; exit 1; }
}
spec libcublas-12-4 12.4.5.8 <<'F'
/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcublas.so.12.4.5.8 50000
/usr/lib64/libcublasLt.so.12 30000
F
spec python3-requests 2.25.1 <<'F'
/usr/lib/python3.9/site-packages/requests/api.py 7000
/usr/lib/python3.9/site-packages/requests-2.25.1-py3.9.egg-info/PKG-INFO 300
F
mkdir -p "$tmp/root"
rpm --root "$tmp/root" --dbpath /var/lib/rpm --nodeps -i "$tmp"/top/RPMS/x86_64/*.rpm 2>/dev/null
rm -f "$tmp/root/var/lib/rpm/.rpm.lock"
test -s "$tmp/root/var/lib/rpm/rpmdb.sqlite" || { echo "rpm wrote no rpmdb.sqlite"; exit 1; }

tar -C "$tmp/root" --numeric-owner -cf "$tmp/layer.tar" .
"$(dirname "$0")/one_layer_image.sh" "$tmp/layer.tar" "$tmp/image.tar" ubi:rpm-test "rpm -i"
"$bin" analyze "$tmp/image.tar" --format json -o "$tmp/report.json" -q

python3 - "$tmp/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cats = {c["name"]: c for c in r["categories"]}
def child(cat, name):
    for c in cats[cat].get("children", []):
        if c["name"] == name:
            return c
    raise AssertionError(f"{cat}/{name} missing: {[c['name'] for c in cats[cat].get('children', [])]}")
cublas, lt = child("cuda", "cublas"), child("cuda", "cublaslt")
assert cublas["bytes"] == 50000 and cublas["origins"] == {"toolkit": 50000}, cublas
assert lt["bytes"] == 30000 and lt["origins"] == {"rpm": 30000}, lt
req = child("python", "requests")
assert req["bytes"] == 7300 and req["origins"] == {"rpm": 7300}, req
print("rpm attribution: cuda/cublas toolkit 50000, cuda/cublaslt rpm 30000, python/requests rpm 7300")
PY
echo "rpm attribution: 1 passed, 0 failed"
