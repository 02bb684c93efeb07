#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU (CI has none): builds the
# probe if needed, runs it on the real driver, and gives one verdict whose
# figures can be judged. Exit status and last line:
#   0  "device-check: PASS"
#   1  "device-check: FAIL: <reason>"          the GPU or the probe is wrong
#   2  "device-check: INCONCLUSIVE: <reason>"  this machine cannot tell: a
#      driver older than the probe's fatbin, MIG on, Confidential Computing
#      on, no nvidia-smi to read the clocks and the link
# Finishes in under 3 minutes (dcgmi's diagnostic, when present, adds up to
# 90 s). Every artefact is written under OUT_DIR.
#   probes/device-check.sh [OUT_DIR]      (IMGSMITH_PROBE_BINARY=PATH: a built probe)
#
# In order:
#   - preflight: the probe's kernels (fatbin CUDA, PTX ISA), `--check
#     --timeout 60` timed (a cold GPU without persistence mode is slow to
#     start), the driver and its CUDA, MIG, Confidential Computing, compute
#     and persistence modes;
#   - the machine before: `nvidia-smi -q`, `topo -m`, CPU affinity, the
#     cgroup's cpu.max, the kernel log's Xid lines;
#   - `--bench` three times, nvidia-smi sampled every 100 ms during each
#     (SM and memory clocks, power, temperatures, clock event reasons, PCIe
#     link), min and median printed. Gates, on the worst of the three runs:
#     device copy >= 80% of the published peak; host->device and
#     device->host >= 71% of the link's rate (45 GB/s on Gen5 x16), the link
#     read while the copies ran; FP32 >= 85% of SMs x FP32 lanes x 2 x the
#     SM clock observed in that run; each of those spreading <= 5%; the
#     network step faster on the GPU; no hardware or thermal slowdown while
#     it ran; a PCIe link at its maximum generation and width;
#   - the kernels loaded every way (SASS only, PTX only, the low-ISA PTX);
#   - CUDA_VISIBLE_DEVICES=-1 refused, the UUID found, the entrypoint
#     passing output and status through, a startupProbe beside an app that
#     holds 90% of the memory;
#   - nvbandwidth and `dcgmi diag -r 2` as cross-checks when installed;
#   - the machine after: `nvidia-smi -q`, new Xid lines, uncorrected ECC
#     errors, pending row remaps.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-/tmp}}
mkdir -p "$out"
started=$(date +%s)

fail() {
  echo "device-check: FAIL: $*"
  exit 1
}
inconclusive() {
  echo "device-check: INCONCLUSIVE: $*"
  exit 2
}

probe=${IMGSMITH_PROBE_BINARY:-build/imgsmith-probe}
if [ ! -x "$probe" ]; then
  # The probe alone: it needs cmake, a C++ compiler and (for the kernels) nvcc.
  command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
    fail "no nvcc: a probe built here would have no GPU kernels to measure with"
  { cmake -S probes -B build-probe && cmake --build build-probe -j"$(nproc)"; } >"$out/build-probe.log" 2>&1 ||
    fail "the probe did not build (see $out/build-probe.log)"
  probe=build-probe/imgsmith-probe
fi

# json_get FILE EXPR: a value of a JSON file (a Python expression on `r`).
json_get() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

echo "== preflight"
kernels=$("$probe" --version 2>/dev/null | sed -n 's/^kernels: //p')
echo "probe kernels: ${kernels:-unknown}"
case $kernels in
  none*) fail "the probe was built without GPU kernels (no nvcc at its build): it cannot measure the GPU" ;;
esac
fatbin_major=$(echo "$kernels" | sed -n 's/.*fatbin CUDA \([0-9][0-9]*\)\..*/\1/p')

check_status=0
check_start=$(date +%s.%N)
timeout 90 "$probe" --check --json --timeout 60 >"$out/check.json" 2>"$out/check.stderr" || check_status=$?
check_seconds=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$check_start" "$(date +%s.%N)")
cat "$out/check.stderr"
echo "--check --timeout 60: exit $check_status in $check_seconds s"
[ "$check_status" -eq 0 ] || fail "--check exited $check_status: $(grep -m1 'imgsmith-probe' "$out/check.stderr" || echo 'no reason printed')"
[ "$(json_get "$out/check.json" "r['status']")" = ok ] || fail "--check exited 0 but the report's status is not ok"
driver=$(json_get "$out/check.json" "(r.get('driver') or {}).get('version', '')")
driver_cuda=$(json_get "$out/check.json" "(r.get('driver') or {}).get('cuda', '')")
uuid=$(json_get "$out/check.json" "r['devices'][0]['uuid']")
gpu_name=$(json_get "$out/check.json" "r['devices'][0]['name']")
compute_capability=$(json_get "$out/check.json" "r['devices'][0]['compute_capability']")
echo "GPU 0: $gpu_name ($uuid), compute capability $compute_capability"
echo "driver: ${driver:-unknown}, its CUDA: ${driver_cuda:-unknown}"

# nvidia-smi reads what the gates need: the link, the clocks, the reasons
# the clocks were held down. Without it no figure can be judged.
command -v nvidia-smi >/dev/null ||
  inconclusive "no nvidia-smi: the PCIe link, clocks and throttle reasons the gates are judged by cannot be read (mount the driver's utilities: NVIDIA_DRIVER_CAPABILITIES=compute,utility)"
smi_value() { # smi_value FIELD: GPU 0's value, empty where N/A or unknown
  local v
  v=$(nvidia-smi -i "$uuid" --query-gpu="$1" --format=csv,noheader,nounits 2>/dev/null | head -n 1)
  case $v in *"N/A"* | *"Not Supported"* | *"not a valid field"* | "") echo "" ;; *) echo "$v" ;; esac
}
mig_mode=$(smi_value mig.mode.current)
compute_mode=$(smi_value compute_mode)
persistence=$(smi_value persistence_mode)
cc_status=$(nvidia-smi conf-compute -f 2>/dev/null | sed -n 's/.*CC status: *//p' | head -n 1)
echo "MIG mode: ${mig_mode:-not supported}; compute mode: ${compute_mode:-?}; persistence: ${persistence:-?}; Confidential Computing: ${cc_status:-not supported}"
{
  echo "kernels: $kernels"
  echo "check: exit $check_status in $check_seconds s"
  echo "gpu: $gpu_name $uuid cc $compute_capability"
  echo "driver: $driver cuda $driver_cuda"
  echo "mig: $mig_mode compute_mode: $compute_mode persistence: $persistence cc: $cc_status"
} >"$out/preflight.txt"

# What this machine cannot tell: a verdict there would judge the machine's
# setting, not the GPU.
if [ -n "$fatbin_major" ] && [ -n "$driver_cuda" ] && [ "${driver_cuda%%.*}" -lt "$fatbin_major" ]; then
  inconclusive "driver $driver supports CUDA $driver_cuda, older than the probe's fatbin (CUDA $fatbin_major): the SASS fast path cannot load here, so its figures cannot be measured; the probe itself runs (the PTX path). Run the check on a driver of CUDA $fatbin_major or newer"
fi
if [ "$mig_mode" = Enabled ] || [ "$(json_get "$out/check.json" "r['devices'][0]['mig']")" = True ]; then
  inconclusive "MIG mode is on: a slice has a share of the GPU's bandwidth and compute, so no whole-GPU target applies (nvidia-smi -mig 0 to turn it off, with the GPU idle)"
fi
case $cc_status in
  ON | on | DEVTOOLS | devtools)
    inconclusive "Confidential Computing is on: host<->device copies are encrypted and the bandwidth targets do not apply" ;;
esac

echo "== the machine before"
nvidia-smi -q >"$out/nvidia-smi-q-before.txt" 2>&1 || true
nvidia-smi topo -m >"$out/topo.txt" 2>&1 || true
{
  echo "nproc: $(nproc)"
  grep -E '^Cpus_allowed_list' /proc/self/status
  echo "cgroup cpu.max: $(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo 'none (cgroup v1 or no limit file)')"
  echo "cpuset: $(cat /sys/fs/cgroup/cpuset.cpus.effective 2>/dev/null || echo '?')"
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
} >"$out/host.txt"
cat "$out/host.txt" "$out/topo.txt"
xid_lines() { # where the kernel log was read, then its NVRM Xid lines
  if dmesg >/dev/null 2>&1; then
    echo "# read from dmesg"
    dmesg 2>/dev/null | grep -i 'NVRM: Xid' || true
  elif journalctl -k -q --no-pager >/dev/null 2>&1; then
    echo "# read from journalctl -k"
    journalctl -k -q --no-pager 2>/dev/null | grep -i 'NVRM: Xid' || true
  else echo "# unreadable: dmesg and journalctl -k are not permitted here"; fi
}
xid_lines >"$out/xid-before.txt"
echo "Xid lines before: $(grep -c 'NVRM: Xid' "$out/xid-before.txt")$(grep -q '^# unreadable' "$out/xid-before.txt" && echo ' (kernel log unreadable)')"

# The event-reason field's name changed (clocks_throttle_reasons before R535).
reasons_field=clocks_event_reasons.active
nvidia-smi --help-query-gpu 2>/dev/null | grep -q clocks_event_reasons || reasons_field=clocks_throttle_reasons.active
sample_fields="timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,$reasons_field,pcie.link.gen.current,pcie.link.width.current,utilization.gpu"
link_max="$(smi_value pcie.link.gen.max),$(smi_value pcie.link.width.max)"

for run in 1 2 3; do
  echo "== imgsmith-probe --bench (run $run of 3), nvidia-smi sampled every 100 ms"
  json="$out/bench-$run.json"
  rm -f "$json"
  nvidia-smi -i "$uuid" --query-gpu="$sample_fields" --format=csv,noheader,nounits -lms 100 >"$out/samples-$run.csv" 2>&1 &
  sampler=$!
  bench_status=0
  IMGSMITH_PROBE_JSON="$json" timeout 240 "$probe" --bench >"$out/bench-$run.stdout" 2>"$out/bench-$run.stderr" ||
    bench_status=$?
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  grep 'bench:' "$out/bench-$run.stderr"
  [ "$bench_status" -eq 0 ] || fail "--bench exited $bench_status (run $run; $out/bench-$run.stderr)"
  [ -s "$json" ] || fail "--bench wrote no JSON report to $json"
  gpu_error=$(json_get "$json" "((r.get('bench') or {}).get('gpu') or {}).get('error', '')")
  [ -z "$gpu_error" ] || fail "the benchmark's GPU half did not run: $gpu_error"
done

# The gates: the worst of the three runs against targets from what the
# samples show the GPU was doing while it ran.
python3 - "$out" "$compute_capability" "$link_max" >"$out/gates.txt" <<'PY'
import csv, json, statistics, sys

out, cc, link_max = sys.argv[1], sys.argv[2], sys.argv[3]
runs = [json.load(open(f"{out}/bench-{i}.json"))["bench"] for i in (1, 2, 3)]
gpu = [r["gpu"] for r in runs]

def number(text):
    try:
        return float(text)
    except ValueError:
        return None  # [N/A], [Not Supported]

# FP32 results per clock per multiprocessor (an FMA counts 2 flops): NVIDIA's
# CUDA C++ Programming Guide, "Arithmetic Instructions", throughput of
# 32-bit floating-point add, multiply, multiply-add.
FP32_LANES = {"6.0": 64, "6.1": 128, "6.2": 128, "7.0": 64, "7.2": 64, "7.5": 64, "8.0": 64,
              "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128, "10.0": 128, "10.3": 128,
              "11.0": 128, "12.0": 128, "12.1": 128}
# PCIe: GB/s a lane carries after encoding (8b/10b to Gen2, 128b/130b after,
# FLIT from Gen6), by generation.
LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
# Event reasons (NVML's clocksEventReasons bits) that mean a sick node: HW
# slowdown, SW thermal, HW thermal, HW power brake. SW power cap (0x4) is a
# GPU at its power limit, which FMA chains may reach: noted only.
SICK = {0x8: "HW slowdown", 0x20: "SW thermal slowdown", 0x40: "HW thermal slowdown",
        0x80: "HW power brake slowdown"}

failures, notes = [], []
samples = []
for i in (1, 2, 3):
    rows = []
    for row in csv.reader(open(f"{out}/samples-{i}.csv")):
        if len(row) >= 10:
            rows.append([c.strip() for c in row])
    samples.append(rows)

def column(rows, k):
    return [v for v in (number(r[k]) for r in rows) if v is not None]

print("nvidia-smi while each run ran (min / median):")
names = ["SM MHz", "memory MHz", "power W", "GPU C", "memory C"]
for i, rows in enumerate(samples, 1):
    parts = []
    for k, name in enumerate(names, 1):
        v = column(rows, k)
        parts.append(f"{name} {min(v):.0f}/{statistics.median(v):.0f}" if v else f"{name} N/A")
    reasons = 0
    for r in rows:
        try:
            reasons |= int(r[6], 16)
        except ValueError:
            pass
    gens, widths = column(rows, 7), column(rows, 8)
    link = f"PCIe Gen{max(gens):.0f} x{max(widths):.0f}" if gens and widths else "PCIe N/A"
    print(f"  run {i}: {len(rows)} samples; " + ", ".join(parts) + f"; event reasons 0x{reasons:x}; {link}")
    for bit, name in SICK.items():
        if reasons & bit:
            failures.append(f"the GPU throttled in run {i}: {name} (nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER; check the node's cooling and power)")
    if reasons & 0x4:
        notes.append(f"run {i}: the GPU reached its power cap (SW power cap): figures at the cap")
    if not rows:
        notes.append(f"run {i}: nvidia-smi gave no samples")

def worst(key):
    values = [g[key] for g in gpu if g.get(key) is not None]
    return min(values) if values else None

def spread(key):
    values = [g[key] for g in gpu if g.get(key) is not None]
    return (max(values) - min(values)) / max(values) * 100 if values and max(values) > 0 else None

# Device copy against the published peak.
copy = worst("device_copy_peak_percent")
if copy is None:
    notes.append(f"no published peak for {gpu[0].get('peak_reference') or 'this GPU'}: the device copy is not gated")
elif copy < 80:
    failures.append(f"device copy at {copy}% of the published peak in the worst run (target >= 80%)")
print(f"device copy: {[g['device_copy_gbps'] for g in gpu]} GB/s, worst {copy}% of {gpu[0].get('peak_reference')} peak (>= 80%)")

# Host<->device against the link the copies ran on.
gens = [v for rows in samples for v in column(rows, 7)]
widths = [v for rows in samples for v in column(rows, 8)]
max_gen, max_width = (number(x) if x else None for x in (link_max.split(",") + ["", ""])[:2])
if gens and widths:
    gen, width = int(max(gens)), int(max(widths))
    target = round(0.71 * LANE_GBPS.get(gen, 0) * width, 1)
    for key, name in (("h2d_gbps", "host->device"), ("d2h_gbps", "device->host")):
        w = worst(key)
        print(f"{name}: {[g[key] for g in gpu]} GB/s, worst {w} (>= {target} GB/s on PCIe Gen{gen} x{width})")
        if w is not None and w < target:
            failures.append(f"{name} at {w} GB/s in the worst run (target >= {target} GB/s on PCIe Gen{gen} x{width})")
    if max_width and width < max_width:
        failures.append(f"the PCIe link ran at x{width} of its x{max_width:.0f} (reseat the GPU or check the riser)")
    elif max_gen and gen < max_gen:
        failures.append(f"the PCIe link ran at Gen{gen} of its Gen{max_gen:.0f} while copying (check the slot and BIOS link speed)")
else:
    notes.append("no PCIe link figures (N/A, e.g. a C2C-attached GPU): host<->device not gated")

# FP32 against SMs x lanes x 2 x the clock observed in that run.
lanes = FP32_LANES.get(cc)
ratios = []
for i, g in enumerate(gpu):
    clocks = column(samples[i], 1)
    sms = g.get("multiprocessors") or 0
    if lanes and clocks and sms:
        clock = statistics.median(clocks)
        theoretical = sms * lanes * 2 * clock * 1e6 / 1e12
        ratios.append((g["fp32_tflops"] / theoretical * 100, clock, theoretical))
if ratios:
    low = min(ratios)
    print(f"FP32: {[g['fp32_tflops'] for g in gpu]} TFLOP/s, worst {low[0]:.1f}% of {gpu[0]['multiprocessors']} SMs x {lanes} x 2 x {low[1]:.0f} MHz = {low[2]:.1f} TFLOP/s (>= 85%)")
    if low[0] < 85:
        failures.append(f"FP32 at {low[0]:.1f}% of the SMs' rate at the observed {low[1]:.0f} MHz in the worst run (target >= 85%)")
else:
    notes.append(f"FP32 not gated: no FP32 lanes known for compute capability {cc}, or no SM clock samples")

for key, name in (("device_copy_gbps", "device copy"), ("h2d_gbps", "host->device"),
                  ("d2h_gbps", "device->host"), ("fp32_tflops", "FP32")):
    s = spread(key)
    if s is not None and s > 5:
        failures.append(f"the {name} spreads by {s:.1f}% over three runs (target <= 5%)")

last = runs[-1]
print(f"race: {last['verdict']}")
if not gpu[-1]["network_step_ms"] < last["cpu"]["network_step_ms"]:
    failures.append(f"the race's verdict: the network step is not faster on the GPU ({last['verdict']})")
for n in notes:
    print("note: " + n)
for f in failures:
    print("gate: " + f)
PY
cat "$out/gates.txt"
first_gate=$(sed -n 's/^gate: //p' "$out/gates.txt" | head -n 1)
[ -z "$first_gate" ] || fail "$first_gate"

# The fatbin is the fast path on a driver of the kernels' CUDA or newer.
[ "$(json_get "$out/bench-3.json" "r['bench']['gpu']['kernels']")" = fatbin ] ||
  echo "note: the default run loaded $(json_get "$out/bench-3.json" "r['bench']['gpu']['kernels']"), not the fatbin: $(json_get "$out/bench-3.json" "r['bench']['gpu']['kernels_fallback']")"

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
CUDA_VISIBLE_DEVICES="$uuid" timeout 90 "$probe" --check --json --timeout 60 >"$out/by-uuid.json" 2>/dev/null ||
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
  IMGSMITH_MODEL_VRAM=$half timeout 90 "$probe" --check --timeout 60 2>"$out/beside.stderr" || beside=$?
  before=0
  IMGSMITH_MODEL_VRAM=$half IMGSMITH_PROBE=require timeout 90 "$probe" -- true 2>"$out/before.stderr" || before=$?
  kill "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null || true
  grep -h "model needs" "$out/beside.stderr" "$out/before.stderr" || true
  [ "$beside" -eq 0 ] || fail "--check beside an app holding 90% exited $beside for a half-GPU model (a restart loop)"
  [ "$before" -eq 4 ] || fail "before the app, with 90% taken, a half-GPU model exited $before, not 4"
else
  echo "skipped: no PyTorch with CUDA here to hold the memory"
fi

echo "== cross-checks"
if command -v nvbandwidth >/dev/null; then
  timeout 60 nvbandwidth -t host_to_device_memcpy_ce device_to_host_memcpy_ce device_local_copy >"$out/nvbandwidth.txt" 2>&1 ||
    echo "note: nvbandwidth exited non-zero"
  grep -iE 'SUM|memcpy' "$out/nvbandwidth.txt" | head -n 12
else
  echo "nvbandwidth: not installed"
fi
if command -v dcgmi >/dev/null; then
  dcgm_status=0
  timeout 90 dcgmi diag -r 2 >"$out/dcgmi-diag.txt" 2>&1 || dcgm_status=$?
  grep -iE 'fail|warn|pass' "$out/dcgmi-diag.txt" | head -n 20
  grep -qi 'fail' "$out/dcgmi-diag.txt" && [ "$dcgm_status" -ne 124 ] && fail "dcgmi diag -r 2 reports a failure (see $out/dcgmi-diag.txt)"
else
  echo "dcgmi: not installed"
fi

echo "== the machine after"
nvidia-smi -q >"$out/nvidia-smi-q-after.txt" 2>&1 || true
xid_lines >"$out/xid-after.txt"
new_xid=$(diff "$out/xid-before.txt" "$out/xid-after.txt" | sed -n 's/^> //p' | grep 'NVRM: Xid' | head -n 3)
[ -z "$new_xid" ] || fail "the driver logged Xid errors during the check: $new_xid"
ecc=$(smi_value ecc.errors.uncorrected.volatile.total)
[ -z "$ecc" ] || [ "$ecc" = 0 ] || fail "$ecc uncorrected ECC errors since the driver loaded (nvidia-smi -q -d ECC): take the GPU out of service"
remap_pending=$(smi_value remapped_rows.pending)
remap_failed=$(smi_value remapped_rows.failure)
[ "$remap_failed" != Yes ] || fail "a row remapping failed (nvidia-smi -q -d ROW_REMAPPER): the GPU needs service"
[ "$remap_pending" != Yes ] || fail "a row remap is pending (nvidia-smi -q -d ROW_REMAPPER): reset the GPU before trusting it"
echo "seconds: $(($(date +%s) - started))"
echo "device-check: PASS"
