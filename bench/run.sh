#!/usr/bin/env bash
# Benchmark `imgsmith analyze` against plain tar/gzip baselines, and
# against `umoci unpack` and a walk (what peers do) where umoci is installed.
#
# Generates four synthetic image archives with examples/make_image.py (few
# large files / many small files, each as an uncompressed docker-legacy
# archive and as an oci-archive with gzip layers), then times imgsmith and
# the baseline side by side on each and prints a table with PASS/FAIL
# against the performance targets.
#
# The exit status is 0 when every command ran, whether or not the targets
# were met: the output is a report.  Any failing command makes it non-zero.

set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)
make_image="$repo_root/examples/make_image.py"
# shellcheck source=bench/lib.sh
source "$script_dir/lib.sh"

usage() {
    cat <<EOF
Usage: bench/run.sh [options]

  --imgsmith PATH     imgsmith binary (default: build/imgsmith in the repository)
  --workdir DIR       where images are generated and cached (default: /tmp/imgsmith-bench)
  --big-gb N          total size of the large files in GiB, may be fractional (default: 3)
  --small-count N     number of files in the many-small-files image, >= 2000 (default: 100000)
  --previous PATH     another imgsmith binary (the commit before a change) timed
                      side by side with --imgsmith on every image
  --keep              keep the generated images for the next run (the default)
  --clean             delete the generated images and the workdir at the end
  -h, --help          show this help

Images are only regenerated when their spec or examples/make_image.py changed.
EOF
}

log() { printf '%s\n' "$*" >&2; }
die() { log "bench/run.sh: error: $*"; exit 1; }
usage_error() { log "bench/run.sh: error: $*"; usage >&2; exit 2; }

imgsmith="$repo_root/build/imgsmith"
workdir=/tmp/imgsmith-bench
big_gb=3
small_count=100000
previous=""
clean=0

while (($#)); do
    case "$1" in
        --imgsmith|--workdir|--big-gb|--small-count|--previous)
            (($# >= 2)) || usage_error "$1 needs a value"
            opt=$1 val=$2
            shift 2
            ;;
        --imgsmith=*|--workdir=*|--big-gb=*|--small-count=*|--previous=*)
            opt=${1%%=*} val=${1#*=}
            shift
            ;;
        --keep) clean=0; shift; continue ;;
        --clean) clean=1; shift; continue ;;
        -h|--help) usage; exit 0 ;;
        *) usage_error "unknown argument: $1" ;;
    esac
    case "$opt" in
        --imgsmith) imgsmith=$val ;;
        --workdir) workdir=$val ;;
        --big-gb) big_gb=$val ;;
        --small-count) small_count=$val ;;
        --previous) previous=$val ;;
    esac
done

if ! [[ "$big_gb" =~ ^[0-9]+([.][0-9]+)?$ ]] || ! awk -v g="$big_gb" 'BEGIN { exit !(g > 0) }'; then
    usage_error "--big-gb must be a positive number, got '$big_gb'"
fi
# The small image whiteouts subdirectory d0000 (files 1-1000) and overwrites
# files from index 1001 on, so it needs at least two subdirectories.
if ! [[ "$small_count" =~ ^[0-9]+$ ]] || ((small_count < 2000)); then
    usage_error "--small-count must be an integer >= 2000, got '$small_count'"
fi
[[ -n "$workdir" ]] || usage_error "--workdir must not be empty"

# Make paths absolute: the script works inside the workdir.
[[ "$imgsmith" == /* ]] || imgsmith="$PWD/$imgsmith"
[[ "$workdir" == /* ]] || workdir="$PWD/$workdir"
[[ -z "$previous" || "$previous" == /* ]] || previous="$PWD/$previous"

# --- preflight -------------------------------------------------------------

[[ -f "$imgsmith" && -x "$imgsmith" ]] \
    || die "imgsmith binary not found or not executable: $imgsmith (build it first, or pass --imgsmith PATH)"
[[ -z "$previous" || -x "$previous" ]] || die "--previous: not an executable: $previous"
[[ -f "$make_image" ]] || die "image generator not found: $make_image"
for tool in tar gzip python3 awk sha256sum; do
    command -v "$tool" >/dev/null || die "required tool not found: $tool"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (Debian: apt-get install time)"
[[ "$(tar --version 2>/dev/null)" == *"GNU tar"* ]] || die "tar is not GNU tar"

mkdir -p "$workdir"
cd "$workdir"
run_dir=$(mktemp -d "$workdir/run.XXXXXX")

# Files this script may create in the workdir; --clean deletes only these
# (never `rm -rf` on a user-supplied directory).
generated=()

cleanup() {
    rm -rf -- "$run_dir"
    if ((clean)); then
        local f
        for f in "${generated[@]}"; do
            rm -f -- "$f" "$f.stamp" "$f.tmp"
        done
        rm -f -- large.spec.json small.spec.json tiny.spec.json
        rmdir -- "$workdir" 2>/dev/null || log "note: $workdir not removed (not empty)"
    fi
}
trap cleanup EXIT

# --- image generation ------------------------------------------------------

# Spec of the "few large files" image: three files totalling --big-gb GiB in
# layer 1, one of them deleted again by a whiteout in layer 2.
python3 - "$big_gb" >large.spec.json <<'EOF'
import json, sys
total = int(float(sys.argv[1]) * (1 << 30))
a, b = total // 2, total // 3
json.dump({"tag": "bench/large:latest", "layers": [
    {"created_by": "ADD rootfs.tar /", "entries": [
        {"path": "etc/os-release", "content": "ID=bench\nVERSION_ID=1\n"},
        {"path": "etc/passwd", "content": "root:x:0:0:root:/root:/bin/sh\n"},
        {"path": "usr/bin/app", "size": 2 << 20, "seed": 1, "mode": "0755"},
        {"path": "usr/lib/libapp.so.1", "size": 512 << 10, "seed": 2},
        {"path": "usr/lib/libapp.so", "type": "symlink", "target": "libapp.so.1"},
    ]},
    {"created_by": "COPY data/ /opt/data/", "entries": [
        {"path": "opt/data/part-a.bin", "size": a, "seed": 101},
        {"path": "opt/data/part-b.bin", "size": b, "seed": 102},
        {"path": "opt/data/part-c.bin", "size": total - a - b, "seed": 103},
    ]},
    {"created_by": "RUN rm /opt/data/part-b.bin && echo ok > /etc/ready", "entries": [
        {"path": "opt/data/.wh.part-b.bin", "type": "whiteout"},
        {"path": "etc/ready", "content": "ok\n"},
    ]},
]}, sys.stdout, indent=1)
EOF

many_files_spec bench/small:latest "$small_count" 100 4000 >small.spec.json

generate large.spec.json large-docker.tar --format docker-legacy
generate large.spec.json large-oci-gzip.tar --format oci-archive --layer-compression gzip --gzip-level 1
generate small.spec.json small-docker.tar --format docker-legacy
generate small.spec.json small-oci-gzip.tar --format oci-archive --layer-compression gzip --gzip-level 1

# --- measurement -----------------------------------------------------------

# measure CMD...: run CMD under /usr/bin/time; sets m_secs (wall seconds)
# and m_rss (peak RSS in KiB).  For a `bash -c` pipeline the kernel reports
# the largest RSS of any process in it, not the sum.
measure() {
    local rc=0
    /usr/bin/time -f '%e %M' -o "$run_dir/time" "$@" >/dev/null 2>"$run_dir/stderr" || rc=$?
    if ((rc != 0)); then
        log "bench/run.sh: error: command failed with exit status $rc:"
        log "  $(printf '%q ' "$@")"
        tail -n 20 -- "$run_dir/stderr" >&2
        exit 1
    fi
    # On failure GNU time writes an extra line first; the figures are last.
    read -r m_secs m_rss < <(tail -n 1 -- "$run_dir/time")
}

rows=()

# bench IMAGE FORMAT ARCHIVE BASELINE TARGET: imgsmith against BASELINE,
# one of "tar -t" and "gzip -dc" (each layer listed or decompressed by the
# standard tool), "igzip -dc" (ISA-L's decompressor, one core) and
# "previous" (--previous, another imgsmith binary: a before/after pair).
bench() {
    local image=$1 format=$2 archive=$3 baseline_name=$4 target=$5
    local members_out
    local -a members imgsmith_cmd baseline_cmd
    members_out=$(layer_members "$archive" "$format")
    mapfile -t members <<<"$members_out"

    imgsmith_cmd=("$imgsmith" analyze "$archive" --format json -o /dev/null --quiet)
    # The baselines are the cheapest way to read every layer with standard
    # tools: list each layer tar, or decompress each gzip blob.  The loop
    # gets the archive and member names as arguments, so nothing is
    # re-parsed by the inner shell.
    # shellcheck disable=SC2016
    case "$baseline_name" in
        "tar -t") baseline_cmd=(bash -c 'set -eo pipefail; a=$1; shift
            for m; do tar -xOf "$a" "$m" | tar -t >/dev/null; done' baseline "$archive" "${members[@]}") ;;
        "gzip -dc") baseline_cmd=(bash -c 'set -eo pipefail; a=$1; shift
            for m; do tar -xOf "$a" "$m" | gzip -dc >/dev/null; done' baseline "$archive" "${members[@]}") ;;
        "igzip -dc") baseline_cmd=(bash -c 'set -eo pipefail; a=$1; shift
            for m; do tar -xOf "$a" "$m" | igzip -dc -T 1 >/dev/null; done' baseline "$archive" "${members[@]}") ;;
        previous) baseline_cmd=("$previous" analyze "$archive" --format json -o /dev/null --quiet) ;;
        *) die "unknown baseline $baseline_name" ;;
    esac

    log "timing $archive (${#members[@]} layers): warm-up, then best of 3"
    # Warm-up: the baseline reads the whole archive, so afterwards the page
    # cache is warm for both contenders.
    measure "${baseline_cmd[@]}"
    measure "${imgsmith_cmd[@]}"

    local best_i="" best_b="" rss_i=0 rss_b=0 _
    for _ in 1 2 3; do
        # Interleaved so that drift in machine load hits both alike.
        measure "${imgsmith_cmd[@]}"
        best_i=$(awk -v a="$m_secs" -v b="${best_i:-$m_secs}" 'BEGIN { print (a < b ? a : b) }')
        if ((m_rss > rss_i)); then rss_i=$m_rss; fi
        measure "${baseline_cmd[@]}"
        best_b=$(awk -v a="$m_secs" -v b="${best_b:-$m_secs}" 'BEGIN { print (a < b ? a : b) }')
        if ((m_rss > rss_b)); then rss_b=$m_rss; fi
    done

    add_row "$image" "$format" "$best_i" "$baseline_name" "$best_b" "$rss_i" "$rss_b" "$target"
}

# add_row IMAGE FORMAT IMGSMITH_S BASELINE BASELINE_S IMGSMITH_KIB BASELINE_KIB TARGET
add_row() {
    rows+=("$(awk -v image="$1" -v format="$2" -v ti="$3" -v bn="$4" \
        -v tb="$5" -v ri="$6" -v rb="$7" -v target="$8" 'BEGIN {
            if (tb > 0) { ratio = sprintf("%.3f", ti / tb); result = (ti / tb <= target) ? "PASS" : "FAIL" }
            else { ratio = "n/a"; result = "n/a" }   # baseline below the 10 ms resolution
            printf "%-6s %-20s %9.2f  %-9s %9.2f  %7s  %9.1f  %9.1f  %7s  %s\n",
                image, format, ti, bn, tb, ratio, ri / 1024, rb / 1024, "<= " target, result
        }')")
}

# bench_umoci IMAGE ARCHIVE TARGET: imgsmith against what peers do to learn
# the same things: `umoci unpack` of the same OCI image, then a walk of the
# bundle reading every file's size (container-diff's method). Each run
# unpacks into a fresh bundle, removed outside the timing; best of 2, since
# the unpack takes tens of seconds.
bench_umoci() {
    local image=$1 archive=$2 target=$3
    local layout="$run_dir/layout-$image" bundle="$run_dir/bundle-$image" tag
    mkdir -p "$layout"
    tar -xf "$archive" -C "$layout"
    tag=$(umoci ls --layout "$layout" | head -n 1)
    local -a imgsmith_cmd=("$imgsmith" analyze "$archive" --format json -o /dev/null --quiet)
    # shellcheck disable=SC2016
    local -a baseline_cmd=(bash -c 'set -eo pipefail; umoci unpack --image "$1:$2" "$3" >/dev/null
        find "$3/rootfs" -xdev -printf "%s\n" >/dev/null' umoci "$layout" "$tag" "$bundle")
    log "timing $archive against umoci unpack + a walk: best of 2"
    measure "${imgsmith_cmd[@]}"
    local best_i="" best_b="" rss_i=0 rss_b=0 _
    for _ in 1 2; do
        measure "${imgsmith_cmd[@]}"
        best_i=$(awk -v a="$m_secs" -v b="${best_i:-$m_secs}" 'BEGIN { print (a < b ? a : b) }')
        if ((m_rss > rss_i)); then rss_i=$m_rss; fi
        rm -rf -- "$bundle"
        measure "${baseline_cmd[@]}"
        best_b=$(awk -v a="$m_secs" -v b="${best_b:-$m_secs}" 'BEGIN { print (a < b ? a : b) }')
        if ((m_rss > rss_b)); then rss_b=$m_rss; fi
        rm -rf -- "$bundle"
    done
    rm -rf -- "$layout"
    add_row "$image" "oci-archive+gzip" "$best_i" "umoci+walk" "$best_b" "$rss_i" "$rss_b" "$target"
}

bench large docker-legacy large-docker.tar "tar -t" 0.05
bench small docker-legacy small-docker.tar "tar -t" 0.25
bench large oci-archive+gzip large-oci-gzip.tar "gzip -dc" 0.3
bench small oci-archive+gzip small-oci-gzip.tar "gzip -dc" 0.3
if command -v igzip >/dev/null; then
    bench large oci-archive+gzip large-oci-gzip.tar "igzip -dc" 1.1
    bench small oci-archive+gzip small-oci-gzip.tar "igzip -dc" 1.1
else
    log "note: no igzip (Debian's isal package): the igzip rows are left out"
fi
if command -v umoci >/dev/null; then
    bench_umoci large large-oci-gzip.tar 0.05
    bench_umoci small small-oci-gzip.tar 0.05
else
    log "note: no umoci (Debian's umoci package): the umoci rows are left out"
fi
if [[ -n "$previous" ]]; then
    for pair in "large docker-legacy large-docker.tar" "small docker-legacy small-docker.tar" \
                "large oci-archive+gzip large-oci-gzip.tar" "small oci-archive+gzip small-oci-gzip.tar"; do
        read -r image format archive <<<"$pair"
        bench "$image" "$format" "$archive" previous 1.0
    done
fi

# --- start-up ---------------------------------------------------------------

# The cost of starting: `imgsmith --version`, and the analysis of a
# one-layer image of 10 files, against /bin/true started the same way, the
# runs interleaved in rounds; the figure is the milliseconds over /bin/true.
python3 - >tiny.spec.json <<'EOF'
import json, sys
json.dump({"tag": "bench/tiny:latest", "layers": [{"created_by": "ADD rootfs.tar /", "entries": [
    {"path": "etc/file-%d" % i, "content": "line %d\n" % i} for i in range(10)]}]}, sys.stdout)
EOF
generate tiny.spec.json tiny-docker.tar --format docker-legacy

start_rows=()
# start_ms CMD...: mean milliseconds of 40 runs of CMD
start_ms() {
    local t0 t1 i
    t0=$(date +%s%N)
    for ((i = 0; i < 40; i++)); do "$@" >/dev/null 2>&1 || die "failed: $*"; done
    t1=$(date +%s%N)
    awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 40 / 1e6 }'
}
# bench_start NAME BINARY ARGS...: BINARY ARGS against /bin/true, best of 5 rounds each.
bench_start() {
    local name=$1 bin=$2 best_i="" best_t="" ms _
    shift 2
    start_ms "$bin" "$@" >/dev/null  # warm the page cache
    for _ in 1 2 3 4 5; do
        ms=$(start_ms "$bin" "$@")
        best_i=$(awk -v a="$ms" -v b="${best_i:-$ms}" 'BEGIN { print (a < b ? a : b) }')
        ms=$(start_ms /bin/true)
        best_t=$(awk -v a="$ms" -v b="${best_t:-$ms}" 'BEGIN { print (a < b ? a : b) }')
    done
    start_rows+=("$(awk -v n="$name" -v i="$best_i" -v t="$best_t" 'BEGIN {
        printf "%-34s %9.2f  %9.2f  %8.2f  %-10s %s\n", n, i, t, i - t, "<= 3 ms", (i - t <= 3 ? "PASS" : "FAIL") }')")
}
log "timing start-up: --version and a one-layer 10-file image, against /bin/true"
bench_start "imgsmith --version" "$imgsmith" --version
bench_start "imgsmith analyze (1 layer, 10 files)" "$imgsmith" analyze tiny-docker.tar --format json -o /dev/null --quiet
if [[ -n "$previous" ]]; then
    bench_start "previous --version" "$previous" --version
    bench_start "previous analyze (1 layer, 10 files)" "$previous" analyze tiny-docker.tar --format json -o /dev/null --quiet
fi

# --- report ----------------------------------------------------------------

cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
reproduce=("$script_dir/run.sh" --imgsmith "$imgsmith" --workdir "$workdir"
    --big-gb "$big_gb" --small-count "$small_count")
if [[ -n "$previous" ]]; then reproduce+=(--previous "$previous"); fi
if ((clean)); then reproduce+=(--clean); fi

echo "machine:   $(nproc) CPUs, ${cpu_model:-unknown CPU model}"
echo "images:    few large files = $big_gb GiB, many small files = $small_count files (in $workdir)"
echo "timing:    best of 3 after one warm-up; wall seconds and peak RSS from /usr/bin/time"
echo "imgsmith:  $("$imgsmith" --version)"
if [[ -n "$previous" ]]; then echo "previous:  $("$previous" --version) ($previous)"; fi
echo "reproduce: $(printf '%q ' "${reproduce[@]}")"
echo
printf '%-6s %-20s %9s  %-9s %9s  %7s  %9s  %9s  %7s  %s\n' \
    image format imgsmith_s baseline baseline_s ratio imgsm_MiB base_MiB target result
for row in "${rows[@]}"; do
    echo "$row"
done
echo
printf '%-34s %9s  %9s  %8s  %-10s %s\n' start-up ms "/bin/true" over target result
for row in "${start_rows[@]}"; do
    echo "$row"
done
