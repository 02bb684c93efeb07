#!/usr/bin/env bash
# imgsmith-probe's start-up check of the application's CUDA code against
# GPU 0, on the stand-in driver at compute capabilities 7.5, 8.6, 9.0, 10.0
# and 12.0, over a site-packages tree of binaries nvcc compiled here with
# known -gencode sets (tests/kernels/build-fixtures.sh); the answer for each
# is stated by hand from CUDA's compatibility rules. Then the inventory
# written at build time, and the probe's reader (section headers, pread)
# against analyze's on the same files, NVIDIA's cuBLAS, cuFFT and NCCL
# among them.
# Usage: kernel_check_test.sh IMGSMITH_PROBE FAKE_DRIVER_DIR IMGSMITH FIXTURES_DIR
set -u
probe=$1
fake=$2
imgsmith=$3
fixtures=$4
# shellcheck source=../cli/assert.sh
source "$(dirname "$0")/../cli/assert.sh"
here=$(cd "$(dirname "$0")" && pwd)

# The application's tree, as an image lays it out.
venv=$tmp/root/opt/venv
site=$venv/lib/python3.11/site-packages
mkdir -p "$venv/bin" "$site/torch/lib" "$site/vllm" "$tmp/dev"
touch "$tmp/dev/nvidia0" "$tmp/dev/nvidiactl"
cp "$fixtures/old-torch.so" "$site/torch/lib/libtorch_cuda.so"            # SASS sm_75-sm_90, PTX compute_90
cp "$fixtures/arch90a.so" "$site/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so"  # SASS sm_90a alone
cp "$fixtures/ptx.so" "$site/vllm/_C.abi3.so"                               # PTX compute_80 alone
cp "$fixtures/ext.cpython-311-x86_64-linux-gnu.so" "$site/"                 # SASS sm_86 (and a kernel-less module)
torch=$site/torch/lib/libtorch_cuda.so
flash=$site/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so
vllm=$site/vllm/_C.abi3.so
ext=$site/ext.cpython-311-x86_64-linux-gnu.so

# run CC DRIVER_CUDA ENV... -- ARGS: the probe on the stand-in GPU of that
# compute capability, reading the tree above unless told otherwise.
run() {
  local cc=$1 driver=$2
  shift 2
  env -i PATH=/usr/bin:/bin IMGSMITH_PROBE_DEV="$tmp/dev" LD_LIBRARY_PATH="$fake" \
    FAKE_COMPUTE_CAPABILITY="$cc" FAKE_DRIVER_VERSION="$driver" \
    IMGSMITH_PROBE_KERNEL_PATHS="$site" IMGSMITH_PROBE_KERNEL_INVENTORY="$tmp/no-inventory.tsv" \
    "$@" >"$tmp/out" 2>"$tmp/err"
  status=$?
}
# verdict NAME NONE JIT: the JSON's kernels lists, as the files' base names.
verdict() {
  python3 - "$tmp/out" "$2" "$3" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
names = lambda paths: " ".join(sorted(p.rsplit("/", 1)[1] for p in paths))
got = (names(k["none"]), names(k["jit"]))
want = (" ".join(sorted(sys.argv[2].split())), " ".join(sorted(sys.argv[3].split())))
if got != want:
    print("none: %s, jit: %s; expected none: %s, jit: %s" % (got + want))
    sys.exit(1)
PY
}
T=libtorch_cuda.so
F=flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so
V=_C.abi3.so
E=ext.cpython-311-x86_64-linux-gnu.so

# Each compute capability, on a CUDA 13.0 driver (which compiles the PTX nvcc 13 wrote).
run 7.5 13000 "$probe" --check --json
check "7.5: torch's sm_75 runs; flash-attn (sm_90a), vllm (compute_80 > 7.5) and ext (sm_86) have none" \
  verdict 7.5 "$F $V $E" ""
check "7.5: --check exits 8" test "$status" -eq 8
check "7.5: status no-kernel" grep -q '"status":"no-kernel"' "$tmp/out"
run 8.6 13000 "$probe" --check --json
check "8.6: ext's sm_86 and torch's sm_86 run; vllm's compute_80 compiles; flash-attn none" \
  verdict 8.6 "$F" "$V"
run 9.0 13000 "$probe" --check --json
check "9.0: sm_90a runs on 9.0 alone; ext's sm_86 not on another major" verdict 9.0 "$E" "$V"
run 10.0 13000 "$probe" --check --json
check "10.0: torch and vllm only through PTX; sm_90a and sm_86 fail" verdict 10.0 "$F $E" "$T $V"
check "10.0: the PTX to compile is torch's and vllm's" python3 -c '
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
sys.exit(0 if k["jit_bytes"] > 0 and k["binaries"] == 4 and k["source"] == "scan" else 1)' "$tmp/out"
run 12.0 13000 "$probe" --check --json
check "12.0 on a CUDA 13.0 driver: JIT for torch and vllm" verdict 12.0 "$F $E" "$T $V"
check "12.0: the JIT note names the cost and the cache" grep -q "note: 2 CUDA binaries run on this .* (sm_120) only by compiling PTX.*CUDA_CACHE_PATH" "$tmp/err"
# CUDA's minor-version compatibility does not cover PTX: a 12.4 driver
# cannot compile the ISA 9.0 that nvcc 13 wrote.
run 12.0 12040 "$probe" --check --json
check "12.0 on a CUDA 12.4 driver: PTX ISA 9.0 is too new, so nothing runs" verdict 12.0 "$F $E $T $V" ""
check "the line names torch first (the largest), the GPU and what it carries" \
  grep -q "no-kernel: torch (libtorch_cuda.so) has no kernels for this NVIDIA H200 (stand-in) (sm_120): it carries SASS sm_75, sm_80, sm_86, sm_90 and PTX compute_90; its compute_90 is PTX ISA 9.0, which this driver (CUDA 12.4) cannot compile: it needs CUDA 13.0's; so have 3 more" "$tmp/err"
check "PTX too new: the fix is the driver of the PTX's CUDA (data/cuda-drivers.json)" \
  grep -q "fix: update the host's driver to CUDA 13.0's (580 or newer), which compiles that PTX, or use a build with SASS for sm_120; for the rest: " "$tmp/err"
check "and the build settings for those with no code" grep -q 'TORCH_CUDA_ARCH_LIST="12.0", CMAKE_CUDA_ARCHITECTURES=120' "$tmp/err"
check "the driver is not the fix for those: no torch release is named for torch's PTX" sh -c "! grep -q 'use torch >=' '$tmp/err'"
# A driver newer than every release data/cuda-drivers.json lists: its PTX
# limit is unknown, so the PTX is not judged too new.
run 12.0 99000 "$probe" --check --json
check "a driver newer than the table: PTX compiles (JIT), not a failure" verdict 12.0 "$F $E" "$T $V"
# A torch with SASS for sm_75 and sm_90 alone, no PTX, on sm_120: the fix
# names the torch release whose wheels have sm_120 (data/torch-cuda.json).
mkdir -p "$tmp/sass-torch/site-packages/torch/lib"
cp "$fixtures/sass.so" "$tmp/sass-torch/site-packages/torch/lib/libtorch_cuda.so"
run 12.0 13000 IMGSMITH_PROBE_KERNEL_PATHS="$tmp/sass-torch/site-packages" "$probe" --check
check "torch without sm_120 code: the first torch with it, and its wheel index" \
  grep -q "fix: use torch >= 2.7 built on CUDA 12.8 or newer (pip install --index-url https://download.pytorch.org/whl/cu128 torch)" "$tmp/err"

# Require mode does not start an app that would die at its first kernel;
# warn mode starts it after the line.
run 7.5 13000 IMGSMITH_PROBE=require "$probe" -- sh -c "echo ran >'$tmp/ran'"
check "require: exit 8, the app not run" test "$status" -eq 8 -a ! -e "$tmp/ran"
run 7.5 13000 "$probe"
check "without a command: exit 8" test "$status" -eq 8
run 7.5 13000 "$probe" -- sh -c 'echo app-ran; exit 5'
check "warn: the app runs, its exit status passes" test "$status" -eq 5 -a "$(cat "$tmp/out")" = app-ran
check "warn: the line on stderr before it" grep -q "imgsmith-probe: no-kernel: " "$tmp/err"
# A tree whose code runs everywhere: SASS sm_75-sm_120 and PTX compute_120.
mkdir -p "$tmp/new/torch/lib"
cp "$fixtures/new-torch.so" "$tmp/new/torch/lib/libtorch_cuda.so"
run 12.0 13000 IMGSMITH_PROBE_KERNEL_PATHS="$tmp/new" "$probe" --check --json
check "a torch with sm_120 SASS on sm_120: exit 0" test "$status" -eq 0
check "and says what it checked" grep -q "kernels: 1 CUDA library checked against GPU 0 (read at start" "$tmp/err"
run 12.0 13000 IMGSMITH_PROBE_KERNEL_CHECK=off "$probe" --check --json
check "IMGSMITH_PROBE_KERNEL_CHECK=off: no check, exit 0" test "$status" -eq 0
check "IMGSMITH_PROBE_KERNEL_CHECK=off: kernels null" grep -q '"kernels":null' "$tmp/out"
# No GPU: nothing to check the code against.
env -i PATH=/usr/bin:/bin IMGSMITH_PROBE_DEV="$tmp/no-dev" IMGSMITH_PROBE_KERNEL_PATHS="$site" \
  "$probe" --json >"$tmp/out" 2>"$tmp/err"
check "no GPU: no kernel check" grep -q '"status":"no-gpu".*"kernels":null' "$tmp/out"

# The app's own program: a CUDA executable (SASS sm_89 alone) in a bin/ on
# PATH that is not the system's, and the one the probe is about to run.
mkdir -p "$tmp/app/bin" "$tmp/empty"
cp "$fixtures/app" "$tmp/app/bin/saxpy"
env -i PATH="$tmp/app/bin:/usr/bin:/bin" IMGSMITH_PROBE_DEV="$tmp/dev" LD_LIBRARY_PATH="$fake" \
  FAKE_COMPUTE_CAPABILITY=9.0 FAKE_DRIVER_VERSION=13000 IMGSMITH_PROBE_KERNEL_PATHS="$tmp/empty" \
  IMGSMITH_PROBE_KERNEL_INVENTORY="$tmp/no-inventory.tsv" "$probe" --check --json >"$tmp/out" 2>"$tmp/err"
check "a CUDA program in an app's bin/ on PATH is read" verdict 9.0 "saxpy" ""
cp "$fixtures/app" "$tmp/empty/saxpy-elsewhere"
env -i PATH="/usr/bin:/bin" IMGSMITH_PROBE_DEV="$tmp/dev" LD_LIBRARY_PATH="$fake" \
  FAKE_COMPUTE_CAPABILITY=9.0 FAKE_DRIVER_VERSION=13000 IMGSMITH_PROBE_KERNEL_PATHS="$tmp/app/lib" \
  IMGSMITH_PROBE_KERNEL_INVENTORY="$tmp/no-inventory.tsv" "$probe" -- "$tmp/empty/saxpy-elsewhere" >"$tmp/out" 2>"$tmp/err"
check "the command about to run is read wherever it is" grep -q "no-kernel: saxpy-elsewhere has no kernels for this .* (sm_90): it carries SASS sm_89 and no PTX" "$tmp/err"

# Where the libraries are found without IMGSMITH_PROBE_KERNEL_PATHS: the
# site-packages of the venv on PATH.
env -i PATH="$venv/bin:/usr/bin:/bin" IMGSMITH_PROBE_DEV="$tmp/dev" LD_LIBRARY_PATH="$fake" \
  FAKE_COMPUTE_CAPABILITY=9.0 FAKE_DRIVER_VERSION=13000 \
  IMGSMITH_PROBE_KERNEL_INVENTORY="$tmp/no-inventory.tsv" "$probe" --check --json >"$tmp/out" 2>"$tmp/err"
check "a venv on PATH: its site-packages is read" verdict 9.0 "$E" "$V"

# The inventory written at build time.
run 9.0 13000 "$probe" --write-kernel-inventory "$tmp/etc/imgsmith/kernels.tsv"
check "--write-kernel-inventory: exit 0" test "$status" -eq 0
check "--write-kernel-inventory: says what it found" grep -q "kernel inventory $tmp/etc/imgsmith/kernels.tsv: 4 CUDA binaries" "$tmp/err"
check "--write-kernel-inventory: a line a binary" test "$(grep -c "^$site" "$tmp/etc/imgsmith/kernels.tsv")" -eq 4
cp "$tmp/etc/imgsmith/kernels.tsv" "$tmp/inventory.tsv"
with_inventory=(IMGSMITH_PROBE_KERNEL_INVENTORY="$tmp/inventory.tsv")
for cc in 7.5 9.0 12.0; do
  run "$cc" 13000 "$probe" --check --json
  cp "$tmp/out" "$tmp/scan.json"
  run "$cc" 13000 "${with_inventory[@]}" "$probe" --check --json
  check "$cc: the inventory's verdict is the scan's" python3 -c '
import json, sys
a, b = (json.load(open(p))["kernels"] for p in sys.argv[1:3])
sys.exit(0 if (a["none"], a["jit"], a["jit_bytes"]) == (b["none"], b["jit"], b["jit_bytes"]) and b["source"] == "inventory" and a["source"] == "scan" else 1)' "$tmp/scan.json" "$tmp/out"
done
# The inventory is what is read: ext's line said sm_75 instead of sm_86 (its
# size and time unchanged) makes it run on 7.5.
sed "s|^\($ext\t.*\)s:86:|\1s:75:|" "$tmp/etc/imgsmith/kernels.tsv" >"$tmp/inventory.tsv"
run 7.5 13000 "${with_inventory[@]}" "$probe" --check --json
check "at start the inventory is read, not the libraries" verdict 7.5 "$F $V" ""
# A library changed since the build (its time) is read again.
touch -d '2001-01-01' "$ext"
run 7.5 13000 "${with_inventory[@]}" "$probe" --check --json
check "a library changed since: read again" verdict 7.5 "$F $V $E" ""
check "a library changed since: counted" grep -q '"rescanned":1' "$tmp/out"
# A time that differs below the second is no change: image layers keep
# whole seconds, so a pulled image's files differ so from the build's.
touch -d "@$(stat -c %Y "$flash").999" "$flash"
run 7.5 13000 "${with_inventory[@]}" "$probe" --check --json
check "a time that differs below the second: not read again" grep -q '"rescanned":1' "$tmp/out"
rm "$vllm"
run 7.5 13000 "${with_inventory[@]}" "$probe" --check --json
check "a library gone since: left out" verdict 7.5 "$F $E" ""
cp "$fixtures/ptx.so" "$vllm"
# PTX of an ISA data/cuda-drivers.json does not know (newer than the
# table): not judged too new for the driver, which may well compile it.
sed "s|^\($torch\t.*\)p:90:-:90:|\1p:90:-:92:|" "$tmp/etc/imgsmith/kernels.tsv" >"$tmp/inventory.tsv"
check "(torch's line now says ISA 9.2)" grep -q "p:90:-:92:" "$tmp/inventory.tsv"
run 10.0 13000 "${with_inventory[@]}" "$probe" --check --json
check "PTX of an ISA the table does not know: JIT, not a failure" python3 -c '
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
sys.exit(0 if any(p.endswith("/libtorch_cuda.so") for p in k["jit"]) else 1)' "$tmp/out"
printf 'not an inventory\n' >"$tmp/inventory.tsv"
run 9.0 13000 "${with_inventory[@]}" "$probe" --check --json
check "a file that is no inventory: the libraries are read instead" verdict 9.0 "$E" "$V"
check "a file that is no inventory: a note says so" grep -q "note: $tmp/inventory.tsv is not a kernel inventory" "$tmp/err"
printf '# imgsmith-probe kernel inventory v1\n%s\t1\t2\ts:80:x:1:1:0:9\n' "$torch" >"$tmp/inventory.tsv"
run 9.0 13000 "${with_inventory[@]}" "$probe" --check --json
check "an inventory with a bad line is no inventory" grep -q '"source":"scan"' "$tmp/out"
run 9.0 13000 "$probe" --write-kernel-inventory /proc/imgsmith-test/kernels.tsv
check "an inventory that cannot be written: exit 1" test "$status" -eq 1
check "an inventory that cannot be written: says where" grep -q "cannot create /proc/imgsmith-test" "$tmp/err"
mkdir -p "$tmp/ro"
chmod 0555 "$tmp/ro"
run 9.0 13000 "$probe" --write-kernel-inventory "$tmp/ro/kernels.tsv"
if [ "$(id -u)" != 0 ]; then
  check "a read-only directory: exit 1, no file left" test "$status" -eq 1 -a ! -e "$tmp/ro/kernels.tsv.tmp"
fi
run 9.0 13000 "$probe" --write-kernel-inventory a b
check "--write-kernel-inventory with two paths: usage, exit 2" test "$status" -eq 2

# Two readers, one answer: the probe's inventory of each file against
# analyze's reading of the same files in an image (an uncompressed layer,
# read at offsets; tests/cli/kernels_test.sh holds that reading equal to
# the one of a layer streaming past), NVIDIA's libraries with them: cuBLAS
# (.nv_fatbin), cuFFT (24,000 containers in .ldata), NCCL (most of its
# containers in __nv_relfatbin, which the probe once left unread).
cuda=/usr/local/cuda/lib64
mkdir -p "$tmp/both"
for f in "$torch" "$flash" "$vllm" "$ext" "$cuda/libcublas.so.13" "$cuda/libcufft.so.12" "$cuda/libnccl.so.2"; do
  [ -f "$f" ] && ln -s "$f" "$tmp/both/$(basename "$f")"
done
run 9.0 13000 IMGSMITH_PROBE_KERNEL_PATHS="$tmp/both" "$probe" --write-kernel-inventory "$tmp/both.tsv"
python3 - "$tmp/both" "$tmp/both.json" <<'PY'
import json, os, sys
d, out = sys.argv[1:3]
entries = [{"path": "libs/" + n, "from": os.path.realpath(os.path.join(d, n))} for n in sorted(os.listdir(d))]
json.dump({"tag": "both:1", "layers": [{"created_by": "COPY libs /libs", "entries": entries}]}, open(out, "w"))
PY
python3 "$here/../../examples/make_image.py" "$tmp/both.json" "$tmp/both.tar" --format docker-legacy -q
expect "analyze reads the same files" 0 "$imgsmith" analyze "$tmp/both.tar" --format json -o "$tmp/both-report.json"
check "the probe's inventory equals analyze's reading, code by code (SASS and PTX)" \
  python3 - "$tmp/both.tsv" "$tmp/both-report.json" <<'PY'
import json, sys
inv, report = sys.argv[1:3]
probe = {}
for line in open(inv):
    if line.startswith("#"):
        continue
    path, _, _, codes = line.rstrip("\n").split("\t")
    got = {}
    for c in codes.split(","):
        kind, arch, variant, version, entries, empty, size = c.split(":")
        if kind in "sp":
            name = ("sm_" if kind == "s" else "compute_") + arch + ("" if variant == "-" else variant)
            got[name] = [int(entries), int(empty), int(size), int(version)]
    probe[path.rsplit("/", 1)[1]] = got
analyze = {}
for b in json.load(open(report))["kernels"]["binaries"]:
    code = {c["name"]: [c["entries"], c["empty_entries"], c["bytes"], c["version"]]
            for c in b["code"] if c["kind"] in ("sass", "ptx")}
    analyze[b["path"].rsplit("/", 1)[1]] = code
ok = probe == analyze and len(probe) >= 4
for name in sorted(set(probe) | set(analyze)):
    same = probe.get(name) == analyze.get(name)
    print("%-48s %s" % (name, "same" if same else "probe %s\n    analyze %s" % (probe.get(name), analyze.get(name))))
sys.exit(0 if ok else 1)
PY
# And one verdict: each GPU of data/gpus.json, by analyze, and by the probe
# on the stand-in of that compute capability (a CUDA 13.0 driver, which
# JIT-compiles any PTX here).
python3 -c '
import json, sys
for g in json.load(open(sys.argv[1]))["kernels"]["gpus"]:
    print(g["gpu"], g["compute_capability"], ",".join(sorted(p.rsplit("/", 1)[1] for p in g["none"])) or "-",
          ",".join(sorted(p.rsplit("/", 1)[1] for p in g["jit"])) or "-")' "$tmp/both-report.json" >"$tmp/gpus.txt"
check "analyze judged every GPU of data/gpus.json" test "$(wc -l <"$tmp/gpus.txt")" -ge 10
while read -r gpu cc none jit; do
  run "$cc" 13000 IMGSMITH_PROBE_KERNEL_PATHS="$tmp/both" IMGSMITH_PROBE_KERNEL_INVENTORY="$tmp/both.tsv" "$probe" --check --json
  none=${none/#-/}
  jit=${jit/#-/}
  check "$gpu ($cc): the probe's verdict is analyze's" verdict "$cc" "${none//,/ }" "${jit//,/ }"
done <"$tmp/gpus.txt"

echo "kernel_check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
