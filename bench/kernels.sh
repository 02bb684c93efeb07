#!/usr/bin/env bash
# What reading CUDA binaries' GPU code costs `imgsmith analyze`: the same
# image read with the kernel inventory (the default) and with --no-kernels,
# side by side, alternating run by run, on an image of the CUDA toolkit's
# real libraries (every regular file of /usr/local/cuda/lib64: cuBLAS,
# cuBLASLt, cuDNN, cuFFT, NCCL...; GBs, most of it fatbins), stored
# uncompressed (read at offsets: each file's section headers, then its data
# sections, stepping over container payloads; --no-kernels reads the tar
# headers alone) and with a gzip layer (every byte is inflated either way,
# and the reader searches the loadable segments as they stream past); and on
# an image of the host's ordinary shared libraries (/usr/lib/x86_64-linux-gnu:
# no GPU code, each one's data sections searched to find that out), stored
# uncompressed.
# Prints the median times and their ratio against the 1.05 target.
#
# The exit status is 0 when every command ran, whether or not the target was
# met: the output is a report.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)
imgsmith="$repo_root/build/imgsmith"
workdir=/tmp/imgsmith-bench-kernels
cuda=/usr/local/cuda/lib64
system=/usr/lib/x86_64-linux-gnu
rounds=5

usage() {
  cat <<EOF
Usage: bench/kernels.sh [--imgsmith PATH] [--workdir DIR] [--cuda DIR] [--rounds N]

  --imgsmith PATH  imgsmith binary (default: build/imgsmith in the repository)
  --workdir DIR    where the images are written and kept (default: $workdir)
  --cuda DIR       the libraries to put in the image (default: $cuda)
  --rounds N       runs of each variant on the gzip image, 4x that on the
                   uncompressed one; the median is reported (default: $rounds)
EOF
}

while (($#)); do
  case "$1" in
    --imgsmith) imgsmith=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --cuda) cuda=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/kernels.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ -x "$imgsmith" ] || { echo "bench/kernels.sh: no imgsmith at $imgsmith (build it first)" >&2; exit 2; }
[ -d "$cuda" ] || { echo "bench/kernels.sh: no $cuda (the CUDA toolkit's libraries)" >&2; exit 2; }
mkdir -p "$workdir"
cd "$workdir"

if [ ! -f cuda-libs.tar ] || [ ! -f cuda-libs.oci.tar ] || [ ! -f system-libs.tar ]; then
  echo "writing images of $cuda's and $system's libraries in $workdir ..." >&2
  python3 - "$cuda" "$system" "$script_dir" <<'PY'
import io, os, sys, tarfile
def libraries(top, under):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as t:
        for d, _, names in os.walk(os.path.realpath(top)):
            for name in sorted(names):
                path = os.path.join(d, name)
                if os.path.isfile(path) and not os.path.islink(path) and ".so" in name:
                    t.add(path, arcname=under + os.path.relpath(path, os.path.realpath(top)))
    return raw.getvalue()
sys.path.insert(0, sys.argv[3])
import save_and_oci
save_and_oci.write(libraries(sys.argv[1], "usr/local/cuda/lib64/"), "cuda-libs", "cuda:bench",
                   "COPY cuda /usr/local/cuda")
save_and_oci.write(libraries(sys.argv[2], "usr/lib/x86_64-linux-gnu/"), "system-libs", "system:bench",
                   "COPY lib /usr/lib/x86_64-linux-gnu")
PY
fi

# shellcheck source=bench/side_by_side.sh
source "$script_dir/side_by_side.sh"
echo "bench/kernels.sh: imgsmith analyze with the kernel inventory vs --no-kernels, alternating run by run"
printf '%-34s %8s %12s %12s %8s  %s\n' "image" "runs" "--no-kernels" "kernels" "ratio" "target <= 1.05"
side_by_side cuda-libs.tar $((rounds * 4)) --no-kernels
side_by_side cuda-libs.oci.tar "$rounds" --no-kernels
side_by_side system-libs.tar $((rounds * 4)) --no-kernels
"$imgsmith" analyze cuda-libs.tar -q --top 40 | sed -n '/^CUDA KERNELS/,$p'
