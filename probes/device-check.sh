#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU (CI has none): builds the
# probe if needed, runs it on the real driver, prints what it found, and
# FAILS LOUDLY: it exits 1 with one line "device-check: FAIL: <reason>" for
# the first thing that is not right, 0 only when every check passed.
# Finishes in well under 5 minutes.
#   probes/device-check.sh [OUT_DIR]      (IMGSMITH_PROBE_BINARY=PATH: a built probe)
#
# What it checks, in order:
#   - a probe with GPU kernels (a build without nvcc cannot measure the GPU);
#   - `--check` exits 0 and the report says "ok" (a usable GPU);
#   - `--bench` three times: the JSON is there, the GPU half ran, the device
#     copy reaches 75% of the published peak, host<->device 40 GB/s (PCIe
#     Gen5 x16; 20 GB/s on Gen4), the network step is faster on the GPU, and
#     the device-copy figure of the three runs spreads by at most 10%;
#   - once with CUDA_DISABLE_PTX_JIT=1 (SASS only), once with
#     CUDA_FORCE_PTX_JIT=1 (PTX only), and with IMGSMITH_PROBE_KERNELS=ptx
#     (the low-ISA PTX older drivers get; again with the JIT cache off, to
#     time a cold compile): the kernels load every way;
#   - CUDA_VISIBLE_DEVICES=-1 in require mode exits 3 without running the
#     command; CUDA_VISIBLE_DEVICES=<GPU 0's UUID> finds the same GPU;
#   - the entrypoint passes the command's output and exit status through;
#   - beside an app holding 90% of the memory (PyTorch, where there is one),
#     --check passes a half-GPU model, and the entrypoint refuses it (4).
# nvidia-smi's clocks, P-state, power, PCIe link and persistence mode are
# logged before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-/tmp}}
mkdir -p "$out"

fail() {
  echo "device-check: FAIL: $*"
  exit 1
}

probe=${IMGSMITH_PROBE_BINARY:-build/imgsmith-probe}
if [ ! -x "$probe" ]; then
  # The probe alone: it needs cmake, a C++ compiler and (for the kernels) nvcc.
  command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
    fail "no nvcc: a probe built here would have no GPU kernels to measure with"
  cmake -S probes -B build-probe >/dev/null
  cmake --build build-probe -j"$(nproc)"
  probe=build-probe/imgsmith-probe
fi

smi_state() {
  echo "== nvidia-smi ($1)"
  nvidia-smi --query-gpu=name,uuid,driver_version,pstate,clocks.sm,clocks.mem,power.draw,pcie.link.gen.current,pcie.link.width.current,persistence_mode,memory.used,memory.total \
    --format=csv 2>&1 || echo "nvidia-smi: not available"
}
smi_state before

# json_get FILE EXPR: a value of the probe's JSON report (a Python expression on `r`).
json_get() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

echo "== imgsmith-probe --check"
check_status=0
timeout 60 "$probe" --check --json >"$out/check.json" 2>"$out/check.stderr" || check_status=$?
cat "$out/check.stderr"
[ "$check_status" -eq 0 ] || fail "--check exited $check_status: $(grep -m1 'imgsmith-probe' "$out/check.stderr" || echo 'no reason printed')"
[ "$(json_get "$out/check.json" "r['status']")" = ok ] || fail "--check exited 0 but the report's status is not ok"

spreads=()
for run in 1 2 3; do
  echo "== imgsmith-probe --bench --json (run $run of 3)"
  json="$out/bench-$run.json"
  rm -f "$json"
  bench_status=0
  IMGSMITH_PROBE_JSON="$json" timeout 240 "$probe" --bench --json >"$out/bench-$run.stdout" 2>"$out/bench-$run.stderr" ||
    bench_status=$?
  cat "$out/bench-$run.stderr"
  [ "$bench_status" -eq 0 ] || fail "--bench exited $bench_status"
  [ -s "$json" ] || fail "--bench wrote no JSON report to $json"
  gpu_error=$(json_get "$json" "((r.get('bench') or {}).get('gpu') or {}).get('error', '')")
  [ -z "$gpu_error" ] || fail "the benchmark's GPU half did not run: $gpu_error"
  json_get "$json" "'device copy %s GB/s, %s%% of %s peak; host->device %s GB/s; FP32 %s TFLOP/s' % tuple(r['bench']['gpu'][k] for k in ('device_copy_gbps', 'device_copy_peak_percent', 'peak_reference', 'h2d_gbps', 'fp32_tflops'))"
  spreads+=("$(json_get "$json" "r['bench']['gpu']['device_copy_gbps']")")
done
last="$out/bench-3.json"
copy_percent=$(json_get "$last" "r['bench']['gpu']['device_copy_peak_percent']")
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 75 else 1)" "$copy_percent" ||
  fail "device copy at ${copy_percent}% of the published peak (target >= 75%)"
h2d=$(json_get "$last" "r['bench']['gpu']['h2d_gbps']")
link_gen=$(nvidia-smi --query-gpu=pcie.link.gen.max --format=csv,noheader 2>/dev/null | head -1 | tr -dc '0-9')
h2d_target=40
[ "${link_gen:-5}" -lt 5 ] && h2d_target=20
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$h2d" "$h2d_target" ||
  fail "host->device at $h2d GB/s (target >= $h2d_target GB/s on PCIe Gen${link_gen:-?})"
python3 - "${spreads[@]}" <<'PY' || fail "the device copy spreads by more than 10% over three runs: ${spreads[*]} GB/s"
import sys
v = [float(x) for x in sys.argv[1:]]
sys.exit(0 if (max(v) - min(v)) / max(v) <= 0.10 else 1)
PY
python3 - "$last" <<'PY' || fail "the race's verdict: the network step is not faster on the GPU ($(json_get "$last" "r['bench']['verdict']"))"
import json, sys
b = json.load(open(sys.argv[1]))["bench"]
sys.exit(0 if b["gpu"]["network_step_ms"] < b["cpu"]["network_step_ms"] else 1)
PY
echo "verdict: $(json_get "$last" "r['bench']['verdict']")"

# The fatbin is the fast path on a driver of the kernels' CUDA or newer.
[ "$(json_get "$last" "r['bench']['gpu']['kernels']")" = fatbin ] ||
  echo "note: the default run loaded $(json_get "$last" "r['bench']['gpu']['kernels']"), not the fatbin: $(json_get "$last" "r['bench']['gpu']['kernels_fallback']")"

# Each way the kernels load: SASS only, PTX only (the fatbin's), and the
# low-ISA PTX text that drivers older than the fatbin's CUDA get.
for way in CUDA_DISABLE_PTX_JIT=1 CUDA_FORCE_PTX_JIT=1 IMGSMITH_PROBE_KERNELS=ptx "IMGSMITH_PROBE_KERNELS=ptx CUDA_CACHE_DISABLE=1"; do
  echo "== --bench with $way"
  name=$(echo "$way" | tr ' =' '_-')
  json="$out/bench-$name.json"
  env $way IMGSMITH_PROBE_JSON="$json" timeout 240 "$probe" --bench >/dev/null 2>"$out/bench-$name.stderr" ||
    fail "--bench with $way exited non-zero"
  gpu_error=$(json_get "$json" "((r.get('bench') or {}).get('gpu') or {}).get('error', '')")
  [ -z "$gpu_error" ] || fail "with $way the kernels did not load: $gpu_error"
  json_get "$json" "'kernels %s loaded in %s ms; device copy %s GB/s; FP32 %s TFLOP/s' % tuple(r['bench']['gpu'][k] for k in ('kernels', 'kernels_load_ms', 'device_copy_gbps', 'fp32_tflops'))"
  case $way in
    IMGSMITH_PROBE_KERNELS=ptx*)
      [ "$(json_get "$json" "r['bench']['gpu']['kernels']")" = ptx ] || fail "IMGSMITH_PROBE_KERNELS=ptx did not load the PTX" ;;
  esac
done

echo "== CUDA_VISIBLE_DEVICES"
hidden=0
CUDA_VISIBLE_DEVICES=-1 IMGSMITH_PROBE=require "$probe" -- sh -c "echo ran > '$out/hidden-ran'" 2>/dev/null || hidden=$?
[ "$hidden" -eq 3 ] || fail "CUDA_VISIBLE_DEVICES=-1 in require mode exited $hidden, not 3"
[ ! -e "$out/hidden-ran" ] || fail "CUDA_VISIBLE_DEVICES=-1 in require mode ran the command"
uuid=$(json_get "$out/check.json" "r['devices'][0]['uuid']")
CUDA_VISIBLE_DEVICES="$uuid" timeout 60 "$probe" --check --json >"$out/by-uuid.json" 2>/dev/null ||
  fail "CUDA_VISIBLE_DEVICES=$uuid: --check failed"
[ "$(json_get "$out/by-uuid.json" "r['devices'][0]['uuid']")" = "$uuid" ] ||
  fail "CUDA_VISIBLE_DEVICES=$uuid found another GPU"

echo "== entrypoint: the command's output and status pass through"
passed=0
output=$("$probe" -- sh -c 'echo app-stdout; exit 5' 2>/dev/null) || passed=$?
[ "$passed" -eq 5 ] || fail "the command's exit status 5 came back as $passed"
[ "$output" = app-stdout ] || fail "the command's stdout came back as '$output'"

echo "== a startupProbe beside an app that holds 90% of the GPU's memory"
# An app that preallocates, as vLLM does (gpu_memory_utilization 0.9): a
# model of half the GPU passes --check beside it (exit 0), and the same need
# is refused before an app starts while the memory is taken (require: 4).
# Needs PyTorch to hold the memory; skipped, and said, without it.
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  rm -f "$out/holding"
  python3 - "$out/holding" <<'PY' &
import sys, time, torch
free, total = torch.cuda.mem_get_info()
held = torch.empty(int(total * 0.9) - (total - free), dtype=torch.uint8, device="cuda")
open(sys.argv[1], "w").write(str(total))
time.sleep(120)
PY
  holder=$!
  for _ in $(seq 600); do [ -s "$out/holding" ] && break; sleep 0.1; done
  [ -s "$out/holding" ] || { kill "$holder" 2>/dev/null; fail "the app holding 90% of the memory did not start"; }
  half=$(($(cat "$out/holding") / 2))
  beside=0
  IMGSMITH_MODEL_VRAM=$half timeout 60 "$probe" --check 2>"$out/beside.stderr" || beside=$?
  before=0
  IMGSMITH_MODEL_VRAM=$half IMGSMITH_PROBE=require timeout 60 "$probe" -- true 2>"$out/before.stderr" || before=$?
  kill "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null || true
  grep -h "model needs" "$out/beside.stderr" "$out/before.stderr" || true
  [ "$beside" -eq 0 ] || fail "--check beside an app holding 90% exited $beside for a half-GPU model (a restart loop)"
  [ "$before" -eq 4 ] || fail "before the app, with 90% taken, a half-GPU model exited $before, not 4"
else
  echo "skipped: no PyTorch with CUDA here to hold the memory"
fi

smi_state after
echo "device-check: PASS"
