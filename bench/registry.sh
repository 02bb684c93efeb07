#!/usr/bin/env bash
# Benchmark reading an image from a registry, side by side in one run:
#   - the full `imgsmith analyze REGISTRY/REPO:TAG` against `skopeo copy` of
#     the same image to a local OCI layout (what a user would otherwise
#     spend pulling it before analysing a file);
#   - `--manifest-only` against the full analysis.
# A real registry (Debian's docker-registry) runs on loopback for the run and
# is stopped by its PID. The image is synthetic (examples/make_image.py): a
# layer of many small files and a layer of a few large incompressible ones,
# gzip-compressed, cached in the work directory between runs.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)
imgsmith="$repo_root/build/imgsmith"
workdir=/tmp/imgsmith-bench-registry
runs=3
big_mb=400
small_count=30000

usage() {
  cat <<EOF
Usage: bench/registry.sh [--imgsmith PATH] [--workdir DIR] [--runs N] [--big-mb N] [--small-count N]

  --imgsmith PATH    imgsmith binary (default: build/imgsmith)
  --workdir DIR      where the image and the registry's storage live (default: $workdir)
  --runs N           timed runs of each command; the median is reported (default: $runs)
  --big-mb N         size of the large-files layer in MB (default: $big_mb)
  --small-count N    files in the small-files layer (default: $small_count)
EOF
}

while (($#)); do
  case "$1" in
    --imgsmith) imgsmith=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --big-mb) big_mb=$2; shift 2 ;;
    --small-count) small_count=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/registry.sh: error: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
for tool in docker-registry skopeo python3 "$imgsmith"; do
  command -v "$tool" >/dev/null || { echo "bench/registry.sh: error: $tool is missing (scripts/setup.sh)" >&2; exit 2; }
done

mkdir -p "$workdir"
spec="$workdir/spec.json"
image="$workdir/image.oci.tar"
python3 - "$spec" "$big_mb" "$small_count" <<'EOF'
import json, sys
spec, big_mb, small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per_file = big_mb * 1000 * 1000 // 4
json.dump({"tag": "bench/registry:1", "layers": [
    {"created_by": "many small files", "entries": [
        {"generate": "many", "dir": "usr/share/app", "count": small, "size_min": 500, "size_max": 8000, "seed": 7}]},
    {"created_by": "a few large files", "entries": [
        {"path": f"opt/models/shard{i}.bin", "size": per_file, "seed": 100 + i} for i in range(4)]},
]}, open(spec + ".new", "w"), indent=1)
EOF
if [ ! -f "$image" ] || ! cmp -s "$spec.new" "$spec"; then
  mv "$spec.new" "$spec"
  echo "generating the image ($big_mb MB of large files, $small_count small files)..." >&2
  python3 "$repo_root/examples/make_image.py" "$spec" "$image" --format oci-archive --layer-compression gzip \
    --gzip-level 1 -q
else
  rm -f "$spec.new"
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rm -rf "$workdir/registry" "$workdir/layout"
mkdir -p "$workdir/registry"
cat >"$workdir/registry/config.yml" <<EOF
version: 0.1
log: {level: error}
storage: {filesystem: {rootdirectory: $workdir/registry/data}}
http: {addr: 127.0.0.1:$port}
EOF
docker-registry serve "$workdir/registry/config.yml" >"$workdir/registry/log" 2>&1 &
registry_pid=$!
trap 'kill $registry_pid 2>/dev/null; wait $registry_pid 2>/dev/null; rm -rf "$workdir/layout"' EXIT
for _ in $(seq 1 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break
  sleep 0.1
done
ref=127.0.0.1:$port/bench/registry:1
skopeo copy -q --dest-tls-verify=false "oci-archive:$image" "docker://$ref"

seconds() {  # seconds CMD...: wall time of one run
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "bench/registry.sh: error: failed: $*" >&2; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

pull=() full=() manifest=()
for _ in $(seq 1 "$runs"); do
  rm -rf "$workdir/layout"
  pull+=("$(seconds skopeo copy -q --src-tls-verify=false "docker://$ref" "oci:$workdir/layout:1")")
  full+=("$(seconds "$imgsmith" analyze "$ref" -q --format json -o /dev/null)")
  manifest+=("$(seconds "$imgsmith" analyze "$ref" -q --manifest-only --format json -o /dev/null)")
done
p=$(median "${pull[@]}")
f=$(median "${full[@]}")
m=$(median "${manifest[@]}")
compressed=$(stat -c %s "$image")
printf 'image: %s (%s bytes as an OCI archive), %d runs, medians\n' "$ref" "$compressed" "$runs"
printf '%-48s %9s\n' "command" "seconds"
printf '%-48s %9.3f\n' "skopeo copy docker://... oci:layout (pull only)" "$p"
printf '%-48s %9.3f\n' "imgsmith analyze REF (full analysis)" "$f"
printf '%-48s %9.3f\n' "imgsmith analyze REF --manifest-only" "$m"
printf 'full analysis / skopeo pull:      %.2fx\n' "$(python3 -c "print($f / $p)")"
printf 'manifest-only / full analysis:    %.4fx\n' "$(python3 -c "print($m / $f)")"
