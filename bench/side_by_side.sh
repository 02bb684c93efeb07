# Shared by the benchmarks that time `imgsmith analyze` with a feature and
# without it (sourced, not run). The caller sets `imgsmith`.

# One sample is one run, timed alone, in seconds.
time_run() {
  local start end
  start=$(date +%s%N)
  "$imgsmith" analyze "$@" -q --format json -o /dev/null
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.6f\n", ns / 1e9 }'
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# side_by_side IMAGE RUNS FLAG: RUNS runs of IMAGE with FLAG (the feature
# off) and as many without it, alternating run by run (which goes first
# alternates too) so that drift in the machine's speed falls on both alike;
# prints a row: the medians, their ratio, and the verdict against 1.05.
side_by_side() {
  local image=$1 runs=$2 flag=$3 i a b ratio verdict with=() without=()
  "$imgsmith" analyze "$image" -q --format json -o /dev/null  # warm the page cache
  for i in $(seq "$runs"); do
    if ((i % 2)); then
      without+=("$(time_run "$image" "$flag")")
      with+=("$(time_run "$image")")
    else
      with+=("$(time_run "$image")")
      without+=("$(time_run "$image" "$flag")")
    fi
  done
  a=$(median "${without[@]}")
  b=$(median "${with[@]}")
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')
  verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.05) ? "PASS" : "FAIL" }')
  printf '%-34s %8s %11.4fs %11.4fs %8s  %s\n' "$image ($(du -h "$image" | cut -f1))" "$runs" "$a" "$b" \
    "$ratio" "$verdict"
}
