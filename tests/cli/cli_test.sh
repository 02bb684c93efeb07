#!/usr/bin/env bash
# Runs the imgsmith binary as a user would and checks exit statuses, output
# files and messages. Usage: cli_test.sh IMGSMITH FIXTURES_DIR
# Without tmux the terminal check does not run and the test exits 77
# (skipped); in CI (CI=true) it fails.
set -u
bin=$1
fixtures=$2
# shellcheck source=assert.sh
source "$(dirname "$0")/assert.sh"
# shellcheck source=../system/skip.sh
source "$(dirname "$0")/../system/skip.sh" cli

dive="$fixtures/test-docker-image.tar"

expect "help" 0 "$bin" analyze --help
check "help explains exit statuses" grep -q "Exit status" "$tmp/out"
expect "no subcommand is a usage error" 2 "$bin"
expect "unknown flag is a usage error" 2 "$bin" analyze "$dive" --no-such-flag
expect "text report" 0 "$bin" analyze "$dive"
check "text report shows the final size" grep -q "1,188,573" "$tmp/out"
# The default output, whole, against its golden file (written from a run
# that was read line by line; IMGSMITH_UPDATE_GOLDEN=1 rewrites it).
# Run from the fixtures' folder, so that SOURCE does not depend on the checkout's path.
golden="$(cd "$(dirname "$0")/../golden" && pwd)/analyze-test-docker-image.txt"
(cd "$fixtures" && "$bin" analyze test-docker-image.tar >"$tmp/out" 2>"$tmp/err")
[ -n "${IMGSMITH_UPDATE_GOLDEN:-}" ] && cp "$tmp/out" "$golden"
check "text report equals tests/golden/analyze-test-docker-image.txt" diff -u "$golden" "$tmp/out"

# Every repeatable option (its --help shows "..." after the value) takes one
# value a use: the word after that value is the command's own argument.
# CLI11 let such an option take every word that follows, so
# `analyze --deny pip-cache IMAGE` said "IMAGE is required".
cp -r "$(dirname "$0")/../../examples/fraud-api-cpu" "$tmp/project"
python3 - "$tmp/weights.safetensors" <<'PY'
import json, struct, sys
header = json.dumps({"w": {"dtype": "F16", "shape": [600, 1000], "data_offsets": [0, 1200000]}}).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(header)) + header + bytes(1200000))
PY
repeatable_value() {
  case "$1" in
    --deny) echo pip-cache ;;
    --ignore) echo '/opt/models/**' ;;
    --budget) echo cuda=1GiB ;;
    --limit) echo entries=1000000 ;;
    --report) echo "json=$tmp/also.json" ;;
    --insecure-registry) echo localhost:5000 ;;
    --gpu) echo H100 ;;
    --model) echo "$tmp/weights.safetensors" ;;
    *) echo "" ;;
  esac
}
for command in analyze diff gen; do
  options=$("$bin" "$command" --help | grep -oE '^ +--[a-z-]+ [^ ]+ \.\.\.' | awk '{print $1}')
  check "imgsmith $command --help lists repeatable options" test -n "$options"
  for option in $options; do
    value=$(repeatable_value "$option")
    check "$command $option has a value in this test" test -n "$value"
    case "$command" in
      analyze) expect "analyze $option VALUE IMAGE" 0 "$bin" analyze "$option" "$value" "$dive" -q -o "$tmp/r.json" ;;
      diff) expect "diff $option VALUE BEFORE AFTER" 0 "$bin" diff "$option" "$value" "$dive" "$dive" -q -o "$tmp/r.json" ;;
      gen) expect "gen $option VALUE DIR" 0 "$bin" gen "$option" "$value" "$tmp/project" --stdout ;;
    esac
  done
done

expect "json report to a file" 0 "$bin" analyze "$dive" --format json -o "$tmp/report.json"
expect "a CycloneDX SBOM to a file" 0 "$bin" analyze "$dive" --format cyclonedx -o "$tmp/sbom.json" -q
check "the SBOM is CycloneDX 1.5 JSON, named for the image" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["bomFormat"] == "CycloneDX" and d["specVersion"] == "1.5", d
assert d["serialNumber"].startswith("urn:uuid:") and isinstance(d["components"], list)
assert d["metadata"]["component"]["type"] == "container"
' "$tmp/sbom.json"
expect "the same image, the same SBOM" 0 "$bin" analyze "$dive" --format cyclonedx -o "$tmp/sbom2.json" -q
check "the SBOM is reproducible" cmp -s "$tmp/sbom.json" "$tmp/sbom2.json"
expect "diff refuses cyclonedx" 2 "$bin" diff "$dive" "$dive" --format cyclonedx
check "it names the formats diff has" grep -q "not available for diff" "$tmp/err"
expect "a SARIF report for code scanning" 0 "$bin" analyze "$dive" --format sarif -o "$tmp/scan.sarif" -q
check "SARIF 2.1.0: every result has a known rule, a level and a location in the image" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == "2.1.0" and len(d["runs"]) == 1, d
run = d["runs"][0]
rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
assert run["results"], "the fixture has waste, so results"
for r in run["results"]:
    assert rules[r["ruleIndex"]] == r["ruleId"], r
    assert r["level"] in ("note", "warning", "error"), r
    loc = r["locations"][0]["physicalLocation"]
    assert not loc["artifactLocation"]["uri"].startswith("/") and loc["region"]["startLine"] == 1, r
' "$tmp/scan.sarif"
expect "a GitLab Code Quality report" 0 "$bin" analyze "$dive" --format gitlab-codequality -o "$tmp/cq.json" -q
check "Code Quality: an array of issues, each fingerprint once" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, list) and d, d
assert len({i["fingerprint"] for i in d}) == len(d)
assert all(i["severity"] in ("info", "minor", "major", "critical", "blocker") for i in d)
assert all(i["location"]["path"] and i["location"]["lines"]["begin"] == 1 for i in d)
' "$tmp/cq.json"
check "json report has the schema" grep -q '"schema": "imgsmith.analysis/v1"' "$tmp/report.json"
check "json report has the dive efficiency" grep -q '"efficiency": 0.9844212134184309' "$tmp/report.json"
check "json report says what the read was checked against" \
  grep -q '"verified": "the file unchanged (size and modification time) from the start of the read to its end"' "$tmp/report.json"

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
# Mistakes a user makes, each answered with what was meant.
expect "analyse, as the British spell it, is analyze" 0 "$bin" analyse "$dive" -q
expect "a misspelt command" 2 "$bin" analyz "$dive"
check "is named, with the command meant" grep -q "imgsmith: error: 'analyz' is not a command; did you mean 'imgsmith analyze'?" "$tmp/err"
expect "a misspelt option" 2 "$bin" analyze "$dive" --max-sise 1MB
check "is named, with the option meant" grep -q "imgsmith: error: '--max-sise' is not an option of imgsmith analyze; did you mean '--max-size'?" "$tmp/err"
expect "-o with a format's name" 2 env -C "$tmp" "$bin" analyze "$dive" -o json
check "says --format was meant" grep -q "give --format json (with -o FILE to write it to a file)" "$tmp/err"
check "and writes no file named json" test ! -e "$tmp/json"
expect "a GPU named as users type it" 0 "$bin" analyze "$dive" --fits rtx4090 -q
expect "a GPU that is not known" 2 "$bin" analyze "$dive" --fits RTX3090
check "is called unknown, with the nearest one" grep -q "unknown GPU (one of: .*); did you mean RTX-4090?" "$tmp/err"
expect "a parser error" 2 "$bin" analyze
check "has the prefix every error has" grep -q "^imgsmith: error: IMAGE is required" "$tmp/err"
# Output that cannot be written is never a success: standard output on a
# full device, and a report file on one (a device is written in place).
if [ -w /dev/full ]; then
  expect "a report to a full standard output" 74 sh -c "\"$bin\" analyze \"$dive\" > /dev/full"
  check "a full standard output is named" grep -q "standard output: cannot write: No space left on device" "$tmp/err"
  expect "json to a full standard output" 74 sh -c "\"$bin\" analyze \"$dive\" --format json > /dev/full"
  expect "a report file on a full device" 74 "$bin" analyze "$dive" -o /dev/full
  check "the full device is named" grep -q "/dev/full: cannot write" "$tmp/err"
  expect "gen's Dockerfile to a full standard output" 74 sh -c "\"$bin\" gen \"$(dirname "$0")/../../examples/fraud-api-cpu\" --stdout > /dev/full"
fi
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

# File names are bytes: an image with every odd class of name (Latin-1, an
# invalid sequence, newline, CR, tab, escape sequences, DEL, a C1 control, a
# bidi override, a 4,000-byte name in a pax header), as docker save writes it.
python3 - "$tmp" <<'PY'
import hashlib, io, json, sys, tarfile
out = sys.argv[1]
long_name = b"odd/long/" + b"/".join([b"d" * 99] * 40)
long_name = long_name[:3995] + b"/file"
names = [b"odd/latin1-caf\xe9", b"odd/bytes-\xff\xfe\xc3", b"odd/new\nline", b"odd/carriage\rreturn",
         b"odd/tab\there", b"odd/esc\x1b[2J\x1b[31mred", b"odd/del\x7f", b"odd/c1-\xc2\x9b2J",
         b"odd/bidi-\xe2\x80\xaetxt.exe", b"odd/na\xc3\xafve", long_name]
def s(b): return b.decode("utf-8", "surrogateescape")
def layer(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8",
                      errors="surrogateescape") as t:
        for name, size in entries:
            info = tarfile.TarInfo(s(name)); info.size = size; info.mtime = 1700000000
            t.addfile(info, io.BytesIO(b"x" * size))
    return buf.getvalue()
def save(path, layers, history):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        def add(name, data):
            info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
        ids = []
        for i, l in enumerate(layers):
            add("l%d/layer.tar" % i, l); ids.append("l%d/layer.tar" % i)
        config = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
            "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(l).hexdigest() for l in layers]},
            "history": [{"created_by": h} for h in history]}).encode()
        add("config.json", config)
        add("manifest.json", json.dumps([{"Config": "config.json", "RepoTags": ["odd:1"], "Layers": ids}]).encode())
base = layer([(n, 1000 + 100 * i) for i, n in enumerate(names)])
again = layer([(b"odd/.wh.latin1-caf\xe9", 0), (names[5], 5000)])
gone = layer([(b"odd/.wh.esc\x1b[2J\x1b[31mred", 0)])
history = ["ADD odd.tar /", "RUN \x1b[2J\rprintf caf\u00e9"]
save(out + "/odd.tar", [base, again], history)
save(out + "/odd2.tar", [base, again, gone], history + ["RUN rm"])
with open(out + "/names", "w") as f:
    json.dump([n.hex() for n in names], f)
# v1 and v2 for diff: v2 adds two large files (n1, n2), removes "gone" and resizes d.
v1 = layer([(b"a", 5000), (b"gone", 4500), (b"b", 4000), (b"c", 3000), (b"d", 2000), (b"e", 1000)])
v2 = layer([(b"n1", 6000), (b"n2", 5500), (b"a", 5000), (b"b", 4000), (b"c", 3000), (b"d", 2500), (b"e", 1000)])
save(out + "/v1.tar", [v1], ["ADD v1"])
save(out + "/v2.tar", [v2], ["ADD v2"])
PY
# Nothing a terminal, a log or an XML parser could act on: no raw control
# character but the line ends, no C1 control, no bidi override, no invalid UTF-8.
inert() {
  python3 -c '
import sys
t = open(sys.argv[1], "rb").read().decode("utf-8")  # raises on invalid UTF-8
bad = [c for c in t if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) <= 0x9f or c == "\u202e"]
sys.exit(1 if bad else 0)' "$1"
}
expect "odd names: json" 0 "$bin" analyze "$tmp/odd.tar" --format json --top 100 -o "$tmp/odd.json"
cat >"$tmp/odd-check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [bytes.fromhex(h) for h in json.load(open(sys.argv[2]))]
def raw(item, key="path"):
    return bytes.fromhex(item[key + "_bytes"]) if key + "_bytes" in item else item[key].encode()
listed = {raw(f): f for f in d["largest_files"]}
ok = True
for n in names[1:]:  # the Latin-1 name is deleted by layer 1
    f = listed.get(b"/" + n)
    try:
        n.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    ok = ok and f is not None and ("path_bytes" in f) == (not valid)
ok = ok and any(raw(w) == b"/" + names[0] for w in d["waste"])
ok = ok and any(raw(p) == b"/" + names[5] for p in d["dive"]["inefficient_paths"])
ok = ok and "\x1b[2J\r" in d["layers"][1]["created_by"]
sys.exit(0 if ok else 1)
PY
check "odd names: every name round-trips through path / path_bytes" python3 "$tmp/odd-check.py" "$tmp/odd.json" "$tmp/names"
expect "odd names: text" 0 "$bin" analyze "$tmp/odd.tar" --top 100
check "odd names: text is inert" inert "$tmp/out"
check "odd names: text shows escapes" grep -qF '/odd/esc\x1b[2J\x1b[31mred' "$tmp/out"
check "odd names: a newline in a name starts no line" sh -c "! grep -q '^line' '$tmp/out'"
check "odd names: Latin-1 shown as \\xe9" grep -qF '/odd/latin1-caf\xe9' "$tmp/out"
# The same text on a real terminal (tmux): what the pane shows is the text,
# line for line, so no name cleared the screen, moved the cursor or
# rewrote a line.
cp "$tmp/out" "$tmp/odd.txt"
if command -v tmux >/dev/null; then
  printf 'set -g history-limit 100000\n' >"$tmp/tmux.conf"
  tmux -f "$tmp/tmux.conf" -S "$tmp/tmux.sock" new-session -d -x 200 -y 40 \
    "cat '$tmp/odd.txt'; tmux -S '$tmp/tmux.sock' wait-for -S shown; sleep 60"
  timeout 20 tmux -S "$tmp/tmux.sock" wait-for shown
  tmux -S "$tmp/tmux.sock" capture-pane -p -J -S - >"$tmp/pane.txt"
  tmux -S "$tmp/tmux.sock" kill-server
  check "odd names: a terminal shows the text report as it is, line for line" python3 -c '
import sys
text = [l.rstrip() for l in open(sys.argv[1], encoding="utf-8").read().splitlines()]
pane = [l.rstrip() for l in open(sys.argv[2], encoding="utf-8").read().splitlines()]
while pane and not pane[-1]: pane.pop()
sys.exit(0 if pane == text and len(text) > 20 else 1)' "$tmp/odd.txt" "$tmp/pane.txt"
else
  skip_part "odd names: the terminal check: tmux is not installed (scripts/setup.sh installs it)"
fi
expect "odd names: markdown" 0 "$bin" analyze "$tmp/odd.tar" --format markdown
check "odd names: markdown is inert" inert "$tmp/out"
expect "odd names: junit" 1 "$bin" analyze "$tmp/odd.tar" --format junit --deny deleted-in-later-layer -o "$tmp/odd.xml" -q
check "odd names: junit is inert" inert "$tmp/odd.xml"
check "odd names: junit is XML" python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/odd.xml"
odd_source="$tmp/odd-$(printf '\351\033')[2J.tar"
cp "$tmp/odd.tar" "$odd_source"
expect "odd names: a source name that is not UTF-8" 0 "$bin" analyze "$odd_source" --format json -o "$tmp/odd-src.json"
check "odd names: source_bytes gives the name back" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if bytes.fromhex(d["source_bytes"]).endswith(b"/odd-\xe9\x1b[2J.tar") else 1)' "$tmp/odd-src.json"
expect "odd names: diff of a saved report and an image, json" 0 "$bin" diff "$tmp/odd.json" "$tmp/odd2.tar" --format json -o "$tmp/odd-diff.json" -q
check "odd names: diff reads names back through path_bytes" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["files"]
names = [bytes.fromhex(h) for h in json.load(open(sys.argv[2]))]
removed = [bytes.fromhex(f["path_bytes"]) if "path_bytes" in f else f["path"].encode() for f in d["removed"]]
sys.exit(0 if removed == [b"/" + names[5]] and not d["added"] and not d["resized"] else 1)' "$tmp/odd-diff.json" "$tmp/names"
expect "odd names: diff text" 0 "$bin" diff "$tmp/odd.tar" "$tmp/odd2.tar"
check "odd names: diff text is inert" inert "$tmp/out"
check "odd names: diff text shows the removed name escaped" grep -qF -- '- 5.00 kB  /odd/esc\x1b[2J\x1b[31mred' "$tmp/out"

# diff compares sets: a file that only dropped out of the other side's
# largest-files list is not gone.
expect "v1 report" 0 "$bin" analyze "$tmp/v1.tar" --top 4 --format json -o "$tmp/v1.json"
expect "v2 report" 0 "$bin" analyze "$tmp/v2.tar" --top 4 --format json -o "$tmp/v2.json"
expect "diff of two saved reports" 0 "$bin" diff "$tmp/v1.json" "$tmp/v2.json" --format json -q
check "no file still there is called removed" python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["files"]
p = lambda l: [x["path"] for x in f[l]]
sys.exit(0 if p("removed") == [] and p("left_largest") == ["/gone"] and p("entered_largest") == ["/n1", "/n2"] else 1)' "$tmp/out"
expect "diff of two images" 0 "$bin" diff "$tmp/v1.tar" "$tmp/v2.tar" --format json --top 1 -q
check "images are compared file by file, lists cut to --top" python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["files"]
p = lambda l: [x["path"] for x in f[l]]
sys.exit(0 if p("removed") == ["/gone"] and p("added") == ["/n1"] and f["counts"]["added"] == 2 and p("resized") == ["/d"] else 1)' "$tmp/out"
expect "diff of a saved report and an image, text" 0 "$bin" diff "$tmp/v1.json" "$tmp/v2.tar"
check "a file the report cannot place is not called removed" sh -c "! grep -q '^  - .*/c\$' '$tmp/out'"
check "a file gone from the image is" grep -q '^  - 4.50 kB  /gone$' "$tmp/out"

# --top cuts every list; the totals count all.
expect "top cuts dive's inefficient paths" 0 "$bin" analyze "$dive" --top 2 --format json
check "at most --top inefficient paths, the total beside them" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
i = d["dive"]["inefficient_paths"]
ok = len(i) == 2 and d["dive"]["inefficient_paths_total"] > 2 and len(d["largest_files"]) == 2
ok = ok and len(d["waste"]) <= 2 and all(len(f["paths"]) <= 2 for f in d["findings"])
sys.exit(0 if ok else 1)' "$tmp/out"

# --report FORMAT=FILE: more reports from the same run, written even when a gate fails.
expect "--report: several formats from one run, the gate still decides" 1 "$bin" analyze "$dive" -q --max-size 1MB \
  --report markdown="$tmp/extra.md" --report json="$tmp/extra.json" --report html="$tmp/extra.html" -o "$tmp/main.txt"
check "--report: the markdown report" grep -q "max-size" "$tmp/extra.md"
check "--report: the json report is the one --format json writes" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["size"]["final_bytes"] == 1188573 and not d["gate"]["passed"] else 1)' "$tmp/extra.json"
check "--report: the html report" grep -q "Content-Security-Policy" "$tmp/extra.html"
check "--report: the main report still goes to -o" grep -q "1,188,573" "$tmp/main.txt"
expect "--report: an unknown format is a usage error, before any read" 2 "$bin" analyze /no/such/image --report yaml=x.yaml
check "--report: says which formats exist" grep -q "unknown format 'yaml'" "$tmp/err"
expect "--report: FORMAT=FILE is required" 2 "$bin" analyze "$dive" --report html
expect "--report: diff too" 0 "$bin" diff "$dive" "$tmp/extra.json" -q --report markdown="$tmp/diff.md" -o /dev/null
check "--report: the diff's markdown" test -s "$tmp/diff.md"

# Progress: under a pseudo-terminal (script) a line redrawn in place that
# ends erased, the report alone on stdout; piped, nothing; never, nothing.
if command -v script >/dev/null; then
  script -qec "'$bin' analyze '$dive' --format json > '$tmp/pty-report.json'" /dev/null >"$tmp/pty.txt" 2>&1
  check "progress: shown on a terminal" grep -q "imgsmith: read layer 14/14: 1.47 MB of 1.47 MB" "$tmp/pty.txt"
  check "progress: redrawn in place" grep -q $'\r\033\[Kimgsmith: ' "$tmp/pty.txt"
  check "progress: the line ends erased" test "$(tail -c 4 "$tmp/pty.txt" | od -An -c | tr -d ' ')" = '\r033[K'
  check "progress: the report on stdout is the report alone" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/pty-report.json"
  script -qec "'$bin' analyze '$dive' --progress never -o /dev/null" /dev/null >"$tmp/pty-never.txt" 2>&1
  check "progress: never, even on a terminal" test ! -s "$tmp/pty-never.txt"
fi
expect "progress: piped, stderr holds no progress" 0 "$bin" analyze "$dive" -o /dev/null
check "progress: piped, no progress line" test ! -s "$tmp/err"
expect "progress: always, piped, a line at a time" 0 "$bin" analyze "$dive" -o /dev/null --progress always
check "progress: always writes whole lines, no redraw" grep -q "^imgsmith: " "$tmp/err"
check "progress: always, no carriage return" test "$(tr -cd '\r' <"$tmp/err" | wc -c)" -eq 0
expect "progress: an unknown mode is a usage error" 2 "$bin" analyze "$dive" --progress sometimes

# The README's findings example (examples/images/findings-evidence.json):
# each finding's fix is the one for this image's evidence.
python3 "$(dirname "$0")/../../examples/make_image.py" "$(dirname "$0")/../../examples/images/findings-evidence.json" \
  "$tmp/evidence.tar" --format docker-legacy -q
expect "evidence: analyze" 0 "$bin" analyze "$tmp/evidence.tar" --finding-floor 0
check "evidence: apt's cuBLAS is purged by name, from the step that installed it" \
  sh -c "tr -s ' \n' ' ' <'$tmp/out' | grep -q 'fix: apt-get purge libcublas11 libcublaslt11 (or leave them out of layer 1 (RUN apt-get update'"
check "evidence: no lintian override is a CUDA library" sh -c "! grep -q 'lintian' '$tmp/out'"
check "evidence: apt's and dpkg's state is no finding" sh -c "! grep -q -e metadata-only-readd -e overwritten-in-later-layer '$tmp/out'"
check "evidence: the pip cache's fix names its step" \
  sh -c "tr -s ' \n' ' ' <'$tmp/out' | grep -q 'layer 2 (RUN pip install torch==1.13.1) left most of it'"
check "evidence: numpy features are no model" sh -c "! grep -q -e model-weights -e numpy '$tmp/out'"
check "evidence: the venv's byte code is its distribution's" grep -q "fastjson  *5.50 MB" "$tmp/out"

echo "cli: $pass passed, $fail failed"
finish
