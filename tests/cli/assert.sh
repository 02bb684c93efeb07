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
json_field() {  # json_field FILE EXPR: a Python expression over the document `d`
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null || echo "<no $2 in $1>"
}
same() {  # same NAME EXPR FILE_A FILE_B: the expression is present and equal in both
  local a b
  a=$(json_field "$3" "$2")
  b=$(json_field "$4" "$2")
  check "$1 ($a)" test -n "$a" -a "${a#<no }" = "$a" -a "$a" = "$b"
}
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
}
