#!/usr/bin/env bash
# Sets up, checks the C++ layout (clang-format), then:
# - the normal build, every test once (unit, slow, cli, system), the check
#   that ctest runs every unit case, and the mutation check;
# - under AddressSanitizer and UndefinedBehaviorSanitizer, the unit and cli
#   tests (the system tests test imgsmith among real parts, once is enough),
#   in the clang build that also makes the fuzz targets;
# - a short run of every fuzz target;
# - under ThreadSanitizer, the unit tests (where the threads are), when
#   IMGSMITH_CI_TSAN=1.
# Each sanitizer build builds only the targets its tests run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step says when it starts and how long the run has taken so far, so
# that a slow CI run shows where its time went; the end sums them up.
steps=()
step() {
  steps+=("${SECONDS}s $*")
  echo "== $(date -u +%H:%M:%S), ${SECONDS}s in: $*"
}
summary() {
  local status=$?
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
trap summary EXIT
jobs=$(nproc)
sanitizer_targets=(unit_tests imgsmith imgsmith-probe fake_libcuda fake_libnvidia_ml)

step "set up"
scripts/setup.sh
scripts/check_format.sh

step "build (warnings are errors)"
scripts/build.sh build
scripts/check_test_count.sh build
step "unit tests"
ctest --test-dir build -L '^(unit|slow)$' --output-on-failure -j"$jobs"
# One more test at a time than there are cores: most of these tests' time
# is spent waiting on Docker, Debian's mirror, QEMU or a timeout.
step "cli and system tests"
ctest --test-dir build -L '^(cli|system)$' --output-on-failure -j$((jobs + 1))
step "mutation check (scripts/mutation_check.sh)"
scripts/mutation_check.sh build

# One sanitizer build (clang, ASan+UBSan, in build-fuzz/) for the fuzz
# targets and the tests: the libraries are compiled once for both.
step "build with ASan+UBSan under clang: the fuzz targets, and the unit and cli tests' targets"
scripts/fuzz.sh --build-only
cmake --build build-fuzz -j"$jobs" --target "${sanitizer_targets[@]}"
step "unit and cli tests under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-fuzz -L '^(unit|slow|cli)$' --output-on-failure -j"$jobs"

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
