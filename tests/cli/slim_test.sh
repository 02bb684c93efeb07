#!/usr/bin/env bash
# imgsmith slim --dry-run as a user runs it: its figures against analyze's
# own on the same image (dive's fixture, and the findings example image),
# and every bad input a clear exit 2. Usage: slim_test.sh IMGSMITH FIXTURES_DIR
set -u
bin=$1
fixtures=$2
# shellcheck source=assert.sh
source "$(dirname "$0")/assert.sh"
examples="$(cd "$(dirname "$0")/../../examples" && pwd)"
dive="$fixtures/test-docker-image.tar"

expect "slim --help" 0 "$bin" slim --help
check "slim --help: the exit statuses and the removable findings" \
  sh -c "grep -q 'Exit status' '$tmp/out' && grep -q 'static-libs' '$tmp/out'"

# Every layer squashed and nothing removed: what goes is exactly the bytes
# analyze counts as hidden, and what is left is its final size.
expect "analyze dive's image" 0 "$bin" analyze "$dive" --format json -o "$tmp/analysis.json" -q
expect "slim dive's image, every layer squashed" 0 \
  "$bin" slim "$dive" --dry-run --keep-base 0 --remove none --format json -o "$tmp/plan.json" -q
wasted=$(json_field "$tmp/analysis.json" "d['size']['wasted_bytes']")
final=$(json_field "$tmp/analysis.json" "d['size']['final_bytes']")
check "squashed bytes are analyze's hidden bytes ($wasted)" \
  test "$(json_field "$tmp/plan.json" "d['squashed_bytes']")" = "$wasted"
check "the size after is analyze's final size ($final)" \
  test "$(json_field "$tmp/plan.json" "d['after_bytes']")" = "$final"
check "the squashed operations sum to the squashed bytes" \
  test "$(json_field "$tmp/plan.json" "sum(w['bytes'] for w in d['squashed'])")" = "$wasted"

# The findings example: a base layer and the user's, with caches. Each
# chosen finding's bytes are split between the files removed (the user's
# layers) and those kept (the base's), as analyze's base_bytes splits them.
python3 "$examples/make_image.py" "$examples/images/findings-evidence.json" "$tmp/evidence.tar" \
  --format docker-legacy -q || { echo "FAIL: make_image.py"; exit 1; }
expect "analyze the findings example" 0 "$bin" analyze "$tmp/evidence.tar" --format json \
  --finding-floor 0 --top 100000 -o "$tmp/evidence.json" -q
expect "slim the findings example, caches and docs" 0 "$bin" slim "$tmp/evidence.tar" --dry-run \
  --remove caches,docs --format json -o "$tmp/evidence-plan.json" -q
ids="['pip-cache','node-cache','gem-cache','build-cache','package-cache','apt-lists','docs']"
removed=$(json_field "$tmp/evidence.json" "sum(f['bytes'] - f.get('base_bytes', 0) for f in d['findings'] if f['id'] in $ids)")
kept=$(json_field "$tmp/evidence.json" "sum(f.get('base_bytes', 0) for f in d['findings'] if f['id'] in $ids)")
check "removed bytes are the findings' bytes outside the base ($removed)" \
  test "$(json_field "$tmp/evidence-plan.json" "d['removed_bytes']")" = "$removed"
check "the files that stay are the findings' base bytes ($kept)" \
  test "$(json_field "$tmp/evidence-plan.json" "d['kept_bytes']")" = "$kept"
check "the removed files sum to the removed bytes" \
  test "$(json_field "$tmp/evidence-plan.json" "sum(p['bytes'] for p in d['removed']) == d['removed_bytes'] and d['removed_bytes'] > 0")" = True
check "each file kept says why" \
  test "$(json_field "$tmp/evidence-plan.json" "all(p['why'] for p in d['kept'])")" = True
check "each removed file is above the kept layers" \
  test "$(json_field "$tmp/evidence-plan.json" "all(p['layer'] >= d['keep_layers'] for p in d['removed'])")" = True
check "the size after: before less the squashed and the removed" \
  test "$(json_field "$tmp/evidence-plan.json" "d['after_bytes'] == d['before_bytes'] - d['squashed_bytes'] - d['removed_bytes']")" = True
expect "the text plan" 0 "$bin" slim "$tmp/evidence.tar" --dry-run --remove caches,docs -q
check "the text plan names each removed file with its finding" \
  test "$(grep -c '^  \(pip-cache\|node-cache\|gem-cache\|build-cache\|package-cache\|apt-lists\|docs\)  ' "$tmp/out")" \
  = "$(json_field "$tmp/evidence-plan.json" "len(d['removed']) + len(d['kept'])")"
check "the text plan ends with the size before and after" grep -q "^result:  .* -> .* of files in the layers" "$tmp/out"

# Bad input: exit 2, one line naming what is wrong, nothing written.
expect "no --dry-run: exit 2" 2 "$bin" slim "$dive" -o "$tmp/none.txt"
check "no --dry-run: says the plan is what it makes" grep -q "run it with --dry-run" "$tmp/err"
check "no --dry-run: nothing written" test ! -e "$tmp/none.txt"
expect "an id slim cannot remove: exit 2" 2 "$bin" slim "$dive" --dry-run --remove model-weights-baked
check "an id slim cannot remove: named, with those it can" \
  sh -c "grep -q \"'model-weights-baked'\" '$tmp/err' && grep -q 'apt-lists' '$tmp/err'"
expect "--keep-base past the layers: exit 2" 2 "$bin" slim "$dive" --dry-run --keep-base 99
check "--keep-base past the layers: the count named" grep -q "has [0-9]* layers" "$tmp/err"
expect "a missing image: exit 2" 2 "$bin" slim "$tmp/missing.tar" --dry-run
check "a missing image: named" grep -q "missing.tar" "$tmp/err"
expect "-o json (meant --format): exit 2" 2 "$bin" slim "$dive" --dry-run -o json

echo "slim: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
