#!/usr/bin/env bash
# Measure the peak memory of `imgsmith analyze` on an image of millions of
# tar entries.
#
# Generates a docker-legacy archive with examples/make_image.py (by default
# 3,500,000 small files in layer 0; layer 1 overwrites every 100th file from
# index 1001 on and whites out subdirectory d0000, so there is waste, and
# dive's inefficient list is long; layer 2 adds two files), then runs
# imgsmith under /usr/bin/time -v, once for each report format, and prints
# the peak RSS against the limit with PASS/FAIL, the number of tar entries
# imgsmith read, and its wall time beside that of `tar -t` listing the same
# layers.
#
# The exit status is 0 when every command ran, whether or not the limit was
# met (the output is a report), unless --strict is given. Any failing
# command makes it non-zero.

set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)
make_image="$repo_root/examples/make_image.py"
# shellcheck source=bench/lib.sh
source "$script_dir/lib.sh"

usage() {
    cat <<EOF
Usage: bench/memory.sh [options]

  --imgsmith PATH     imgsmith binary (default: build/imgsmith in the repository)
  --workdir DIR       where the image is generated and cached (default: /tmp/imgsmith-memory)
  --count N           files in the first layer, >= 2000 (default: 3500000; about 1 KiB
                      of archive each, so the default image is about 3.5 GB)
  --limit-mib N       peak RSS allowed, in MiB (default: 256)
  --runs N            timed runs of each command; the best wall time and the largest
                      peak RSS are reported (default: 1)
  --strict            exit with status 1 when a peak RSS is over the limit
  --keep              keep the generated image for the next run (the default)
  --clean             delete the generated image and the workdir at the end
  -h, --help          show this help

The image is only regenerated when its spec or examples/make_image.py changed.
Peak RSS is /usr/bin/time's "Maximum resident set size", in MiB (1 MiB = 1024 KiB).
EOF
}

log() { printf '%s\n' "$*" >&2; }
die() { log "bench/memory.sh: error: $*"; exit 1; }
usage_error() { log "bench/memory.sh: error: $*"; usage >&2; exit 2; }

imgsmith="$repo_root/build/imgsmith"
workdir=/tmp/imgsmith-memory
count=3500000
limit_mib=256
runs=1
strict=0
clean=0

while (($#)); do
    case "$1" in
        --imgsmith|--workdir|--count|--limit-mib|--runs)
            (($# >= 2)) || usage_error "$1 needs a value"
            opt=$1 val=$2
            shift 2
            ;;
        --imgsmith=*|--workdir=*|--count=*|--limit-mib=*|--runs=*)
            opt=${1%%=*} val=${1#*=}
            shift
            ;;
        --strict) strict=1; shift; continue ;;
        --keep) clean=0; shift; continue ;;
        --clean) clean=1; shift; continue ;;
        -h|--help) usage; exit 0 ;;
        *) usage_error "unknown argument: $1" ;;
    esac
    case "$opt" in
        --imgsmith) imgsmith=$val ;;
        --workdir) workdir=$val ;;
        --count) count=$val ;;
        --limit-mib) limit_mib=$val ;;
        --runs) runs=$val ;;
    esac
done

# Layer 1 whites out subdirectory d0000 (files 1-1000) and overwrites files
# from index 1001 on, so the image needs at least two subdirectories.
if ! [[ "$count" =~ ^[0-9]+$ ]] || ((count < 2000)); then
    usage_error "--count must be an integer >= 2000, got '$count'"
fi
if ! [[ "$limit_mib" =~ ^[0-9]+$ ]] || ((limit_mib == 0)); then
    usage_error "--limit-mib must be a positive integer, got '$limit_mib'"
fi
if ! [[ "$runs" =~ ^[0-9]+$ ]] || ((runs == 0)); then
    usage_error "--runs must be a positive integer, got '$runs'"
fi
[[ -n "$workdir" ]] || usage_error "--workdir must not be empty"

# Make paths absolute: the script works inside the workdir.
[[ "$imgsmith" == /* ]] || imgsmith="$PWD/$imgsmith"
[[ "$workdir" == /* ]] || workdir="$PWD/$workdir"

# --- preflight -------------------------------------------------------------

[[ -f "$imgsmith" && -x "$imgsmith" ]] \
    || die "imgsmith binary not found or not executable: $imgsmith (build it first, or pass --imgsmith PATH)"
[[ -f "$make_image" ]] || die "image generator not found: $make_image"
for tool in tar python3 awk sha256sum; do
    command -v "$tool" >/dev/null || die "required tool not found: $tool"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (Debian: apt-get install time)"
[[ "$(tar --version 2>/dev/null)" == *"GNU tar"* ]] || die "tar is not GNU tar"

mkdir -p "$workdir"
cd "$workdir"
run_dir=$(mktemp -d "$workdir/run.XXXXXX")
image=memory-docker.tar

cleanup() {
    rm -rf -- "$run_dir"
    if ((clean)); then
        # Only what this script made: never `rm -rf` on a user-supplied directory.
        rm -f -- "$image" "$image.stamp" "$image.tmp" memory.spec.json
        rmdir -- "$workdir" 2>/dev/null || log "note: $workdir not removed (not empty)"
    fi
}
trap cleanup EXIT

# --- image generation ------------------------------------------------------

generated=()
many_files_spec bench/memory:latest "$count" 1 200 >memory.spec.json
# One tar block of data at most per file: the archive stays near 1 KiB a file.
generate memory.spec.json "$image" --format docker-legacy -q

# --- measurement -----------------------------------------------------------

layers_out=$(layer_members "$image" docker-legacy)
mapfile -t layers <<<"$layers_out"

# measure NAME CMD...: run CMD under /usr/bin/time -v; sets m_secs (wall
# seconds) and m_kib (peak RSS in KiB). For a `bash -c` pipeline the kernel
# reports the largest RSS of any process in it, not the sum.
measure() {
    local name=$1 rc=0
    shift
    /usr/bin/time -v -o "$run_dir/$name.time" "$@" >/dev/null 2>"$run_dir/$name.stderr" || rc=$?
    if ((rc != 0)); then
        log "bench/memory.sh: error: command failed with exit status $rc:"
        log "  $(printf '%q ' "$@")"
        tail -n 20 -- "$run_dir/$name.stderr" >&2
        exit 1
    fi
    m_kib=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$run_dir/$name.time")
    m_secs=$(awk -F': ' '/Elapsed \(wall clock\) time/ {
        n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$run_dir/$name.time")
}

# The cheapest way to read every layer's headers with standard tools.
# shellcheck disable=SC2016
baseline_cmd=(bash -c 'set -eo pipefail; a=$1; shift
    for m; do tar -xOf "$a" "$m" | tar -t >/dev/null; done' baseline "$image" "${layers[@]}")

log "warming the page cache (tar -t over ${#layers[@]} layers)"
measure warmup "${baseline_cmd[@]}"

best_tar=""
declare -A best_secs peak_kib
for ((run = 1; run <= runs; run++)); do
    log "run $run/$runs: imgsmith --format json, imgsmith (text), tar -t"
    # Interleaved so that drift in machine load hits all alike.
    for format in json text; do
        # The JSON report is kept for its entry counts; the text one goes to /dev/null.
        if [[ "$format" == json ]]; then
            measure json "$imgsmith" analyze "$image" --format json -o "$run_dir/report.json" -q
        else
            measure text "$imgsmith" analyze "$image" -o /dev/null -q
        fi
        best_secs[$format]=$(awk -v a="$m_secs" -v b="${best_secs[$format]:-$m_secs}" 'BEGIN { print (a < b ? a : b) }')
        if ((m_kib > ${peak_kib[$format]:-0})); then peak_kib[$format]=$m_kib; fi
    done
    measure tar "${baseline_cmd[@]}"
    best_tar=$(awk -v a="$m_secs" -v b="${best_tar:-$m_secs}" 'BEGIN { print (a < b ? a : b) }')
done

entries=$(python3 - "$run_dir/report.json" <<'EOF'
import json, sys
size = json.load(open(sys.argv[1]))["size"]
print(size["layer_entries"], size["final_entries"])
EOF
)
read -r layer_entries final_entries <<<"$entries"

# --- report ----------------------------------------------------------------

cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
reproduce=("$script_dir/memory.sh" --imgsmith "$imgsmith" --workdir "$workdir" --count "$count"
    --limit-mib "$limit_mib" --runs "$runs")
if ((strict)); then reproduce+=(--strict); fi
if ((clean)); then reproduce+=(--clean); fi

echo "machine:   $(nproc) CPUs, ${cpu_model:-unknown CPU model}"
echo "image:     $workdir/$image, $(du -h -- "$image" | cut -f1), ${#layers[@]} layers"
echo "entries:   $(printf "%'d" "$layer_entries") tar entries read, $(printf "%'d" "$final_entries") paths in the merged tree"
echo "timing:    best of $runs after one warm-up; wall seconds and peak RSS from /usr/bin/time -v"
echo "reproduce: $(printf '%q ' "${reproduce[@]}")"
echo
failed=0
printf '%-7s %12s %10s %10s  %-6s %11s %9s %7s\n' \
    format entries peak_MiB limit_MiB result imgsmith_s tar_t_s ratio
for format in json text; do
    row=$(awk -v f="$format" -v e="$layer_entries" -v k="${peak_kib[$format]}" \
        -v l="$limit_mib" -v ti="${best_secs[$format]}" -v tt="$best_tar" 'BEGIN {
            mib = k / 1024; result = (mib <= l) ? "PASS" : "FAIL"
            ratio = (tt > 0) ? sprintf("%.3f", ti / tt) : "n/a"   # tar below the 10 ms resolution
            printf "%-7s %12d %10.1f %10d  %-6s %11.2f %9.2f %7s\n", f, e, mib, l, result, ti, tt, ratio
        }')
    echo "$row"
    [[ "$row" == *" PASS "* ]] || failed=1
done

if ((strict && failed)); then exit 1; fi
exit 0
