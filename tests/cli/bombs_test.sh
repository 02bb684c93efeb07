#!/usr/bin/env bash
# A million empty files in one gzip layer (512 MB of tar headers in a 9 MB
# save), as users run imgsmith on it: read to an exact count in bounded
# memory, refused in one line under a lower --limit entries, and --limit
# itself checked before anything is read. The other bombs (a 1 GiB manifest
# or config, a layer listed 10,000 times, link loops, a 1,000x gzip layer, a
# zstd window of 2 GiB, long and deep paths) are unit tests (test_limits.cpp).
# Usage: bombs_test.sh IMGSMITH MAX_RSS_MB (0: no memory check, for the
# sanitizers' builds, whose shadow memory is not imgsmith's)
set -u
bin=$1
max_rss_mb=$2
# shellcheck source=assert.sh
source "$(dirname "$0")/assert.sh"

/usr/bin/python3 "$(dirname "$0")/make_bomb.py" "$tmp/million.tar" 1000000 ||
  { echo "FAIL: writing the bomb"; exit 1; }

/usr/bin/time -f '%M' -o "$tmp/rss" "$bin" analyze "$tmp/million.tar" --format json -o "$tmp/m.json" -q
check "a million entries: exit 0" test $? = 0
check "every entry counted" test "$(json_field "$tmp/m.json" "d['layers'][0]['entries']")" = 1000000
check "no bytes made up" test "$(json_field "$tmp/m.json" "d['size']['final_bytes']")" = 0
rss_kb=$(tail -1 "$tmp/rss")
echo "bombs: a million entries read in ${rss_kb} KB of peak memory"
if [ "$max_rss_mb" -gt 0 ]; then
  check "in under $max_rss_mb MB of memory ($rss_kb KB)" test "$rss_kb" -lt $((max_rss_mb * 1024))
fi

expect "over --limit entries" 2 "$bin" analyze "$tmp/million.tar" --limit entries=500000
check "one line naming the layer, the limit and the flag" \
  grep -q "million.tar: layer layer.tar.gz: more than 500,000 entries, over the entries limit of 500,000 (raise it with --limit entries=N)" "$tmp/err"
check "and nothing on stdout" test ! -s "$tmp/out"
expect "a limit that does not exist" 2 "$bin" analyze "$tmp/million.tar" --limit files=10
check "names the limits there are" grep -q "manifest, config, layers, entries, path, depth" "$tmp/err"
expect "diff takes --limit too" 2 "$bin" diff "$tmp/million.tar" "$tmp/million.tar" --limit layers=0
expect "diff under a raised limit" 0 "$bin" diff "$tmp/million.tar" "$tmp/million.tar" --limit entries=2000000 -q

echo "bombs: $pass passed, $fail failed"
[ "$fail" = 0 ]
