#!/usr/bin/env bash
# Fails when a C/C++/CUDA file of the repository differs from what
# clang-format (.clang-format) makes of it, naming the files; run by
# scripts/test.sh before the builds. `scripts/check_format.sh --fix` rewrites
# them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$format" ] || { echo "check_format: no clang-format (scripts/setup.sh installs clang-format-14)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.c' '*.cu')
if [ "${1:-}" = --fix ]; then
  "$format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "check_format: ${#bad[@]} file(s) differ from clang-format's layout: ${bad[*]}" >&2
  echo "check_format: run scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files as clang-format lays them out"
