#!/usr/bin/env bash
# What reading model headers costs `imgsmith analyze`: the same image read
# with the models (the default) and with --no-models, side by side,
# alternating, on an image with multi-GB weights (two safetensors shards, a
# GGUF file, a torch.save-layout zip and an ONNX graph with inline weights,
# random bytes as weights are), stored uncompressed (the reader seeks over
# the weights) and with gzip layers (every byte is inflated either way).
# Prints the median times and their ratio against the 1.05 target.
#
# The exit status is 0 when every command ran, whether or not the target was
# met: the output is a report.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)
imgsmith="$repo_root/build/imgsmith"
workdir=/tmp/imgsmith-bench-models
gb=2
rounds=5

usage() {
  cat <<EOF
Usage: bench/models.sh [--imgsmith PATH] [--workdir DIR] [--gb N] [--rounds N]

  --imgsmith PATH  imgsmith binary (default: build/imgsmith in the repository)
  --workdir DIR    where the images are written and kept (default: $workdir)
  --gb N           bytes of weights in the image, in GB (default: $gb)
  --rounds N       runs of each variant; the median is reported (default: $rounds)
EOF
}

while (($#)); do
  case "$1" in
    --imgsmith) imgsmith=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --gb) gb=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/models.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ -x "$imgsmith" ] || { echo "bench/models.sh: no imgsmith at $imgsmith (build it first)" >&2; exit 2; }
mkdir -p "$workdir"
cd "$workdir"

if [ ! -f "models-$gb.tar" ] || [ ! -f "models-$gb.oci.tar" ]; then
  echo "writing an image with $gb GB of weights in $workdir ..." >&2
  python3 - "$gb" "$script_dir" <<'PY'
import io, json, os, struct, sys, tarfile, zipfile
gb = float(__import__("sys").argv[1])
total = int(gb * 1e9)
chunk = os.urandom(1 << 24)
def random_bytes(n):
    reps, rest = divmod(n, len(chunk))
    return chunk * reps + chunk[:rest]
files = {}
# safetensors: two shards of F16 tensors, 40% of the weights each.
def safetensors(n_bytes, tensors):
    per = n_bytes // tensors // 2 * 2
    header, offset = {}, 0
    for i in range(tensors):
        header["layers.%d.weight" % i] = {"dtype": "F16", "shape": [per // 2], "data_offsets": [offset, offset + per]}
        offset += per
    text = json.dumps(header).encode(); text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + random_bytes(offset)
files["models/llm/model-00001-of-00002.safetensors"] = safetensors(int(total * 0.4), 200)
files["models/llm/model-00002-of-00002.safetensors"] = safetensors(int(total * 0.4), 200)
files["models/llm/config.json"] = json.dumps({"num_hidden_layers": 32, "num_attention_heads": 32,
    "hidden_size": 4096, "max_position_embeddings": 4096}).encode()
# GGUF: F32 tensors, 10%.
def gstr(s): s = s.encode(); return struct.pack("<Q", len(s)) + s
n = int(total * 0.1) // 4 // 256 * 256
head = b"GGUF" + struct.pack("<IQQ", 3, 1, 1) + gstr("general.architecture") + struct.pack("<I", 8) + gstr("llama")
head += gstr("w") + struct.pack("<IQIQ", 1, n, 0, 0)
head += b"\0" * (-len(head) % 32)
files["models/gguf/model.gguf"] = head + random_bytes(n * 4)
# torch.save's layout: data.pkl and one stored storage per tensor, 10%.
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
    z.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    for i in range(8):
        z.writestr("archive/data/%d" % i, random_bytes(int(total * 0.1) // 8))
    z.writestr("archive/version", b"3\n")
files["models/torch/model.pt"] = buf.getvalue()
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w") as t:
    for name, data in sorted(files.items()):
        info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
sys.path.insert(0, sys.argv[2])
import save_and_oci
save_and_oci.write(raw.getvalue(), "models-%s" % sys.argv[1], "models:bench", "COPY models /models")
PY
fi

# The uncompressed image, read in milliseconds, gets 40 times the rounds:
# one run's jitter is as large as the difference.
# shellcheck source=bench/side_by_side.sh
source "$script_dir/side_by_side.sh"
echo "bench/models.sh: imgsmith analyze with model headers vs --no-models, alternating run by run"
printf '%-34s %8s %12s %12s %8s  %s\n' "image" "runs" "--no-models" "models" "ratio" "target <= 1.05"
side_by_side "models-$gb.tar" $((rounds * 40)) --no-models
side_by_side "models-$gb.oci.tar" "$rounds" --no-models
"$imgsmith" analyze "models-$gb.tar" -q | sed -n '/^MODELS/,/^  TOTAL/p'
