#!/usr/bin/env bash
# The example projects gen is tested on are real: the Python ones compile,
# and the CUDA one builds with the machine's nvcc exactly as its CMakeLists
# says, and links cuBLAS (which is why gen sends it to the runtime image).
# Usage: examples_build_test.sh EXAMPLES_DIR [NVCC]
# Without nvcc (given, on PATH or in /usr/local/cuda/bin) the CUDA example
# is not built and the test exits 77 (skipped); in CI (CI=true) it fails.
set -u
examples=$1
nvcc=${2:-}
[ -n "$nvcc" ] || nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
# shellcheck source=skip.sh
source "$(dirname "$0")/skip.sh" examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

for f in "$examples"/pytorch-api/app/*.py "$examples"/fraud-api-cpu/*.py; do
  python3 -c "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])" "$f" ||
    { echo "FAIL: $f is not valid Python"; fail=1; }
done

if [ ! -x "$nvcc" ]; then
  skip_part "no nvcc ($nvcc is missing): the CUDA example was not built"
else
  # One architecture keeps this quick; the Dockerfile builds them all.
  if cmake -S "$examples/cuda-saxpy" -B "$tmp/build" -DCMAKE_CUDA_COMPILER="$nvcc" \
       -DCMAKE_CUDA_ARCHITECTURES=75 -DCMAKE_BUILD_TYPE=Release >"$tmp/log" 2>&1 &&
     cmake --build "$tmp/build" -j2 >>"$tmp/log" 2>&1 &&
     cmake --install "$tmp/build" --prefix "$tmp/app" >>"$tmp/log" 2>&1; then
    [ -x "$tmp/app/bin/saxpy" ] || { echo "FAIL: cmake --install put no bin/saxpy"; fail=1; }
    readelf -d "$tmp/app/bin/saxpy" | grep -q 'NEEDED.*libcublas' ||
      { echo "FAIL: saxpy does not link cuBLAS"; fail=1; }
  else
    echo "FAIL: the CUDA example does not build"; tail -20 "$tmp/log"; fail=1
  fi
fi
[ "$fail" = 0 ] && [ -z "$skipped_parts" ] && echo "examples: ok"
finish
