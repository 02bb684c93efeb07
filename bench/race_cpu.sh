#!/usr/bin/env bash
# The race's CPU side (imgsmith-probe --bench without a GPU), two probes side
# by side: a baseline build and this one, each run R times in turn, on one
# core (taskset -c 0) and on every core. Reports the median network-step
# GFLOP/s of each and the ratio.
# Usage: bench/race_cpu.sh BASELINE_PROBE [PROBE (default build/imgsmith-probe)] [R (default 5)]
#   e.g. a baseline from the previous commit:
#   git worktree add /tmp/base HEAD~1 && cmake -S /tmp/base/probes -B /tmp/base-probe \
#     -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/base-probe
#   bash bench/race_cpu.sh /tmp/base-probe/imgsmith-probe
set -euo pipefail
base=${1:?usage: bench/race_cpu.sh BASELINE_PROBE [PROBE] [ROUNDS]}
probe=${2:-build/imgsmith-probe}
rounds=${3:-5}
for p in "$base" "$probe"; do
  [ -x "$p" ] || { echo "race_cpu: $p not found; build it first" >&2; exit 1; }
done
nodev=$(mktemp -d)
trap 'rm -rf "$nodev"' EXIT

gflops() { # gflops PROBE [taskset args]: the network step's GFLOP/s of one run
  local probe=$1
  shift
  # Without a GPU the probe exits 3 after its report: the report is what
  # counts. Read after the run, so that no reader competes for a CPU.
  env -i PATH="$PATH" IMGSMITH_PROBE_DEV="$nodev" "$@" "$probe" --bench --json >"$nodev/report" 2>/dev/null || true
  python3 -c 'import json, sys
c = json.load(sys.stdin)["bench"]["cpu"]
# A baseline without the field: the work over the time.
print(c.get("network_step_gflops") or 6 * 2 * 256 * 768 * 768 / (c["network_step_ms"] * 1e6))' <"$nodev/report"
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
for where in one all; do
  pin=()
  [ "$where" = one ] && pin=(taskset -c 0)
  b=() n=()
  for ((i = 0; i < rounds; i++)); do
    b+=("$(gflops "$base" "${pin[@]}")")
    n+=("$(gflops "$probe" "${pin[@]}")")
  done
  python3 - "$where" "${b[*]}" "${n[*]}" <<'PY'
import statistics, sys
where, base, new = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
mb, mn = statistics.median(base), statistics.median(new)
label = "one core " if where == "one" else "all cores"
print(f"{label}: baseline {mb:7.1f} GFLOP/s, this build {mn:7.1f} GFLOP/s, ratio {mn / mb:.2f}x "
      f"(medians of {len(base)} runs each, in turn)")
PY
done
