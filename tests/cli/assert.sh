# Shared by the CLI test scripts (sourced): a scratch folder $tmp, and the
# two assertions. Each command's stdout and stderr land in $tmp/out and
# $tmp/err for the checks that follow it.
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0
fail=0

expect() {  # expect NAME STATUS CMD...
  local name=$1 want=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" = "$want" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $name: exit $got, expected $want"
    sed 's/^/  stderr: /' "$tmp/err" | head -5
  fi
}
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
}
