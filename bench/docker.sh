#!/usr/bin/env bash
# Benchmark `imgsmith analyze docker://IMAGE` against `docker save` of the
# same image, on a Docker engine this script starts on its own data root.
#
# The image: a debootstrapped Debian base (tests/system/debootstrap_root.sh)
# and, built on it with BuildKit, --size-gb of incompressible model-like
# files plus 20,000 small files in a site-packages tree, and a layer that
# deletes and changes some of them (whiteouts, an opaque directory, a chmod).
# It is built once and kept in the data root.
#
# Timed side by side, interleaved, best of 3, page cache warm for all:
#   docker save   `docker save IMAGE > FILE` (the baseline: what the streamed
#                 path has to wait for)
#   in place      imgsmith analyze docker://IMAGE (--docker-read auto: the
#                 daemon's overlay2 storage, through tar-split)
#   streamed      imgsmith analyze docker://IMAGE --docker-read save
# and the in-place report is checked to say it was read from the daemon's
# storage (auto falls back to docker save when it cannot be) and to be the
# streamed one's, but for how it was read. Target: in place <= 0.1x docker save.
#
# The exit status is 0 when everything ran, met or not; non-zero when a
# command failed, the in-place run was not read in place or the reports differ.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)

usage() {
    cat <<EOF
Usage: sudo bench/docker.sh [options]

  --imgsmith PATH   imgsmith binary (default: build/imgsmith in the repository)
  --workdir DIR     Docker data root and debootstrap cache, kept between runs
                    (default: .imgsmith-cache in the repository, which the tests use too)
  --size-gb N       GB of large files in the image (default: 1.7)
  -h, --help        show this help

Needs root (it starts dockerd) and Debian's docker.io.
EOF
}

log() { printf '%s\n' "$*" >&2; }
die() { log "bench/docker.sh: error: $*"; exit 1; }

imgsmith="$repo_root/build/imgsmith"
workdir="$repo_root/.imgsmith-cache"
size_gb=1.7
while (($#)); do
    case "$1" in
        --imgsmith) (($# >= 2)) || die "$1 needs a value"; imgsmith=$2; shift 2 ;;
        --workdir) (($# >= 2)) || die "$1 needs a value"; workdir=$2; shift 2 ;;
        --size-gb) (($# >= 2)) || die "$1 needs a value"; size_gb=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[[ "$size_gb" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--size-gb must be a positive number, got '$size_gb'"
[[ "$imgsmith" == /* ]] || imgsmith="$PWD/$imgsmith"
[[ "$workdir" == /* ]] || workdir="$PWD/$workdir"
[[ -x "$imgsmith" ]] || die "imgsmith binary not found: $imgsmith (build it first, or pass --imgsmith)"
(( $(id -u) == 0 )) || die "needs root: it starts dockerd"
command -v dockerd >/dev/null && [[ -x /usr/bin/docker ]] || die "Debian's docker.io is not installed"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (Debian: apt-get install time)"
docker=/usr/bin/docker

root_tar=$("$repo_root/tests/system/debootstrap_root.sh" "$workdir/debootstrap") || die "no Debian root could be made"
command -v ip >/dev/null || die "ip (iproute2) is not installed"
# shellcheck source=../tests/system/dockerd.sh
source "$repo_root/tests/system/dockerd.sh"
run=$(mktemp -d /tmp/imgsmith-bench-dockerd.XXXXXX)
stop() {
    stop_dockerd
    rm -rf "$run"
}
trap stop EXIT
start_dockerd "$workdir/docker" "$run" || { tail -5 "$run/log" >&2; die "dockerd did not start"; }

image="imgsmith-bench/docker:${size_gb}g"
if ! "$docker" image inspect "$image" >/dev/null 2>&1; then
    log "building $image (once)"
    "$docker" image inspect imgsmith-test/bookworm:minbase >/dev/null 2>&1 ||
        "$docker" import "$root_tar" imgsmith-test/bookworm:minbase >/dev/null
    mkdir -p "$run/ctx"
    cat >"$run/ctx/Dockerfile" <<EOF
FROM imgsmith-test/bookworm:minbase
RUN mkdir -p /models /opt/venv/lib/python3.11/site-packages \\
 && for i in \$(seq 1 17); do head -c \$(awk 'BEGIN { printf "%d", $size_gb * 1e9 / 17 }') /dev/urandom > /models/shard-\$i.bin; done \\
 && cd /opt/venv/lib/python3.11/site-packages && for d in \$(seq 1 200); do mkdir pkg\$d; \\
    for f in \$(seq 1 100); do head -c \$((d * 13 + f * 7)) /dev/urandom > pkg\$d/m\$f.py; done; done
RUN rm -rf /opt/venv/lib/python3.11/site-packages/pkg1 /usr/share/doc && mkdir /opt/venv/lib/python3.11/site-packages/pkg1 \\
 && echo new > /opt/venv/lib/python3.11/site-packages/pkg1/__init__.py && chmod 600 /models/shard-17.bin
EOF
    DOCKER_BUILDKIT=1 "$docker" build -q --network none -t "$image" "$run/ctx" >"$run/build.log" 2>&1 ||
        { tail -20 "$run/build.log" >&2; die "docker build failed"; }
fi
bytes=$("$docker" image inspect -f '{{.Size}}' "$image")

# measure NAME CMD...: wall seconds into t_NAME (the best so far).
declare -A best
measure() {
    local name=$1; shift
    /usr/bin/time -f '%e' -o "$run/time" "$@" >/dev/null 2>"$run/err" ||
        { tail -5 "$run/err" >&2; die "failed: $*"; }
    local s; s=$(tail -n 1 "$run/time")
    if [[ -z "${best[$name]:-}" ]] || awk -v a="$s" -v b="${best[$name]}" 'BEGIN { exit !(a < b) }'; then
        best[$name]=$s
    fi
}
save_cmd=(bash -c '"$1" save "$2" > "$3"' save "$docker" "$image" "$run/save.tar")
inplace_cmd=("$imgsmith" analyze "docker://$image" --format json -o "$run/inplace.json" -q)
walk_cmd=("$imgsmith" analyze "docker://$image" --docker-read walk --format json -o /dev/null -q)
streamed_cmd=("$imgsmith" analyze "docker://$image" --docker-read save --format json -o "$run/streamed.json" -q)

log "timing $image ($bytes bytes): warm-up, then best of 3, interleaved"
measure warmup "${save_cmd[@]}"; rm -f "$run/save.tar"
measure warmup "${inplace_cmd[@]}"
for _ in 1 2 3; do
    measure save "${save_cmd[@]}"; rm -f "$run/save.tar"
    measure inplace "${inplace_cmd[@]}"
    measure walk "${walk_cmd[@]}"
    measure streamed "${streamed_cmd[@]}"
done

# auto falls back to docker save when the storage cannot be read: a time
# from such a run is no in-place figure.
via=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["io"]["read_via"])' "$run/inplace.json")
[[ "$via" == "docker storage ("* ]] ||
    die "analyze docker:// read the image via '$via', not in place from the daemon's storage (it fell back to docker save; run it with --docker-read storage to see why)"
python3 "$repo_root/tests/system/same_report.py" "$run/inplace.json" "$run/streamed.json" >&2 ||
    die "the in-place and streamed reports differ"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
r_inplace=$(ratio "${best[inplace]}" "${best[save]}")
r_walk=$(ratio "${best[walk]}" "${best[save]}")
r_streamed=$(ratio "${best[streamed]}" "${best[save]}")
verdict=$(awk -v r="$r_inplace" 'BEGIN { print (r <= 0.1 ? "PASS" : "FAIL") }')
printf '\nimgsmith analyze docker://%s  (%s bytes, %s)\n' "$image" "$bytes" "$(nproc) cores"
printf '%-42s %9s  %s\n' "command" "best s" "x docker save"
printf '%-42s %9s  %s\n' "docker save IMAGE > FILE" "${best[save]}" "1.000"
printf '%-42s %9s  %s  (target <= 0.1: %s)\n' "analyze (auto: $via)" "${best[inplace]}" "$r_inplace" "$verdict"
printf '%-42s %9s  %s\n' "analyze --docker-read walk" "${best[walk]}" "$r_walk"
printf '%-42s %9s  %s\n' "analyze --docker-read save" "${best[streamed]}" "$r_streamed"
printf 'reports identical but for io and source: yes\n'
printf 'reproduce: sudo %s --imgsmith %s --workdir %s --size-gb %s\n' "$script_dir/docker.sh" "$imgsmith" "$workdir" "$size_gb"
