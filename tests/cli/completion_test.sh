#!/usr/bin/env bash
# `imgsmith completion bash|zsh|fish` against the command line it completes:
#   - bash: the script is sourced and its function called as bash calls it
#     (COMP_WORDS, COMP_CWORD): commands, every long flag of each command's
#     --help, --format's values (a diff is offered only the formats diff
#     renders), --opt=value, CATEGORY= waiting for its size, paths for a
#     positional and for a FILE value;
#   - every value it offers is accepted by imgsmith: each format renders,
#     each finding id, GPU and precision is taken, each gen flavour and OS
#     writes a Dockerfile;
#   - fish: `complete -C` on the sourced script (a real fish); zsh: the
#     script parses (zsh -n) and defines _imgsmith under compinit.
# Usage: completion_test.sh IMGSMITH FIXTURES EXAMPLES_DIR
set -u
bin=$1
fixtures=$2
examples=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=assert.sh
source "$here/assert.sh"
# shellcheck source=../system/skip.sh
source "$here/../system/skip.sh" completion
fixture=$fixtures/test-docker-image.tar

expect "completion bash" 0 "$bin" completion bash
cp "$tmp/out" "$tmp/imgsmith.bash"
expect "completion of an unknown shell is refused" 2 "$bin" completion tcsh

# complete WORDS...: what bash offers for the last word (empty: a new word).
complete_bash() {
  # compopt only works inside a real completion: a function of that name
  # stands in for it and notes what the script asked for.
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); cd "$WORKDIR" || exit 1
    nospace=""; compopt() { [[ "$*" == *nospace* ]] && nospace=1; return 0; }
    _imgsmith; printf "%s\n" "${COMPREPLY[@]}"; [ -n "$nospace" ] && echo "<nospace>"' \
    complete "$tmp/imgsmith.bash" "$@"
}
export WORKDIR=$tmp/cwd
mkdir -p "$WORKDIR" && touch "$WORKDIR/image.tar" "$WORKDIR/report.json"

check "commands" test "$(complete_bash imgsmith "" | grep -v '^-' | sort | tr '\n' ' ')" = \
  "analyze completion diff gen probe slim "
check "'imgsmith analyze --fo' is --format" test "$(complete_bash imgsmith analyze --fo)" = "--format"
check "'imgsmith slim --no' is --no-squash" test "$(complete_bash imgsmith slim --no)" = "--no-squash"
for command in analyze diff gen; do
  offered=$(complete_bash imgsmith "$command" --)
  for flag in $("$bin" "$command" --help | grep -oE '^\s+(-[a-zA-Z],)?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+'); do
    check "$command: $flag is offered" grep -qx -- "$flag" <<<"$offered"
  done
done
formats=$("$bin" analyze --help | sed -n '/--format/,/^  -/p' | grep -oE '^\s{6,}[a-z][a-z-]* ' | tr -d ' ')
check "analyze --help lists formats" test -n "$formats"
check "analyze --format offers each format its help lists" \
  test "$(complete_bash imgsmith analyze --format "" | sort)" = "$(sort <<<"$formats")"
check "--format=j (split at = as bash does) offers json and junit" \
  test "$(complete_bash imgsmith analyze --format = j | sort | tr '\n' ' ')" = "json junit "
check "diff --format does not offer junit (no diff renderer)" \
  sh -c "! printf '%s\n' \"\$1\" | grep -qx junit" _ "$(complete_bash imgsmith diff --format "")"
check "--budget cu is cuda= and waits for the size" \
  test "$(complete_bash imgsmith analyze --budget cu | tr '\n' ' ')" = "cuda= <nospace> "
check "--deny offers devel-in-final" grep -qx devel-in-final <<<"$(complete_bash imgsmith analyze --deny "")"
check "a positional completes paths" test "$(complete_bash imgsmith analyze ima)" = "image.tar"
check "-o completes paths" test "$(complete_bash imgsmith analyze -o rep)" = "report.json"
check "a flag that takes no value is followed by flags again" \
  grep -qx -- "--format" <<<"$(complete_bash imgsmith analyze --hash --f)"

# Every value offered is one imgsmith accepts.
for format in $(complete_bash imgsmith analyze --format ""); do
  expect "analyze --format $format (offered) renders" 0 "$bin" analyze "$fixture" -q --format "$format" -o "$tmp/r"
done
for format in $(complete_bash imgsmith diff --format ""); do
  expect "diff --format $format (offered) renders" 0 "$bin" diff "$fixture" "$fixture" -q --format "$format" -o "$tmp/r"
done
for id in $(complete_bash imgsmith analyze --deny ""); do
  "$bin" analyze "$fixture" -q --deny "$id" -o /dev/null 2>"$tmp/err"
  status=$?
  check "--deny $id (offered) is taken (exit 0 or 1, got $status)" test "$status" -le 1
done
for category in $(complete_bash imgsmith analyze --budget "" | grep -v '<nospace>'); do
  expect "--budget ${category}1GB (offered) is taken" 0 "$bin" analyze "$fixture" -q --budget "${category}1GB" -o /dev/null
done
for gpu in $(complete_bash imgsmith analyze --fits ""); do
  expect "--fits $gpu (offered) is taken" 0 "$bin" analyze "$fixture" -q --fits "$gpu" -o /dev/null
done
for precision in $(complete_bash imgsmith analyze --precision ""); do
  expect "--precision $precision (offered) is taken" 0 "$bin" analyze "$fixture" -q --precision "$precision" -o /dev/null
done
for flavor in $(complete_bash imgsmith gen --flavor ""); do
  expect "gen --flavor $flavor (offered) writes a Dockerfile" 0 "$bin" gen "$examples/pytorch-api" --stdout --flavor "$flavor"
done
for os in $(complete_bash imgsmith gen --os ""); do
  expect "gen --os $os (offered) writes a Dockerfile" 0 "$bin" gen "$examples/pytorch-api" --stdout --os "$os" --cuda 12.6
done

# fish, for real.
if command -v fish >/dev/null; then
  "$bin" completion fish >"$tmp/imgsmith.fish"
  fish_offers() { fish -c "source $tmp/imgsmith.fish; complete -C '$1'" | cut -f1; }
  check "fish: 'imgsmith analyze --fo' is --format" grep -qx -- "--format" <<<"$(fish_offers 'imgsmith analyze --fo')"
  check "fish: 'imgsmith analyze --format ' offers html" grep -qx html <<<"$(fish_offers 'imgsmith analyze --format ')"
  check "fish: commands" grep -qx gen <<<"$(fish_offers 'imgsmith ')"
else
  skip_part "fish is not installed (scripts/setup.sh installs it)"
fi
# zsh: the script parses, and compinit takes it as imgsmith's completion.
if command -v zsh >/dev/null; then
  mkdir -p "$tmp/zfunc"
  "$bin" completion zsh >"$tmp/zfunc/_imgsmith"
  check "zsh: the script parses" zsh -n "$tmp/zfunc/_imgsmith"
  check "zsh: compinit binds _imgsmith to imgsmith" test "$(zsh -fc "fpath=($tmp/zfunc \$fpath);
    autoload -Uz compinit; compinit -u -d $tmp/zcompdump; print -r -- \${_comps[imgsmith]}")" = "_imgsmith"
else
  skip_part "zsh is not installed (scripts/setup.sh installs it)"
fi

echo "completion: $pass passed, $fail failed"
finish
