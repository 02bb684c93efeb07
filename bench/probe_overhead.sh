#!/usr/bin/env bash
# The probe's start-up cost on a machine without a GPU: N runs of
# `imgsmith-probe -- true` against N runs of `true` itself, side by side.
# Usage: bench/probe_overhead.sh [PROBE (default build/imgsmith-probe)] [N (default 200)] [K (default 20)]
# Then, where the test build's stand-in driver is beside PROBE, K runs of
# --check on it: the kernel check off, reading the CUDA libraries, reading
# the inventory.
set -euo pipefail
probe=${1:-build/imgsmith-probe}
n=${2:-200}
[ -x "$probe" ] || { echo "probe_overhead: $probe not found; build first" >&2; exit 1; }
true_bin=$(type -P true)  # the program, not the shell builtin

time_loop() {  # time_loop CMD... -> seconds for n runs
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1 || true; done
  end=$(date +%s%N)
  echo $(( end - start ))
}

time_loop "$true_bin" >/dev/null  # warm the page cache
direct=$(time_loop "$true_bin")
via=$(time_loop "$probe" -- "$true_bin")
awk -v d="$direct" -v p="$via" -v n="$n" 'BEGIN {
  printf "machine:  %s CPUs; no GPU (the real no-GPU path: no /dev/nvidia*, no libcuda)\n", "'"$(nproc)"'"
  printf "runs:     %d each, interleaved with nothing else\n", n
  printf "direct:   %.2f ms per exec of true\n", d / n / 1e6
  printf "probe:    %.2f ms per imgsmith-probe -- true\n", p / n / 1e6
  printf "overhead: %.2f ms per start (target < 20 ms); ratio %.2fx a direct exec\n", (p - d) / n / 1e6, p / d
}'

# The kernel check's cost, on the stand-in GPU (the test build's fake
# driver): `--check` with the check off, reading the CUDA toolkit's
# libraries at start, and reading the inventory written at build time,
# side by side in one run.
fake=$(dirname "$probe")/tests/fake-driver
cuda=${IMGSMITH_BENCH_CUDA_LIBS:-/usr/local/cuda/lib64}
if [ -f "$fake/libcuda.so.1" ] && [ -d "$cuda" ]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/dev"
  touch "$scratch/dev/nvidia0" "$scratch/dev/nvidiactl"
  gpu=(env -i PATH=/usr/bin:/bin IMGSMITH_PROBE_DEV="$scratch/dev" LD_LIBRARY_PATH="$fake"
    FAKE_DRIVER_VERSION=13000 IMGSMITH_PROBE_KERNEL_PATHS="$cuda")
  "${gpu[@]}" "$probe" --write-kernel-inventory "$scratch/kernels.tsv" 2>"$scratch/written"
  k=${3:-20}
  n_saved=$n
  n=$k
  off=$(time_loop "${gpu[@]}" IMGSMITH_PROBE_KERNEL_CHECK=off "$probe" --check)
  scan=$(time_loop "${gpu[@]}" IMGSMITH_PROBE_KERNEL_INVENTORY="$scratch/none.tsv" "$probe" --check)
  inv=$(time_loop "${gpu[@]}" IMGSMITH_PROBE_KERNEL_INVENTORY="$scratch/kernels.tsv" "$probe" --check)
  n=$n_saved
  sed 's/^imgsmith-probe: /inventory: /' "$scratch/written"
  awk -v o="$off" -v s="$scan" -v i="$inv" -v k="$k" 'BEGIN {
    printf "stand-in GPU, --check, %d runs each (page cache warm after the first):\n", k
    printf "  kernel check off:        %.1f ms per start\n", o / k / 1e6
    printf "  libraries read at start: %.1f ms per start (+%.1f ms)\n", s / k / 1e6, (s - o) / k / 1e6
    printf "  inventory read at start: %.1f ms per start (+%.1f ms); the scan costs %.0fx the inventory\n", i / k / 1e6, (i - o) / k / 1e6, (s - o) / ((i - o) > 0 ? (i - o) : 1)
  }'
fi
