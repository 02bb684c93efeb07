#!/usr/bin/env bash
# Sets up, checks the C++ layout (clang-format), then:
# - the normal build (gcc, warnings are errors) of imgsmith, its probe and
#   what the cli and system tests run, while what the system tests build on
#   (a Debian root, the Docker engine and its stand-ins) is made beside it;
#   the cli and system tests, once;
# - the clang build with AddressSanitizer and UndefinedBehaviorSanitizer
#   (build-fuzz/), which also makes the fuzz targets: there the unit tests,
#   the check that ctest runs every unit case, the cli tests again, and the
#   mutation check;
# - a short run of every fuzz target;
# - under ThreadSanitizer, the unit tests (where the threads are), when
#   IMGSMITH_CI_TSAN=1.
# The unit tests run in the sanitizer build alone: it checks all that the
# normal build's run would, and more.
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
# (tests/system/warm_caches.sh); whatever ends this run waits for it and
# stops the Docker engine it started.
warm_pid=""
engine_state=$PWD/build/tests/docker-engine.state
on_exit() {
  local status=$?
  [ -n "$warm_pid" ] && wait "$warm_pid" 2>/dev/null
  tests/system/docker_engine.sh stop "$engine_state" >/dev/null 2>&1
  summary "$status"
}
trap on_exit EXIT
jobs=$(nproc)
# The normal build: what the cli and system tests run. -O1 without debug
# information compiles a heavy file in 7.0 s where RelWithDebInfo's -O2 -g
# takes 12.0 (completion_command.cpp); scripts/build.sh (README's build)
# keeps RelWithDebInfo.
test_targets=(imgsmith imgsmith_docs fake_libcuda fake_libnvidia_ml kernel_fixtures)
sanitizer_targets=(unit_tests imgsmith imgsmith-probe fake_libcuda fake_libnvidia_ml)
# The sanitizer build stays at -O1 (scripts/fuzz.sh): a CI run at -O0
# compiled it in 494 s, but its unit and cli tests then took 382 s against
# 222 at -O1, and each mutation case up to twice as long.
sanitizer_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)

step "set up"
scripts/setup.sh
scripts/check_format.sh

step "build (gcc, warnings are errors; the Debian root, Docker engine and stand-ins made beside it)"
cmake -S . -B build -DIMGSMITH_WERROR=ON -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" >/dev/null
mkdir -p build/tests
tests/system/warm_caches.sh "$PWD/.imgsmith-cache" "$engine_state" >build/warm-caches.log 2>&1 &
warm_pid=$!
cmake --build build -j"$jobs" --target "${test_targets[@]}"
step "what the system tests build on (if not made yet)"
wait "$warm_pid"
warm_pid=""
cat build/warm-caches.log
# One more test at a time than there are cores: most of these tests' time
# is spent waiting on Docker, Debian's mirror, QEMU or a timeout.
step "cli and system tests"
ctest --test-dir build -L '^(cli|system)$' --output-on-failure -j$((jobs + 1))

# One sanitizer build (clang, ASan+UBSan, in build-fuzz/) for the fuzz
# targets and the tests: the libraries are compiled once for both. It runs
# after the system tests, not beside them: started in a session of its own
# (setsid) at nice 19, the kernel's autogroup scheduling gave it half the
# CPU anyway, and the docker test ran past its 900 s limit.
step "build with ASan+UBSan under clang: the fuzz targets, and the unit and cli tests' targets"
scripts/fuzz.sh --build-only
cmake --build build-fuzz -j"$jobs" --target "${sanitizer_targets[@]}"
scripts/check_test_count.sh build-fuzz
step "unit tests under ASan+UBSan"
env "${sanitizer_env[@]}" ctest --test-dir build-fuzz -L '^(unit|slow)$' --output-on-failure -j"$jobs"
step "cli tests under ASan+UBSan"
env "${sanitizer_env[@]}" ctest --test-dir build-fuzz -L '^cli$' --output-on-failure -j$((jobs + 1))
step "mutation check (scripts/mutation_check.sh), in the sanitizer build"
env "${sanitizer_env[@]}" scripts/mutation_check.sh build-fuzz

step "fuzz smoke: every libFuzzer target for a few seconds (scripts/fuzz.sh)"
scripts/fuzz.sh --seconds 8

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
