#!/usr/bin/env bash
# `imgsmith gen` as a user runs it: files written, refusals that change
# nothing, exit statuses and messages. Usage: gen_test.sh IMGSMITH EXAMPLES_DIR
set -u
bin=$1
examples=$2
# shellcheck source=assert.sh
source "$(dirname "$0")/assert.sh"
fresh() {  # fresh EXAMPLE: a copy of an example to write into
  rm -rf "$tmp/$1"
  cp -r "$examples/$1" "$tmp/$1"
  echo "$tmp/$1"
}

expect "help" 0 "$bin" gen --help
check "help names the flavours" grep -q "auto (default), base, runtime or devel" "$tmp/out"
check "help names the mirror option" grep -q -- "--registry-mirror" "$tmp/out"
check "help explains exit statuses" grep -q "Exit status" "$tmp/out"

# A GPU project: Dockerfile, .dockerignore and the probe.
api=$(fresh pytorch-api)
expect "gen writes the files" 0 "$bin" gen "$api"
check "the Dockerfile is written" grep -q "^FROM nvidia/cuda:12.4.1-base-ubuntu22.04$" "$api/Dockerfile"
check "the .dockerignore keeps the probes in" grep -qx '!.imgsmith/imgsmith-probe-\*' "$api/.dockerignore"
check "the Dockerfile's probe stage copies the probe of BuildKit's TARGETARCH" \
  grep -qx 'COPY .imgsmith/imgsmith-probe-${TARGETARCH} /imgsmith-probe' "$api/Dockerfile"
check "by default from the build context (IMGSMITH_PROBE_IMAGE names that stage)" \
  grep -qx 'ARG IMGSMITH_PROBE_IMAGE=probe-from-context' "$api/Dockerfile"
check "the final stage copies it from the probe stage" \
  grep -qx 'COPY --from=probe /imgsmith-probe /usr/local/bin/imgsmith-probe' "$api/Dockerfile"
check "the probes are executable" test -x "$api/.imgsmith/imgsmith-probe-amd64" -a -x "$api/.imgsmith/imgsmith-probe-arm64"
"$bin" probe --write "$tmp/probe-ref"
check "the amd64 probe is the embedded one" cmp -s "$tmp/probe-ref" "$api/.imgsmith/imgsmith-probe-amd64"
"$bin" probe --write "$tmp/probe-ref-arm64" --arch arm64
check "the arm64 probe is the embedded one" cmp -s "$tmp/probe-ref-arm64" "$api/.imgsmith/imgsmith-probe-arm64"
check "the two are built for their CPUs" sh -c "file '$api/.imgsmith/imgsmith-probe-amd64' | grep -q x86-64 &&
  file '$api/.imgsmith/imgsmith-probe-arm64' | grep -q 'ARM aarch64'"
check "the summary names the base" grep -q "image   nvidia/cuda:12.4.1-base-ubuntu22.04" "$tmp/out"
check "the summary gives the driver the image's NVIDIA_REQUIRE_CUDA needs" \
  grep -q "driver >= 550: the image sets NVIDIA_REQUIRE_CUDA=cuda>=12.4" "$tmp/out"
check "the summary gives a shared-machine run" grep -qF -- "--gpus '\"device=0\"'" "$tmp/out"
check "nothing half-written is left" test -z "$(find "$api" -name '*.tmp*' -o -name '.*.tmp*')"

# Existing files: refused, exit 2, nothing changed, not even the probe.
sum_before=$(md5sum "$api/Dockerfile" "$api/.dockerignore")
rm -r "$api/.imgsmith"
expect "an existing Dockerfile is refused" 2 "$bin" gen "$api"
check "the refusal names the file" grep -q "$api/Dockerfile exists" "$tmp/err"
check "the refusal says how to proceed" grep -q -- "--force" "$tmp/err"
check "the refusal changed nothing" test "$sum_before" = "$(md5sum "$api/Dockerfile" "$api/.dockerignore")"
check "the refusal wrote no probe" test ! -e "$api/.imgsmith"
rm "$api/Dockerfile"
expect "an existing .dockerignore alone is refused" 2 "$bin" gen "$api"
check "it names .dockerignore" grep -q "$api/.dockerignore exists" "$tmp/err"
check "and writes no Dockerfile" test ! -e "$api/Dockerfile"
echo "# mine" > "$api/Dockerfile"
expect "--force replaces them" 0 "$bin" gen "$api" --force
check "the Dockerfile was replaced" grep -q "^FROM nvidia/cuda" "$api/Dockerfile"
touch "$api/compose.yaml"
rm "$api/Dockerfile" "$api/.dockerignore"
expect "an existing compose.yaml is refused with --compose" 2 "$bin" gen "$api" --compose
check "it names compose.yaml" grep -q "$api/compose.yaml exists" "$tmp/err"
check "and writes no Dockerfile" test ! -e "$api/Dockerfile"
expect "--compose --force writes it" 0 "$bin" gen "$api" --compose --force
check "compose.yaml reserves a GPU" grep -q "driver: nvidia" "$api/compose.yaml"
check "compose.yaml publishes the port" grep -q '"8000:8000"' "$api/compose.yaml"

# --stdout writes nothing.
api2=$(fresh pytorch-api)
expect "--stdout" 0 "$bin" gen "$api2" --stdout --explain
check "--stdout prints the Dockerfile" grep -q '^ENTRYPOINT \["/usr/local/bin/imgsmith-probe", "--"\]$' "$tmp/out"
check "--stdout writes no Dockerfile" test ! -e "$api2/Dockerfile"
check "--stdout writes no probe" test ! -e "$api2/.imgsmith"
check "--explain cites the requirement line" grep -q "requirements.txt:2: torch==2.6.0: GPU" "$tmp/err"
check "--explain cites the app" grep -q "app/main.py:24: a FastAPI app" "$tmp/err"
expect "--flavor runtime warns" 0 "$bin" gen "$api2" --stdout --flavor runtime
check "the warning names what base saves" grep -q "warning: .*--flavor base saves about 2.21 GB" "$tmp/err"
expect "--registry-mirror" 0 "$bin" gen "$api2" --stdout --registry-mirror localhost:5000
check "every FROM of an image goes through the mirror (not scratch, not the probe stage's argument)" \
  test -z "$(grep '^FROM ' "$tmp/out" | grep -v '^FROM scratch \|^FROM \${' | grep -v 'localhost:5000/')"
expect "--no-probe" 0 "$bin" gen "$api2" --stdout --no-probe
check "--no-probe leaves no ENTRYPOINT" test -z "$(grep '^ENTRYPOINT' "$tmp/out")"
expect "--cmd" 0 "$bin" gen "$api2" --stdout --cmd "python -m app.serve --port 9000"
check "--cmd becomes a JSON CMD" grep -qx 'CMD \["python", "-m", "app.serve", "--port", "9000"\]' "$tmp/out"

# The CPU project: no CUDA, no probe, no --gpus.
cpu=$(fresh fraud-api-cpu)
expect "a CPU project" 0 "$bin" gen "$cpu"
check "it gets the slim Python image" grep -q "^FROM python:3.12-slim-bookworm$" "$cpu/Dockerfile"
check "it says why" grep -q "No GPU: nothing in this project uses one" "$tmp/out"
check "no probe for a CPU image" test ! -e "$cpu/.imgsmith/imgsmith-probe-amd64"
check "the CPU image checks itself at build time" test -s "$cpu/.imgsmith/check/libraries.sh"
check "no --gpus in its run command" test -z "$(grep -- '--gpus' "$tmp/out")"

# The CUDA C++ project.
cpp=$(fresh cuda-saxpy)
expect "a CUDA C++ project" 0 "$bin" gen "$cpp"
check "it builds on devel" grep -q "^FROM nvidia/cuda:12.8.1-devel-ubuntu24.04 AS builder$" "$cpp/Dockerfile"
check "it ships on runtime (cuBLAS)" grep -q "^FROM nvidia/cuda:12.8.1-runtime-ubuntu24.04$" "$cpp/Dockerfile"

# Bad input: one line naming the input, exit 2.
expect "a missing directory" 2 "$bin" gen "$tmp/nowhere"
check "it names the directory" grep -q "$tmp/nowhere: no such directory" "$tmp/err"
mkdir -p "$tmp/empty"
expect "an empty directory" 2 "$bin" gen "$tmp/empty"
check "it lists what was looked for" grep -q "looked for Python" "$tmp/err"
check "and writes nothing" test -z "$(ls -A "$tmp/empty")"
expect "a bad flavour" 2 "$bin" gen "$api2" --flavor tiny
expect "an open quote in --cmd" 2 "$bin" gen "$api2" --stdout --cmd "python 'x"
mkdir -p "$tmp/badtoml" && printf '[project\n' > "$tmp/badtoml/pyproject.toml"
expect "broken pyproject.toml" 2 "$bin" gen "$tmp/badtoml"
check "it names the file and line" grep -q "pyproject.toml:1: not valid TOML" "$tmp/err"
# Inputs that would make an image that cannot work: exit 2, one line naming
# the file (and line), nothing written.
conda=$tmp/conda && mkdir -p "$conda"
printf 'name: x\ndependencies:\n  - python=3.11\n  - faiss-gpu\n' > "$conda/environment.yml"
echo "print('hi')" > "$conda/main.py"
expect "a conda environment.yml" 2 "$bin" gen "$conda"
check "it names the file and line" grep -q "$conda/environment.yml:2: a conda environment (faiss-gpu)" "$tmp/err"
check "in one line" test "$(wc -l < "$tmp/err")" = 1
check "and writes nothing" test -z "$(ls -A "$conda" | grep -v -e environment.yml -e main.py)"
conflict=$tmp/conflict && mkdir -p "$conflict" && echo "print('hi')" > "$conflict/main.py"
printf 'numpy==2.1.3\n<<<<<<< HEAD\ntorch==2.6.0\n=======\ntorch==2.7.0\n>>>>>>> main\n' > "$conflict/requirements.txt"
expect "merge-conflict markers in requirements.txt" 2 "$bin" gen "$conflict"
check "it names file:line" grep -q "$conflict/requirements.txt:2: a merge-conflict marker" "$tmp/err"
check "and writes nothing" test ! -e "$conflict/Dockerfile"
fifo=$tmp/fifo && mkdir -p "$fifo" && echo "print('hi')" > "$fifo/main.py" && mkfifo "$fifo/requirements.txt"
expect "a FIFO named requirements.txt (never opened: no hang)" 2 timeout 10 "$bin" gen "$fifo"
check "it says it is not a regular file" grep -q "requirements.txt: is a FIFO (named pipe), not a regular file" "$tmp/err"
outside=$tmp/mono && mkdir -p "$outside/svc" && echo "numpy==2.1.3" > "$outside/shared.txt"
printf -- '-r ../shared.txt\n' > "$outside/svc/requirements.txt" && echo "print('hi')" > "$outside/svc/main.py"
expect "an include outside the build context" 2 "$bin" gen "$outside/svc" --stdout
check "it explains the build context" grep -q "requirements.txt:1: -r ../shared.txt is outside the project directory .*build context" "$tmp/err"
check "no COPY ../ is printed" test -z "$(grep 'COPY \.\./' "$tmp/out")"
check "it suggests --context" grep -q "COPY cannot reach it. Pass --context $outside to build" "$tmp/err"

# A monorepo's service, built from the repository's root: --context.
mono=$tmp/monorepo
mkdir -p "$mono/shared" "$mono/services/api" "$mono/services/billing" "$mono/libs/common/common"
printf 'numpy==2.1.3\n' >"$mono/shared/requirements.txt"
printf -- '-r ../../shared/requirements.txt\n-e ../../libs/common\nfastapi==0.115.6\nuvicorn==0.34.0\n' \
  >"$mono/services/api/requirements.txt"
printf 'from fastapi import FastAPI\napp = FastAPI()\n' >"$mono/services/api/main.py"
printf '[project]\nname = "common"\nversion = "1"\n' >"$mono/libs/common/pyproject.toml"
printf 'node_modules\n' >"$mono/.dockerignore"
in_dir() (cd "$1" && shift && "$@")
expect "a shared include without --context" 2 in_dir "$mono" "$bin" gen services/api
check "it names the line and the --context that holds both" \
  grep -q "services/api/requirements.txt:1: -r ../../shared/requirements.txt is outside the project directory services/api, .*Pass --context \. to build" "$tmp/err"
check "in one line" test "$(wc -l <"$tmp/err")" = 1
check "and writes nothing" test ! -e "$mono/services/api/Dockerfile" -a ! -e "$mono/services/api/.imgsmith"
expect "gen services/api --context ." 0 in_dir "$mono" "$bin" gen services/api --context .
check "the Dockerfile is in the project" grep -q "^FROM python:3.12-slim-bookworm$" "$mono/services/api/Dockerfile"
check "COPY names the shared file from the context" \
  grep -qx 'COPY shared/requirements.txt /app/shared/requirements.txt' "$mono/services/api/Dockerfile"
check "and the library" grep -qx 'COPY libs/common/ /app/libs/common/' "$mono/services/api/Dockerfile"
check "and the project by its place in the context" grep -qx 'COPY services/api/. .' "$mono/services/api/Dockerfile"
check "the ignore file is beside the Dockerfile" grep -qx '!services/api' "$mono/services/api/Dockerfile.dockerignore"
# The block from `*` to the next comment, whole: a line more (another
# service let in) fails as a line less does.
check "it lets in only the project and what it names" \
  test "$(sed -n '/^\*$/,/^#/p' "$mono/services/api/Dockerfile.dockerignore" | sed '$d')" = \
       "$(printf '%s\n' '*' '!services/api' '!libs/common' '!shared/requirements.txt')"
check "the context's own .dockerignore is untouched" test "$(cat "$mono/.dockerignore")" = node_modules
check "no .dockerignore in the project" test ! -e "$mono/services/api/.dockerignore"
check "the summary's build command runs in the context" \
  grep -qF "build   DOCKER_BUILDKIT=1 docker build -f services/api/Dockerfile -t api ." "$tmp/out"
check "the Dockerfile's header says the same" \
  grep -qF "# Build:  DOCKER_BUILDKIT=1 docker build -f services/api/Dockerfile -t api ." "$mono/services/api/Dockerfile"
check "the written files are named" grep -q "wrote .*Dockerfile, Dockerfile.dockerignore in services/api$" "$tmp/out"
expect "from the project's own directory" 0 in_dir "$mono/services/api" "$bin" gen . --context ../.. --stdout --explain
check "the build command names the context from there" grep -qF "docker build -f Dockerfile -t api ../.." "$tmp/err"
check "--explain names the context" grep -q "^  --context: the build context is $mono (../.. from the project)" "$tmp/err"
rm "$mono/services/api/Dockerfile"
expect "an existing Dockerfile.dockerignore is refused" 2 in_dir "$mono" "$bin" gen services/api --context .
check "it names the file" grep -q "services/api/Dockerfile.dockerignore exists" "$tmp/err"
check "and writes no Dockerfile" test ! -e "$mono/services/api/Dockerfile"
expect "a context that does not hold the project" 2 in_dir "$mono" "$bin" gen services/api --context services/billing
check "it names both" \
  grep -q -- "--context services/billing is not the project directory services/api or a directory above it" "$tmp/err"
check "in one line" test "$(wc -l <"$tmp/err")" = 1
expect "--help documents --context" 0 "$bin" gen --help
check "it does" grep -q -- "--context DIR  *The docker build context" "$tmp/out"
split=$tmp/split && mkdir -p "$split" && echo "print('hi')" > "$split/main.py"
printf -- '--index-url https://download.pytorch.org/whl/cpu\ntorch==2.6.0\n' > "$split/requirements-cpu.txt"
echo "torch==2.6.0" > "$split/requirements-gpu.txt"
expect "-cpu and -gpu requirements" 0 "$bin" gen "$split" --stdout --explain
check "the GPU file is installed" grep -q -- "-r requirements-gpu.txt" "$tmp/out"
check "the CPU file is not" test -z "$(grep requirements-cpu.txt "$tmp/out")"
check "--explain says why" grep -q "requirements-cpu.txt: skipped: the CPU alternative to requirements-gpu.txt" "$tmp/err"
expect "--requirements picks the CPU file" 0 "$bin" gen "$split" --stdout --requirements requirements-cpu.txt
check "on the CPU image" grep -q "^FROM python:3" "$tmp/out"
expect "--port moves the detected server" 0 "$bin" gen "$api2" --stdout --port 9000
check "uvicorn listens on it" grep -q '"--port", "9000"\]$' "$tmp/out"
check "and it is published" grep -q "^EXPOSE 9000$" "$tmp/out"
check "the run command shares memory with torch's workers" grep -q -- "--shm-size=8g -p 9000:9000" "$tmp/err"
expect "--stdout --compose" 0 "$bin" gen "$api2" --stdout --compose
check "says compose.yaml was not written" grep -q "compose.yaml was not written" "$tmp/err"
check "and writes none" test ! -e "$api2/compose.yaml"
expect "a --port out of range" 2 "$bin" gen "$api2" --stdout --port 70000
lib=$tmp/culib && mkdir -p "$lib" && printf '__global__ void k() {}\n' > "$lib/kernels.cu"
expect "a .cu library with no main()" 2 "$bin" gen "$lib"
check "it says it is a library" grep -q "kernels.cu: none of the 1 CUDA/C++ sources defines main()" "$tmp/err"

if [ "$(id -u)" != 0 ]; then  # root may write anywhere
  ro=$(fresh fraud-api-cpu)
  chmod a-w "$ro"
  expect "an unwritable project" 2 "$bin" gen "$ro"
  chmod u+w "$ro"
  check "it leaves no Dockerfile" test ! -e "$ro/Dockerfile"
fi

# imgsmith.toml's [gen] table holds what would otherwise be flags; flags win.
team="$tmp/team"
mkdir -p "$team"
printf 'torch==2.7.1\nfastapi==0.115.6\nuvicorn==0.34.0\n' >"$team/requirements.txt"
printf 'from fastapi import FastAPI\napp = FastAPI()\n' >"$team/main.py"
printf 'ffmpeg\n' >"$team/apt.txt"
printf '[gen]\ncuda = "12.8"\nport = 9000\ncmd = ["python", "main.py"]\nsystem_packages = ["libgl1"]\n' >"$team/imgsmith.toml"
expect "gen reads imgsmith.toml [gen]" 0 "$bin" gen "$team" --stdout
check "its cuda" grep -q "^FROM nvidia/cuda:12.8.1-base-ubuntu24.04$" "$tmp/out"
check "its cmd" grep -q '^CMD \["python", "main.py"\]$' "$tmp/out"
check "its port" grep -q "^EXPOSE 9000$" "$tmp/out"
check "its system packages and apt.txt's, in the final stage" \
  grep -q "apt-get install -y --no-install-recommends python3.12=3.12.\* ffmpeg libgl1$" "$tmp/out"
expect "flags override the file" 0 "$bin" gen "$team" --stdout --cuda 12.6 --port 8100 --cmd "python -m app"
check "--cuda wins" grep -q "^FROM nvidia/cuda:12.6.3-base-ubuntu24.04$" "$tmp/out"
check "--port wins" grep -q "^EXPOSE 8100$" "$tmp/out"
check "--cmd wins" grep -q '^CMD \["python", "-m", "app"\]$' "$tmp/out"
printf '[gen]\nflavor = "tiny"\n' >"$team/imgsmith.toml"
expect "a bad [gen] value" 2 "$bin" gen "$team"
check "names the file, line and key" grep -q "$team/imgsmith.toml:2: \[gen\] flavor: 'tiny': choose auto, base, runtime or devel" "$tmp/err"
check "and writes nothing" test ! -e "$team/Dockerfile" -a ! -e "$team/.imgsmith"
printf 'ffmpeg\napt-get install x\n' >"$team/apt.txt"
rm "$team/imgsmith.toml"
expect "a bad apt.txt line" 2 "$bin" gen "$team"
check "names the line" grep -q "$team/apt.txt:2: 'apt-get install x' is not a Debian package name" "$tmp/err"
check "and writes nothing" test ! -e "$team/Dockerfile"

# Triton compiles kernels at start: gcc and the headers, unless told not to.
vllm="$tmp/vllm"
mkdir -p "$vllm"
printf 'vllm==0.8.5\n' >"$vllm/requirements.txt"
printf 'import vllm\n' >"$vllm/main.py"
expect "a vllm project" 0 "$bin" gen "$vllm" --stdout
check "gets gcc and the Python headers in the final stage" grep -q "python3.10=3.10.\* gcc=4:11.\* python3.10-dev=3.10.\*$" "$tmp/out"
check "with a note of the cost" grep -q "^note: requirements.txt:1 (vllm): Triton .*--no-runtime-compiler" "$tmp/err"
expect "--no-runtime-compiler" 0 "$bin" gen "$vllm" --stdout --no-runtime-compiler
check "leaves them out" test -z "$(grep gcc "$tmp/out")"

# Model weights in the project: their need goes into the image for the
# probe, and the summary has a line a model. The safetensors file is
# written here to its specification: 600,000 F16 parameters.
withmodel=$(fresh pytorch-api)
mkdir -p "$withmodel/model"
python3 - "$withmodel/model" <<'PY'
import json, struct, sys
header = json.dumps({"w": {"dtype": "F16", "shape": [600, 1000], "data_offsets": [0, 1200000]}}).encode()
with open(sys.argv[1] + "/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + bytes(1200000))
PY
expect "gen sizes the project's model" 0 "$bin" gen "$withmodel"
check "the image carries the model's need" grep -Eq 'IMGSMITH_MODEL_VRAM=[0-9]+' "$withmodel/Dockerfile"
check "and what lower precisions would need" grep -q 'IMGSMITH_MODEL_VRAM_BY_PRECISION=bf16:[0-9]*,int8:[0-9]*,int4:[0-9]*' "$withmodel/Dockerfile"
need=$(grep -Eo 'IMGSMITH_MODEL_VRAM=[0-9]+' "$withmodel/Dockerfile" | cut -d= -f2)
# 1.2 MB of weights, 20% of it for activations, 512 MiB of CUDA context.
check "the need is the weights, activations and CUDA context ($need)" test "$need" = $((1200000 + 240000 + 536870912))
check "the summary has the model, in the project's engine's budget" grep -q "model   ./model/model.safetensors (safetensors, budget of transformers): stored 538.31 MB (T4+)" "$tmp/out"
# --model naming the project's own model folder, with a trailing slash: the
# same model once, its path without "//".
expect "--model inside the project" 0 "$bin" gen "$withmodel" --model "$withmodel/model/" --stdout
check "counts it once" test "$(cat "$tmp/out" "$tmp/err" | grep -c '^  model ')" = 1
check "and shows no doubled slash" sh -c "! grep -q '//model.safetensors' '$tmp/out' '$tmp/err'"
cp -r "$withmodel/model" "$tmp/weights-elsewhere"
expect "--model DIR/ outside the project" 0 "$bin" gen "$(fresh pytorch-api)" --model "$tmp/weights-elsewhere/" --stdout
check "is shown as DIR/NAME" grep -q "model   $tmp/weights-elsewhere/model.safetensors " "$tmp/out" "$tmp/err"
# A float32 checkpoint: vLLM serves it at 16 bits (--dtype auto), so a
# vLLM project's image carries the bf16 need, in vLLM's budget (0.35 GiB
# of non-torch memory; 0.9 of the board); a plain PyTorch app keeps the
# float32 one.
mkdir -p "$tmp/f32"
python3 - "$tmp/f32" <<'PY'
import json, struct, sys
header = json.dumps({"w": {"dtype": "F32", "shape": [600, 1000], "data_offsets": [0, 2400000]}}).encode()
with open(sys.argv[1] + "/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + bytes(2400000))
PY
expect "a vLLM project with a float32 model" 0 "$bin" gen "$vllm" --model "$tmp/f32" --stdout --explain
vllm_need=$(python3 -c 'import math; print(math.ceil((1200000 + 240000 + int(0.35 * 2**30)) / 0.9))')
check "its need is the 16-bit one, in vLLM's budget ($vllm_need)" grep -q "IMGSMITH_MODEL_VRAM=$vllm_need " "$tmp/out"
check "and the decision says why" grep -q "at 16 bits, as vllm (requirements.txt:1) loads a float32 checkpoint" "$tmp/out" "$tmp/err"
expect "a PyTorch app with the same model" 0 "$bin" gen "$(fresh pytorch-api)" --model "$tmp/f32" --stdout
check "keeps the float32 need" grep -q "IMGSMITH_MODEL_VRAM=$((2400000 + 480000 + 536870912)) " "$tmp/out"
expect "--model names weights outside the project" 0 "$bin" gen "$(fresh pytorch-api)" --model "$tmp/weights-elsewhere" --stdout
check "their need goes into the Dockerfile" grep -q "IMGSMITH_MODEL_VRAM=$need" "$tmp/out"
# A Hugging Face hub cache (blobs, snapshots of symlinks to them, refs/main):
# one model, main's snapshot by its names, its config.json read through
# the link (KV cache: 2 x 32 layers x 8 KV heads x 128 x 2 bytes a token).
python3 - "$tmp/hub/models--meta-llama--Meta-Llama-3-8B" <<'PY'
import hashlib, json, os, struct, sys
cache = sys.argv[1]
def safetensors(name, rows):
    header = json.dumps({name: {"dtype": "BF16", "shape": [rows, 1024], "data_offsets": [0, rows * 2048]}}).encode()
    return struct.pack("<Q", len(header)) + header + bytes(rows * 2048)
def snapshot(rev, files):
    os.makedirs(cache + "/blobs", exist_ok=True)
    os.makedirs(cache + "/snapshots/" + rev, exist_ok=True)
    for name, data in files.items():
        sha = hashlib.sha256(data).hexdigest()
        open(cache + "/blobs/" + sha, "wb").write(data)
        os.symlink("../../blobs/" + sha, cache + "/snapshots/" + rev + "/" + name)
config = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32,
          "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192}
snapshot("main0rev", {"model-00001-of-00002.safetensors": safetensors("a", 700),
                      "model-00002-of-00002.safetensors": safetensors("b", 550), "config.json": json.dumps(config).encode()})
snapshot("old1rev", {"model.safetensors": safetensors("c", 3000), "config.json": json.dumps({**config, "num_hidden_layers": 2}).encode()})
os.makedirs(cache + "/refs")
open(cache + "/refs/main", "w").write("main0rev")
PY
expect "--model a Hugging Face cache" 0 "$bin" gen "$(fresh pytorch-api)" --model "$tmp/hub/models--meta-llama--Meta-Llama-3-8B"
check "one model: main's snapshot, by its names" test "$(grep -c '^  model ' "$tmp/out")" = 1
check "the snapshot main names, both shards (1,250 x 1,024 parameters)" grep -q "model   $tmp/hub/models--meta-llama--Meta-Llama-3-8B/snapshots/main0rev/ (safetensors, budget of transformers)" "$tmp/out"
# weights + 20% activations + 512 MiB of CUDA context + the KV cache at 8,192 tokens
check "both shards' weights and the config's KV cache in the need" grep -q "IMGSMITH_MODEL_VRAM_BY_PRECISION=bf16:$((1250 * 1024 * 2 * 12 / 10 + 536870912 + 8192 * 131072))," "$tmp/pytorch-api/Dockerfile"
check "its config.json read through the link: the KV cache" grep -q "IMGSMITH_MODEL_KV_BYTES_PER_TOKEN=131072" "$tmp/pytorch-api/Dockerfile"
expect "--model that does not exist" 2 "$bin" gen "$(fresh pytorch-api)" --model "$tmp/no-such-model"
check "it names the path" grep -q -- "--model $tmp/no-such-model: no such file or folder" "$tmp/err"
expect "--model with no weights in it" 2 "$bin" gen "$(fresh pytorch-api)" --model "$examples/pytorch-api"
check "it says none were found" grep -q "no model weights found there" "$tmp/err"

# The probe from a fresh clone: gen keeps its binary out of git, and the
# step its summary names puts it back where the Dockerfile copies it from.
if command -v git >/dev/null; then
  repo=$(fresh pytorch-api)
  expect "gen in a git checkout" 0 "$bin" gen "$repo"
  check "the summary names the CI step" grep -q "imgsmith probe --write-all .imgsmith" "$tmp/out"
  git -C "$repo" init -q && git -C "$repo" add -A &&
    git -C "$repo" -c user.name=t -c user.email=t@t commit -qm project
  check "git keeps the Dockerfile" git -C "$repo" ls-files --error-unmatch Dockerfile
  check "git does not keep the probe" test -z "$(git -C "$repo" ls-files .imgsmith | grep probe)"
  check "git keeps the build-time check" git -C "$repo" ls-files --error-unmatch .imgsmith/check/libraries.sh
  git clone -q "$repo" "$tmp/clone"
  check "a fresh clone has no probe" test ! -e "$tmp/clone/.imgsmith/imgsmith-probe-amd64"
  check "a fresh clone has the check" test -s "$tmp/clone/.imgsmith/check/libraries.sh"
  step=$(grep -o 'imgsmith probe --write-all [^`]*' "$tmp/out" | head -1)
  (cd "$tmp/clone" && "$bin" ${step#imgsmith })
  for arch in amd64 arm64; do
    check "the named step writes the $arch probe where the Dockerfile copies it from" \
      test -x "$tmp/clone/.imgsmith/imgsmith-probe-$arch" -a "$(grep -c 'COPY .*\.imgsmith/imgsmith-probe-\${TARGETARCH}' "$tmp/clone/Dockerfile")" = 1
    check "and it is imgsmith's $arch probe" cmp -s "$tmp/clone/.imgsmith/imgsmith-probe-$arch" "$repo/.imgsmith/imgsmith-probe-$arch"
  done
  check "the summary names the probe image as the other way" grep -q "IMGSMITH_PROBE_IMAGE=REGISTRY/imgsmith-probe:" "$tmp/out"
  echo "custom" >"$repo/.imgsmith/.gitignore"
  expect "gen again" 0 "$bin" gen "$repo" --force
  check "an edited .imgsmith/.gitignore is left alone" test "$(cat "$repo/.imgsmith/.gitignore")" = custom
fi

# The probe image: an OCI archive of one FROM-scratch image per CPU,
# written the same twice, read back by imgsmith's own reader (which checks
# every digest) with the probe's exact bytes at /imgsmith-probe.
expect "probe --write-image writes the probe image" 0 "$bin" probe --write-image "$tmp/probe-image.tar"
check "it says how to publish it" grep -q "skopeo copy --all oci-archive:" "$tmp/err"
expect "written again" 0 "$bin" probe --write-image "$tmp/probe-image2.tar"
check "the same bytes both times (no timestamps)" cmp -s "$tmp/probe-image.tar" "$tmp/probe-image2.tar"
for arch in amd64 arm64; do
  "$bin" probe --write "$tmp/probe-$arch" --arch "$arch" 2>/dev/null || continue
  expect "the $arch image of the probe image reads back" 0 "$bin" analyze "$tmp/probe-image.tar" \
    --platform "linux/$arch" --format json -o "$tmp/probe-image-$arch.json" -q
  check "its one file is the $arch probe, byte for byte in size" python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
files = {f["path"]: f["bytes"] for f in d["largest_files"]}
assert files == {"/imgsmith-probe": os.path.getsize(sys.argv[2])}, files
assert d["image"]["architecture"] == sys.argv[3], d["image"]
' "$tmp/probe-image-$arch.json" "$tmp/probe-$arch" "$arch"
done
expect "probe --write-image with a tag" 0 "$bin" probe --write-image "$tmp/probe-tagged.tar" --tag 9.9.9-test
if command -v skopeo >/dev/null; then
  expect "skopeo reads the archive's multi-platform index by its tag" 0 \
    skopeo inspect --raw oci-archive:"$tmp/probe-tagged.tar":9.9.9-test
  check "an image index with a manifest per CPU" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["mediaType"] == "application/vnd.oci.image.index.v1+json", d
assert {m["platform"]["architecture"] for m in d["manifests"]} >= {"amd64"}, d
' "$tmp/out"
fi
expect "probe --write-image without a FILE" 2 "$bin" probe --write-image
check "names what it needs" grep -q "needs a FILE" "$tmp/err"

# gen --probe-image: the Dockerfile takes the probe from that image by
# default, so a fresh clone builds without imgsmith.
img=$(fresh pytorch-api)
expect "gen --probe-image REF" 0 "$bin" gen "$img" --probe-image registry.example.com/imgsmith-probe:0.1.0
check "IMGSMITH_PROBE_IMAGE defaults to it" \
  grep -qx 'ARG IMGSMITH_PROBE_IMAGE=registry.example.com/imgsmith-probe:0.1.0' "$img/Dockerfile"
check "the summary says a fresh clone needs no imgsmith" grep -q "a fresh clone needs no imgsmith" "$tmp/out"
expect "gen --probe-image without a tag is refused" 2 "$bin" gen "$(fresh pytorch-api)" --probe-image registry.example.com/imgsmith-probe
check "naming what to give" grep -q "with its version tag or digest" "$tmp/err"

# --k8s: manifests beside the Dockerfile, valid against the Kubernetes API's
# types (python3-kubernetes), a GPU server, a GPU job, a CPU app.
validate="$(dirname "$0")/k8s_validate.py"
k8s_get() {  # k8s_get FILE EXPR: a value of the manifest, by a Python expression on `m`
  /usr/bin/python3 -c 'import sys, yaml; m = yaml.safe_load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
if /usr/bin/python3 -c 'import kubernetes, yaml' 2>/dev/null; then
  k8sapi=$(fresh pytorch-api)
  expect "gen --k8s: a GPU server" 0 "$bin" gen "$k8sapi" --k8s
  check "a Deployment and a Service" test -f "$k8sapi/k8s/deployment.yaml" -a -f "$k8sapi/k8s/service.yaml"
  check "the manifests are valid Kubernetes objects" /usr/bin/python3 "$validate" "$k8sapi"/k8s/*.yaml
  pod='m["spec"]["template"]["spec"]'
  c="$pod[\"containers\"][0]"
  check "one GPU, as a limit" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "$c['resources']['limits']['nvidia.com/gpu']")" = 1
  check "no GPU request that differs from the limit" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "'requests' in $c['resources']")" = False
  check "scheduled on GPU nodes" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "$pod['nodeSelector']['nvidia.com/gpu.present']")" = true
  check "tolerating the GPU taint" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "$pod['tolerations'][0]['key']")" = nvidia.com/gpu
  check "the startup probe is the probe's --check" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "' '.join($c['startupProbe']['exec']['command'][:2])")" = "/usr/local/bin/imgsmith-probe --check"
  check "ready when the detected port answers" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "$c['readinessProbe']['tcpSocket']['port']")" = 8000
  check "the Service targets that port" test "$(k8s_get "$k8sapi/k8s/service.yaml" "m['spec']['ports'][0]['targetPort']")" = 8000
  uid=$(grep -o -- '--uid [0-9]*' "$k8sapi/Dockerfile" | cut -d' ' -f2)
  check "runs as the Dockerfile's non-root user ($uid)" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "$pod['securityContext']['runAsUser']")" = "$uid"
  check "no privilege escalation, a read-only root" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "($c['securityContext']['allowPrivilegeEscalation'], $c['securityContext']['readOnlyRootFilesystem'])")" = "(False, True)"
  check "/dev/shm in memory, sized as docker run's --shm-size" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "[v for v in $pod['volumes'] if v['name'] == 'dshm'][0]['emptyDir']")" = "{'medium': 'Memory', 'sizeLimit': '8Gi'}"
  check "the home and the Hugging Face cache are writable volumes" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "sorted(v['mountPath'] for v in $c['volumeMounts'])")" = "['/dev/shm', '/home/app', '/home/app/.cache/huggingface', '/tmp']"
  check "the probe refuses to start the app without a GPU" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "$c['env'][0]")" = "{'name': 'IMGSMITH_PROBE', 'value': 'require'}"
  check "gen says what the pod asks for" grep -q "the pod asks for 1 nvidia.com/gpu" "$tmp/out"
  expect "manifests are not overwritten without --force" 2 "$bin" gen "$k8sapi" --k8s
  check "the refusal names the file" grep -q "exists" "$tmp/err"
  rm "$k8sapi/Dockerfile" "$k8sapi/.dockerignore"
  expect "an existing manifest alone is refused" 2 "$bin" gen "$k8sapi" --k8s
  check "it names the manifest" grep -q "$k8sapi/k8s/deployment.yaml exists" "$tmp/err"
  expect "--gpus 2 of a MIG slice, with --force" 0 "$bin" gen "$k8sapi" --k8s --force --gpus 2 --gpu-resource nvidia.com/mig-1g.10gb
  check "the limit is the MIG resource, 2 of it" test "$(k8s_get "$k8sapi/k8s/deployment.yaml" "$c['resources']['limits']")" = "{'nvidia.com/mig-1g.10gb': 2}"
  expect "--gpu-resource that is no resource name" 2 "$bin" gen "$(fresh pytorch-api)" --k8s --gpu-resource 'gpu: 1'
  check "it says what a name looks like" grep -q "nvidia.com/mig-1g.10gb" "$tmp/err"
  # The model's need: only nodes whose GPUs have more memory (GPU Feature Discovery's MiB).
  k8smodel="$tmp/k8s-model"
  rm -rf "$k8smodel" && cp -r "$examples/pytorch-api" "$k8smodel" && cp -r "$tmp/weights-elsewhere" "$k8smodel/model"
  expect "gen --k8s with a model" 0 "$bin" gen "$k8smodel" --k8s
  mib=$(( (need + 1048575) / 1048576 - 1 ))
  check "node affinity on nvidia.com/gpu.memory > $mib MiB" test "$(k8s_get "$k8smodel/k8s/deployment.yaml" "$pod['affinity']['nodeAffinity']['requiredDuringSchedulingIgnoredDuringExecution']['nodeSelectorTerms'][0]['matchExpressions'][0]")" = "{'key': 'nvidia.com/gpu.memory', 'operator': 'Gt', 'values': ['$mib']}"
  check "the model's manifests are valid" /usr/bin/python3 "$validate" "$k8smodel"/k8s/*.yaml
  # A program with no port: a Job that runs to completion.
  saxpy=$(fresh cuda-saxpy)
  expect "gen --k8s: a GPU program" 0 "$bin" gen "$saxpy" --k8s
  check "a Job, and no Service" test -f "$saxpy/k8s/job.yaml" -a ! -e "$saxpy/k8s/service.yaml"
  check "the Job is a valid Kubernetes object" /usr/bin/python3 "$validate" "$saxpy/k8s/job.yaml"
  check "it never restarts in place" test "$(k8s_get "$saxpy/k8s/job.yaml" "$pod['restartPolicy']")" = Never
  check "with one GPU" test "$(k8s_get "$saxpy/k8s/job.yaml" "$c['resources']['limits']['nvidia.com/gpu']")" = 1
  # A CPU app: no GPU anywhere, and gen says so.
  cpuapp=$(fresh fraud-api-cpu)
  expect "gen --k8s: a CPU app" 0 "$bin" gen "$cpuapp" --k8s
  check "the CPU app's manifests are valid" /usr/bin/python3 "$validate" "$cpuapp"/k8s/*.yaml
  check "no GPU in them" test -z "$(grep -l nvidia "$cpuapp"/k8s/*.yaml)"
  check "gen says the pod asks for no GPU" grep -q "ask for no GPU" "$tmp/out"
  # The node validator: the image's probe once on each GPU node, no GPU held.
  val=$(fresh pytorch-api)
  expect "gen --k8s-validator" 0 "$bin" gen "$val" --k8s-validator
  v="$val/k8s/gpu-node-validator.yaml"
  check "the validator DaemonSet is written, alone" test -f "$v" -a ! -e "$val/k8s/deployment.yaml"
  check "it is a valid Kubernetes object" /usr/bin/python3 "$validate" "$v"
  check "a DaemonSet" test "$(k8s_get "$v" "m['kind']")" = DaemonSet
  check "it runs the probe's benchmark as JSON, then sleeps" test "$(k8s_get "$v" "' '.join($c['command'])")" = \
    "/usr/local/bin/imgsmith-probe --bench --json --timeout 60 -- sleep infinity"
  check "it asks the scheduler for no GPU" test "$(k8s_get "$v" "'nvidia' in str($c['resources'])")" = False
  check "it sees the node's GPUs through the NVIDIA runtime" test "$(k8s_get "$v" "($pod['runtimeClassName'], [e['value'] for e in $c['env'] if e['name'] == 'NVIDIA_VISIBLE_DEVICES'])")" = "('nvidia', ['all'])"
  check "the report names its node (downward API)" test "$(k8s_get "$v" "[e['valueFrom']['fieldRef']['fieldPath'] for e in $c['env'] if e['name'] == 'IMGSMITH_NODE_NAME']")" = "['spec.nodeName']"
  check "on GPU nodes, tainted or not" test "$(k8s_get "$v" "($pod['nodeSelector']['nvidia.com/gpu.present'], $pod['tolerations'][0]['key'])")" = "('true', 'nvidia.com/gpu')"
  check "gen says how to collect and summarize" grep -q "imgsmith probe --summarize reports/" "$tmp/out"
  expect "--k8s-validator for a CPU app is refused" 2 "$bin" gen "$(fresh fraud-api-cpu)" --k8s-validator
  check "it says why" grep -q "uses a GPU, so its image carries no probe" "$tmp/err"
  expect "--k8s-validator with --no-probe is refused" 2 "$bin" gen "$(fresh pytorch-api)" --k8s-validator --no-probe
  expect "--stdout writes no manifest, and says so" 0 "$bin" gen "$(fresh pytorch-api)" --k8s --stdout
  check "the note" grep -q "the k8s/ manifests were not written" "$tmp/err"
else
  echo "gen cli: python3-kubernetes is missing; the --k8s checks did not run"
  [ -n "${CI:-}" ] && fail=$((fail + 1))
fi

# A task-queues.json row whose pattern is no regular expression (given
# with IMGSMITH_GEN_TABLES) is bad input at load, naming the row.
mkdir -p "$tmp/bad-tables"
python3 - "$examples/../data/task-queues.json" "$tmp/bad-tables/task-queues.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["task_queues"]:
    if r["name"] == "RQ":
        r["queues"] = "Queue(("
json.dump(d, open(sys.argv[2], "w"))
PY
expect "a bad queues pattern in task-queues.json: exit 2" 2 env IMGSMITH_GEN_TABLES="$tmp/bad-tables" "$bin" gen "$(fresh fraud-api-cpu)" --stdout
check "a bad queues pattern: the row and the field named" grep -q "the queues pattern of RQ (Queue(()" "$tmp/err"

echo "gen cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
