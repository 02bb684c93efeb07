#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU (CI has none): builds the
# probe if needed, runs it on the real driver, and gives one verdict whose
# figures can be judged. Exit status and last line:
#   0  "device-check: PASS"
#   1  "device-check: FAIL: <reason>"          the GPU or the probe is wrong
#   2  "device-check: INCONCLUSIVE: <reason>"  this machine cannot tell: a
#      driver older than the probe's fatbin, MIG on, Confidential Computing
#      on, no nvidia-smi to read the clocks and the link (or one that does
#      not find GPU 0, or never saw it at work)
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
#   - `--bench` three times (on GPU 0's NUMA node where numactl is), with
#     nvidia-smi sampled every 100 ms during each (SM and memory clocks,
#     power, temperatures, clock event reasons, PCIe link, utilisation);
#     the samples of the GPU at work (busy, not idle) are judged, min and
#     median printed. Gates, on the worst of the three runs: device copy
#     >= 80% of the published peak; host->device and device->host >= 71% of
#     the link's rate (45 GB/s on Gen5 x16), the link read while the copies
#     ran; FP32 >= 85% of SMs x FP32 lanes x 2 x the lowest busy SM clock
#     of that run; each of those spreading <= 5%; the network step faster on
#     the GPU; no hardware or thermal slowdown in two busy samples; the link
#     at its full width and at the generation both GPU and host reach;
#   - the kernels loaded every way (SASS only, PTX only, the low-ISA PTX);
#   - CUDA_VISIBLE_DEVICES=-1 refused, the UUID found, the entrypoint
#     passing output and status through, a startupProbe beside an app that
#     holds 90% of the memory;
#   - nvbandwidth and `dcgmi diag -r 2` as cross-checks to read, when
#     installed (dcgmi covers every GPU of the node: printed, not a gate);
#   - the machine after: `nvidia-smi -q`, new Xid lines of GPU 0's PCI
#     address (an application's 13, 31, 43, 45 noted), uncorrected ECC
#     errors during the check, pending or failed row remaps.
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

# smi_value FIELD [ID]: a GPU's value (GPU 0 by UUID once it is known, else
# nvidia-smi's index 0), empty where nvidia-smi fails or answers no value
# ([N/A], [Not Supported], [Unknown Error], [Insufficient Permissions]...).
smi_id=0
smi_value() {
  local v
  v=$(nvidia-smi -i "${2:-$smi_id}" --query-gpu="$1" --format=csv,noheader,nounits 2>/dev/null) || return 0
  v=$(printf '%s\n' "$v" | head -n 1)
  case $v in *"["*"]"* | *"not a valid field"* | *"No devices"* | "") echo "" ;; *) echo "$v" ;; esac
}
# MIG on (a GPU with no instances has no CUDA device) and Confidential
# Computing are settings of the machine, judged before a failing --check.
have_smi=false
command -v nvidia-smi >/dev/null && have_smi=true
mig_mode="" cc_status=""
if $have_smi; then
  mig_mode=$(smi_value mig.mode.current)
  cc_status=$(nvidia-smi conf-compute -f 2>/dev/null | sed -n 's/.*CC status: *//p' | head -n 1)
fi
# settings_inconclusive [MIG_SLICE] [SUFFIX]: INCONCLUSIVE where MIG (as
# nvidia-smi's mig_mode says, or MIG_SLICE=True from the probe's report) or
# Confidential Computing is on.
settings_inconclusive() {
  if [ "$mig_mode" = Enabled ] || [ "${1:-}" = True ]; then
    inconclusive "MIG mode is on: a slice has a share of the GPU's bandwidth and compute, so no whole-GPU target applies (nvidia-smi -mig 0 to turn it off, with the GPU idle)${2:-}"
  fi
  case $cc_status in ON | on | DEVTOOLS | devtools)
    inconclusive "Confidential Computing is on: host<->device copies are encrypted and the bandwidth targets do not apply${2:-}" ;;
  esac
}
if [ "$check_status" -ne 0 ]; then
  settings_inconclusive False " (and --check exited $check_status)"
  fail "--check exited $check_status: $(grep -m1 'imgsmith-probe' "$out/check.stderr" || echo 'no reason printed')"
fi
[ "$(json_get "$out/check.json" "r['status']")" = ok ] || fail "--check exited 0 but the report's status is not ok"
driver=$(json_get "$out/check.json" "(r.get('driver') or {}).get('version', '')")
driver_cuda=$(json_get "$out/check.json" "(r.get('driver') or {}).get('cuda', '')")
uuid=$(json_get "$out/check.json" "r['devices'][0]['uuid']")
gpu_name=$(json_get "$out/check.json" "r['devices'][0]['name']")
compute_capability=$(json_get "$out/check.json" "r['devices'][0]['compute_capability']")
echo "GPU 0: $gpu_name ($uuid), compute capability $compute_capability"
echo "driver: ${driver:-unknown}, its CUDA: ${driver_cuda:-unknown}"

# nvidia-smi reads what the gates need: the link, the clocks, the reasons
# the clocks were held down. Without it, or where it cannot find GPU 0 by
# the UUID CUDA gives, no figure can be judged.
# A MIG slice (CUDA names it by a MIG- UUID, which nvidia-smi -i does not
# take) is judged before nvidia-smi is asked about GPU 0.
settings_inconclusive "$(json_get "$out/check.json" "r['devices'][0]['mig']")"
$have_smi ||
  inconclusive "no nvidia-smi: the PCIe link, clocks and throttle reasons the gates are judged by cannot be read (mount the driver's utilities: NVIDIA_DRIVER_CAPABILITIES=compute,utility)"
[ "$(smi_value uuid "$uuid")" = "$uuid" ] ||
  inconclusive "nvidia-smi does not find GPU 0 by its UUID $uuid (nvidia-smi -i $uuid: $(nvidia-smi -i "$uuid" -L 2>&1 | head -n 1)): its clocks and link cannot be read"
smi_id=$uuid
mig_mode=$(smi_value mig.mode.current)
compute_mode=$(smi_value compute_mode)
persistence=$(smi_value persistence_mode)
bus_id=$(smi_value pci.bus_id)
echo "MIG mode: ${mig_mode:-not supported}; compute mode: ${compute_mode:-?}; persistence: ${persistence:-?}; Confidential Computing: ${cc_status:-not supported}; PCI ${bus_id:-?}"
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
settings_inconclusive  # MIG again, now as nvidia-smi says for GPU 0 by its UUID

# The benches run on GPU 0's NUMA node where numactl is there: the pinned
# buffers then sit on the socket the GPU hangs off, as a tuned app's would.
numa=()
numa_node=""
# nvidia-smi's bus id "00000000:3B:00.0"; sysfs and the kernel log use a
# four-digit domain, in lower case ("0000:3b:00.0", "PCI:0000:3b:00").
pci_address=$(echo "$bus_id" | tr 'A-F' 'a-f' | awk -F'[:.]' 'NF == 4 { print substr($1, length($1) - 3) ":" $2 ":" $3 "." $4 }')
[ -z "$pci_address" ] || numa_node=$(cat "/sys/bus/pci/devices/$pci_address/numa_node" 2>/dev/null || true)
if [ -n "$numa_node" ] && [ "$numa_node" -ge 0 ] 2>/dev/null && command -v numactl >/dev/null; then
  numa=(numactl --cpunodebind="$numa_node" --membind="$numa_node")
  echo "benches pinned to GPU 0's NUMA node $numa_node"
else
  echo "benches not pinned to a NUMA node (node ${numa_node:-unknown}; numactl $(command -v numactl >/dev/null && echo there || echo missing))"
fi

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
# GPU 0's Xid lines: "NVRM: Xid (PCI:0000:3b:00): 79, ..." names the bus.
xid_bus=${pci_address%.*}
xid_lines >"$out/xid-before.txt"
echo "Xid lines before: $(grep -c 'NVRM: Xid' "$out/xid-before.txt")$(grep -q '^# unreadable' "$out/xid-before.txt" && echo ' (kernel log unreadable)')"

# The event-reason field's name changed (clocks_throttle_reasons before R535).
reasons_field=clocks_event_reasons.active
help_text=$(nvidia-smi --help-query-gpu 2>/dev/null || true)
case $help_text in *clocks_event_reasons*) ;; *) reasons_field=clocks_throttle_reasons.active ;; esac
sample_fields="timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,$reasons_field,pcie.link.gen.current,pcie.link.width.current,utilization.gpu"
# The link's maximum: the GPU's and the host's where nvidia-smi tells them
# apart (pcie.link.gen.max falls back to the GPU's when the host's is
# unknown, as under pass-through).
link_max="$(smi_value pcie.link.gen.gpumax),$(smi_value pcie.link.gen.hostmax),$(smi_value pcie.link.gen.max),$(smi_value pcie.link.width.max)"
ecc_before=$(smi_value ecc.errors.uncorrected.volatile.total)

for run in 1 2 3; do
  echo "== imgsmith-probe --bench (run $run of 3), nvidia-smi sampled every 100 ms"
  json="$out/bench-$run.json"
  rm -f "$json"
  nvidia-smi -i "$uuid" --query-gpu="$sample_fields" --format=csv,noheader,nounits -lms 100 >"$out/samples-$run.csv" 2>&1 &
  sampler=$!
  # nvidia-smi takes a while to start (NVML's initialisation): the bench
  # starts once its first sample is written, so that the samples cover it.
  for _ in $(seq 100); do [ -s "$out/samples-$run.csv" ] && break; sleep 0.05; done
  bench_status=0
  IMGSMITH_PROBE_JSON="$json" timeout 240 "${numa[@]}" "$probe" --bench >"$out/bench-$run.stdout" 2>"$out/bench-$run.stderr" ||
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
gates_status=0
python3 - "$out" "$compute_capability" "$link_max" >"$out/gates.txt" <<'PY' || gates_status=$?
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

failures, notes, inconclusive = [], [], []
samples = []
for i in (1, 2, 3):
    rows = []
    for row in csv.reader(open(f"{out}/samples-{i}.csv")):
        if len(row) >= 10:
            rows.append([c.strip() for c in row])
    samples.append(rows)

def reasons_of(row):
    try:
        return int(row[6], 16)
    except ValueError:
        return 0

# The samples taken while the GPU worked: busy (utilization.gpu >= 50) and
# not idle (reason bit 0x1). Between the timed parts (the CPU half, context
# creation, filling buffers) the GPU idles at a low clock, and a clock
# change may flag a HW slowdown for one sample: neither is the GPU at work.
def busy(rows):
    return [r for r in rows if (number(r[9]) or 0) >= 50 and not reasons_of(r) & 0x1]

def column(rows, k):
    return [v for v in (number(r[k]) for r in rows) if v is not None]

print("nvidia-smi while each run worked (busy samples; min / median):")
names = ["SM MHz", "memory MHz", "power W", "GPU C", "memory C"]
for i, rows in enumerate(samples, 1):
    work = busy(rows)
    parts = []
    for k, name in enumerate(names, 1):
        v = column(work, k)
        parts.append(f"{name} {min(v):.0f}/{statistics.median(v):.0f}" if v else f"{name} N/A")
    reasons = 0
    for r in work:
        reasons |= reasons_of(r)
    gens, widths = column(work, 7), column(work, 8)
    link = f"PCIe Gen{max(gens):.0f} x{max(widths):.0f}" if gens and widths else "PCIe N/A"
    print(f"  run {i}: {len(rows)} samples, {len(work)} busy; " + ", ".join(parts) +
          f"; event reasons 0x{reasons:x}; {link}")
    if len(work) < 2:
        inconclusive.append(f"nvidia-smi saw the GPU at work in {len(work)} of {len(rows)} samples of run {i}: its clocks and link cannot be judged (samples-{i}.csv)")
    # A sick reason counts when two samples of work show it, not one.
    for bit, name in SICK.items():
        seen = sum(1 for r in work if reasons_of(r) & bit)
        if seen >= 2:
            failures.append(f"the GPU throttled in run {i}: {name} in {seen} of {len(work)} busy samples (nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER; check the node's cooling and power)")
    if reasons & 0x4:
        notes.append(f"run {i}: the GPU reached its power cap (SW power cap): figures at the cap")

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
gens = [v for rows in samples for v in column(busy(rows), 7)]
widths = [v for rows in samples for v in column(busy(rows), 8)]
gpu_max, host_max, any_max, max_width = (number(x) if x else None for x in (link_max.split(",") + [""] * 4)[:4])
if gens and widths:
    gen, width = int(max(gens)), int(max(widths))
    target = round(0.71 * LANE_GBPS.get(gen, 0) * width, 1)
    for key, name in (("h2d_gbps", "host->device"), ("d2h_gbps", "device->host")):
        w = worst(key)
        print(f"{name}: {[g[key] for g in gpu]} GB/s, worst {w} (>= {target} GB/s on PCIe Gen{gen} x{width})")
        if w is not None and w < target:
            failures.append(f"{name} at {w} GB/s in the worst run (target >= {target} GB/s on PCIe Gen{gen} x{width})")
    # The generation the link can reach: the lower of the GPU's and the
    # host's where both are known. Where the host's is not (pass-through),
    # a lower generation may be the host's slot: said, not failed.
    reachable = min(gpu_max, host_max) if gpu_max and host_max else None
    if max_width and width < max_width:
        failures.append(f"the PCIe link ran at x{width} of its x{max_width:.0f} (reseat the GPU or check the riser)")
    elif reachable and gen < reachable:
        failures.append(f"the PCIe link ran at Gen{gen} while the GPU and the host both reach Gen{reachable:.0f} (check the slot and the BIOS link speed)")
    elif not reachable and any_max and gen < any_max:
        notes.append(f"the PCIe link ran at Gen{gen}, below the Gen{any_max:.0f} nvidia-smi reports; the host's maximum is unknown (pass-through?), so the slot may be the limit")
    if host_max and gpu_max and host_max < gpu_max:
        notes.append(f"the host's slot reaches Gen{host_max:.0f}, the GPU Gen{gpu_max:.0f}: the targets are the slot's")
else:
    notes.append("no PCIe link figures (N/A, e.g. a C2C-attached GPU): host<->device not gated")

# FP32 against SMs x lanes x 2 x the SM clock of that run's busy samples:
# the lowest, so that a clock held down in the FMA's part alone (a power
# cap) lowers the target rather than failing a healthy GPU.
lanes = FP32_LANES.get(cc)
ratios = []
for i, g in enumerate(gpu):
    clocks = column(busy(samples[i]), 1)
    sms = g.get("multiprocessors") or 0
    if lanes and clocks and sms:
        clock = min(clocks)
        theoretical = sms * lanes * 2 * clock * 1e6 / 1e12
        ratios.append((g["fp32_tflops"] / theoretical * 100, clock, theoretical))
if ratios:
    low = min(ratios)
    print(f"FP32: {[g['fp32_tflops'] for g in gpu]} TFLOP/s, worst {low[0]:.1f}% of {gpu[0]['multiprocessors']} SMs x {lanes} x 2 x {low[1]:.0f} MHz = {low[2]:.1f} TFLOP/s (>= 85%)")
    if low[0] < 85:
        failures.append(f"FP32 at {low[0]:.1f}% of the SMs' rate at the observed {low[1]:.0f} MHz in the worst run (target >= 85%)")
elif not lanes:
    notes.append(f"FP32 not gated: no FP32 lanes known for compute capability {cc}")

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
for c in inconclusive:
    print("inconclusive: " + c)
PY
cat "$out/gates.txt"
[ "$gates_status" -eq 0 ] || fail "the gates could not be computed from the runs' reports and samples (exit $gates_status; see $out/gates.txt)"
first_gate=$(sed -n 's/^gate: //p' "$out/gates.txt" | head -n 1)
[ -z "$first_gate" ] || fail "$first_gate"
# A missed target is a failure whatever else; a run nvidia-smi could not
# watch leaves the rest unjudged.
unjudged=$(sed -n 's/^inconclusive: //p' "$out/gates.txt" | head -n 1)
[ -z "$unjudged" ] || inconclusive "$unjudged"

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
  # A cross-check to read, not a gate: it covers every GPU of the node, and
  # another tenant's GPU is not this check's verdict.
  dcgm_status=0
  timeout 90 dcgmi diag -r 2 >"$out/dcgmi-diag.txt" 2>&1 || dcgm_status=$?
  echo "dcgmi diag -r 2 exited $dcgm_status$([ "$dcgm_status" -eq 124 ] && echo ' (stopped after 90 s)'); its result rows:"
  grep -iE 'fail|warn|pass' "$out/dcgmi-diag.txt" | head -n 20
else
  echo "dcgmi: not installed"
fi

echo "== the machine after"
nvidia-smi -q >"$out/nvidia-smi-q-after.txt" 2>&1 || true
xid_lines >"$out/xid-after.txt"
# New Xid lines of GPU 0 (other GPUs' are not this check's); 13, 31, 43
# and 45 are an application's faults (a bad kernel, a killed process),
# noted, not held against the GPU.
new_xid=$(diff "$out/xid-before.txt" "$out/xid-after.txt" | sed -n 's/^> //p' | grep 'NVRM: Xid' |
  { if [ -n "$xid_bus" ]; then grep -i "PCI:$xid_bus" || true; else cat; fi; })
app_xid=$(echo "$new_xid" | grep -E 'Xid \([^)]*\): (13|31|43|45),' || true)
[ -z "$app_xid" ] || echo "note: application Xid lines during the check: $(echo "$app_xid" | head -n 2)"
gpu_xid=$(echo "$new_xid" | grep -vE 'Xid \([^)]*\): (13|31|43|45),' | grep . | head -n 3 || true)
[ -z "$gpu_xid" ] || fail "the driver logged Xid errors for GPU 0 during the check: $gpu_xid"
ecc=$(smi_value ecc.errors.uncorrected.volatile.total)
[ -z "$ecc" ] || [ -z "$ecc_before" ] || [ "$ecc" = "$ecc_before" ] ||
  fail "uncorrected ECC errors rose from $ecc_before to $ecc during the check (nvidia-smi -q -d ECC): take the GPU out of service"
[ -z "$ecc" ] || [ "$ecc" = 0 ] || echo "note: $ecc uncorrected ECC errors since the driver loaded, none during the check"
remap_pending=$(smi_value remapped_rows.pending)
remap_failed=$(smi_value remapped_rows.failure)
[ "$remap_failed" != Yes ] || fail "a row remapping failed (nvidia-smi -q -d ROW_REMAPPER): the GPU needs service"
[ "$remap_pending" != Yes ] || fail "a row remap is pending (nvidia-smi -q -d ROW_REMAPPER): reset the GPU before trusting it"
echo "seconds: $(($(date +%s) - started))"
echo "device-check: PASS"
