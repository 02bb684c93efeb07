#!/usr/bin/env bash
# One Docker engine for every system test that needs one, as a ctest fixture
# (docker_engine_start runs before them, docker_engine_stop after them), so
# that those tests run side by side instead of one after another, each with
# a daemon of its own on the one cached data root. The start also makes the
# stand-in base images they build on (python_standin.sh, cuda_standins.sh),
# once, before any of them; each test still asks for them, and finds them made.
#   docker_engine.sh start CACHE_DIR STATE_FILE
#   docker_engine.sh stop STATE_FILE
# The start never fails a run: where no engine can start here (not root, no
# docker.io), it writes no STATE_FILE and each test starts its own engine or
# skips, as when it runs alone. STATE_FILE holds what the stop and the tests
# (dockerd.sh's start_test_dockerd) need.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=dockerd.sh
source "$here/dockerd.sh"

stop_engine() {
  local state=$1
  [ -f "$state" ] || return 0
  dockerd_pid=$(sed -n 's/^pid=//p' "$state")
  dockerd_run=$(sed -n 's/^run=//p' "$state")
  dockerd_data=$(sed -n 's/^data=//p' "$state")
  dockerd_bridge=$(sed -n 's/^bridge=//p' "$state")
  # A daemon of ours only: the PID's command line must name our socket.
  if [ -n "$dockerd_pid" ] && ! grep -qF "$dockerd_run/sock" "/proc/$dockerd_pid/cmdline" 2>/dev/null; then
    dockerd_pid=""
  fi
  # stop_dockerd waits on a child of this shell; ours is not, so it is
  # killed here and waited for by its /proc entry.
  if [ -n "$dockerd_pid" ]; then
    kill "$dockerd_pid" 2>/dev/null
    for _ in $(seq 1 150); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$dockerd_pid" 2>/dev/null
    dockerd_pid=""
  fi
  stop_dockerd
  [ "$(sed -n 's/^made_docker0=//p' "$state")" = yes ] && ip link delete docker0 2>/dev/null
  [ -n "$dockerd_run" ] && rm -rf "$dockerd_run"
  rm -f "$state"
  echo "docker_engine: stopped"
}

# The stand-ins (each script makes its images only where they are missing);
# a failure here is the tests' to report, when they ask.
make_standins() {
  local root_tar cuda_dir
  root_tar=$("$here/debootstrap_root.sh" "$cache/debootstrap") || return 0
  "$here/python_standin.sh" "$root_tar" || echo "docker_engine: the Python stand-in failed"
  cuda_dir=$(readlink -f /usr/local/cuda 2>/dev/null || true)
  if [ -x "$cuda_dir/bin/nvcc" ]; then
    "$here/cuda_standins.sh" standin "$root_tar" "$cuda_dir" 13.0.0 || echo "docker_engine: the CUDA stand-ins failed"
  fi
}

case "${1:-}" in
  start)
    cache=${2:?usage: docker_engine.sh start CACHE_DIR STATE_FILE}
    state=${3:?usage: docker_engine.sh start CACHE_DIR STATE_FILE}
    # An engine started earlier on this data root and still answering (CI
    # starts it while imgsmith compiles: scripts/test.sh) is kept; any other
    # is one a killed run left behind.
    if [ -f "$state" ] && [ "$(sed -n 's/^data=//p' "$state")" = "$cache/docker" ] &&
      DOCKER_HOST="unix://$(sed -n 's/^run=//p' "$state")/sock" /usr/bin/docker version >/dev/null 2>&1; then
      echo "docker_engine: already started ($(sed -n 's/^pid=//p' "$state"))"
      export DOCKER_HOST="unix://$(sed -n 's/^run=//p' "$state")/sock"
      make_standins
      exit 0
    fi
    stop_engine "$state"
    [ "$(id -u)" -eq 0 ] || { echo "docker_engine: not root: each test decides for itself"; exit 0; }
    command -v dockerd >/dev/null && [ -x /usr/bin/docker ] && command -v ip >/dev/null ||
      { echo "docker_engine: no docker.io or iproute2: each test decides for itself"; exit 0; }
    made_docker0=no
    if ! ip link show docker0 >/dev/null 2>&1; then
      ip link add name docker0 type bridge && made_docker0=yes
    fi
    run=$(mktemp -d /tmp/imgsmith-dockerd.XXXXXX)
    if ! start_dockerd "$cache/docker" "$run"; then
      echo "docker_engine: dockerd did not start:"; tail -5 "$run/log"
      stop_dockerd; rm -rf "$run"
      [ "$made_docker0" = yes ] && ip link delete docker0 2>/dev/null
      exit 0
    fi
    printf 'pid=%s\nrun=%s\ndata=%s\nbridge=%s\nmade_docker0=%s\n' \
      "$dockerd_pid" "$run" "$cache/docker" "$dockerd_bridge" "$made_docker0" >"$state.tmp" &&
      mv "$state.tmp" "$state"
    echo "docker_engine: started (pid $dockerd_pid, $DOCKER_HOST)"
    make_standins
    exit 0
    ;;
  stop)
    stop_engine "${2:?usage: docker_engine.sh stop STATE_FILE}"
    exit 0
    ;;
  *)
    echo "usage: docker_engine.sh start CACHE_DIR STATE_FILE | stop STATE_FILE" >&2
    exit 2
    ;;
esac
