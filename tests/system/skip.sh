# How a test says it cannot run here (sourced, with the test's name:
# `source skip.sh NAME`). What did not run is never reported as passed:
# elsewhere the test exits 77, which ctest shows as skipped; in CI (CI=true),
# where scripts/setup.sh has installed every part, it is a failure.
#
#   skip REASON        the whole test cannot run: exit now
#   skip_part REASON   one part cannot run and the rest goes on: in CI a
#                      failure (counted in $fail), elsewhere noted for finish
#   finish             the test's exit status: 1 after a failure, 77 when a
#                      part was skipped, else 0
skip_as=${1:?skip.sh needs the test name}
skipped_parts=""

skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL: $skip_as cannot run in CI: $*"; exit 1; fi
  echo "$skip_as: SKIPPED: $*"
  exit 77
}

skip_part() {
  if [ "${CI:-}" = true ]; then
    echo "FAIL: $skip_as: a part cannot run in CI: $*"
    fail=$((${fail:-0} + 1))
    return 0
  fi
  echo "$skip_as: SKIPPED in part: $*"
  skipped_parts+="${skipped_parts:+; }$*"
}

finish() {
  [ "${fail:-0}" = 0 ] || exit 1
  if [ -n "$skipped_parts" ]; then
    echo "$skip_as: what ran passed, but not all of it ran ($skipped_parts)"
    exit 77
  fi
  exit 0
}
