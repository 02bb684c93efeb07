#!/usr/bin/env bash
# The kernel inventory on an image: CUDA binaries compiled here by nvcc
# (tests/kernels/build-fixtures.sh: a torch-like library with SASS for
# sm_75-sm_90 and PTX compute_90, an extension built for sm_90a alone, an
# extension with a shared cudart) beside NVIDIA's own cuBLAS and cuDNN from
# the toolkit, in a gzip layer and in a plain one. What each binary holds is read a second
# way, here, through its ELF section headers; the answer per GPU is stated
# by hand from CUDA's compatibility rules.
# Usage: kernels_test.sh IMGSMITH FIXTURES_DIR
set -u
bin=$1
fixtures=$2
# shellcheck source=assert.sh
source "$(dirname "$0")/assert.sh"
# shellcheck source=../system/skip.sh
source "$(dirname "$0")/../system/skip.sh" kernels_cli
cuda=/usr/local/cuda/lib64
[ -f "$cuda/libcublas.so.13" ] || skip "no CUDA 13 toolkit libraries in $cuda"

python3 - "$tmp" "$fixtures" "$cuda" <<'PY' || { echo "FAIL: building the image"; exit 1; }
import gzip, hashlib, io, json, os, struct, sys, tarfile
out, fixtures, cuda = sys.argv[1:4]
files = {
    "opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so": fixtures + "/old-torch.so",
    "opt/venv/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so": fixtures + "/arch90a.so",
    "opt/venv/lib/python3.11/site-packages/myext.cpython-311-x86_64-linux-gnu.so": fixtures + "/ext.cpython-311-x86_64-linux-gnu.so",
    "usr/local/cuda/lib64/libcublas.so.13": cuda + "/libcublas.so.13",
    "usr/local/cuda/lib64/libcudnn_cnn.so.9": cuda + "/libcudnn_cnn.so.9",
    "usr/local/cuda/lib64/libcudart.so.13": cuda + "/libcudart.so.13",
}

def section_code(path):
    """name -> [entries, bytes] from .nv_fatbin, found through the section headers."""
    d = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
    strtab, = struct.unpack_from("<Q", d, shoff + shstrndx * shentsize + 0x18)
    code = {}
    for i in range(shnum):
        name_at, = struct.unpack_from("<I", d, shoff + i * shentsize)
        if d[strtab + name_at:d.index(b"\0", strtab + name_at)] != b".nv_fatbin":
            continue
        off, size = struct.unpack_from("<QQ", d, shoff + i * shentsize + 0x18)
        at, end = off, off + size
        while at + 16 <= end:
            magic, _, head, fat = struct.unpack_from("<IHHQ", d, at)
            if magic != 0xBA55ED50:
                at += 8
                continue
            e = at + head
            while e < at + head + fat:
                kind, _, ehead, payload = struct.unpack_from("<HHIQ", d, e)
                arch, = struct.unpack_from("<I", d, e + 28)
                flags, = struct.unpack_from("<Q", d, e + 40)
                name = {1: "compute_", 2: "sm_"}.get(kind, "other_") + str(arch)
                name += "a" if flags & 0x100000 else "f" if flags & 0x200000 else ""
                c = code.setdefault(name, [0, 0])
                c[0] += 1
                c[1] += payload
                e += ehead + payload
            at += head + fat
    return code

def image(name, chosen):
    expected = {}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for rel in chosen:
            t.add(files[rel], arcname=rel)
            code = section_code(files[rel])
            if code:
                expected["/" + rel] = code
    layer = buf.getvalue()
    # The layer gzip'd (read front to back) and, as `docker save` writes
    # it, plain (read at offsets, through the section headers).
    for suffix, stored, blob in (("", "l0/layer.tar.gz", gzip.compress(layer, 1)),
                                 ("-plain", "l0/layer.tar", layer)):
        with tarfile.open(out + "/" + name + suffix + ".tar", "w") as t:
            def add(name, data):
                info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
            add(stored, blob)
            add("config.json", json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]},
                "history": [{"created_by": "COPY . /"}]}).encode())
            add("manifest.json", json.dumps([{"Config": "config.json", "RepoTags": ["kernels:1"],
                                              "Layers": [stored]}]).encode())
    json.dump(expected, open(out + "/" + name + ".json", "w"))

image("img", list(files))
# torch and NVIDIA's libraries alone: code for every GPU, through JIT on
# the GPUs after Hopper.
image("torch", [f for f in files if "flash_attn" not in f and "myext" not in f])
PY

expect "an image with CUDA binaries" 0 "$bin" analyze "$tmp/img.tar" --format json -o "$tmp/report.json"
check "each binary's code equals its section headers' reading" python3 - "$tmp/report.json" "$tmp/img.json" <<'PY'
import json, sys
report, expected = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
got = {b["path"]: {c["name"]: [c["entries"], c["bytes"]] for c in b["code"]} for b in report["kernels"]["binaries"]}
ok = got == expected
for path in sorted(set(got) | set(expected)):
    print("%-80s %s" % (path, "same" if got.get(path) == expected.get(path) else "imgsmith %s, sections %s" % (got.get(path), expected.get(path))))
sys.exit(0 if ok else 1)
PY
expect "the same image with its layer stored plain" 0 "$bin" analyze "$tmp/img-plain.tar" --format json -o "$tmp/report-plain.json"
check "a plain layer (read at offsets) gives the gzip layer's inventory (read as it streams)" python3 - "$tmp/report.json" "$tmp/report-plain.json" <<'PY'
import json, sys
streamed, at = (json.load(open(p))["kernels"] for p in sys.argv[1:3])
for key in sorted(set(streamed) | set(at)):
    print("%-12s %s" % (key, "same" if streamed.get(key) == at.get(key) else "DIFFERS"))
sys.exit(0 if streamed == at and streamed["binaries"] else 1)
PY
# And the plain layer was read at offsets, not streamed: a small part of it.
check "the plain layer's binaries were read at offsets (a tenth of its bytes or less)" python3 - "$tmp/report-plain.json" "$tmp/img-plain.tar" <<'PY'
import json, os, sys
read = json.load(open(sys.argv[1]))["io"]["bytes_read"]
size = os.path.getsize(sys.argv[2])
print("read %d of %d bytes" % (read, size))
sys.exit(0 if read * 10 <= size else 1)
PY
check "the answer per GPU, by CUDA's rules" python3 - "$tmp/report.json" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
gpus = {g["gpu"]: g for g in k["gpus"]}
flash = "/opt/venv/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so"
torch = "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so"
ext = "/opt/venv/lib/python3.11/site-packages/myext.cpython-311-x86_64-linux-gnu.so"
want = {
    # GPU: (binaries with no code, binaries compiled by JIT)
    "H100": ([ext], []),                    # sm_90 SASS, sm_90a for flash-attn; ext is sm_86 only
    "A100-80GB": ([ext, flash], []),        # 8.0 < 8.6
    "L4": ([flash], []),                    # sm_86 runs on 8.9
    "B200": ([ext, flash], [torch]),        # torch's compute_90 PTX compiles for 10.0
    "RTX-5090": ([ext, flash], [torch]),
    "T4": ([ext, flash], []),
}
ok = True
for name, (none, jit) in want.items():
    g = gpus[name]
    line = "%-10s none %s jit %s" % (name, [p.rsplit("/", 1)[1] for p in g["none"]], [p.rsplit("/", 1)[1] for p in g["jit"]])
    if sorted(g["none"]) != sorted(none) or sorted(g["jit"]) != sorted(jit) or g["runs"] != (not none):
        line += "  WRONG"
        ok = False
    print(line)
b = {x["path"]: x for x in k["binaries"]}
if b[ext]["cudart"] != "libcudart.so.13" or b[torch]["cudart"] != "":
    print("cudart:", b[ext]["cudart"], b[torch]["cudart"]); ok = False
if b[torch]["gpus"]["B200"] != {"verdict": "jit", "code": "compute_90", "jit_bytes": dict((c["name"], c["bytes"]) for c in b[torch]["code"])["compute_90"]}:
    print("torch on B200:", b[torch]["gpus"]["B200"]); ok = False
sys.exit(0 if ok else 1)
PY

expect "text report" 0 "$bin" analyze "$tmp/img.tar"
check "the text report names what fails where" grep -q "fails on:.*B200 (10.0).*flash_attn_2_cuda" "$tmp/out"
expect "markdown report" 0 "$bin" analyze "$tmp/img.tar" --format markdown
check "the markdown table has a row per GPU" grep -q "^| B200 | 10.0 | \*\*no\*\* |" "$tmp/out"
expect "text report of torch and NVIDIA's libraries" 0 "$bin" analyze "$tmp/torch.tar"
check "what runs only through JIT, with the driver it needs" grep -q "JIT only:.*RTX-5090 (12.0).*libtorch_cuda.so.*PTX ISA 9.0 needs a CUDA 13.0 driver (580 or newer)" "$tmp/out"
check "and nothing fails" test "$(grep -c "fails on:" "$tmp/out")" = 0

expect "--gpu passes where every binary has code, JIT included" 0 "$bin" analyze "$tmp/torch.tar" --gpu H100,B200,RTX-5090 -q
expect "--gpu fails where one has none" 1 "$bin" analyze "$tmp/img.tar" --gpu L4,B200 -q
check "the failure names the binary and the GPU" grep -q "gate failed: gpu:B200: 2 CUDA binaries have no code for B200 (compute capability 10.0):.*flash_attn_2_cuda" "$tmp/err"
check "and passes the GPU that has code for all but one" grep -q "gate failed: gpu:L4: 1 CUDA binary has no code" "$tmp/err"
# The SASS no target loads: torch's sm_75..sm_86 for H100; NVIDIA's cuBLAS
# and cuDNN, which only NVIDIA builds, are no part of it.
expect "--gpu H100: the SASS for other GPUs is a finding" 0 "$bin" analyze "$tmp/torch.tar" --gpu H100 \
  --format json -o "$tmp/h100.json" -q
check "its bytes are torch's SASS that H100 does not load, and only torch's" python3 - "$tmp/h100.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = [f for f in d["findings"] if f["id"] == "sass-for-other-gpus"]
torch = next(b for b in d["kernels"]["binaries"] if b["path"].endswith("/libtorch_cuda.so"))
unused = sum(c["bytes"] for c in torch["code"] if c["name"] in ("sm_75", "sm_80", "sm_86"))
ok = len(f) == 1 and f[0]["bytes"] == unused and [p["path"] for p in f[0]["paths"]] == [torch["path"]] \
    and 'TORCH_CUDA_ARCH_LIST="9.0"' in f[0]["fix"]
if not ok:
    print(f)
sys.exit(0 if ok else 1)
PY
mkdir -p "$tmp/team"
printf '[analyze]\ngpus = ["L4"]\n' >"$tmp/team/imgsmith.toml"
expect "imgsmith.toml's gpus gate as --gpu does" 1 sh -c "cd \"$tmp/team\" && \"$bin\" analyze \"$tmp/img.tar\" -q"
check "naming the policy's GPU" grep -q "gate failed: gpu:L4:" "$tmp/err"
expect "a flag replaces the policy's GPUs" 1 sh -c "cd \"$tmp/team\" && \"$bin\" analyze \"$tmp/img.tar\" -q --gpu H100"
check "so only the flag's GPU is checked" sh -c "grep -q 'gate failed: gpu:H100:' \"$tmp/err\" && ! grep -q 'gpu:L4' \"$tmp/err\""
expect "--no-kernels leaves the policy's GPUs out" 0 sh -c "cd \"$tmp/team\" && \"$bin\" analyze \"$tmp/img.tar\" -q --no-kernels"
expect "the policy's GPUs, on an image that runs there" 0 sh -c "cd \"$tmp/team\" && \"$bin\" analyze \"$tmp/torch.tar\" -q"
expect "--gpu with an unknown GPU is a usage error" 2 "$bin" analyze "$tmp/img.tar" --gpu V100
check "which names the GPUs it knows" grep -q "unknown GPU (one of: .*H100" "$tmp/err"
expect "--no-kernels and --gpu together are a usage error" 2 "$bin" analyze "$tmp/img.tar" --gpu H100 --no-kernels
expect "--no-kernels reads none" 0 "$bin" analyze "$tmp/img.tar" --no-kernels --format json -o "$tmp/none.json"
check "and reports none" test "$(json_field "$tmp/none.json" "'kernels' in d")" = False

echo "kernels_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
