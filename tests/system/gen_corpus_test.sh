#!/usr/bin/env bash
# gen's corpus (tests/gen-corpus), each project's Dockerfile built and run on
# a real Docker engine, started here on its own data root and socket and
# stopped by its PID. No index can be reached, so:
#   - every requirement is a stand-in wheel (standin_wheels.py: importable,
#     and servers that really listen) in a wheelhouse, installed by
#     `gen --wheelhouse` with pip --no-index;
#   - the base images are local stand-ins (--registry-mirror standin): Docker's
#     python image from Debian's Python (python_standin.sh), NVIDIA's CUDA
#     images from a Debian root and this machine's CUDA toolkit
#     (cuda_standins.sh), under each tag gen chose (cuda_standin_alias.sh);
#   - the stand-ins are Debian inside, so gen's OS table says Debian's package
#     versions (IMGSMITH_GEN_TABLES). Where a Dockerfile installs OS packages,
#     the build reaches Debian's mirror (--network host); every other build
#     has no network at all.
# Each image must build, run as the non-root user with a writable
# $HOME/.cache and read-only code, serve on its port or run as its CMD says,
# and hold no wheel, no .env, no build tree, no pip cache, no CUDA devel
# files, and no compiler unless gen put one there for Triton.
# The table of what was built and run is printed at the end.
# Usage: gen_corpus_test.sh IMGSMITH CACHE_DIR SOURCE_DIR
set -u
bin=$1
cache=$2
source_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
docker=/usr/bin/docker  # Debian's client: the one with BuildKit (docs/docker-engine.md)
corpus_dir="$source_dir/tests/gen-corpus"

# shellcheck source=skip.sh
source "$here/skip.sh" gen_corpus
[ "$(id -u)" -eq 0 ] || skip "dockerd needs root"
command -v dockerd >/dev/null && [ -x "$docker" ] || skip "docker.io is not installed (scripts/setup.sh installs it)"
command -v ip >/dev/null || skip "ip (iproute2) is not installed (scripts/setup.sh installs it)"
root_tar=$("$here/debootstrap_root.sh" "$cache/debootstrap") || skip "no Debian root could be made"
cuda_dir=$(readlink -f /usr/local/cuda 2>/dev/null || true)

# shellcheck source=../cli/assert.sh
source "$here/../cli/assert.sh"
# shellcheck source=dockerd.sh
source "$here/dockerd.sh"
start_test_dockerd "$cache/docker"

"$here/python_standin.sh" "$root_tar" || { echo "FAIL: the Python stand-in"; exit 1; }
cuda_release=13.0.0
have_cuda=""
if [ -x "$cuda_dir/bin/nvcc" ]; then
  "$here/cuda_standins.sh" standin "$root_tar" "$cuda_dir" "$cuda_release" && have_cuda=yes ||
    { echo "FAIL: the CUDA stand-ins"; fail=$((fail + 1)); }
else
  skip_part "the CUDA projects: no CUDA toolkit in /usr/local/cuda for the stand-ins"
fi

# gen's tables as the stand-ins make them true: Debian's Python and its
# package versions wherever gen would install Ubuntu's.
python3 "$here/standin_gen_tables.py" "$source_dir/data/cuda-images.json" "$tmp/tables"

# What the corpus holds that cannot be built here, and why; each is still
# checked by gen's own corpus test (expected.tsv).
declare -A not_here=(
  [torch-cuda-ext]="compiles against torch's C++ API: needs the real torch wheel"
  [poetry-torch]="installs Poetry itself from PyPI in the builder"
  [uv-torch-index]="copies uv from its image, which cannot be pulled"
  [team-policy]="its build-system needs setuptools>=68; Debian's wheel here is 66.1"
  [monorepo/services/worker]="its path dependency's build-system needs setuptools>=68; Debian's wheel here is 66.1"
)

# PROJECT [CONTEXT]: CPU Python, GPU Python, CUDA C++, a monorepo service.
projects=(
  sklearn-api gradio-demo streamlit-dash notebook xgb-batch flask-tf-cpu torch-cpu-index conda-env-pip offline-wheelhouse
  vllm-service hf-fastapi tf-keras-train onnx-api-117 onnx-api-120 cupy-fft jax-cuda12 torch-range-train whisper-apt
  "monorepo/services/api monorepo"
  nvcc-gemm cmake-cuda-min cmake-own-archs cmake-cudnn-nccl
)
table="$tmp/table"
printf 'project\tbase image\tbuilt\tran\tseconds (docker build, analyze)\n' >"$table"
shared=$tmp
mkdir -p "$shared/results"
# build_and_run ENTRY RESULTS: one project, in a subshell of its own (two
# run at a time: a build waits on the disk and the mirror as much as on a
# CPU): its scratch files in a folder of its own, its table row in
# RESULTS.row; the caller keeps its output and its pass/fail counts.
build_and_run() {
  local results=$2
  tmp="$results.tmp"
  mkdir -p "$tmp/corpus"
  pass=0 fail=0
  local entry=$1
  read -r project context <<<"$entry"
  local started=$SECONDS
  # Where a project's time goes: its docker build and imgsmith's analyze.
  local build_s=- analyze_s=-
  row() { printf '%s\t%s\t%s\t%s\t%s (%s, %s)\n' "$project" "$1" "$2" "$3" "$((SECONDS - started))" "$build_s" "$analyze_s" >"$results.row"; }
  # The project's row of expected.tsv: its base image and port.
  read -r base port < <(awk -F'\t' -v p="$project" -v c="${context:+context=$context}" \
    '$1 == p && ($2 == "-" || $2 == c || $2 == "wheelhouse=wheels") { print $4, $9; exit }' "$corpus_dir/expected.tsv")
  case "$base" in
    nvidia/*) [ -n "$have_cuda" ] || { row "$base" "no (no CUDA stand-ins)" no; return; } ;;
  esac
  # The checkout as a developer has it: also a .env, a stale build tree and
  # bytecode, which the image must not get.
  top=${context:-$project}
  rm -rf "${tmp:?}/corpus/$top"
  mkdir -p "$(dirname "$tmp/corpus/$top")"
  cp -r "$corpus_dir/$top" "$tmp/corpus/$top"
  dir="$tmp/corpus/$project"
  printf 'API_TOKEN=not-for-images\n' >"$dir/.env"
  mkdir -p "$dir/build/lib" "$dir/__pycache__" && printf 'junk' >"$dir/build/lib/stale.so"
  gen_args=(--registry-mirror standin)
  if [ -n "$(find "$tmp/corpus/$top" -name 'requirements*.txt' -print -quit)" ]; then
    # (offline-wheelhouse's own wheel is a placeholder that gen never opens)
    python3 "$here/standin_wheels.py" "$dir/wheels" $(find "$tmp/corpus/$top" -name 'requirements*.txt') ||
      { echo "FAIL: stand-in wheels for $project"; fail=$((fail + 1)); return; }
    gen_args+=(--wheelhouse wheels)
  fi
  [ -n "$context" ] && gen_args+=(--context "$tmp/corpus/$context")
  expect "$project: gen" 0 env IMGSMITH_GEN_TABLES="$shared/tables" "$bin" gen "$dir" "${gen_args[@]}"
  dockerfile="$dir/Dockerfile"
  build_dir=${context:+$tmp/corpus/$context}
  build_dir=${build_dir:-$dir}
  [ -f "$dockerfile" ] || { row "$base" no no; return; }
  # Docker's python image of any version is Debian's Python 3.11 here.
  want=$(sed 's|^python:3\.[0-9]*-|library/python:3.11-|' <<<"$base")
  check "$project: gen chose the expected base image ($want)" grep -q "^FROM standin/$want\$" "$dockerfile"
  for tag in $(sed -n 's|^FROM standin/nvidia/cuda:\([^ ]*\).*|\1|p' "$dockerfile" | sort -u); do
    "$here/cuda_standin_alias.sh" standin "$cuda_release" "$tag" || { echo "FAIL: $project: no stand-in for $tag"; fail=$((fail + 1)); }
  done
  network=none
  grep -q 'apt-get install' "$dockerfile" && network=host  # Debian's mirror, for the OS packages
  image="imgsmith-corpus/$(basename "$project"):1"
  built=no ran=no
  local build_started=$SECONDS
  if DOCKER_BUILDKIT=1 "$docker" build --network "$network" -f "$dockerfile" -t "$image" "$build_dir" >"$tmp/build.log" 2>&1; then
    built=yes
    build_s=$((SECONDS - build_started))
    pass=$((pass + 1))
    # Its build steps of 10 s or more, to show where a slow run's time went.
    awk '/^#[0-9]+ \[/ { step[$1] = substr($0, index($0, "[")) }
         /^#[0-9]+ DONE [0-9]+\.[0-9]+s$/ { t = $3 + 0; if (t >= 10) printf "  %s: %ss %s\n", project, t, substr(step[$1], 1, 100) }' \
      project="$project" "$tmp/build.log"
  else
    fail=$((fail + 1)); echo "FAIL: $project: docker build (--network $network)"; tail -15 "$tmp/build.log"
    row "$base" no no
    return
  fi

  "$docker" run --rm --network none --entrypoint sh "$image" -c \
    'id -u; mkdir -p "$HOME/.cache/hub" && echo home-writable; touch ./x 2>/dev/null && echo code-writable || echo code-read-only' \
    >"$tmp/out" 2>&1
  check "$project: runs as non-root, \$HOME/.cache writable, code read-only ($(tr '\n' ' ' <"$tmp/out"))" \
    test "$(tr '\n' ' ' <"$tmp/out")" = "10001 home-writable code-read-only "
  # A GPU image's HEALTHCHECK is the probe's --check; without the probe
  # there is none.
  health=no
  grep -A1 '^HEALTHCHECK ' "$dockerfile" | grep -q 'CMD \["/usr/local/bin/imgsmith-probe", "--check"' && health=yes
  check "$project: a HEALTHCHECK exactly when the probe is the entrypoint ($health)" \
    test "$health" = "$(grep -q '^ENTRYPOINT \["/usr/local/bin/imgsmith-probe"' "$dockerfile" && echo yes || echo no)"
  if [ "${port:-0}" != 0 ]; then
    # Checked every second here, so that the engine runs it: with no GPU on
    # this machine the probe's verdict is 3 (no GPU), and the container
    # unhealthy, while the app still serves.
    health_args=()
    [ "$health" = yes ] && health_args=(--health-interval 1s --health-start-period 1s --health-retries 1)
    cid=$("$docker" run -d --network none "${health_args[@]}" "$image")
    served=""
    for _ in $(seq 1 60); do
      served=$("$docker" exec "$cid" python -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$port/', timeout=2).read().decode().strip())" 2>/dev/null) && break
      sleep 0.5
    done
    check "$project: serves on port $port as its CMD says ($served)" test -n "$served"
    if [ "$health" = yes ]; then
      verdict=""
      for _ in $(seq 1 30); do
        verdict=$("$docker" inspect -f '{{.State.Health.Status}} {{with $l := .State.Health.Log}}{{(index $l 0).ExitCode}}{{end}}' "$cid" 2>/dev/null)
        [ "${verdict%% *}" = unhealthy ] && break
        sleep 0.5
      done
      check "$project: the engine runs the HEALTHCHECK, the probe's verdict without a GPU (3): $verdict" \
        test "$verdict" = "unhealthy 3"
    fi
    [ -n "$served" ] && ran=yes
    [ -n "$served" ] || "$docker" logs "$cid" 2>&1 | tail -5
    "$docker" rm -f "$cid" >/dev/null
  elif grep -q '^CMD \["/opt/app/bin/' "$dockerfile"; then
    # A CUDA program: with no GPU here it starts after the probe's advice and
    # fails at its first CUDA call, which shows that it was linked and loaded.
    timeout 120 "$docker" run --rm --network none "$image" >"$tmp/out" 2>"$tmp/err"
    status=$?
    if [ "$status" != 127 ] && [ "$status" != 126 ] && ! grep -q "error while loading shared libraries" "$tmp/err"; then
      ran="yes (exit $status: no GPU)"
    fi
    check "$project: the program starts after the probe, its libraries found (exit $status)" test "$ran" != no
    [ "$ran" != no ] || tail -5 "$tmp/err"
  else
    timeout 120 "$docker" run --rm --network none "$image" >"$tmp/out" 2>"$tmp/err" && ran=yes
    check "$project: its CMD runs to exit 0" test "$ran" = yes
    [ "$ran" = yes ] || tail -5 "$tmp/err"
  fi

  # Triton's compiler is in the final image on purpose; every other image
  # must hold no compiler, header or static library.
  compiler=no
  grep -q 'Triton' "$dockerfile" && grep -q 'gcc=' "$dockerfile" && compiler=yes
  gates=(--deny pip-cache)
  [ "$compiler" = no ] && gates+=(--deny devel-in-final)
  local analyze_started=$SECONDS
  expect "$project: analyze docker:// ${gates[*]}" 0 "$bin" analyze "docker://$image" \
    "${gates[@]}" --top 100000 --format json -o "$tmp/image.json" -q
  analyze_s=$((SECONDS - analyze_started))
  check "$project: no wheel, no .env, no build tree, no bytecode of the checkout; compilers only for Triton ($compiler)" \
    python3 - "$tmp/image.json" "$compiler" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
files = [f["path"] for f in d["largest_files"]]
# Wheels in what the build added (Debian's own python-wheels are the stand-in base's).
user = ("/app/", "/opt/", "/home/", "/root/", "/tmp/", "/wheels/", "/usr/local/")
bad = [p for p in files if p.endswith(".whl") and p.startswith(user)]
# The checkout's .env, build tree, wheelhouse and bytecode, wherever the code sits under /app.
checkout = {".env", "build", "wheels", "__pycache__"}
bad += [p for p in files if p.startswith("/app/") and checkout & set(p.split("/"))]
bad += [p for p in files if p.startswith("/root/.cache/pip")]
tools = sum(c["bytes"] for c in d["categories"] if c["name"] == "build-tools")
if (tools > 0) != (sys.argv[2] == "yes"):
    bad.append(f"build-tools: {tools} bytes")
if bad: print(bad[:5])
sys.exit(1 if bad or not files else 0)
EOF
  row "$base" "$built" "$ran"
  "$docker" image rm "$image" >/dev/null 2>&1
}
workers=2
pids=()
n=0
for entry in "${projects[@]}"; do
  n=$((n + 1))
  while :; do
    running=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && running=$((running + 1)); done
    ((running < workers)) && break
    sleep 1
  done
  ( build_and_run "$entry" "$shared/results/$n"; printf '%s %s\n' "$pass" "$fail" >"$shared/results/$n.counts" ) \
    >"$shared/results/$n.log" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
# In the corpus's order: each project's output, its counts and its row.
for ((i = 1; i <= n; i++)); do
  cat "$shared/results/$i.log"
  if read -r p f <"$shared/results/$i.counts"; then
    pass=$((pass + p)) fail=$((fail + f))
  else
    echo "FAIL: ${projects[$((i - 1))]}: its build and run left no result"; fail=$((fail + 1))
  fi
  [ -f "$shared/results/$i.row" ] && cat "$shared/results/$i.row" >>"$table"
done
for project in "${!not_here[@]}"; do
  printf '%s\t-\tnot here: %s\t-\t-\n' "$project" "${not_here[$project]}" >>"$table"
done
echo "gen's corpus, built and run:"
column -t -s $'\t' "$table" | sed 's/^/  /'

# ----- a fresh clone, built with the probe image from a registry ----------------
# gen keeps the probes out of git, so a fresh clone has none: its plain build
# fails, and with --build-arg IMGSMITH_PROBE_IMAGE naming the probe image
# (`imgsmith probe --write-image`, pushed by skopeo to Debian's
# docker-registry on loopback) it builds, and the entrypoint is imgsmith's
# probe. One GPU project suffices: its other steps are in BuildKit's cache.
fresh_project=cupy-fft
registry_pid=""
# (each project's files are in the scratch folder of its own run)
repo=$(ls -d "$shared"/results/*.tmp/corpus/"$fresh_project" 2>/dev/null | head -1)
if [ -z "$have_cuda" ] || [ -z "$repo" ] || [ ! -f "$repo/Dockerfile" ]; then
  skip_part "the fresh clone: $fresh_project was not built here"
elif ! command -v docker-registry >/dev/null || ! command -v skopeo >/dev/null || ! command -v git >/dev/null; then
  skip_part "the fresh clone: docker-registry, skopeo or git is not installed (scripts/setup.sh installs them)"
else
  git -C "$repo" init -q && git -C "$repo" add -A &&
    git -C "$repo" -c user.name=t -c user.email=t@t commit -qm project
  rm -rf "$tmp/fresh" && git clone -q "$repo" "$tmp/fresh"
  check "fresh clone: no probe in it" test ! -e "$tmp/fresh/.imgsmith/imgsmith-probe-amd64"
  # As the corpus built it: Debian's mirror for OS packages (cached by now).
  fresh_network=none
  grep -q 'apt-get install' "$tmp/fresh/Dockerfile" && fresh_network=host
  DOCKER_BUILDKIT=1 "$docker" build --network "$fresh_network" -t imgsmith-corpus/fresh:1 "$tmp/fresh" >"$tmp/fresh-plain.log" 2>&1
  check "fresh clone: a plain build fails on the missing probe" grep -q 'imgsmith-probe-amd64.*not found' "$tmp/fresh-plain.log"
  regport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$tmp/registry"
  printf 'version: 0.1\nlog: {level: error}\nstorage: {filesystem: {rootdirectory: %s}}\nhttp: {addr: 127.0.0.1:%s}\n' \
    "$tmp/registry/data" "$regport" >"$tmp/registry/config.yml"
  docker-registry serve "$tmp/registry/config.yml" >"$tmp/registry/log" 2>&1 &
  registry_pid=$!
  for _ in $(seq 1 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $regport), 0.2)" 2>/dev/null && break
    sleep 0.1
  done
  probe_ref=127.0.0.1:$regport/imgsmith-probe:test
  expect "fresh clone: imgsmith probe --write-image" 0 "$bin" probe --write-image "$tmp/probe-image.tar" --tag test
  expect "fresh clone: skopeo pushes the probe image, every platform" 0 \
    skopeo copy -q --all --dest-tls-verify=false "oci-archive:$tmp/probe-image.tar:test" "docker://$probe_ref"
  if DOCKER_BUILDKIT=1 "$docker" build --network "$fresh_network" --build-arg "IMGSMITH_PROBE_IMAGE=$probe_ref" \
    -t imgsmith-corpus/fresh:1 "$tmp/fresh" >"$tmp/fresh.log" 2>&1; then
    pass=$((pass + 1))
    "$bin" probe --write "$tmp/probe-here"
    "$docker" run --rm --network none --entrypoint cat imgsmith-corpus/fresh:1 /usr/local/bin/imgsmith-probe >"$tmp/probe-there"
    check "fresh clone: the image's entrypoint is imgsmith's probe, from the probe image" cmp -s "$tmp/probe-here" "$tmp/probe-there"
    timeout 120 "$docker" run --rm --network none imgsmith-corpus/fresh:1 >"$tmp/out" 2>"$tmp/err"
    check "fresh clone: the probe runs first and gives its no-GPU advice" grep -q "imgsmith-probe: no-gpu" "$tmp/err"
    "$docker" image rm imgsmith-corpus/fresh:1 >/dev/null 2>&1
  else
    fail=$((fail + 1)); echo "FAIL: fresh clone: docker build with the probe image $probe_ref"; tail -15 "$tmp/fresh.log"
  fi
  kill "$registry_pid" 2>/dev/null; wait "$registry_pid" 2>/dev/null
fi

stop_dockerd
echo "gen_corpus: $pass passed, $fail failed"
finish
