#!/usr/bin/env bash
# The example projects gen is tested on are real: the Python ones compile,
# and the CUDA one builds with the machine's nvcc exactly as its CMakeLists
# says, and links cuBLAS (which is why gen sends it to the runtime image).
# Usage: examples_build_test.sh EXAMPLES_DIR [NVCC]
set -u
examples=$1
nvcc=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

for f in "$examples"/pytorch-api/app/*.py "$examples"/fraud-api-cpu/*.py; do
  python3 -c "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])" "$f" ||
    { echo "FAIL: $f is not valid Python"; fail=1; }
done

if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
  echo "SKIP: no nvcc; the CUDA example was not built"
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
[ "$fail" = 0 ] && echo "examples: ok"
exit "$fail"
