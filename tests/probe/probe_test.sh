#!/usr/bin/env bash
# imgsmith-probe as an entrypoint: the real no-GPU path of this machine, each
# diagnosis through the stand-in driver libraries, entrypoint semantics, the
# watchdog, and the checks on the binary itself.
# Usage: probe_test.sh IMGSMITH_PROBE FAKE_DRIVER_DIR IMGSMITH [with-kernels|without-kernels] [all|diagnosis|startup|bench]
set -u
probe=$1
fake=$2
imgsmith=$3
kernels=${4:-with-kernels}  # without-kernels: the build had no nvcc
# PART: diagnosis (each failure explained, compute modes, MIG, the VRAM
# verdict, the watchdog), startup (slow starts, --check, device-check, the
# report file, the binary itself, arm64, --summarize), bench (the
# benchmark), or all (the default). ctest runs the three as tests of their
# own, side by side: under the sanitizers the script took 190-240 s alone,
# the cli tests' tail.
part=${5:-all}
case "$part" in all|diagnosis|startup|bench) ;; *) echo "probe_test.sh: PART is all, diagnosis, startup or bench, not $part" >&2; exit 2 ;; esac
want() { [ "$part" = all ] || [ "$part" = "$1" ]; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
mkdir -p "$tmp/no-dev" "$tmp/gpu-dev"
touch "$tmp/gpu-dev/nvidia0" "$tmp/gpu-dev/nvidiactl"

check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; sed 's/^/  /' "$tmp/err" | head -5; fi
}
# run STATUS_VAR ENV... -- ARGS: runs the probe with a clean environment
run() {
  env -i PATH="$PATH" "$@" >"$tmp/out" 2>"$tmp/err"
  status=$?
}
nogpu=(IMGSMITH_PROBE_DEV="$tmp/no-dev")
withgpu=(IMGSMITH_PROBE_DEV="$tmp/gpu-dev" LD_LIBRARY_PATH="$fake")

# One version, from CMake's project(), in both binaries.
probe_version=$("$probe" --version 2>/dev/null | head -n 1)
imgsmith_version=$("$imgsmith" --version 2>/dev/null | cut -d' ' -f1-2)  # then what inflates gzip
if want diagnosis; then
check "the probe and imgsmith carry one version ($probe_version, $imgsmith_version)" \
  test -n "${probe_version#imgsmith-probe }" -a "${probe_version#imgsmith-probe }" = "${imgsmith_version#imgsmith }"

# The real path here: no device nodes, no libcuda.
run "${nogpu[@]}" "$probe" --json
check "no GPU: status" grep -q '"status":"no-gpu"' "$tmp/out"
check "no GPU: says --gpus" grep -q -- "--gpus all" "$tmp/err"
check "no GPU: exit 3 without a command" test "$status" -eq 3

# Entrypoint: the command's stdout and exit code pass through untouched.
run "${nogpu[@]}" "$probe" -- sh -c 'echo app-output; exit 7'
check "exec: exit code" test "$status" -eq 7
check "exec: stdout untouched" test "$(cat "$tmp/out")" = "app-output"
check "exec: report on stderr" grep -q "imgsmith-probe: no-gpu" "$tmp/err"
# The command runs in the probe's own process: the PID the shell reports is
# the one the probe was started with (env -i execs too).
env -i PATH="$PATH" "${nogpu[@]}" "$probe" -- sh -c 'echo $$' >"$tmp/out" 2>"$tmp/err" &
started=$!
wait "$started"
check "exec: same PID as the probe ($started)" test "$(cat "$tmp/out")" = "$started"

# require and off.
run "${nogpu[@]}" IMGSMITH_PROBE=require "$probe" -- sh -c 'echo ran >'"$tmp/ran"
check "require: exit 3" test "$status" -eq 3
check "require: command not run" test ! -e "$tmp/ran"
run "${nogpu[@]}" IMGSMITH_PROBE=off "$probe" -- sh -c 'echo off-ran'
check "off: runs at once" test "$(cat "$tmp/out")" = "off-ran"
check "off: says nothing" test ! -s "$tmp/err"

# Device nodes but no libcuda: capabilities without compute.
run IMGSMITH_PROBE_DEV="$tmp/gpu-dev" "$probe" --json
check "no compute capability" grep -q "NVIDIA_DRIVER_CAPABILITIES=compute,utility" "$tmp/err"

# A usable GPU (stand-in): devices, memory, utilisation, temperature.
run "${withgpu[@]}" FAKE_DEVICE_COUNT=2 CUDA_VERSION=12.4.1 NVIDIA_VISIBLE_DEVICES=all "$probe" --json
check "ok: status" grep -q '"status":"ok"' "$tmp/out"
check "ok: exit 0" test "$status" -eq 0
check "ok: two devices" test "$(grep -o '"index":' "$tmp/out" | wc -l)" -eq 2
check "ok: name and capability" grep -q '"name":"NVIDIA H200 (stand-in)","uuid":"GPU-00010203-0405-0607-0809-0a0b0c0d0e0f","compute_capability":"9.0"' "$tmp/out"
check "ok: NVML figures" grep -q '"memory_used_bytes":1073741824,"utilization_percent":37,"temperature_c":41' "$tmp/out"
check "ok: driver" grep -q '"driver":{"version":"550.54.15","cuda":"12.4"}' "$tmp/out"
check "ok: visible devices" grep -q '"NVIDIA_VISIBLE_DEVICES":"all"' "$tmp/out"
check "ok: human line" grep -q "ok: 2 GPUs, driver 550.54.15 (CUDA 12.4), image CUDA 12.4.1" "$tmp/err"

# Each failure, one line with its fix.
run "${withgpu[@]}" FAKE_CUINIT=34 "$probe"
check "stub libcuda" grep -q "stub" "$tmp/err"
run "${withgpu[@]}" FAKE_CUINIT=100 CUDA_VISIBLE_DEVICES=7 "$probe"
check "no device (100)" grep -q "error 100.*CUDA_VISIBLE_DEVICES='7'" "$tmp/err"
run "${withgpu[@]}" FAKE_DRIVER_VERSION=12040 CUDA_VERSION=13.0.1 "$probe" --json
check "driver too old: status" grep -q '"status":"driver-too-old"' "$tmp/out"
check "driver too old: message" grep -q "this image needs CUDA 13.0 (driver >= 580); the host driver supports CUDA 12.4" "$tmp/err"
run "${withgpu[@]}" FAKE_DRIVER_VERSION=12020 CUDA_VERSION=12.4.1 "$probe"
check "minor-version compatibility is a note" grep -q "note: .*minor-version compatibility" "$tmp/err"
check "minor-version compatibility still ok" test "$status" -eq 0
run "${withgpu[@]}" FAKE_CUINIT=802 "$probe"
check "fabric manager (802)" grep -q "nvidia-fabricmanager" "$tmp/err"
# NVML failing while CUDA works costs the figures, not the GPU: a note, and
# require mode still runs the app. Failing with cuInit, it names the cause.
run "${withgpu[@]}" FAKE_NVML_INIT=999 IMGSMITH_PROBE=require "$probe" -- sh -c 'echo app-ran'
check "NVML 999 after a good cuInit: the app runs in require mode" test "$(cat "$tmp/out")" = app-ran
check "NVML 999 after a good cuInit: a note" grep -q "note: NVML: Unknown Error although CUDA works" "$tmp/err"
run "${withgpu[@]}" FAKE_CUINIT=999 FAKE_NVML_INIT=999 "$probe"
check "cuInit and NVML both 999: restart the container" grep -q "daemon-reload.*" "$tmp/err"
check "cuInit and NVML both 999: the fix" grep -q "fix: restart the container" "$tmp/err"
run "${withgpu[@]}" FAKE_NVML_INIT=18 "$probe"
check "NVML mismatch after a good cuInit: ok with a note" grep -q "note: NVML: Driver/library version mismatch although CUDA works" "$tmp/err"
check "NVML mismatch after a good cuInit: exit 0" test "$status" -eq 0
run "${withgpu[@]}" FAKE_CUINIT=803 FAKE_NVML_INIT=18 "$probe"
check "803, NVML mismatch: reboot" grep -q "error 803.*upgraded without a reboot (NVML says the same" "$tmp/err"
check "803: fix: reboot the host" grep -q "fix: reboot the host" "$tmp/err"
mkdir -p "$tmp/cuda/compat"
cp "$fake"/libcuda.so.1 "$tmp/cuda/compat/"
run IMGSMITH_PROBE_DEV="$tmp/gpu-dev" LD_LIBRARY_PATH="$tmp/cuda/compat:$fake" FAKE_CUINIT=803 "$probe"
check "803 from a cuda-compat libcuda: named, with its path" grep -q "forward-compatibility libcuda ($tmp/cuda/compat/libcuda.so.1) does not match" "$tmp/err"
check "803 from cuda-compat: take it off LD_LIBRARY_PATH" grep -q "fix: take the compat directory off LD_LIBRARY_PATH" "$tmp/err"
run "${withgpu[@]}" FAKE_CUINIT=804 FAKE_DRIVER_VERSION=12020 "$probe"
check "804: forward compatibility on a GPU that lacks it" grep -q "error 804): it is for data-center GPUs only" "$tmp/err"
check "804: the fix names the driver's CUDA" grep -q "image built for CUDA 12.2 or older" "$tmp/err"
run "${withgpu[@]}" FAKE_CUINIT=999 "$probe"
check "other error by name and number" grep -q "CUDA_ERROR_UNKNOWN (999)" "$tmp/err"
# A libcuda.so.1 that is there but does not load says why (dlerror).
mkdir -p "$tmp/broken-driver"
echo "not a library" >"$tmp/broken-driver/libcuda.so.1"
run IMGSMITH_PROBE_DEV="$tmp/gpu-dev" LD_LIBRARY_PATH="$tmp/broken-driver" "$probe"
check "a libcuda.so.1 that does not load: dlerror's reason" grep -q "error: libcuda.so.1 is here but does not load: .*broken-driver/libcuda.so.1" "$tmp/err"

# Compute modes: prohibited, and exclusive-process held by another process
# (error 46), are GPUs the app cannot use; GPU 0 decides, others get a note.
run "${withgpu[@]}" FAKE_COMPUTE_MODE=2 "$probe" --check --json
check "compute mode Prohibited: exit 7" test "$status" -eq 7
check "compute mode Prohibited: named" grep -q "error: GPU 0 (.*) is in compute mode Prohibited" "$tmp/err"
check "compute mode Prohibited: the fix" grep -q "fix: on the host: nvidia-smi -i 0 -c DEFAULT" "$tmp/err"
check "compute mode in the JSON" grep -q '"compute_mode":"prohibited"' "$tmp/out"
run "${withgpu[@]}" FAKE_COMPUTE_MODE=3 FAKE_CTX_RETAIN=46 IMGSMITH_PROBE=require "$probe" -- sh -c "echo ran >'$tmp/ran-46'"
check "exclusive-process, in use before the app: require mode exits 3" test "$status" -eq 3 -a ! -e "$tmp/ran-46"
check "exclusive-process, in use: error 46 named" grep -q "compute mode Exclusive_Process and another process holds it (error 46)" "$tmp/err"
run "${withgpu[@]}" FAKE_COMPUTE_MODE=3 FAKE_LEDGER="$tmp/ledger" "$probe" --json
check "exclusive-process, free: ok" test "$status" -eq 0
check "exclusive-process, free: the context taken to find out is released" grep -q "contexts=0" "$tmp/ledger"
check "exclusive-process: in the JSON" grep -q '"compute_mode":"exclusive-process"' "$tmp/out"
# As a startupProbe (--check) the app is running and holds the context: the
# probe takes none, and a held GPU is no failure.
rm -f "$tmp/ledger"
run "${withgpu[@]}" FAKE_COMPUTE_MODE=3 FAKE_CTX_RETAIN=46 FAKE_LEDGER="$tmp/ledger" "$probe" --check --json
check "--check beside an app holding an exclusive-process GPU: exit 0" test "$status" -eq 0
check "--check beside the app: no context taken" test ! -e "$tmp/ledger"
check "--check beside the app: the mode still reported" grep -q '"compute_mode":"exclusive-process"' "$tmp/out"
# The same with the stand-in enforcing the mode across processes, as the
# driver does: another live process holds the context.
sleep 60 &
holder=$!
echo "$holder" >"$tmp/exclusive"
run "${withgpu[@]}" FAKE_COMPUTE_MODE=3 FAKE_EXCLUSIVE_LOCK="$tmp/exclusive" "$probe" --check --json
check "exclusive-process held by a live process: --check (a startupProbe) passes" test "$status" -eq 0
run "${withgpu[@]}" FAKE_COMPUTE_MODE=3 FAKE_EXCLUSIVE_LOCK="$tmp/exclusive" IMGSMITH_PROBE=require "$probe" -- sh -c "echo ran >'$tmp/ran-held'"
check "exclusive-process held by a live process: the entrypoint refuses (3), the app not run" test "$status" -eq 3 -a ! -e "$tmp/ran-held"
check "exclusive-process held by a live process: error 46 named" grep -q "another process holds it (error 46)" "$tmp/err"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
run "${withgpu[@]}" FAKE_COMPUTE_MODE=3 FAKE_EXCLUSIVE_LOCK="$tmp/exclusive" IMGSMITH_PROBE=require "$probe" -- sh -c "echo ran >'$tmp/ran-free'"
check "exclusive-process whose holder has gone: the app runs" test "$status" -eq 0 -a -e "$tmp/ran-free"
check "exclusive-process: the probe released its context for the app" test ! -e "$tmp/exclusive"
run "${withgpu[@]}" FAKE_DEVICE_COUNT=2 FAKE_COMPUTE_MODE=0,2 "$probe" --check
check "GPU 1 prohibited, GPU 0 fine: ok" test "$status" -eq 0
check "GPU 1 prohibited: a note" grep -q "note: GPU 1 (.*) is in compute mode Prohibited" "$tmp/err"

# A MIG slice: its own UUID (MIG-), its own memory from NVML found by that
# UUID, and no whole-GPU peak in the benchmark.
run "${withgpu[@]}" FAKE_MIG=1 "$probe" --json
check "MIG: reported as a slice with its own UUID" grep -q '"name":"NVIDIA H200 MIG 1g.18gb","uuid":"MIG-80818283-8485-8687-8889-8a8b8c8d8e8f"' "$tmp/out"
check "MIG: its own memory, and NVML found it" grep -q '"memory_total_bytes":19327352832,"memory_used_bytes":1073741824,' "$tmp/out"
check "MIG: NVML has no utilisation for a slice (NOT_SUPPORTED): null, the temperature still there" grep -q '"utilization_percent":null,"temperature_c":41' "$tmp/out"
check "MIG: flagged" grep -q '"mig":true}' "$tmp/out"

# The model's need (IMGSMITH_MODEL_VRAM, written by gen) against GPU 0's
# free memory, which the stand-in NVML scripts.
vram=(IMGSMITH_MODEL_VRAM=14200000000 IMGSMITH_MODEL_VRAM_BY_PRECISION=bf16:14200000000,int8:7300000000,int4:4000000000)
run "${withgpu[@]}" "${vram[@]}" IMGSMITH_MODEL_KV_BYTES_PER_TOKEN=131072 FAKE_NVML_FREE=22100000000 "$probe" --json
check "vram: a model that fits says so, with what is left" grep -q "the model needs 14.2 GB; GPU 0 (.*) has 22.1 GB free: fits, 7.9 GB to spare, room for ~60k more tokens of KV cache" "$tmp/err"
check "vram: the JSON report has the verdict" grep -q '"vram":{"need_bytes":14200000000,"free_bytes":22100000000,"checked":true,"fits":true' "$tmp/out"
run "${withgpu[@]}" "${vram[@]}" FAKE_NVML_FREE=8000000000 "$probe" -- sh -c 'echo app-ran'
check "vram: a model that does not fit names the precision that would" grep -q "vram: the model needs 14.2 GB; GPU 0 (.*) has 8.0 GB free: does not fit; at int8 it would need 7.3 GB and fit" "$tmp/err"
check "vram: warn mode still starts the app" test "$(cat "$tmp/out")" = "app-ran"
run "${withgpu[@]}" "${vram[@]}" FAKE_NVML_FREE=3000000000 IMGSMITH_PROBE=require "$probe" -- sh -c 'echo ran >'"$tmp/ran-vram"
check "vram: require mode refuses a model that cannot fit, exit 4" test "$status" -eq 4
check "vram: no precision fits: the least free memory to ask for" grep -q "use a GPU with at least 14.2 GB free" "$tmp/err"
check "vram: and the smallest GPU of data/gpus.json that holds it" grep -q "the smallest in imgsmith's table: T4, 16 GB" "$tmp/err"
run "${withgpu[@]}" IMGSMITH_MODEL_VRAM=900000000000 FAKE_NVML_FREE=3000000000 "$probe"
check "vram: more than any GPU holds: split it" grep -q "more than any one GPU in imgsmith's table holds" "$tmp/err"
check "vram: the command did not run" test ! -e "$tmp/ran-vram"
# CUDA's GPU 0 is NVML's last when NVML orders the GPUs the other way: the
# free memory must come from the GPU with the same UUID, not the same index.
run "${withgpu[@]}" "${vram[@]}" FAKE_DEVICE_COUNT=2 FAKE_NVML_REVERSED=1 FAKE_NVML_FREE=3000000000,22100000000 "$probe" --json
check "vram: GPU 0's free memory found by its UUID, not NVML's index" grep -q "GPU 0 (.*) has 22.1 GB free: fits" "$tmp/err"
run "${withgpu[@]}" "${vram[@]}" FAKE_DEVICE_COUNT=2 FAKE_NVML_FREE=3000000000,22100000000 "$probe" --json
check "vram: same order, GPU 0 is NVML's first" grep -q "GPU 0 (.*) has 3.0 GB free: does not fit" "$tmp/err"
run "${withgpu[@]}" IMGSMITH_MODEL_VRAM=14GB "$probe" --json
check "vram: a need that is not a byte count is a note, not a verdict" grep -q "IMGSMITH_MODEL_VRAM='14GB' is not a byte count" "$tmp/err"
check "vram: no verdict then" grep -q '"vram":null' "$tmp/out"
run "${nogpu[@]}" "${vram[@]}" "$probe" --json
check "vram: without a GPU the model is not checked" grep -q '"vram":{"need_bytes":14200000000,"free_bytes":null,"checked":false' "$tmp/out"

# The watchdog: a cuInit that never returns is reported, and the app starts.
start=$(date +%s%N)
run "${withgpu[@]}" FAKE_CUINIT_HANG=1 IMGSMITH_PROBE_TIMEOUT=1 "$probe" -- sh -c 'echo started'
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "watchdog: reported" grep -q "did not finish within 1 s" "$tmp/err"
check "watchdog: app starts in warn mode" test "$(cat "$tmp/out")" = "started"
check "watchdog: within the timeout (${elapsed_ms} ms)" test "$elapsed_ms" -lt 3000

# The checks' child dies with the probe: a probe killed by its caller (a
# kubelet's probe timeout) leaves nothing holding the GPU.
env -i PATH="$PATH" "${withgpu[@]}" FAKE_CUINIT_HANG=1 "$probe" --check --timeout 30 >/dev/null 2>&1 &
probe_pid=$!
child_pid=
for _ in $(seq 50); do
  child_pid=$(pgrep -P "$probe_pid" | head -1)
  [ -n "$child_pid" ] && break
  sleep 0.1
done
kill -9 "$probe_pid"
wait "$probe_pid" 2>/dev/null
for _ in $(seq 20); do kill -0 "$child_pid" 2>/dev/null || break; sleep 0.1; done
check "a killed probe takes its checks' child with it" test -n "$child_pid" -a ! -d "/proc/$child_pid"
[ -n "$child_pid" ] && kill -9 "$child_pid" 2>/dev/null  # when it did not: leave nothing behind
run "${withgpu[@]}" FAKE_CUINIT_HANG=1 "$probe" --check --timeout 1
check "a timed-out check names a slow start as the likelier cause" grep -q "did not finish within 1 s: the driver is slow to start the GPU" "$tmp/err"
check "a timed-out check: the fix is a longer timeout first" grep -q "fix: give it longer (--timeout or IMGSMITH_PROBE_TIMEOUT" "$tmp/err"
fi

if want startup; then
# A cold node whose cuInit takes 11 s: require mode waits on the verdict
# (60 s unless told otherwise) and runs the app; warn mode (10 s) starts the
# app without the verdict.
run "${withgpu[@]}" FAKE_CUINIT_SECONDS=11 IMGSMITH_PROBE=require "$probe" -- sh -c 'echo started'
check "a slow cuInit (11 s): require mode waits and runs the app" test "$(cat "$tmp/out")" = "started" -a "$status" -eq 0
check "a slow cuInit (11 s): require mode found the GPU" grep -q "ok: 1 GPU" "$tmp/err"
run "${withgpu[@]}" FAKE_CUINIT_SECONDS=11 "$probe" -- sh -c 'echo started'
check "a slow cuInit (11 s): warn mode bounds it at 10 s" grep -q "did not finish within 10 s" "$tmp/err"

# The checks run in a child process: one that dies inside the driver is
# reported, and the app still starts.
run "${withgpu[@]}" FAKE_CUINIT_CRASH=1 "$probe" -- sh -c 'echo started'
check "checks that die: said, with the signal" grep -q "error: the GPU checks died inside the driver (signal 11)" "$tmp/err"
check "checks that die: the app starts in warn mode" test "$(cat "$tmp/out")" = "started"
run "${withgpu[@]}" FAKE_CUINIT_CRASH=1 "$probe" --check
check "--check: checks that die exit 7" test "$status" -eq 7

# --check: the verdict as an exit status, whatever IMGSMITH_PROBE says, no command run.
run "${withgpu[@]}" CUDA_VERSION=12.4.1 IMGSMITH_PROBE=off "$probe" --check
check "--check: a usable GPU exits 0 (even with IMGSMITH_PROBE=off)" test "$status" -eq 0
check "--check: and says so" grep -q "ok: 1 GPU" "$tmp/err"
run "${nogpu[@]}" "$probe" --check
check "--check: no GPU visible exits 3" test "$status" -eq 3
# As a startupProbe the app has started and may hold most of the memory
# (vLLM preallocates 90%): the need is compared with the GPU's total, so
# only a model that can never fit fails, and the pod is not restarted for
# memory its own app took.
run "${withgpu[@]}" IMGSMITH_MODEL_VRAM=70000000000 FAKE_TOTAL_MEM=143771000000 FAKE_NVML_FREE=14377100000 "$probe" --check
check "--check beside an app holding 90% of the memory: a half-GPU model exits 0" test "$status" -eq 0
check "--check: the total, not the free memory, and why" grep -q "the model needs 70.0 GB; GPU 0 (.*) holds 143.8 GB in all: it can fit (a check beside the running application compares with the total" "$tmp/err"
run "${withgpu[@]}" IMGSMITH_MODEL_VRAM=14200000000 FAKE_TOTAL_MEM=12000000000 "$probe" --check
check "--check: a model over the GPU's total exits 4" test "$status" -eq 4
check "--check: over the total: it can never fit, and what would" grep -q "holds 12.0 GB in all: it can never fit; use a GPU with at least 14.2 GB (the smallest in imgsmith's table: T4, 16 GB)" "$tmp/err"
run "${withgpu[@]}" IMGSMITH_MODEL_VRAM=70000000000 FAKE_TOTAL_MEM=143771000000 FAKE_NVML_FREE=14377100000 IMGSMITH_PROBE=require "$probe" -- sh -c 'echo ran'
check "the same GPU before the app starts: 90% taken by others is a refusal (4)" test "$status" -eq 4
run "${withgpu[@]}" FAKE_DRIVER_VERSION=12040 CUDA_VERSION=13.0.1 "$probe" --check
check "--check: a driver older than the image's CUDA exits 5" test "$status" -eq 5
start=$(date +%s%N)
run "${withgpu[@]}" FAKE_CUINIT_HANG=1 "$probe" --check --timeout 1
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "--check: a hung driver exits 6 (timed out)" test "$status" -eq 6
check "--check: within its timeout (${elapsed_ms} ms)" test "$elapsed_ms" -lt 3000
run "${withgpu[@]}" FAKE_CUINIT=999 "$probe" --check
check "--check: a GPU that cannot be used exits 7" test "$status" -eq 7
run "${withgpu[@]}" FAKE_CUINIT=803 FAKE_NVML_INIT=18 "$probe" --check --json
check "--check: a driver mismatch is a GPU that cannot be used (7)" test "$status" -eq 7
check "--check --json: the report on stdout" grep -q '"status":"error"' "$tmp/out"
run "${withgpu[@]}" "$probe" --check -- sh -c 'echo ran'
check "--check with a command is a usage error" test "$status" -eq 2
check "--check with a command: the command did not run" test "$(cat "$tmp/out")" != "ran"

# probes/device-check.sh gives one verdict: exit 1 and one FAIL line with the
# reason, 2 and one INCONCLUSIVE line where the machine cannot tell, 0 and
# PASS. Here without a GPU, and on the stand-in driver with a stand-in
# nvidia-smi (tests/probe/fake_nvidia_smi.py) for the clocks and the link.
device_check="$(cd "$(dirname "$0")/../.." && pwd)/probes/device-check.sh"
mkdir -p "$tmp/smi"
ln -s "$(cd "$(dirname "$0")" && pwd)/fake_nvidia_smi.py" "$tmp/smi/nvidia-smi"
smi=(PATH="$tmp/smi:$PATH" IMGSMITH_PROBE_KERNEL_CHECK=off IMGSMITH_PROBE_BINARY="$probe")
run "${nogpu[@]}" IMGSMITH_PROBE_BINARY="$probe" "$device_check" "$tmp/device-check"
check "device-check: no GPU is a failure (exit 1)" test "$status" -eq 1
check "device-check: one line says why" test "$(grep -c '^device-check: FAIL: ' "$tmp/out")" -eq 1
check "device-check: the reason is the probe's" grep -q "^device-check: FAIL: --check exited 3: .*no NVIDIA devices" "$tmp/out"
run "${withgpu[@]}" FAKE_DRIVER_VERSION=13000 IMGSMITH_PROBE_KERNEL_CHECK=off IMGSMITH_PROBE_BINARY="$probe" "$device_check" "$tmp/device-check"
check "device-check: no nvidia-smi is inconclusive (exit 2), not a death under set -e" test "$status" -eq 2
check "device-check: no nvidia-smi: said in one line" grep -q "^device-check: INCONCLUSIVE: no nvidia-smi: the PCIe link, clocks and throttle reasons" "$tmp/out"
if [ "$kernels" = with-kernels ]; then
  run "${withgpu[@]}" "${smi[@]}" FAKE_DRIVER_VERSION=13000 "$device_check" "$tmp/device-check"
  check "device-check: a GPU half that did not run is a failure" grep -q "^device-check: FAIL: the benchmark's GPU half did not run" "$tmp/out"
  check "device-check: exit 1 then too" test "$status" -eq 1
  check "device-check: the preflight names the probe's kernels and the driver" grep -q "probe kernels: fatbin CUDA 13.[0-9] (R580+), PTX ISA 7.0 (R450+)" "$tmp/out"
  # A driver older than the fatbin, MIG, Confidential Computing: this
  # machine cannot judge the GPU's figures, and says so before measuring.
  run "${withgpu[@]}" "${smi[@]}" "$device_check" "$tmp/device-check"
  check "device-check: an old driver (CUDA 12.4) is inconclusive" test "$status" -eq 2
  check "device-check: an old driver: why" grep -q "^device-check: INCONCLUSIVE: driver 550.54.15 supports CUDA 12.4, older than the probe's fatbin (CUDA 13)" "$tmp/out"
  run "${withgpu[@]}" "${smi[@]}" FAKE_DRIVER_VERSION=13000 FAKE_MIG=1 "$device_check" "$tmp/device-check"
  check "device-check: MIG is inconclusive (exit 2)" test "$status" -eq 2
  check "device-check: MIG: why" grep -q "^device-check: INCONCLUSIVE: MIG mode is on" "$tmp/out"
  run "${withgpu[@]}" "${smi[@]}" FAKE_DRIVER_VERSION=13000 FAKE_SMI_CC=1 "$device_check" "$tmp/device-check"
  check "device-check: Confidential Computing is inconclusive" grep -q "^device-check: INCONCLUSIVE: Confidential Computing is on" "$tmp/out"
  # The modelled H200 (FAKE_GPU_MODEL: 5,000 GB/s memory, 55 GB/s link, 60
  # TFLOP/s; 132 SMs at 1980 MHz from the stand-in nvidia-smi): the figures
  # the gates judge follow from the model (fake_libcuda.c: 5 us a copy or
  # launch, then its bytes or flops at the rate), 64 MiB buffers:
  #   device copy 2 x 64 MiB / (5 us + 2 x 64 MiB / 5000 GB/s) = 4214.91 GB/s,
  #     87.8% of the H200's 4800 GB/s;
  #   host->device 64 MiB / (5 us + 64 MiB / 55 GB/s) = 54.78 GB/s;
  #   FP32 2 x 8 x 4096 x (132 x 8 blocks x 256) flops / (5 us + that at
  #     60 TFLOP/s) = 59.0 TFLOP/s, 88.2% of 132 x 128 x 2 x 1980 MHz.
  h200=(FAKE_DRIVER_VERSION=13000 FAKE_MODULE_LOAD=0 FAKE_FREE_MEM=268435456 FAKE_SMS=132 FAKE_GPU_MODEL=5000,55,60)
  run "${withgpu[@]}" "${smi[@]}" "${h200[@]}" "$device_check" "$tmp/device-check"
  check "device-check: a healthy GPU passes (exit 0)" test "$status" -eq 0 -a "$(tail -n 1 "$tmp/out")" = "device-check: PASS"
  check "device-check: the device copy judged on the worst run" grep -q "device copy: \[4214.91, 4214.91, 4214.91\] GB/s, worst 87.8% of H200 peak (>= 80%)" "$tmp/out"
  check "device-check: host->device against the link read while it ran" grep -q "host->device: .* worst 54.78 (>= 44.7 GB/s on PCIe Gen5 x16)" "$tmp/out"
  check "device-check: FP32 against SMs x lanes x 2 x the observed clock" grep -q "FP32: .* worst 88.2% of 132 SMs x 128 x 2 x 1980 MHz = 66.9 TFLOP/s (>= 85%)" "$tmp/out"
  # The stand-in nvidia-smi makes every third sample the GPU between timed
  # parts (345 MHz, idle, a HW-slowdown blip from the clock change): judged
  # on the busy samples alone, the healthy GPU still passes.
  check "device-check: nvidia-smi sampled during each run, min and median of the busy samples" test "$(grep -c "^  run [123]: [0-9]* samples, [0-9]* busy; SM MHz 1980/1980" "$tmp/out")" -eq 3
  check "device-check: the race with both sides' GFLOP/s" grep -q "^race: network step: GPU [0-9.]*x .* ([0-9]* vs [0-9]* GFLOP/s)" "$tmp/out"
  for artefact in preflight.txt nvidia-smi-q-before.txt nvidia-smi-q-after.txt topo.txt host.txt xid-before.txt samples-1.csv gates.txt; do
    check "device-check: $artefact written" test -s "$tmp/device-check/$artefact"
  done
  run "${withgpu[@]}" "${smi[@]}" "${h200[@]}" FAKE_GPU_MODEL=5000,55,36 FAKE_SMI_SM_CLOCK=1200 FAKE_SMI_EVENTS=0x40 "$device_check" "$tmp/device-check"
  check "device-check: a GPU throttling (HW thermal slowdown) fails" grep -q "^device-check: FAIL: the GPU throttled in run 1: HW thermal slowdown" "$tmp/out"
  check "device-check: throttled, FP32 still judged at the clock it ran" grep -q "FP32: .* x 1200 MHz = 40.6 TFLOP/s" "$tmp/out"
  run "${withgpu[@]}" "${smi[@]}" "${h200[@]}" FAKE_SMI_LINK=5,8 FAKE_SMI_LINK_MAX=5,16 FAKE_GPU_MODEL=5000,27,60 "$device_check" "$tmp/device-check"
  check "device-check: a link trained at x8 of x16 fails" grep -q "^device-check: FAIL: the PCIe link ran at x8 of its x16" "$tmp/out"
  run "${withgpu[@]}" "${smi[@]}" "${h200[@]}" FAKE_SMI_LINK=4,16 FAKE_SMI_LINK_MAX=5,16 FAKE_SMI_HOST_GEN=5 FAKE_GPU_MODEL=5000,26,60 "$device_check" "$tmp/device-check"
  check "device-check: Gen4 where the GPU and the host both reach Gen5 fails" grep -q "^device-check: FAIL: the PCIe link ran at Gen4 while the GPU and the host both reach Gen5" "$tmp/out"
  # A sampler that never saw the GPU at work leaves the clocks and the
  # link unjudged: no PASS with its gates skipped.
  run "${withgpu[@]}" "${smi[@]}" "${h200[@]}" FAKE_SMI_IDLE=all "$device_check" "$tmp/device-check"
  check "device-check: no busy sample is inconclusive, not a pass" grep -q "^device-check: INCONCLUSIVE: nvidia-smi saw the GPU at work in 0 of [0-9]* samples of run 1" "$tmp/out"
  # MIG on with no instance: CUDA sees no device and --check fails; the
  # machine's setting is said, not a failure of the GPU.
  run "${withgpu[@]}" "${smi[@]}" FAKE_DRIVER_VERSION=13000 FAKE_MIG=1 FAKE_CUINIT=100 "$device_check" "$tmp/device-check"
  check "device-check: MIG on and --check failing is inconclusive" grep -q "^device-check: INCONCLUSIVE: MIG mode is on.*(and --check exited 3)" "$tmp/out"
  # Far below an H200's peak: the first gate missed is the reason.
  run "${withgpu[@]}" "${smi[@]}" FAKE_DRIVER_VERSION=13000 FAKE_MODULE_LOAD=0 FAKE_FREE_MEM=268435456 FAKE_ELAPSED_MS=10 "$device_check" "$tmp/device-check"
  check "device-check: a missed target is a failure" grep -q "^device-check: FAIL: device copy at 5.6% of the published peak in the worst run (target >= 80%)" "$tmp/out"
fi
fi

if want bench; then
# The benchmark: without a GPU only the CPU half runs, and says so; with a
# driver that cannot load the kernels (222), it says why.
cpus=$(nproc)
run "${nogpu[@]}" "$probe" --bench --json
check "bench without GPU: CPU half, every usable CPU ($cpus), its vector instructions, GFLOP/s" grep -q '"bench":{"cpu":{"network_step_ms":[0-9.]*,"network_step_gflops":[0-9.]*,"logistic_regression_ms":[0-9.]*,"logistic_regression_gflops":[0-9.]*,"network_step_threads":'"$cpus"',"vector_isa":"\(AVX-512\|AVX2\|SSE2\)","logistic_regression_threads":1},"gpu":null' "$tmp/out"
check "bench without GPU: verdict" grep -q "bench: no GPU; CPU: network step [0-9.]* ms on $cpus CPU thread" "$tmp/err"
check "bench: the threads follow the affinity mask (taskset -c 0: 1)" sh -c "env -i PATH='$PATH' IMGSMITH_PROBE_DEV='$tmp/no-dev' taskset -c 0 '$probe' --bench --json 2>/dev/null | grep -q '\"network_step_threads\":1,'"
run "${withgpu[@]}" "$probe" --bench --json
if [ "$kernels" = with-kernels ]; then
  check "bench 222 on a CUDA 12 driver: only the PTX tried, what it needs named" grep -q '"error":"the probe.s kernels did not load: loading the PTX (ISA 7.0) failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): the driver refused PTX ISA 7.0 (CUDA 11.0, driver R450 or newer); this driver supports CUDA 12.4"' "$tmp/out"
  run "${withgpu[@]}" FAKE_DRIVER_VERSION=13000 "$probe" --bench --json
  check "bench 222 on a CUDA 13 driver: the fatbin's failure, then the PTX's" grep -q "loading the fatbin (CUDA 13.[0-9]) failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): the fatbin's PTX is newer than this driver.*; loading the PTX (ISA 7.0) failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION" "$tmp/out"
  run "${withgpu[@]}" FAKE_DRIVER_VERSION=13000 FAKE_MODULE_LOAD=209 "$probe" --bench --json
  check "bench 209: no SASS and no JIT, named" grep -q "CUDA_ERROR_NO_BINARY_FOR_GPU (209): the fatbin has no SASS for this GPU.*the driver compiles no PTX here (CUDA_DISABLE_PTX_JIT set?)" "$tmp/out"
  run "${withgpu[@]}" FAKE_DRIVER_VERSION=13000 FAKE_MODULE_LOAD=221 "$probe" --bench --json
  check "bench 221: the JIT compiler missing, named" grep -q "libnvidia-ptxjitcompiler.so.1, was not mounted" "$tmp/out"
else
  check "bench without kernels: named" grep -q "built without GPU kernels" "$tmp/out"
fi
check "bench 222: checks still ok" grep -q '"status":"ok"' "$tmp/out"

if [ "$kernels" = with-kernels ]; then
  # The GPU half on the stand-in, whose "kernels" compute on the CPU what
  # the probe's kernels compute: 256 MiB free gives 64 MiB buffers, and
  # event times scripted at 10 ms give figures known in advance.
  gpu=("${withgpu[@]}" FAKE_DRIVER_VERSION=13000 FAKE_MODULE_LOAD=0 FAKE_FREE_MEM=268435456 FAKE_LEDGER="$tmp/ledger")
  json_gpu() { python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read()); print(eval(sys.argv[2]))' "$tmp/out" "$1"; }
  run "${gpu[@]}" FAKE_ELAPSED_MS=10 "$probe" --bench --json
  check "bench on the stand-in: ok" grep -q '"status":"ok"' "$tmp/out"
  check "bench: buffers of a quarter of the free memory" test "$(json_gpu "r['bench']['gpu']['buffer_bytes']")" = 67108864
  check "bench: 64 MiB in 10 ms is 6.71 GB/s each way" test "$(json_gpu "(r['bench']['gpu']['h2d_gbps'], r['bench']['gpu']['d2h_gbps'])")" = "(6.71, 6.71)"
  check "bench: 20 device copies a pair, read+write: 268.44 GB/s" test "$(json_gpu "r['bench']['gpu']['device_copy_gbps']")" = 268.44
  check "bench: FMA, 20 launches a pair: 1.07 TFLOP/s" test "$(json_gpu "r['bench']['gpu']['fp32_tflops']")" = 1.07
  check "bench: no spread when every pair agrees" test "$(json_gpu "r['bench']['gpu']['h2d_spread_percent']")" = 0.0
  check "bench: results checked against the CPU's" test "$(json_gpu "r['bench']['gpu']['results_checked'] and r['bench']['gpu']['network_step_relative_error'] < 1e-3")" = True
  check "bench: the verdict names what was compared, with both sides' GFLOP/s" grep -q "network step: GPU [0-9.]*x $cpus CPU thread.* ([0-9]* vs [0-9]* GFLOP/s) - .*; logistic regression: GPU [0-9.]*x one CPU thread ([0-9.]* vs [0-9.]* GFLOP/s) - .*include the copies" "$tmp/err"
  check "bench: GFLOP/s in the JSON, both sides" test "$(json_gpu "r['bench']['cpu']['network_step_gflops'] > 0 and r['bench']['gpu']['network_step_gflops'] > 0 and r['bench']['gpu']['logistic_regression_gflops'] > 0")" = True
  # The verdict's words follow the measured ratio: a modelled GPU far
  # slower than this CPU, then one far faster.
  run "${gpu[@]}" FAKE_GPU_MODEL=5000,55,0.001 "$probe" --bench --json
  check "bench: a GPU slower than the CPU: said so" grep -q "network step: GPU 0.[0-9]x .* - the CPU is faster: not worth a GPU" "$tmp/err"
  run "${gpu[@]}" FAKE_GPU_MODEL=5000,55,60 "$probe" --bench --json
  check "bench: a GPU far faster: GPU work" grep -q "network step: GPU [0-9.]*x .* - GPU work;" "$tmp/err"
  # The modelled step: two 768 KiB copies at 55 GB/s and six products of
  # 2 x 256 x 768 x 768 flops at a third of 60 TFLOP/s, 5 us each.
  model_step_gflops=$(python3 -c 'flops = 2 * 256 * 768 * 768
ms = 2 * (0.005 + 4 * 256 * 768 / 55e6) + 6 * (0.005 + flops / (60e12 / 3 / 1e3))
print("%.1f" % (6 * flops / (ms * 1e6)))')
  check "bench: the network step's GPU GFLOP/s is the model's ($model_step_gflops)" test "$(json_gpu "r['bench']['gpu']['network_step_gflops']")" = "$model_step_gflops"
  check "bench: everything the GPU half held is freed" grep -q "device_allocations=0 host_allocations=0 events=0 modules=0 contexts=0" "$tmp/ledger"
  # Which kernels load, judged by the stand-in as a driver of that version
  # would (fake_libcuda.c, judge_image): the fatbin on CUDA 13, the ISA 7.0
  # PTX on the R535-R570 drivers most fleets run, nothing on a CUDA 10 one.
  judge=("${withgpu[@]}" FAKE_MODULE_LOAD=judge FAKE_FREE_MEM=268435456 FAKE_ELAPSED_MS=10 FAKE_MODULES_TRIED="$tmp/tried")
  rm -f "$tmp/tried"
  run "${judge[@]}" FAKE_DRIVER_VERSION=13000 "$probe" --bench --json
  check "kernels on a CUDA 13.0 driver: the fatbin, tried alone" test "$(json_gpu "(r['bench']['gpu']['kernels'], r['bench']['gpu']['kernels_fallback'])"):$(tr '\n' ' ' <"$tmp/tried")" = "('fatbin', None):fatbin "
  for driver in 12020 12080; do
    rm -f "$tmp/tried"
    run "${judge[@]}" FAKE_DRIVER_VERSION=$driver "$probe" --bench --json
    check "kernels on a CUDA $driver driver: the PTX, the fatbin not tried" test "$(json_gpu "r['bench']['gpu']['kernels']"):$(tr '\n' ' ' <"$tmp/tried")" = "ptx:ptx 7.0 "
    check "kernels on a CUDA $driver driver: why not the fatbin, said" grep -q "bench: kernels: PTX, compiled by the driver, loaded in [0-9.]* ms (the fatbin (CUDA 13.[0-9]) needs a driver of CUDA 13 or newer; this one supports CUDA 12.[28])" "$tmp/err"
    check "kernels on a CUDA $driver driver: the figures are there" test "$(json_gpu "r['bench']['gpu']['results_checked']")" = True
  done
  run "${judge[@]}" FAKE_DRIVER_VERSION=13000 IMGSMITH_PROBE_KERNELS=ptx "$probe" --bench --json
  check "IMGSMITH_PROBE_KERNELS=ptx on CUDA 13: the PTX" test "$(json_gpu "r['bench']['gpu']['kernels']")" = ptx
  run "${judge[@]}" FAKE_DRIVER_VERSION=12040 IMGSMITH_PROBE_KERNELS=fatbin "$probe" --bench --json
  check "IMGSMITH_PROBE_KERNELS=fatbin on CUDA 12.4: refused, as a real driver would" grep -q '"error":"the probe.s kernels did not load: loading the fatbin (CUDA 13.[0-9]) failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)' "$tmp/out"
  run "${judge[@]}" FAKE_DRIVER_VERSION=10020 "$probe" --bench --json
  check "kernels on a CUDA 10.2 driver: none load, the PTX's need named" grep -q "the driver refused PTX ISA 7.0 (CUDA 11.0, driver R450 or newer); this driver supports CUDA 10.2" "$tmp/out"
  run "${judge[@]}" FAKE_DRIVER_VERSION=13000 IMGSMITH_PROBE_KERNELS=sass "$probe" --bench --json
  check "IMGSMITH_PROBE_KERNELS=sass: the choices named" grep -q '"error":"IMGSMITH_PROBE_KERNELS=sass: the choices are fatbin and ptx"' "$tmp/out"
  run "${judge[@]}" FAKE_DRIVER_VERSION=13000 IMGSMITH_PROBE_KERNELS='s"a\ss' "$probe" --bench --json
  check "a quote in what the error repeats: the JSON still parses" test "$(json_gpu "r['bench']['gpu']['error']")" = 'IMGSMITH_PROBE_KERNELS=s"a\ss: the choices are fatbin and ptx'
  run "${gpu[@]}" FAKE_ELAPSED_MS=10,12 "$probe" --bench --json
  check "bench: pairs that disagree show as spread" test "$(json_gpu "r['bench']['gpu']['h2d_spread_percent'] > 10")" = True
  for kernel in copy fma sgemm logreg; do
    case $kernel in
      copy) said="the GPU's copies are wrong: word [0-9]* of 16777216 came back as" ;;
      fma) said="the GPU's FMA results are wrong: thread 0 computed" ;;
      sgemm) said="the GPU's network step differs from the CPU's" ;;
      logreg) said="the GPU's logistic regression differs from the CPU's" ;;
    esac
    run "${gpu[@]}" FAKE_WRONG_RESULTS=$kernel "$probe" --bench --json
    check "bench: wrong results of $kernel are an error" grep -q '"status":"error"' "$tmp/out"
    check "bench: wrong results of $kernel: said" grep -q "error: GPU 0 $said" "$tmp/err"
    check "bench: wrong results of $kernel: no figures" sh -c "! grep -q '\"h2d_gbps\"' '$tmp/out'"
    check "bench: wrong results of $kernel: freed all the same" grep -q "device_allocations=0 host_allocations=0 events=0 modules=0 contexts=0" "$tmp/ledger"
  done
  run "${gpu[@]}" FAKE_WRONG_RESULTS=sgemm IMGSMITH_PROBE=require "$probe" --bench -- sh -c 'echo ran'
  check "bench: require mode refuses a GPU that computes wrongly (3)" test "$status" -eq 3 -a ! -s "$tmp/out"
  run "${gpu[@]}" FAKE_MEMCPY=700 "$probe" --bench --json
  check "bench: a failed copy is named, not a figure" grep -q '"gpu":{"error":"cuMemcpyHtoD failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)"}' "$tmp/out"
  check "bench: a failed copy: freed" grep -q "device_allocations=0 host_allocations=0 events=0 modules=0 contexts=0" "$tmp/ledger"
  run "${gpu[@]}" FAKE_EVENT_SYNC=700 "$probe" --bench --json
  check "bench: an error surfacing at the event is named" grep -q '"error":"the timed work (cuEventSynchronize) failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)"' "$tmp/out"
  run "${gpu[@]}" FAKE_LAUNCH=1 "$probe" --bench --json
  check "bench: a failed launch is named" grep -q '"error":"cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (1)"' "$tmp/out"
  run "${gpu[@]}" FAKE_HOST_ALLOC=2 "$probe" --bench --json
  check "bench: a pinned allocation refused is named" grep -q '"error":"cuMemHostAlloc (pinned) of 64 MiB failed: CUDA_ERROR_OUT_OF_MEMORY (2)' "$tmp/out"
  check "bench: pinned allocation refused: nothing held" grep -q "device_allocations=0 host_allocations=0" "$tmp/ledger"
  run "${gpu[@]}" FAKE_FREE_MEM=100000000 "$probe" --bench --json
  check "bench: too little free memory is said before allocating" grep -q '"error":"only 95 MiB of GPU 0.s memory is free' "$tmp/out"
  check "bench: too little free memory: nothing held" grep -q "device_allocations=0" "$tmp/ledger"
  # The benchmark is bounded too: a launch that never returns is killed
  # with the child after IMGSMITH_PROBE_BENCH_TIMEOUT, and the app starts.
  start=$(date +%s%N)
  run "${gpu[@]}" FAKE_LAUNCH_HANG=1 IMGSMITH_PROBE_BENCH_TIMEOUT=2 "$probe" --bench --json -- sh -c 'echo started'
  elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  check "bench that hangs: said" grep -q "bench: the benchmark did not finish within 2 s (IMGSMITH_PROBE_BENCH_TIMEOUT)" "$tmp/err"
  check "bench that hangs: the app starts" test "$(tail -1 "$tmp/out")" = "started"
  check "bench that hangs: the checks' verdict stands" grep -q '"status":"ok"' "$tmp/out"
  check "bench that hangs: within its bound (${elapsed_ms} ms)" test "$elapsed_ms" -lt 6000
  run "${gpu[@]}" FAKE_MIG=1 FAKE_ELAPSED_MS=10 "$probe" --bench --json
  check "bench on a MIG slice: no whole-GPU peak" test "$(json_gpu "(r['bench']['gpu']['mig'], r['bench']['gpu']['peak_reference'], r['bench']['gpu']['device_copy_peak_percent'])")" = "(True, None, None)"
  check "bench on a MIG slice: said" grep -q "a MIG slice: no peak applies" "$tmp/err"
fi
fi

if want startup; then
# JSON to a file, usage errors, exec failure.
run "${nogpu[@]}" IMGSMITH_PROBE_JSON="$tmp/report.json" "$probe" -- true
check "IMGSMITH_PROBE_JSON written" grep -q '"schema":"imgsmith.probe/v1"' "$tmp/report.json"
run "${nogpu[@]}" "$probe" --frobnicate
check "unknown flag: exit 2" test "$status" -eq 2
run "${nogpu[@]}" "$probe" -- /nonexistent/app
check "missing command: exit 127" test "$status" -eq 127

# The binary: no CUDA library linked, glibc <= 2.34, at most 3 MB.
check "links no CUDA library" sh -c "! readelf -d '$probe' | grep NEEDED | grep -qiE 'cuda|nvidia'"
newest=$(objdump -T "$probe" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
check "glibc symbols <= 2.34 (newest: $newest)" test "$(printf '%s\n2.34\n' "$newest" | sort -V | tail -1)" = "2.34"
size=$(stat -c %s "$probe")
check "size <= 3 MB ($size bytes)" test "$size" -le 3000000

# The embedded fatbin: SASS for each architecture, PTX for the lowest. Found
# by its whole header (magic, version 1, header size 16): the magic alone is
# also a constant of the probe's own fatbin reader (kernel_check.cpp).
archs=$(python3 - "$probe" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
at = data.find(struct.pack("<IHH", 0xBA55ED50, 1, 16))
if at < 0:
    print("none"); sys.exit()
_, _, header, size = struct.unpack_from("<IHHQ", data, at)
pos, end, found = at + header, at + header + size, []
while pos < end:
    kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, pos)
    sm = struct.unpack_from("<I", data, pos + 28)[0]
    found.append(("ptx" if kind == 1 else "sm") + "_" + str(sm))
    pos += entry_header + payload
print(" ".join(sorted(set(found))))
PY
)
if [ "$kernels" = with-kernels ]; then
  check "fatbin archs ($archs)" test "$archs" = "ptx_75 sm_100 sm_120 sm_75 sm_80 sm_86 sm_89 sm_90"
else
  echo "probe: built without nvcc: no fatbin to check"
fi

# Embedded in imgsmith.
"$imgsmith" probe --write "$tmp/written-probe" >"$tmp/out" 2>"$tmp/err"
check "imgsmith probe --write" cmp -s "$probe" "$tmp/written-probe"
check "written probe is executable" test -x "$tmp/written-probe"
run "${nogpu[@]}" "$imgsmith" probe -- sh -c 'echo via-imgsmith'
check "imgsmith probe runs it" test "$(cat "$tmp/out")" = "via-imgsmith"

# The arm64 probe (GH200/Grace, Graviton), embedded in imgsmith beside this
# one, run under QEMU user emulation with Debian's arm64 cross libc: the
# no-GPU path, --check, exec semantics (the app's output and exit status
# untouched), and the same limits as the x86-64 binary.
qemu=$(command -v qemu-aarch64-static || true)
if [ -z "$qemu" ] || [ ! -d /usr/aarch64-linux-gnu/lib ]; then
  echo "probe: SKIPPED in part: no qemu-aarch64-static or arm64 libc (scripts/setup.sh installs them)"
  [ "${CI:-}" = true ] && fail=$((fail + 1))
elif ! "$imgsmith" probe --write "$tmp/probe-arm64" --arch arm64 2>"$tmp/err"; then
  echo "probe: SKIPPED in part: $(cat "$tmp/err")"
  [ "${CI:-}" = true ] && fail=$((fail + 1))
else
  arm=("$qemu" -L /usr/aarch64-linux-gnu "$tmp/probe-arm64")
  check "arm64: an aarch64 executable" sh -c "readelf -h '$tmp/probe-arm64' | grep -q 'Machine: *AArch64'"
  run "${nogpu[@]}" "${arm[@]}" --version
  check "arm64: the same version" test "$(head -n 1 "$tmp/out")" = "$probe_version"
  check "arm64: --version names the kernels it carries" grep -q "^kernels: " "$tmp/out"
  run "${nogpu[@]}" "${arm[@]}" --json
  check "arm64: no GPU: status" grep -q '"status":"no-gpu"' "$tmp/out"
  check "arm64: no GPU: exit 3 without a command" test "$status" = 3
  run "${nogpu[@]}" "${arm[@]}" -- sh -c 'echo from the app; exit 7'
  check "arm64: the app's stdout untouched" test "$(cat "$tmp/out")" = "from the app"
  check "arm64: the app's exit status" test "$status" = 7
  check "arm64: the advice on stderr" grep -q "no-gpu" "$tmp/err"
  run "${nogpu[@]}" IMGSMITH_PROBE=require "${arm[@]}" -- sh -c 'echo ran'
  check "arm64: require mode refuses (3) without running the app" test "$status" = 3 -a ! -s "$tmp/out"
  run "${nogpu[@]}" "${arm[@]}" --check
  check "arm64: --check without a GPU exits 3" test "$status" = 3
  check "arm64: links no CUDA library" sh -c "! readelf -d '$tmp/probe-arm64' | grep NEEDED | grep -qiE 'cuda|nvidia'"
  newest=$(readelf --dyn-syms -W "$tmp/probe-arm64" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
  check "arm64: glibc symbols <= 2.34 (newest: $newest)" test "$(printf '%s\n2.34\n' "$newest" | sort -V | tail -1)" = "2.34"
  size=$(stat -c %s "$tmp/probe-arm64")
  check "arm64: size <= 3 MB ($size bytes)" test "$size" -le 3000000
  if [ "$kernels" = with-kernels ]; then
    check "arm64: the same fatbin as the x86-64 probe" python3 -c '
import struct, sys
def fatbin(path):
    data = open(path, "rb").read()
    at = data.find(struct.pack("<IHH", 0xBA55ED50, 1, 16))
    _, _, header, size = struct.unpack_from("<IHHQ", data, at)
    return data[at:at + header + size]
sys.exit(fatbin(sys.argv[1]) != fatbin(sys.argv[2]))' "$probe" "$tmp/probe-arm64"
  fi
fi

# imgsmith probe --summarize: a cluster's reports as one table. The reports
# are the probe's own JSON (this machine's, no GPU), and copies of it given
# the devices and benchmark figures of three H100 nodes, one of them slow.
run "${nogpu[@]}" IMGSMITH_NODE_NAME=node-cpu "$probe" --json -- true
cp "$tmp/out" "$tmp/real-report.json"
check "the report names its node (IMGSMITH_NODE_NAME)" grep -q '"node":"node-cpu"' "$tmp/real-report.json"
mkdir -p "$tmp/fleet"
python3 - "$tmp/real-report.json" "$tmp/fleet" <<'PY'
import json, sys
base = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
for node, copy, h2d in (("gpu-a", 3900.0, 55.1), ("gpu-b", 3880.0, 54.8), ("gpu-c", 2100.0, 54.9)):
    r = dict(base, node=node, status="ok", reason="", fix="",
             driver={"version": "570.86.15", "cuda": "12.8"},
             devices=[{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-" + node,
                       "compute_capability": "9.0", "memory_total_bytes": 85520809984,
                       "memory_used_bytes": 0, "utilization_percent": 0, "temperature_c": 30}],
             bench={"cpu": {"network_step_ms": 400.0, "logistic_regression_ms": 8.0},
                    "gpu": {"device_copy_gbps": copy, "device_copy_peak_percent": 100 * copy / 3350 / 1.0,
                            "h2d_gbps": h2d, "d2h_gbps": 55.0, "h2d_peak_percent": 86.0, "d2h_peak_percent": 86.0,
                            "fp32_tflops": 60.0, "fp32_peak_percent": 90.0, "peak_reference": "H100 SXM"}})
    # As kubectl logs shows it: the probe's stderr lines around the JSON line.
    with open("%s/%s.log" % (sys.argv[2], node), "w") as f:
        f.write("imgsmith-probe: ok: 1 GPU\n" + json.dumps(r) + "\n")
PY
"$imgsmith" probe --summarize "$tmp/fleet" >"$tmp/out" 2>"$tmp/err"
status=$?
check "summarize: a slow node makes it exit 1" test "$status" = 1
check "summarize: a row a node" test "$(grep -c '^gpu-' "$tmp/out")" = 3
check "summarize: the healthy nodes are ok" test "$(grep -E '^gpu-(a|b) ' "$tmp/out" | grep -c ' ok$')" = 2
check "summarize: the slow node is named, against its peers" \
  grep -qE '^gpu-c .*SLOW: .*device copy 2100.0 GB/s, 54% of the median of 3 NVIDIA H100 80GB HBM3 nodes' "$tmp/out"
check "summarize: its GPU and driver" grep -qE '^gpu-a +NVIDIA H100 80GB HBM3 +570.86.15 +12.8 ' "$tmp/out"
check "summarize: the count" grep -q "^3 nodes, 1 not ok" "$tmp/out"
"$imgsmith" probe --summarize "$tmp/fleet/gpu-a.log" "$tmp/fleet/gpu-b.log" >"$tmp/out" 2>"$tmp/err"
check "summarize: healthy nodes alone exit 0" test $? = 0
"$imgsmith" probe --summarize --format json "$tmp/fleet" "$tmp/real-report.json" >"$tmp/out" 2>"$tmp/err"
check "summarize --format json: a no-GPU node fails it" test $? = 1
check "summarize --format json: each node, the failed one with its status" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = {n["node"]: n for n in d["nodes"]}
assert d["schema"] == "imgsmith.probe-summary/v1"
assert sorted(rows) == ["gpu-a", "gpu-b", "gpu-c", "node-cpu"]
assert rows["node-cpu"]["verdict"].startswith("FAIL no-gpu") and rows["node-cpu"]["bench"] is None
assert rows["gpu-a"]["ok"] and rows["gpu-a"]["bench"]["device_copy_gbps"] == 3900.0
assert not rows["gpu-c"]["ok"]' "$tmp/out"
echo "no report here" >"$tmp/not-a-report.log"
"$imgsmith" probe --summarize "$tmp/not-a-report.log" >"$tmp/out" 2>"$tmp/err"
check "summarize: a file without a report is bad input (2)" test $? = 2
check "summarize: it names the file" grep -q "not-a-report.log: no imgsmith-probe report in it" "$tmp/err"
"$imgsmith" probe --summarize "$tmp/missing.log" >"$tmp/out" 2>"$tmp/err"
check "summarize: a missing file is bad input (2)" test $? = 2
fi

echo "probe: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
