#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU (CI has none): builds the
# probe if needed, runs it on the real driver, and prints what it found.
# Finishes in well under 5 minutes. Usage: probes/device-check.sh [OUT_DIR]
#
# It runs the checks and the micro-benchmark (--bench) and prints each
# figure with its % of the device's published peak, and the race's
# speed-ups. Targets on an H200: device copy >= 75% of 4.8 TB/s, host<->device
# >= 40 GB/s, the network step much faster on the GPU and the logistic
# regression not.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-/tmp}}
mkdir -p "$out"
probe=build/imgsmith-probe
if [ ! -x "$probe" ]; then
  mkdir -p build
  # The probe alone: it needs cmake, a C++ compiler and (for the kernels) nvcc.
  cmake -S probes -B build-probe >/dev/null
  cmake --build build-probe -j"$(nproc)"
  probe=build-probe/imgsmith-probe
fi
echo "== host"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "nvidia-smi: not available"
echo "== imgsmith-probe --bench --json"
set +e
IMGSMITH_PROBE_JSON="$out/probe.json" timeout 240 "$probe" --bench --json >"$out/probe.stdout" 2>"$out/probe.stderr"
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
b = r.get("bench") or {}
cpu, gpu = b.get("cpu") or {}, b.get("gpu") or {}
print(f"CPU: network step {cpu.get('network_step_ms')} ms, logistic regression {cpu.get('logistic_regression_ms')} ms")
if "error" in gpu:
    print("GPU half did not run:", gpu["error"])
elif gpu:
    ref = gpu.get("peak_reference")
    print(f"device copy {gpu['device_copy_gbps']} GB/s ({gpu['device_copy_counts']}), {gpu['device_copy_peak_percent']}% of {ref} peak")
    print(f"host->device {gpu['h2d_gbps']} GB/s ({gpu['h2d_peak_percent']}% of the link), device->host {gpu['d2h_gbps']} GB/s ({gpu['d2h_peak_percent']}%)")
    print(f"FP32 {gpu['fp32_tflops']} TFLOP/s, {gpu['fp32_peak_percent']}% of peak")
    print(f"GPU: network step {gpu['network_step_ms']} ms, logistic regression {gpu['logistic_regression_ms']} ms")
print("verdict:", b.get("verdict"))
PY
echo "== entrypoint: the command's output and status pass through"
set +e
"$probe" -- sh -c 'echo app-stdout; exit 5' 2>/dev/null
echo "exit status $? (expected 5)"
