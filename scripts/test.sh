#!/usr/bin/env bash
# Sets up, checks the C++ layout (clang-format), builds and runs every test:
# once in a normal build, then again under AddressSanitizer and
# UndefinedBehaviorSanitizer, then a short run of every fuzz target, then
# the unit tests (where the threads are) under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step says when it starts and how long the run has taken so far, so
# that a slow CI run shows where its time went.
step() { echo "== $(date -u +%H:%M:%S), ${SECONDS}s in: $*"; }
step "set up"
scripts/setup.sh
scripts/check_format.sh

step "build (warnings are errors)"
scripts/build.sh build
step "tests"
ctest --test-dir build --output-on-failure -j"$(nproc)"

step "build with ASan+UBSan"
scripts/build.sh build-asan -DIMGSMITH_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
step "tests under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$(nproc)"

step "fuzz smoke: every libFuzzer target for a few seconds (scripts/fuzz.sh)"
scripts/fuzz.sh --seconds 8

step "build with TSan (the unit tests)"
cmake -S . -B build-tsan -DIMGSMITH_WERROR=ON -DIMGSMITH_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-tsan -j"$(nproc)" --target unit_tests
step "unit tests under TSan"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build-tsan -L unit --output-on-failure -j"$(nproc)"
step "all passed"
