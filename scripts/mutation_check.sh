#!/usr/bin/env bash
# Mutation check: breaks a critical line on purpose, one break at a time,
# rebuilds unit_tests (one object and the link) and runs the cases that
# guard that line; every break must turn them red. A break that leaves them
# green is a behaviour no test holds: write the test, then run this again.
#   scripts/mutation_check.sh [--list] [--suite-passed] [BUILD_DIR] [NAME...]
# BUILD_DIR (default build/) must hold a configured build; NAME picks
# breaks by name (all by default). Each file is put back as it was when the
# break is done, on failure and on Ctrl-C too; a file left broken by a kill
# -9 is put back by the next run (its copy waits in BUILD_DIR/mutation-backup/).
# Before the breaks, each break's cases run on the code as it is, to show
# they pass; --suite-passed (CI, which has just run every unit case in
# BUILD_DIR) only checks that each break names cases that exist.
# Where a break's rebuild is one source's object, its library and the test
# binary, those three are saved first and put back afterwards with their
# times, so ninja sees the build as it was and the next break compiles only
# its own file; the binary's digest at the end must equal its digest at the
# start. Breaks of a header or of embedded data rebuild what they touched,
# and before the next break that saves its outputs the build catches up
# with the file put back (saved then, the outputs would still hold it).
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."

names=() files=() befores=() afters=() specs=()
# break NAME FILE BEFORE AFTER SPEC: replace the text BEFORE (found exactly
# once in FILE) with AFTER, and run the cases SPEC names (a Catch2 test spec).
break_() {
  names+=("$1") files+=("$2") befores+=("$3") afters+=("$4") specs+=("$5")
}

break_ redirect-protocols src/registry/http.cpp \
  '  if (protocols_option_result(curl().easy_setopt(easy_, CURLOPT_PROTOCOLS_STR, "http,https")) ==
      ProtocolsOption::use_bitmask) {
    set(kProtocolsBitmaskOption, "CURLOPT_PROTOCOLS",
        static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    set(kRedirProtocolsBitmaskOption, "CURLOPT_REDIR_PROTOCOLS",
        static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  } else {
    set(CURLOPT_REDIR_PROTOCOLS_STR, "CURLOPT_REDIR_PROTOCOLS_STR", "http,https");
  }' \
  '' \
  'registry http: *'
# (The redirect limit alone, dropped, is no break: libcurl holds redirects
# to CURLOPT_PROTOCOLS_STR as well.)
break_ url-protocols src/registry/http.cpp \
  'protocols_option_result(curl().easy_setopt(easy_, CURLOPT_PROTOCOLS_STR, "http,https"))' \
  'protocols_option_result(CURLE_OK)' \
  'registry http: *'
break_ gen-walk-depth src/gen/detect_walk.cpp \
  'if (it.depth() >= kMaxDepth ||' \
  'if (it.depth() >= kMaxDepth * 1000 ||' \
  'gen walk: *'
break_ pax-linkpath src/source/tar_reader.cpp \
  'else if (key == "linkpath")' \
  'else if (key == "linkpath-ignored")' \
  'layer scan: *,bad input: *,file names are bytes*'
break_ provenance-usr-local src/attribution/attribute.cpp \
  '(f.path.starts_with("/usr/local/") || f.path.starts_with("/opt/"))' \
  'f.path.starts_with("/opt/")' \
  'provenance: *,attribution: *'
break_ provenance-opt src/attribution/attribute.cpp \
  '(f.path.starts_with("/usr/local/") || f.path.starts_with("/opt/"))' \
  'f.path.starts_with("/usr/local/")' \
  'provenance: *,attribution: *'
break_ dive-whiteout-of-a-directory src/analysis/dive_metrics.cpp \
  'gone != nullptr && gone->type == EntryType::Dir ?' \
  'gone != nullptr && gone->type != EntryType::Dir ?' \
  'dive*,the first layer merged*,merge: *'
break_ hard-link-keeps-content src/analysis/merged_tree.cpp \
  '      ++inode(target->inode()).names;' \
  '' \
  'merge: *,dive: *,parallel and sequential*,bombs: *'
# vLLM's budget: its share of the board, and a KV head never split.
break_ vllm-utilization src/models/serving.cpp \
  'b.usable = bytes_of(std::floor(static_cast<double>(b.board) * b.utilization));' \
  'b.usable = b.board;' \
  'vLLM*,near the boundary*'
break_ kv-head-split src/models/serving.cpp \
  'const std::uint64_t ways = kv_heads > 0 ? std::min<std::uint64_t>(gpus, kv_heads) : gpus;' \
  'const std::uint64_t ways = gpus;' \
  'vLLM past as many GPUs*'
# The probe's GPU kernels run under an emulation of CUDA's execution model
# (a thread per CUDA thread, __syncthreads a barrier): a block that stages
# the next tile while its threads still read the last is caught.
break_ sgemm-barrier probes/kernels.cu \
  '        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();' \
  '        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }' \
  'probe kernels: *'
# The race's CPU side: each thread's band of rows, whole tiles of four.
break_ cpu-gemm-bands probes/cpu_race.cpp \
  'const int per = ((m + threads - 1) / threads + 3) / 4 * 4;' \
  'const int per = (m / threads) / 4 * 4;' \
  'probe race CPU side: *'
# (The kernels' cases leave out the [slow] ones: they read whole NVIDIA
# libraries, hundreds of MB, and guard the reader, not these rules.)
# A cubin runs on a later minor of its major only (sm_86 on 8.9, never
# sm_89 on 8.6), and an arch-specific build on its own GPU alone (rules
# shared with the probe, in fatbin_format.hpp).
break_ sass-minor-rule include/imgsmith/kernels/fatbin_format.hpp \
  'return arch / 10 == cc / 10 && arch % 10 <= cc % 10;
}
// PTX compute_XY' \
  'return arch / 10 == cc / 10;
}
// PTX compute_XY' \
  '~[slow]kernels: *'
break_ arch-specific-sass include/imgsmith/kernels/fatbin_format.hpp \
  "  if (variant == 'a') return arch == cc;
  return arch / 10" \
  "  if (variant == '?') return arch == cc;
  return arch / 10" \
  '~[slow]kernels: *'
break_ empty-module-judged include/imgsmith/kernels/fatbin_format.hpp \
  '    if (c.kind == KernelKind::Sass && c.empty_entries == c.entries) continue;' \
  '' \
  '~[slow]kernels: *'
# The SASS a target loads is the highest that runs there; NVIDIA's own
# libraries are never counted as rebuildable.
break_ unused-sass-lowest-kept include/imgsmith/kernels/fatbin_format.hpp \
  '(out.sass == nullptr || c.arch > out.sass->arch))' \
  '(out.sass == nullptr || c.arch < out.sass->arch))' \
  '~[slow]kernels: *'
break_ nvidia-libraries-counted src/api/kernel_findings.cpp \
  'owner->second.category == "cuda")' \
  'owner->second.category == "nvidia")' \
  '~[slow]kernels: *'
break_ compressed-size-sum src/analysis/analyze.cpp \
  '      compressed_total += scan.blob_bytes;' \
  '' \
  'dive fixture: *,OCI fixtures: *,docker save*,gzip layers: *'
break_ gate-limit-boundary src/gate/gate.cpp \
  'const bool ok = at_least ? !(actual < limit) : !(actual > limit);' \
  'const bool ok = at_least ? !(actual <= limit) : !(actual >= limit);' \
  'gate: *,dive-ci: *'
# Findings true for the image at hand: a package manager's state rewrites
# are no finding; a file a package database lists keeps its owner (no cache
# rule takes RECORD's byte code); with no package database, a system path
# the user copied in is the app; a numpy array is a model only beside a
# model's config.json.
break_ package-state-no-finding src/attribution/findings.cpp \
  '    if (w.package_state && !deletion) continue;' \
  '' \
  'findings: the state apt*'
break_ cache-only-unowned data/attribution-rules.json \
  '"/src/**/__pycache__/**", "/root/**/__pycache__/**"], "installers": ["unowned"]}' \
  '"/src/**/__pycache__/**", "/root/**/__pycache__/**"]}' \
  'attribution: byte code pip*'
break_ no-database-copied-is-app src/attribution/attribute.cpp \
  '!((provenance || !lists_system_files) && system_unowned)' \
  '!((provenance || (!lists_system_files && provenance)) && system_unowned)' \
  'attribution: in an image with no package database*'
break_ numpy-beside-config src/attribution/attribute.cpp \
  '!beside_model_config(analysis, head.path)) continue;' \
  '!beside_model_config(analysis, head.path) && head.path.empty()) continue;' \
  'attribution: numpy arrays*'

list=false suite_passed=false
while [ $# -gt 0 ]; do
  case $1 in
    --list) list=true ;;
    --suite-passed) suite_passed=true ;;
    *) break ;;
  esac
  shift
done
dir=build
if [ $# -gt 0 ] && (cd "$here" && [ -d "$1" ]); then
  dir=$(cd "$here" && realpath "$1")
  shift
fi
if $list; then
  for i in "${!names[@]}"; do printf '%-26s %s\n' "${names[$i]}" "${files[$i]}"; done
  exit 0
fi
wanted=("$@")
[ -f "$dir/CMakeCache.txt" ] || { echo "mutation_check: $dir is no configured build" >&2; exit 2; }
bin=$dir/tests/unit_tests
backup=$dir/mutation-backup
jobs=$(nproc)

# A run killed before it could put a file back: put it back now.
if [ -d "$backup" ]; then
  for saved in "$backup"/*; do
    [ -f "$saved" ] || continue
    # (saved build outputs and the plan: the source put back with a new
    # time makes ninja rebuild them)
    case $(basename "$saved") in out-* | plan | check) continue ;; esac
    original=$(basename "$saved" | tr '%' '/')
    cp "$saved" "$original"
    echo "mutation_check: put back $original, left broken by an earlier run"
  done
  rm -rf "$backup"
fi

current=""
# restore [-p]: the broken file put back; with -p, with its time as well
# (when its outputs are put back too), else as a new change for ninja.
restore() {
  if [ -n "$current" ]; then
    cp ${1:-} "$backup/${current//\//%}" "$current"
    rm -f "$backup/${current//\//%}"
    current=""
  fi
}
trap 'restore; rm -rf "$backup"' EXIT
trap 'exit 130' INT TERM

build() { cmake --build "$dir" --target unit_tests -j"$jobs" >"$dir/mutation-build.log" 2>&1; }
run() { timeout 600 "$bin" "$1" --warn NoTests >"$dir/mutation-run.log" 2>&1; }

apply_break() {
  python3 - "$@" <<'EOF'
import sys
path, before, after = sys.argv[1:]
text = open(path, encoding="utf-8").read()
if text.count(before) != 1:
    sys.exit(f"mutation_check: '{before}' is in {path} {text.count(before)} times, not once")
open(path, "w", encoding="utf-8").write(text.replace(before, after))
EOF
}

chosen=()
for i in "${!names[@]}"; do
  if ((${#wanted[@]})) && [[ " ${wanted[*]} " != *" ${names[$i]} "* ]]; then continue; fi
  chosen+=("$i")
done
((${#chosen[@]})) || { echo "mutation_check: no break is named ${wanted[*]} (--list names them)" >&2; exit 2; }

echo "mutation_check: building unit_tests in $dir"
build || { echo "mutation_check: unit_tests does not build ($dir/mutation-build.log)"; exit 2; }
digest_before=$(sha256sum "$bin" | cut -d' ' -f1)
# First, as the code is: each break applies, and its cases exist and pass
# (a red run with the break proves nothing otherwise).
mkdir -p "$backup"
for i in "${chosen[@]}"; do
  name=${names[$i]} file=${files[$i]} spec=${specs[$i]}
  cp "$file" "$backup/check"
  if ! apply_break "$backup/check" "${befores[$i]}" "${afters[$i]}"; then
    echo "mutation_check: FAIL: $name: the break no longer applies to $file; update it in $0"
    exit 1
  fi
  rm -f "$backup/check"
  if $suite_passed; then
    if [ "$({ "$bin" "$spec" --list-test-names-only || true; } | grep -c . || true)" = 0 ]; then
      echo "mutation_check: FAIL: $name: no case matches '$spec'"
      exit 1
    fi
  elif ! run "$spec"; then
    echo "mutation_check: FAIL: $name: the cases '$spec' fail without the break ($dir/mutation-run.log)"
    exit 1
  fi
done

# saved_outputs FILE: what ninja rebuilds when FILE changes, where that is
# one object, its static library (unless the object is the test binary's
# own) and the test binary: their paths relative to BUILD_DIR; nothing for
# anything else (a header, embedded data, a source another one includes).
# Read from ninja's graph and its log of each object's headers.
query_outputs() { ninja -C "$dir" -t query "$1" 2>/dev/null | awk '/^  outputs:/ { o = 1; next } o && /^    / { print $1 }'; }
saved_outputs() {
  local source=$PWD/$1 object library
  object=$(query_outputs "$source")
  [[ $(wc -w <<<"$object") == 1 && $object == *.o ]] || return 0
  # Its own object alone names it among the headers and sources it read.
  [ "$(ninja -C "$dir" -t deps 2>/dev/null | grep -cxF "    $source")" -le 1 ] || return 0
  library=$(query_outputs "$object")
  if [ "$library" = tests/unit_tests ]; then
    printf '%s\n' "$object" tests/unit_tests
  elif [[ $(wc -w <<<"$library") == 1 && $library == *.a ]] && query_outputs "$library" | grep -qx tests/unit_tests; then
    printf '%s\n' "$object" "$library" tests/unit_tests
  fi
}

# Grouped by file: a file broken twice in a row is compiled once per break.
mapfile -t chosen < <(for i in "${chosen[@]}"; do printf '%s\t%s\n' "${files[$i]}" "$i"; done | sort -s -t$'\t' -k1,1 | cut -f2)
survived=()
# Whether a break was put back the ordinary way and not rebuilt since: the
# binary then still holds it. Outputs saved in that state would be put back
# holding it too, and ninja, whose log has their rebuilt times, would keep
# them; so the build catches up first.
stale=false
for i in "${chosen[@]}"; do
  name=${names[$i]} file=${files[$i]} spec=${specs[$i]}
  start=$SECONDS
  cases=$({ "$bin" "$spec" --list-test-names-only || true; } | grep -c . || true)
  # The outputs this break rebuilds, saved with their times to be put back.
  mapfile -t outputs < <(saved_outputs "$file")
  if ((${#outputs[@]})) && $stale; then
    build || { echo "mutation_check: unit_tests does not build as the sources are ($dir/mutation-build.log)"; exit 2; }
    stale=false
  fi
  cp -p "$file" "$backup/${file//\//%}"
  current=$file
  apply_break "$file" "${befores[$i]}" "${afters[$i]}"
  for output in "${outputs[@]}"; do cp -p "$dir/$output" "$backup/out-${output//\//%}"; done
  # A break put back without its outputs is rebuilt here too.
  if ! build; then
    echo "mutation_check: FAIL: $name: the broken $file does not compile ($dir/mutation-build.log)"
    exit 1
  fi
  if run "$spec"; then
    echo "mutation_check: SURVIVED $name ($file): the $cases cases of '$spec' still pass"
    survived+=("$name")
  else
    failed=$(grep -E '^test cases:' "$dir/mutation-run.log" | tail -1 || true)
    echo "mutation_check: caught $name ($file), $((SECONDS - start))s: ${failed:-the run failed}"
  fi
  if ((${#outputs[@]})); then restore -p; else restore; stale=true; fi
  for output in "${outputs[@]}"; do
    cp -p "$backup/out-${output//\//%}" "$dir/$output"
    rm -f "$backup/out-${output//\//%}"
  done
done
echo "mutation_check: rebuilding unit_tests as the sources are"
build || { echo "mutation_check: unit_tests does not build after the run ($dir/mutation-build.log)"; exit 2; }
if [ "$(sha256sum "$bin" | cut -d' ' -f1)" != "$digest_before" ]; then
  # Only a break rebuilt the ordinary way leaves a binary linked anew; it
  # must still be the code as it is: its cases pass again.
  for i in "${chosen[@]}"; do
    run "${specs[$i]}" || { echo "mutation_check: FAIL: after the run, '${specs[$i]}' fails on the code as it is"; exit 1; }
  done
fi
if ((${#survived[@]})); then
  echo "mutation_check: FAIL: ${#survived[@]} of ${#chosen[@]} breaks left their cases green: ${survived[*]}"
  exit 1
fi
echo "mutation_check: all ${#chosen[@]} breaks turned their cases red"
