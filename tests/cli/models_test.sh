#!/usr/bin/env bash
# Models in an image, written by their real writers: torch.save (Debian's
# python3-torch) of a state dict, a bfloat16 state dict and a whole module;
# ONNX (python3-onnx) with inline and with external data; safetensors
# (sharded, with config.json) and GGUF written here to their published
# specifications. The expected parameter counts come from the writers
# (numel, dims), never from imgsmith. Usage: models_test.sh IMGSMITH
# Without torch and onnx the test exits 77 (skipped); in CI it fails.
set -u
bin=$1
# shellcheck source=assert.sh
source "$(dirname "$0")/assert.sh"
# shellcheck source=../system/skip.sh
source "$(dirname "$0")/../system/skip.sh" models
# Debian's python3, where python3-torch and python3-onnx are installed.
py=/usr/bin/python3
"$py" -c 'import torch, onnx' 2>/dev/null || skip "python3-torch and python3-onnx are not installed"

mkdir -p "$tmp/root"
"$py" - "$tmp" <<'PY' || { echo "FAIL: writing the models"; exit 1; }
import hashlib, io, json, os, struct, sys, tarfile
import numpy as np, onnx, torch
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
root = out + "/root"
expected = {}

def put(rel, data):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)

torch.manual_seed(0)
mlp = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 256))
os.makedirs(root + "/models/torch", exist_ok=True)
torch.save(mlp.state_dict(), root + "/models/torch/mlp.pt")
expected["/models/torch/mlp.pt"] = {"params": sum(t.numel() for t in mlp.state_dict().values()), "dtype": "F32"}
# The same checkpoint twice: --hash digests both as their headers are read.
os.makedirs(root + "/models/copy", exist_ok=True)
with open(root + "/models/torch/mlp.pt", "rb") as f:
    put("models/copy/mlp.pt", f.read())
expected["/models/copy/mlp.pt"] = expected["/models/torch/mlp.pt"]
torch.save(mlp.to(torch.bfloat16).state_dict(), root + "/models/torch/mlp-bf16.bin")
expected["/models/torch/mlp-bf16.bin"] = {"params": sum(p.numel() for p in mlp.parameters()), "dtype": "BF16"}
big = torch.nn.Sequential(torch.nn.Linear(768, 768), torch.nn.Linear(768, 768))
os.makedirs(root + "/models/module", exist_ok=True)
torch.save(big, root + "/models/module/whole.pth")
expected["/models/module/whole.pth"] = {"params": sum(p.numel() for p in big.parameters()), "dtype": "F32"}

# ONNX, with its weights inline, and a copy with them as external data.
w = numpy_helper.from_array(np.zeros((1024, 512), dtype=np.float32), "w")
b = numpy_helper.from_array(np.zeros((512,), dtype=np.float16), "b")
node = helper.make_node("MatMul", ["x", "w"], ["y"])
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 512])], [w, b])
model = helper.make_model(graph)
os.makedirs(root + "/models/onnx", exist_ok=True)
onnx.save_model(model, root + "/models/onnx/inline.onnx")
onnx_params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
expected["/models/onnx/inline.onnx"] = {"params": onnx_params, "dtype": "FLOAT"}
os.makedirs(root + "/models/onnx-ext", exist_ok=True)
onnx.save_model(model, root + "/models/onnx-ext/model.onnx", save_as_external_data=True,
                all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
expected["/models/onnx-ext/model.onnx"] = {"params": onnx_params, "dtype": "FLOAT"}

# safetensors, two shards of a tiny Llama-shaped model, with its config.
def safetensors(tensors):
    header, data, offset = {}, b"", 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data
def f16(*shape):
    return ("F16", list(shape), bytes(2 * int(np.prod(shape))))
shard1 = {"model.embed_tokens.weight": f16(4096, 128), "model.layers.0.self_attn.q_proj.weight": f16(128, 128)}
shard2 = {"model.layers.0.mlp.up_proj.weight": f16(2048, 128), "lm_head.weight": f16(4096, 128)}
put("models/llama/model-00001-of-00002.safetensors", safetensors(shard1))
put("models/llama/model-00002-of-00002.safetensors", safetensors(shard2))
put("models/llama/config.json", json.dumps({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 80,
    "num_attention_heads": 64, "num_key_value_heads": 8, "hidden_size": 8192, "head_dim": 128,
    "max_position_embeddings": 131072, "torch_dtype": "float16"}).encode())
put("models/llama/model.safetensors.index.json", json.dumps({"weight_map": {}}).encode())
expected["/models/llama/"] = {"params": sum(int(np.prod(t[1])) for t in {**shard1, **shard2}.values()),
                              "dtype": "F16", "kv_per_token": 2 * 80 * 8 * 128 * 2, "context": 131072}

# GGUF v3 (ggml docs/gguf.md): a tiny llama with Q8_0 and F32 tensors.
def gstr(s):
    s = s.encode()
    return struct.pack("<Q", len(s)) + s
kv = [gstr("general.architecture") + struct.pack("<I", 8) + gstr("llama")]
for key, value in [("llama.block_count", 4), ("llama.context_length", 4096), ("llama.embedding_length", 512),
                   ("llama.attention.head_count", 8), ("llama.attention.head_count_kv", 4)]:
    kv.append(gstr(key) + struct.pack("<II", 4, value))
kv.append(gstr("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 3) + gstr("a") + gstr("b") + gstr("c"))
tensors = [("token_embd.weight", [512, 2048], 8, 512 * 2048 // 32 * 34), ("output_norm.weight", [512], 0, 512 * 4)]
infos, offset = b"", 0
for name, dims, gtype, nbytes in tensors:
    infos += gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
    infos += struct.pack("<IQ", gtype, offset)
    offset += (nbytes + 31) // 32 * 32
head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)) + b"".join(kv) + infos
head += b"\0" * (-len(head) % 32)
put("models/gguf/tiny-q8_0.gguf", head + bytes(offset))
expected["/models/gguf/tiny-q8_0.gguf"] = {"params": 512 * 2048 + 512, "dtype": "Q8_0",
                                           "kv_per_token": 2 * 4 * 4 * 64 * 2, "context": 4096}

# A Hugging Face hub cache, as huggingface-cli download and from_pretrained
# leave it: nameless blobs, snapshots of symlinks to them, refs/main naming a
# revision. Two revisions: the older one's shards and config differ, and must
# count for nothing. The config is Llama-3-8B's (its config.json on the Hub:
# 32 layers, 8 KV heads of 128, 8192 positions); the tensors are small.
hub = "root/.cache/huggingface/hub/models--meta-llama--Meta-Llama-3-8B"
def blob(data):
    sha = hashlib.sha256(data).hexdigest()
    put(hub + "/blobs/" + sha, data)
    return sha
def snapshot(rev, files):
    for name, data in files.items():
        link = os.path.join(root, hub, "snapshots", rev, name)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink("../../blobs/" + blob(data), link)
llama3 = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
          "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
          "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}
def bf16(*shape):
    return ("BF16", list(shape), bytes(2 * int(np.prod(shape))))
main_shards = [{"model.embed_tokens.weight": bf16(2048, 256)}, {"model.layers.0.mlp.up_proj.weight": bf16(1024, 256)},
               {"model.layers.0.self_attn.q_proj.weight": bf16(256, 256)}, {"lm_head.weight": bf16(2048, 256)}]
main_rev, old_rev = "8cde5ca8380496c9a6cc7ef3a8b46a0372a1d920", "62bd457b6fe961a42a631306577e622c83876cb6"
snapshot(main_rev, {**{"model-%05d-of-00004.safetensors" % (i + 1): safetensors(t) for i, t in enumerate(main_shards)},
                    "config.json": json.dumps(llama3).encode(),
                    "generation_config.json": json.dumps({"bos_token_id": 128000}).encode()})
snapshot(old_rev, {"model-00001-of-00002.safetensors": safetensors({"w": bf16(4096, 512)}),
                   "model-00002-of-00002.safetensors": safetensors({"v": bf16(4096, 512)}),
                   "config.json": json.dumps({**llama3, "num_hidden_layers": 16}).encode()})
put(hub + "/refs/main", main_rev.encode())
expected["/" + hub + "/snapshots/" + main_rev + "/"] = {
    "params": sum(int(np.prod(t[1])) for shard in main_shards for t in shard.values()), "dtype": "BF16",
    "kv_per_token": 2 * 32 * 8 * 128 * 2, "context": 8192, "warning": "other revisions than main's"}

# A model deleted by a later layer: waste, not a model of the image.
put("models/old/old.safetensors", safetensors({"w": f16(1024, 1024)}))

def layer(files, whiteouts=()):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for rel in files:
            t.add(os.path.join(root, rel), arcname=rel, recursive=False)
        for rel in whiteouts:
            d, n = os.path.split(rel)
            info = tarfile.TarInfo(os.path.join(d, ".wh." + n))
            t.addfile(info, io.BytesIO(b""))
    return buf.getvalue()
files = []
for d, _, names in os.walk(root):
    files += [os.path.relpath(os.path.join(d, n), root) for n in names]
layers = [layer(sorted(files)), layer([], ["models/old/old.safetensors"])]
with tarfile.open(out + "/img.tar", "w") as t:
    def add(name, data):
        info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
    for i, l in enumerate(layers):
        add("l%d/layer.tar" % i, l)
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(l).hexdigest() for l in layers]},
        "history": [{"created_by": "COPY models /models"}, {"created_by": "RUN rm /models/old/old.safetensors"}]}).encode()
    add("config.json", config)
    add("manifest.json", json.dumps([{"Config": "config.json", "RepoTags": ["models:1"],
                                      "Layers": ["l0/layer.tar", "l1/layer.tar"]}]).encode())
json.dump(expected, open(out + "/expected.json", "w"), indent=1)
PY

expect "an image with models" 0 "$bin" analyze "$tmp/img.tar" --format json -o "$tmp/report.json"
check "every model is found with the writer's parameter count and dtype" "$py" - "$tmp/report.json" "$tmp/expected.json" <<'PY'
import json, sys
report, expected = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
models = {m["path"]: m for m in report["models"]}
ok = True
print("%-34s %-12s %14s %14s %-6s" % ("model", "format", "imgsmith", "writer", "dtype"))
for path, want in expected.items():
    m = models.get(path)
    got = m["parameters"] if m else None
    print("%-34s %-12s %14s %14s %-6s" % (path, m and m["format"], got, want["params"], m and m["stored_dtype"]))
    warned = [w for w in (m["warnings"] if m else []) if not ("warning" in want and want["warning"] in w)]
    if "warning" in want and m and len(warned) == len(m["warnings"]):
        print("  no warning saying", want["warning"]); ok = False
    if m is None or got != want["params"] or m["stored_dtype"] != want["dtype"] or warned:
        print("  wrong:", m and m["warnings"]); ok = False
    elif "kv_per_token" in want and (m["vram"]["kv_bytes_per_token"] != want["kv_per_token"]
                                     or m["vram"]["context"] != want["context"]):
        print("  wrong KV cache:", m["vram"]); ok = False
for path in models:
    if path not in expected:
        print("unexpected model:", path); ok = False
sys.exit(0 if ok else 1)
PY
expect "the same with --hash (the files digested as their headers are read)" 0 "$bin" analyze "$tmp/img.tar" --hash --format json -o "$tmp/hashed.json"
check "--hash finds the copy and reads the same models" "$py" -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["models"] == b["models"]
assert any(f["id"] == "duplicate-content" for f in b["findings"]), [f["id"] for f in b["findings"]]
' "$tmp/report.json" "$tmp/hashed.json"
check "the external-data ONNX counts its initializers from the graph" grep -q '"/models/onnx-ext/model.onnx"' "$tmp/report.json"
check "bf16/int8/int4 rows for every model with parameters" "$py" -c '
import json, sys
for m in json.load(open(sys.argv[1]))["models"]:
    rows = [p["precision"] for p in m["vram"]["precisions"]]
    assert rows == ["stored", "bf16", "int8", "int4"], (m["path"], rows)
    by = {p["precision"]: p for p in m["vram"]["precisions"]}
    assert by["int4"]["weights"] < by["int8"]["weights"] < by["bf16"]["weights"], m["path"]
    assert by["bf16"]["weights"] == 2 * m["parameters"], m["path"]
' "$tmp/report.json"

expect "text report" 0 "$bin" analyze "$tmp/img.tar"
check "the text report has the models section" grep -q "^MODELS" "$tmp/out"
check "it names the sharded model's shape and KV cache" grep -q "LlamaForCausalLM (config.json): 80 layers, 8 KV heads" "$tmp/out"
expect "markdown report" 0 "$bin" analyze "$tmp/img.tar" --format markdown
check "the markdown report has the models table" grep -q "| model | parameters | precision" "$tmp/out"

# Gates: the sharded model is safetensors, so vLLM's budget. Its KV cache
# at its full 131,072-token context (80 layers x 8 KV heads x 128 x 2 x 2
# B = 320 KiB a token: 40 GiB) fits no L4 at any precision; at 1,000
# tokens it fits a T4.
expect "--fits fails on a context the GPU cannot hold" 1 "$bin" analyze "$tmp/img.tar" --fits L4 -q
check "the message names the model, the engine and what would do" grep -q "fits:L4:/models/llama/.* under vllm: does not fit: needs .*; no precision fits; use a GPU with more memory (.* and larger)" "$tmp/err"
# An L4's CUDA total is in no log read: 98% of its data sheet's 24 GB.
check "with vLLM's own figures" grep -q "total_gpu_memory 21.90 GiB (98% of the data sheet's) x gpu_memory_utilization 0.90 = 19.71 GiB" "$tmp/err"
# Two L4s split the KV cache (20 GiB each) but each GPU's 3.58 GiB of
# non-torch memory (NCCL) leaves 16.13: still no.
expect "two L4s do not hold it under vLLM" 1 "$bin" analyze "$tmp/img.tar" --fits L4x2 -q
check "each GPU's share is said" grep -q "needs 23.58 GiB per GPU, has 19.71 GiB" "$tmp/err"
# One L40S (44.31 GiB to CUDA) gives vLLM 39.88 GiB at its default 0.9:
# 40 GiB of KV cache and 0.35 GiB of non-torch memory need 0.92 of it.
expect "near the boundary: one L40S does not fit at vLLM's default" 1 "$bin" analyze "$tmp/img.tar" --fits L40S -q
check "and the share that would is said" grep -q "does not fit under vLLM's default 0.90; fits with --gpu-memory-utilization 0.92" "$tmp/err"
expect "--gpu-memory-utilization 0.92 holds it" 0 "$bin" analyze "$tmp/img.tar" --fits L40S --gpu-memory-utilization 0.92 -q
expect "--kv-dtype fp8 halves the KV cache: it fits at 0.9" 0 "$bin" analyze "$tmp/img.tar" --fits L40S --kv-dtype fp8 -q
expect "two L40S hold it" 0 "$bin" analyze "$tmp/img.tar" --fits L40Sx2 -q
# transformers preallocates nothing and takes the whole board: 40 GiB of
# KV cache and 0.5 GiB of CUDA context fit one L40S, and not one A100-40GB
# (39.39 GiB to CUDA).
expect "transformers takes the whole board: one L40S holds it" 0 "$bin" analyze "$tmp/img.tar" --fits L40S --engine transformers -q
expect "and an A100-40GB does not" 1 "$bin" analyze "$tmp/img.tar" --fits A100-40GB --engine transformers -q
check "said under transformers" grep -q "under transformers: does not fit: needs 40.5. GiB, has 39.39 GiB" "$tmp/err"
expect "an unknown engine is a usage error" 2 "$bin" analyze "$tmp/img.tar" --engine tgi
check "naming the engines" grep -q "one of vllm, llama.cpp, transformers" "$tmp/err"
expect "vLLM's flags with another engine are a usage error" 2 "$bin" analyze "$tmp/img.tar" --engine llama.cpp --kv-dtype fp8
expect "an unknown KV dtype is a usage error" 2 "$bin" analyze "$tmp/img.tar" --kv-dtype int3
expect "--fits passes with a shorter context" 0 "$bin" analyze "$tmp/img.tar" --fits T4 --context 1000 -q
expect "a context past the model's maximum is sized" 0 "$bin" analyze "$tmp/img.tar" --context 200000
check "and said, with the maximum" grep -q "warning: .*--context 200,000 is above its maximum of 131,072 tokens" "$tmp/out"
# Between the int4 and the stored need of the float32 MLP: the stored
# precision fails, the message says which precision would fit.
limit=$(json_field "$tmp/report.json" '[(m["vram"]["precisions"][0]["total"] + m["vram"]["precisions"][3]["total"]) // 2 for m in d["models"] if m["path"] == "/models/torch/mlp.pt"][0]')
expect "--max-vram fails at the stored precision" 1 "$bin" analyze "$tmp/img.tar" --max-vram "$limit" --context 1000 -q
check "it says a lower precision would fit" grep -q "mlp.pt needs .* at stored .* bf16 would fit" "$tmp/err"
expect "--max-vram passes at int4" 0 "$bin" analyze "$tmp/img.tar" --max-vram 100GB --precision int4 --context 1000 -q
mkdir -p "$tmp/team"
printf '[analyze]\nfits = "L4"\nprecision = "int4"\n' >"$tmp/team/imgsmith.toml"
expect "imgsmith.toml's fits gates like the flag" 1 sh -c "cd \"$tmp/team\" && \"$bin\" analyze \"$tmp/img.tar\" -q"
check "at the policy's precision" grep -q "fits:L4:/models/llama/.* at int4" "$tmp/err"
expect "a flag overrides the policy's GPU" 0 sh -c "cd \"$tmp/team\" && \"$bin\" analyze \"$tmp/img.tar\" -q --fits L40Sx2"
expect "--fits with an unknown GPU is a usage error" 2 "$bin" analyze "$tmp/img.tar" --fits V100
check "it lists the known GPUs" grep -q "unknown GPU (one of: T4" "$tmp/err"
expect "--precision must be known" 2 "$bin" analyze "$tmp/img.tar" --precision int3
expect "a JSON report with models reads back for diff" 0 "$bin" diff "$tmp/report.json" "$tmp/img.tar"

echo "models: $pass passed, $fail failed"
finish
