#!/usr/bin/env bash
# The probe's start-up cost on a machine without a GPU: N runs of
# `imgsmith-probe -- true` against N runs of `true` itself, side by side.
# Usage: bench/probe_overhead.sh [PROBE (default build/imgsmith-probe)] [N (default 200)]
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
