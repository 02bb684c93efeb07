#!/usr/bin/env bash
# Sets up, checks the C++ layout (clang-format), then runs two builds side
# by side, each with the tests that need it:
# - the normal build (gcc, warnings are errors) of imgsmith, its probe and
#   what the system tests run, while what they build on (a Debian root, the
#   Docker engine and its stand-ins) is made beside it; then the system
#   tests, once;
# - beside them, at the lowest CPU priority, the clang build with
#   AddressSanitizer and UndefinedBehaviorSanitizer (build-fuzz/), which
#   also makes the fuzz targets: there the check that ctest runs every unit
#   case, the unit tests, the cli tests and a short run of every fuzz target;
# and, after its unit tests, beside its cli tests and fuzz smoke, the
# mutation check in the sanitizer build, once the system tests are done (it
# edits sources, which the package test's build would see); under
# ThreadSanitizer, the unit tests (where the threads are), when
# IMGSMITH_CI_TSAN=1.
# The unit and cli tests run in the sanitizer build alone: it checks all
# that the normal build's run would, and more.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step says when it starts and how long the run has taken so far, so
# that a slow CI run shows where its time went; the end sums them up.
steps=()
step() {
  steps+=("${SECONDS}s $*")
  echo "== $(date -u +%H:%M:%S), ${SECONDS}s in: $*"
}
summary() {  # summary EXIT_STATUS
  local status=$1
  if ((${#steps[@]})); then
    echo "== time per step (exit status $status):"
    local i start next
    for i in "${!steps[@]}"; do
      start=${steps[$i]%%s *}
      next=$SECONDS
      ((i + 1 < ${#steps[@]})) && next=${steps[$((i + 1))]%%s *}
      printf '%6ds  %s\n' $((next - start)) "${steps[$i]#* }"
    done
  fi
}
# What the system tests build on is made while imgsmith compiles
# (tests/system/warm_caches.sh); whatever ends this run waits for it, stops
# the sanitizer build's work if it still runs, and stops the Docker engine
# it started.
warm_pid=""
sanitizer_pid=""
engine_state=$PWD/build/tests/docker-engine.state
on_exit() {
  local status=$?
  [ -n "$warm_pid" ] && wait "$warm_pid" 2>/dev/null
  if [ -n "$sanitizer_pid" ]; then
    kill -- -"$sanitizer_pid" 2>/dev/null
    wait "$sanitizer_pid" 2>/dev/null
    [ -f build-fuzz/ci-sanitizer.log ] && cat build-fuzz/ci-sanitizer.log
  fi
  tests/system/docker_engine.sh stop "$engine_state" >/dev/null 2>&1
  summary "$status"
}
trap on_exit EXIT
jobs=$(nproc)
# The normal build: what the system tests run. -O1 without debug
# information compiles a heavy file in 7.0 s where RelWithDebInfo's -O2 -g
# takes 12.0 (completion_command.cpp); scripts/build.sh (README's build)
# keeps RelWithDebInfo. Both builds are unity builds (each batch of a
# library's sources compiled as one file, the headers and templates they
# share once per batch, not once per file).
test_targets=(imgsmith imgsmith_docs fake_libcuda fake_libnvidia_ml)
sanitizer_targets=(unit_tests imgsmith imgsmith-probe fake_libcuda fake_libnvidia_ml)
# The sanitizer build stays at -O1 (scripts/fuzz.sh): a CI run at -O0
# compiled it in 494 s, but its unit and cli tests then took 382 s against
# 222 at -O1, and each mutation case up to twice as long.
sanitizer_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)

# The sanitizer build, its unit and cli tests and the fuzz smoke, as one
# background job at nice 19 in this session: it takes what the gcc build
# leaves, as both are in this session's autogroup. The system tests' work
# runs in containers, each an autogroup of its own, which nice does not
# rank against this one: there the job takes a fair share, and gen_corpus
# took 1,593 s beside it against 1,097 s beside the cli tests (whole runs:
# 3,239 s against 3,452 s). It logs to build-fuzz/ci-sanitizer.log, with
# its own steps and their times.
#
# The mutation check runs beside the cli tests and the fuzz smoke: it
# rebuilds and runs unit_tests alone (which embeds no probe: the imgsmith
# program does), each break in turn; they run imgsmith, the probe and the
# fuzz targets as built (fuzz.sh --run-only: one ninja in build-fuzz/ at a
# time), which its rebuilds do not touch, and read no file it breaks (data/
# tables are embedded in the binaries). Run after them, it made the last
# 383 s of a 2,061 s run.
system_tests_done=build-fuzz/ci-system-tests-done
mutation_check_after_system_tests() {
  local waited=$SECONDS
  until [ -e "$system_tests_done" ]; do sleep 5; done
  echo "mutation_check: waited $((SECONDS - waited))s for the system tests"
  # exec: the background job's PID is the check's own, which a kill reaches
  # (and on TERM it puts back the file it broke).
  exec env "${sanitizer_env[@]}" scripts/mutation_check.sh --suite-passed build-fuzz
}
mutation_pid=""
sanitizer_build_and_tests() {
  steps=()
  # An early exit stops the mutation check too (which puts back the file
  # it broke), so that nothing edits sources after this job ends.
  trap 'status=$?; [ -n "$mutation_pid" ] && { kill "$mutation_pid" 2>/dev/null; wait "$mutation_pid" 2>/dev/null; }; summary $status' EXIT
  step "sanitizer build: ASan+UBSan under clang, the fuzz targets and the unit and cli tests' targets"
  scripts/fuzz.sh --build-only
  cmake --build build-fuzz -j"$jobs" --target "${sanitizer_targets[@]}"
  scripts/check_test_count.sh build-fuzz
  step "unit tests under ASan+UBSan"
  env "${sanitizer_env[@]}" ctest --test-dir build-fuzz -L '^(unit|slow)$' --output-on-failure -j"$jobs"
  step "mutation check started beside what follows (its log: build-fuzz/ci-mutation.log)"
  mutation_check_after_system_tests >build-fuzz/ci-mutation.log 2>&1 &
  mutation_pid=$!
  step "cli tests under ASan+UBSan"
  env "${sanitizer_env[@]}" ctest --test-dir build-fuzz -L '^cli$' --output-on-failure -j$((jobs + 1))
  # libFuzzer runs each target for so many seconds of wall time, whatever
  # CPU it gets: beside the mutation check it tries fewer inputs.
  step "fuzz smoke: every libFuzzer target for a few seconds (scripts/fuzz.sh)"
  scripts/fuzz.sh --run-only --seconds 8
  step "the mutation check (scripts/mutation_check.sh), if not done yet; its log follows"
  local mutation_status=0
  wait "$mutation_pid" || mutation_status=$?
  mutation_pid=""
  cat build-fuzz/ci-mutation.log
  ((mutation_status == 0)) || { echo "test.sh: the mutation check failed (exit status $mutation_status)"; exit 1; }
  step "sanitizer build and its tests: done"
}

step "set up"
scripts/setup.sh
scripts/check_format.sh

mkdir -p build/tests build-fuzz
rm -f "$system_tests_done"
# Its own process group (set -m), so that an early exit stops all of it.
set -m
nice -n 19 bash -c "SECONDS=$SECONDS; $(declare -f step summary mutation_check_after_system_tests sanitizer_build_and_tests); $(declare -p jobs sanitizer_targets sanitizer_env system_tests_done mutation_pid); set -euo pipefail; sanitizer_build_and_tests" \
  >build-fuzz/ci-sanitizer.log 2>&1 &
sanitizer_pid=$!
set +m

step "build (gcc, warnings are errors; the Debian root, Docker engine and stand-ins made beside it; the sanitizer build beside both at nice 19)"
generator=()
[ -f build/CMakeCache.txt ] || generator=(-G Ninja)
cmake -S . -B build "${generator[@]}" -DIMGSMITH_WERROR=ON -DCMAKE_BUILD_TYPE=Release -DIMGSMITH_UNIT_TESTS_IN_ALL=OFF -DCMAKE_UNITY_BUILD=ON \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" >/dev/null
tests/system/warm_caches.sh "$PWD/.imgsmith-cache" "$engine_state" >build/warm-caches.log 2>&1 &
warm_pid=$!
cmake --build build -j"$jobs" --target "${test_targets[@]}"
step "what the system tests build on (if not made yet)"
wait "$warm_pid"
warm_pid=""
cat build/warm-caches.log
# One more test at a time than there are cores: most of these tests' time
# is spent waiting on Docker, Debian's mirror, QEMU or a timeout.
step "system tests (the sanitizer build and its tests beside them)"
ctest --test-dir build -L '^system$' --output-on-failure -j$((jobs + 1))
touch "$system_tests_done"

step "the sanitizer build, its unit and cli tests, the fuzz smoke and the mutation check (if not done yet; their log follows)"
sanitizer_status=0
wait "$sanitizer_pid" || sanitizer_status=$?
sanitizer_pid=""
cat build-fuzz/ci-sanitizer.log
if ((sanitizer_status != 0)); then
  echo "test.sh: the sanitizer build or its tests failed (exit status $sanitizer_status; log above)"
  exit 1
fi

# TSan is a third full build (9-10 minutes on two cores) for the few
# threaded paths: it runs when IMGSMITH_CI_TSAN=1, so that a cold run of
# the rest keeps well inside CI's time limit.
if [[ ${IMGSMITH_CI_TSAN:-0} == 1 ]]; then
  step "build with TSan (the unit tests)"
  cmake -S . -B build-tsan -DIMGSMITH_WERROR=ON -DIMGSMITH_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-tsan -j"$jobs" --target unit_tests
  step "unit tests under TSan"
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir build-tsan -L '^(unit|slow)$' --output-on-failure -j"$jobs"
fi
step "all passed"
