#!/usr/bin/env bash
# Runs the imgsmith binary as a user would and checks exit statuses, output
# files and messages. Usage: cli_test.sh IMGSMITH FIXTURES_DIR
set -u
bin=$1
fixtures=$2
# shellcheck source=assert.sh
source "$(dirname "$0")/assert.sh"

dive="$fixtures/test-docker-image.tar"

expect "help" 0 "$bin" analyze --help
check "help explains exit statuses" grep -q "Exit status" "$tmp/out"
expect "no subcommand is a usage error" 2 "$bin"
expect "unknown flag is a usage error" 2 "$bin" analyze "$dive" --no-such-flag
expect "text report" 0 "$bin" analyze "$dive"
check "text report shows the final size" grep -q "1,188,573" "$tmp/out"

expect "json report to a file" 0 "$bin" analyze "$dive" --format json -o "$tmp/report.json"
check "json report has the schema" grep -q '"schema": "imgsmith.analysis/v1"' "$tmp/report.json"
check "json report has the dive efficiency" grep -q '"efficiency": 0.9844212134184309' "$tmp/report.json"

expect "gate passes" 0 "$bin" analyze "$dive" --max-size 2MB --min-efficiency 0.9 -q
expect "gate fails with status 1" 1 "$bin" analyze "$dive" --max-size 1MB --format json -o "$tmp/gated.json"
check "a failed gate still writes its report" grep -q '"rule": "max-size"' "$tmp/gated.json"
check "a failed gate names the rule on stderr" grep -q "max-size" "$tmp/err"
expect "wasted percentage gate" 1 "$bin" analyze "$dive" --max-wasted 1%
expect "wasted bytes gate" 0 "$bin" analyze "$dive" --max-wasted 32025
expect "dive-ci file" 0 "$bin" analyze "$dive" --dive-ci "$fixtures/.dive-ci"
printf 'rules:\n  highestWastedBytes: 1B\n' >"$tmp/strict.dive-ci"
expect "dive-ci strict file fails" 1 "$bin" analyze "$dive" --dive-ci "$tmp/strict.dive-ci"

expect "bad size is a usage error" 2 "$bin" analyze "$dive" --max-size 12parsecs
expect "ratio out of range" 2 "$bin" analyze "$dive" --min-efficiency 95
expect "not an image" 2 "$bin" analyze "$fixtures/not-an-image-rootfs.tar"
check "not an image names the file" grep -q "not-an-image-rootfs.tar" "$tmp/err"
check "the error is one line" test "$(wc -l <"$tmp/err")" -eq 1
expect "missing file" 2 "$bin" analyze "$tmp/missing.tar" -o "$tmp/never.json"
check "no report is written on error" test ! -e "$tmp/never.json"
check "no temporary file is left behind" test -z "$(ls "$tmp" | grep tmp-)"
expect "unknown platform on a multi-platform-free image is checked" 2 \
  "$bin" analyze "$fixtures/test-oci-gzip-image.tar" --platform linux/amd64
expect "platform that matches" 0 "$bin" analyze "$fixtures/test-oci-gzip-image.tar" --platform linux/arm64
expect "report into a missing directory" 2 "$bin" analyze "$dive" -o "$tmp/no/such/dir/r.json"
expect "stdin" 0 sh -c "\"$bin\" analyze - --format json < \"$dive\""
check "stdin gives the same final size" grep -q '"final_bytes": 1188573' "$tmp/out"
gzip -c "$dive" >"$tmp/dive.tar.gz"
expect "gzip-compressed save" 0 "$bin" analyze "$tmp/dive.tar.gz" --format json
check "compressed save gives the same final size" grep -q '"final_bytes": 1188573' "$tmp/out"

expect "budget passes" 0 "$bin" analyze "$dive" --budget other=2MB --budget other/system-unowned=2MB -q
expect "budget fails" 1 "$bin" analyze "$dive" --budget app=1kB -q
check "budget violation names the category" grep -q "budget:app" "$tmp/err"
expect "unknown budget category" 2 "$bin" analyze "$dive" --budget gpu=1GB
expect "deny a present finding" 1 "$bin" analyze "$dive" --deny deleted-in-later-layer -q
expect "deny an absent finding" 0 "$bin" analyze "$dive" --deny devel-in-final -q
expect "deny an unknown finding" 2 "$bin" analyze "$dive" --deny no-such-finding
expect "ignore removes paths from findings" 0 "$bin" analyze "$dive" --ignore '/root/**' --ignore '/tmp/**' \
  --deny deleted-in-later-layer --deny overwritten-in-later-layer -q
expect "ignore removes paths from the waste list" 0 "$bin" analyze "$dive" --ignore '/root/**' --format json
python3 - "$tmp/out" >"$tmp/waste-paths" <<'PY'
import json, sys
print("\n".join(w["path"] for w in json.load(open(sys.argv[1]))["waste"]))
PY
check "no ignored path in waste" sh -c "! grep -q '^/root' '$tmp/waste-paths'"
printf '{"rules":[{"category":"app","child":"busybox","paths":["/bin/**"]}]}' >"$tmp/rules.json"
expect "user rules" 0 "$bin" analyze "$dive" --rules "$tmp/rules.json" --format json -o "$tmp/rules-report.json"
check "user rules move bytes" grep -q '"name": "busybox"' "$tmp/rules-report.json"
printf '{"rules":[{"category":"gpu","paths":["**"]}]}' >"$tmp/bad-rules.json"
expect "bad rules file" 2 "$bin" analyze "$dive" --rules "$tmp/bad-rules.json"
check "bad rules file is named" grep -q "bad-rules.json" "$tmp/err"
expect "json has categories and findings" 0 "$bin" analyze "$dive" --format json
check "categories in json" grep -q '"categories"' "$tmp/out"
check "findings in json" grep -q '"id": "deleted-in-later-layer"' "$tmp/out"

kaniko="$fixtures/test-kaniko-image.tar"
expect "save a baseline" 0 "$bin" analyze "$dive" --format json -o "$tmp/base.json" -q
expect "diff against a saved baseline" 0 "$bin" diff "$tmp/base.json" "$kaniko"
check "diff shows the growth" grep -q "+91.59 kB" "$tmp/out"
expect "diff gate passes" 0 "$bin" diff "$tmp/base.json" "$kaniko" --max-growth 100kB -q
expect "diff gate fails" 1 "$bin" diff "$dive" "$kaniko" --max-growth 5% --format json -o "$tmp/diff.json" -q
check "diff json written on gate failure" grep -q '"schema": "imgsmith.diff/v1"' "$tmp/diff.json"
expect "diff markdown" 0 "$bin" diff "$dive" "$kaniko" --format markdown
check "diff markdown has the category table" grep -q "| category | old | new | change |" "$tmp/out"
expect "diff bad growth" 2 "$bin" diff "$dive" "$kaniko" --max-growth lots
expect "diff of a non-report JSON" 2 "$bin" diff "$fixtures/../dive/.dive-ci" "$kaniko"
echo '{"schema":"x"}' >"$tmp/x.json"
expect "diff of a foreign JSON" 2 "$bin" diff "$tmp/x.json" "$kaniko"
check "foreign JSON is named" grep -q "x.json" "$tmp/err"

mkdir -p "$tmp/proj/sub"
printf '[analyze]\nmax-size = "1MB"\n[diff]\nmax-growth = "1%%"\n' >"$tmp/proj/imgsmith.toml"
expect "policy found from a subdirectory" 1 sh -c "cd \"$tmp/proj/sub\" && \"$bin\" analyze \"$dive\" -q"
expect "a flag overrides the policy" 0 sh -c "cd \"$tmp/proj/sub\" && \"$bin\" analyze \"$dive\" -q --max-size 2MB"
expect "--no-policy ignores it" 0 sh -c "cd \"$tmp/proj\" && \"$bin\" analyze \"$dive\" -q --no-policy"
expect "diff reads max-growth from the policy" 1 sh -c "cd \"$tmp/proj\" && \"$bin\" diff \"$dive\" \"$kaniko\" -q"
printf '[analyze]\nmax_size = 1\n' >"$tmp/bad.toml"
expect "a bad policy is an error" 2 "$bin" analyze "$dive" --policy "$tmp/bad.toml"
check "a bad policy names file and line" grep -q "bad.toml:2" "$tmp/err"

expect "hash" 0 "$bin" analyze "$dive" --hash --format json
check "hash finds the copies of somefile" grep -q '"id": "duplicate-content"' "$tmp/out"

expect "docker:// with no daemon" 2 env DOCKER_HOST=unix://$tmp/no-daemon.sock "$bin" analyze docker://app:1
check "it says the daemon cannot be reached" grep -q "cannot reach the Docker daemon at unix://$tmp/no-daemon.sock" "$tmp/err"
expect "docker:// over TLS is refused" 2 env DOCKER_HOST=tcp://127.0.0.1:2376 DOCKER_TLS_VERIFY=1 "$bin" analyze docker://app:1
check "it says why" grep -q "does not speak TLS" "$tmp/err"
expect "a missing archive is a file error, not a registry lookup" 2 "$bin" analyze "$tmp/missing.tar"
check "it names the file" grep -q "$tmp/missing.tar: No such file" "$tmp/err"

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
