#!/usr/bin/env bash
# What a one-line change in a header costs to rebuild, before and after a
# revision, side by side on this machine: each revision is checked out in a
# worktree and built in full, then one comment line is added to the header
# and the rebuild is timed and its compiled objects counted. The figure to
# read is the ratio of the two rebuilds.
#
# Usage: bench/rebuild.sh [--before REV] [--after REV] [--header NAME] [--workdir DIR] [--jobs N]
#   --before  the revision to compare against (default 67ca0e1, the last one
#             with every header in one include/imgsmith/)
#   --after   the revision measured (default HEAD)
#   --header  the header's file name, found in each revision (default merged_tree.hpp)
#   --workdir where the worktrees and builds go (default /tmp/imgsmith-rebuild)
#   --jobs    parallel compile jobs (default: the number of cores)
# Exit status: 0 with the table; 2 for a bad option or a header not found.
set -euo pipefail
cd "$(dirname "$0")/.."
before=67ca0e1 after=HEAD header=merged_tree.hpp workdir=/tmp/imgsmith-rebuild jobs=$(nproc)
while (($#)); do
  case "$1" in
    --before) before=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --header) header=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "rebuild.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

mkdir -p "$workdir"
measure() {  # measure REV: prints "objects seconds"
  local rev tree path start end objects
  rev=$(git rev-parse --short "$1^{commit}") || { echo "rebuild.sh: no revision '$1'" >&2; return 2; }
  tree="$workdir/$rev"
  [ -d "$tree" ] || git worktree add -q --detach "$tree" "$rev"
  path=$(cd "$tree" && git ls-files "*/$header" | head -1)
  [ -n "$path" ] || { echo "rebuild.sh: $rev has no $header" >&2; return 2; }
  cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  echo "rebuild.sh: building $rev in full (once)" >&2
  cmake --build "$tree/build" -j"$jobs" >"$tree/full-build.log" 2>&1 ||
    { tail -20 "$tree/full-build.log" >&2; echo "rebuild.sh: $rev does not build" >&2; return 2; }
  echo "// a one-line change" >>"$tree/$path"
  start=$(date +%s.%N)
  objects=$(cmake --build "$tree/build" -j"$jobs" 2>&1 | grep -c "Building CXX object" || true)
  end=$(date +%s.%N)
  (cd "$tree" && git checkout -q -- "$path")
  echo "$objects $(echo "$end - $start" | bc)"
}
result=$(measure "$before") || exit 2
read -r before_objects before_seconds <<<"$result"
result=$(measure "$after") || exit 2
read -r after_objects after_seconds <<<"$result"
printf '%-10s %8s %10s\n' revision objects seconds
printf '%-10s %8s %10.1f\n' "$(git rev-parse --short "$before")" "$before_objects" "$before_seconds" \
  "$(git rev-parse --short "$after")" "$after_objects" "$after_seconds"
printf 'a one-line change in %s: %s of the objects, %.2fx the time of %s\n' "$header" \
  "$after_objects/$before_objects" "$(echo "$after_seconds / $before_seconds" | bc -l)" "$before"
echo "the worktrees stay in $workdir (git worktree remove to drop them)"
