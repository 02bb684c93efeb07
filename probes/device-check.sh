#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU (CI has none): builds the
# probe if needed, runs it on the real driver, and prints what it found.
# Finishes in well under 5 minutes. Usage: probes/device-check.sh [OUT_DIR]
#
# The probe's micro-benchmark (--bench: copy and device bandwidth, FP32
# compute, the CPU-vs-GPU race, each as % of the device's published peak)
# is not built yet; this script reports the device checks only, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-/tmp}}
mkdir -p "$out"
probe=build/imgsmith-probe
if [ ! -x "$probe" ]; then
  mkdir -p build
  g++ -std=c++20 -O2 -Iprobes probes/imgsmith_probe.cpp probes/glibc_compat.cpp \
    -static-libstdc++ -ldl -pthread -o "$probe"
fi
echo "== host"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "nvidia-smi: not available"
echo "== imgsmith-probe --json"
set +e
IMGSMITH_PROBE_JSON="$out/probe.json" "$probe" --json >"$out/probe.stdout" 2>"$out/probe.stderr"
status=$?
set -e
cat "$out/probe.stderr"
echo "exit status $status (0: GPU usable)"
python3 - "$out/probe.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
print(f"status {r['status']}; driver {r['driver']}; {len(r['devices'])} device(s); checks took {r['elapsed_ms']} ms")
for d in r["devices"]:
    gib = 1 << 30
    print(f"  GPU {d['index']}: {d['name']} sm_{d['compute_capability'].replace('.', '')}, "
          f"{d['memory_used_bytes'] / gib:.1f}/{d['memory_total_bytes'] / gib:.1f} GiB, "
          f"util {d['utilization_percent']}%, {d['temperature_c']} C")
print("bench: not built yet (the probe has no --bench in this version)")
PY
echo "== entrypoint: the command's output and status pass through"
set +e
"$probe" -- sh -c 'echo app-stdout; exit 5' 2>/dev/null
echo "exit status $? (expected 5)"
