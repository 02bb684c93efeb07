#!/usr/bin/env bash
# Checks that ctest runs every Catch2 case of unit_tests, each as itself:
# the cases ctest registered (catch_discover_tests) must be exactly the
# cases the binary lists. A case name that discovery splits (a `;` in it)
# becomes ctest tests that match no case and a case that never runs, and a
# green ctest would not say so. Also checks that every ctest test carries a
# label scripts/test.sh runs (unit, slow, cli, system), so none is left out.
#   scripts/check_test_count.sh [BUILD_DIR]   (default: build/ of this checkout)
set -euo pipefail
dir=$(realpath -m "${1:-$(dirname "$0")/../build}")
cd "$(dirname "$0")/.."
bin=$dir/tests/unit_tests
[ -x "$bin" ] || { echo "check_test_count: $bin is not built" >&2; exit 2; }

listed=$(mktemp)
registered=$(mktemp)
trap 'rm -f "$listed" "$registered"' EXIT
# --list-test-names-only exits with the number of cases it listed.
"$bin" --list-test-names-only >"$listed" || true
ctest --test-dir "$dir" --show-only=json-v1 >"$registered"

python3 - "$listed" "$registered" "$(realpath "$bin")" <<'EOF'
import json, os, sys
listed_path, registered_path, binary = sys.argv[1:]
listed = [line for line in open(listed_path, encoding="utf-8").read().split("\n") if line]
tests = json.load(open(registered_path, encoding="utf-8"))["tests"]
def labels(t):
    for p in t.get("properties", []):
        if p["name"] == "LABELS":
            return p["value"]
    return []
def runs_unit_tests(t):
    c = t.get("command") or []
    return bool(c) and os.path.realpath(c[0]) == binary
ours = [t for t in tests if runs_unit_tests(t)]
names = [t["name"] for t in ours]
run_by_ci = {"unit", "slow", "cli", "system"}  # the labels scripts/test.sh runs
unlabelled = [t["name"] for t in tests if not run_by_ci & set(labels(t))]
by_label = {}
for t in ours:
    for label in labels(t):
        by_label[label] = by_label.get(label, 0) + 1
problems = []
if len(set(listed)) != len(listed):
    problems.append("unit_tests lists a case name twice")
never_run = sorted(set(listed) - set(names))
no_case = sorted(set(names) - set(listed))
for n in never_run:
    problems.append(f"listed by unit_tests, never run by ctest: '{n}'")
for n in no_case:
    problems.append(f"registered with ctest, matches no case of unit_tests: '{n}'")
for n in unlabelled:
    problems.append(f"no label of {sorted(run_by_ci)}, so no stage of scripts/test.sh runs it: '{n}'")
summary = ", ".join(f"{count} labelled {label}" for label, count in sorted(by_label.items()))
print(f"check_test_count: unit_tests lists {len(listed)} cases; ctest runs {len(ours)} of them "
      f"({summary})")
if len(listed) != len(ours):
    problems.insert(0, f"count mismatch: unit_tests lists {len(listed)} cases, ctest registered "
                       f"{len(ours)} tests running unit_tests")
if problems:
    for p in problems:
        print("check_test_count: FAIL: " + p)
    if never_run or no_case:
        print("check_test_count: a Catch2 case name must not contain ';' (ctest's discovery "
              "splits the name there); rename the case")
    sys.exit(1)
EOF
