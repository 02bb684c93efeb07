#!/usr/bin/env bash
# Sets up, checks the C++ layout (clang-format), builds and runs every test:
# once in a normal build, then again under AddressSanitizer and
# UndefinedBehaviorSanitizer, then a short run of every fuzz target, then
# the unit tests (where the threads are) under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/check_format.sh

echo "== build (warnings are errors)"
scripts/build.sh build
echo "== tests"
ctest --test-dir build --output-on-failure -j"$(nproc)"

echo "== build with ASan+UBSan"
scripts/build.sh build-asan -DIMGSMITH_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
echo "== tests under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$(nproc)"

echo "== fuzz smoke: every libFuzzer target for a few seconds (scripts/fuzz.sh)"
scripts/fuzz.sh --seconds 8

echo "== build with TSan (the unit tests)"
cmake -S . -B build-tsan -DIMGSMITH_WERROR=ON -DIMGSMITH_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-tsan -j"$(nproc)" --target unit_tests
echo "== unit tests under TSan"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build-tsan -L unit --output-on-failure -j"$(nproc)"
