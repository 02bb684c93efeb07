#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, clang-14, ASan+UBSan) in
# build-fuzz/ and runs each for SECONDS (default 8: a smoke run of all seven
# in about a minute, as CI does), starting from the seed corpus in
# tests/fuzz/corpus/<target>/ and growing build-fuzz/corpus/<target>/.
# A crash, leak, timeout or out-of-memory is kept in
# build-fuzz/crashes/<target>/ and makes the script exit 1; reproduce one
# with build-fuzz/fuzz/<target> FILE, and turn it into a unit test.
# build-fuzz/ is a whole sanitizer build (IMGSMITH_FUZZ implies
# IMGSMITH_SANITIZE; line tables, -O1 by default): CI builds the unit
# and cli tests' targets in it too and runs them there, so that one build
# serves both (scripts/test.sh); --build-only stops after the build, and
# --run-only runs the targets as they are built, without configuring or
# building (CI, where the mutation check rebuilds in build-fuzz/ beside it,
# and two ninjas must not work on one build).
#   scripts/fuzz.sh [--seconds N] [--jobs N] [--build-only|--run-only] [TARGET...]
# Long runs: scripts/fuzz.sh --seconds 1800 fuzz_tar_scan (30 CPU-minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=8
jobs=1
build_only=no
run_only=no
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --build-only) build_only=yes; shift ;;
    --run-only) run_only=yes; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(fuzz_tar_scan fuzz_image_resolver fuzz_policy fuzz_registry fuzz_gen_readers fuzz_model_headers
  fuzz_cuda_binary fuzz_probe_kernels)
((${#targets[@]})) || targets=("${all[@]}")
command -v clang++-14 >/dev/null || { echo "fuzz.sh: clang++-14 is missing (scripts/setup.sh installs it)" >&2; exit 2; }

# Line tables are all a sanitizer's report needs (file:line in each frame)
# and compile in three quarters of the time of full -g. IMGSMITH_FUZZ_OPT
# (default -O1, libFuzzer's advice; -O0 compiles in half the time, and
# runs the tests slower by more than that) sets the optimisation.
opt=${IMGSMITH_FUZZ_OPT:--O1}
# Ninja where the build is new (a build made with make keeps make).
generator=()
[ -f build-fuzz/CMakeCache.txt ] || ! command -v ninja >/dev/null || generator=(-G Ninja)
# A unity build (IMGSMITH_UNITY=OFF for one file at a time, quicker when
# one file is edited again and again): from cold, each batch of sources is
# compiled as one file, and the headers and templates they share once.
unity=${IMGSMITH_UNITY:-ON}
if [ "$run_only" = yes ]; then
  for target in "${targets[@]}"; do
    [ -x "build-fuzz/fuzz/$target" ] ||
      { echo "fuzz.sh: build-fuzz/fuzz/$target is not built (run scripts/fuzz.sh --build-only first)" >&2; exit 2; }
  done
else
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz "${generator[@]}" -DIMGSMITH_FUZZ=ON -DIMGSMITH_WERROR=ON \
    -DCMAKE_UNITY_BUILD="$unity" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-gline-tables-only $opt" \
    -DCMAKE_CXX_FLAGS_DEBUG="-gline-tables-only $opt" >/dev/null
  cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}"
  [ "$build_only" = yes ] && exit 0
fi

status=0
for target in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$target
  crashes=build-fuzz/crashes/$target
  mkdir -p "$corpus" "$crashes"
  echo "== $target: ${seconds}s"
  parallel=()
  ((jobs > 1)) && parallel=(-jobs="$jobs" -workers="$jobs")
  # Leaks count; an input may take 10 s and 2 GB at most (a bomb must be
  # bounded). Run from build-fuzz/, where libFuzzer's job logs belong.
  # /usr/bin/time counts the CPU time the target got: the figure that
  # matters for "N CPU-minutes of fuzzing" on a shared machine.
  timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "%U %S" -o "$target.cpu")
  if ! (cd build-fuzz && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "${timer[@]}" "fuzz/$target" "corpus/$target" "../tests/fuzz/corpus/$target" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    "${parallel[@]}" -artifact_prefix="crashes/$target/" -print_final_stats=1 \
    >"$target.log" 2>&1); then
    echo "FAIL: $target found a problem (build-fuzz/$target.log; inputs in $crashes/):"
    grep -E "^==[0-9]+==ERROR|SUMMARY|runtime error|Test unit written" "build-fuzz/$target.log" | head -8
    status=1
  else
    { grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "build-fuzz/$target.log" || true; } |
      tr -s ' \n' ' '
    [ -s "build-fuzz/$target.cpu" ] && awk '{ printf "cpu_seconds: %.0f", $1 + $2 }' "build-fuzz/$target.cpu"
    echo
  fi
done
exit $status
