# A Docker engine of our own for the Docker test and bench/docker.sh
# (sourced). It runs on its own data root, socket and exec root, and on a
# network bridge of its own: dockerd told `--bridge=none` deletes an existing
# docker0, which breaks the networking of a Docker already running on the
# machine, so it is never told that. The bridge gets an address from
# 198.18.0.0/15, the range set aside for benchmarks (RFC 2544), which no LAN
# or Docker default uses. Everything is removed again by stop_dockerd.
#
#   start_dockerd DATA_ROOT RUN_DIR   start it; sets DOCKER_HOST; 1 if it did not
#                                     come up (RUN_DIR/log says why)
#   stop_dockerd                      stop it by its PID, unmount what it left,
#                                     delete its bridge; safe to call twice

dockerd_pid=""
dockerd_bridge=""
dockerd_run=""
dockerd_data=""

start_dockerd() {
  dockerd_data=$1
  dockerd_run=$2
  # Interface names hold 15 bytes; the PID keeps parallel runs apart.
  dockerd_bridge="imgsm$$"
  { ip link add name "$dockerd_bridge" type bridge &&
    ip addr add "198.18.$(($$ % 250)).1/24" dev "$dockerd_bridge" &&
    ip link set "$dockerd_bridge" up; } 2>"$dockerd_run/log" || return 1
  mkdir -p "$dockerd_data"
  # stdin and output away from the caller's: a daemon that outlives its
  # starter (docker_engine.sh) must not hold ctest's pipes open.
  dockerd --data-root "$dockerd_data" --exec-root "$dockerd_run/exec" --pidfile "$dockerd_run/pid" \
    -H "unix://$dockerd_run/sock" --bridge="$dockerd_bridge" \
    --iptables=false --ip-masq=false </dev/null >"$dockerd_run/log" 2>&1 &
  dockerd_pid=$!
  export DOCKER_HOST="unix://$dockerd_run/sock"
  local _
  for _ in $(seq 1 200); do /usr/bin/docker version >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}

stop_dockerd() {
  if [ -n "$dockerd_pid" ]; then
    kill "$dockerd_pid" 2>/dev/null || true
    local _
    for _ in $(seq 1 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$dockerd_pid" 2>/dev/null || true
    wait "$dockerd_pid" 2>/dev/null || true
    dockerd_pid=""
  fi
  if [ -n "$dockerd_run" ]; then
    { grep -e " $dockerd_run/" -e " $dockerd_data/" /proc/mounts || true; } | cut -d' ' -f2 | sort -r |
      xargs -r -n1 umount -l 2>/dev/null || true
  fi
  if [ -n "$dockerd_bridge" ]; then
    ip link delete "$dockerd_bridge" 2>/dev/null || true
    dockerd_bridge=""
  fi
  return 0
}

# For the system tests (which have sourced skip.sh and assert.sh): the Docker
# engine on DATA_ROOT, with its socket in $run. Under ctest that is the one
# engine docker_engine.sh started for all of them (IMGSMITH_TEST_DOCKER_ENGINE
# names its state file), shared and left running; run alone, a test starts its
# own, stopped with everything it made when the test exits, and skips when it
# does not come up. A docker0 bridge that exists before the test must exist
# after it (a Docker already on the machine keeps its networking); where there
# is none, the test (or docker_engine.sh) makes one, to show that, and removes
# it at the end.
#   start_test_dockerd DATA_ROOT
#   cleanup_test_dockerd      what the EXIT trap does (a test's own trap calls it)
test_shared_engine=""
start_test_dockerd() {
  test_made_docker0=""
  local state=${IMGSMITH_TEST_DOCKER_ENGINE:-}
  if [ -n "$state" ] && [ -f "$state" ] && [ "$(sed -n 's/^data=//p' "$state")" = "$1" ]; then
    run=$(sed -n 's/^run=//p' "$state")
    if DOCKER_HOST="unix://$run/sock" /usr/bin/docker version >/dev/null 2>&1; then
      export DOCKER_HOST="unix://$run/sock"
      test_shared_engine=yes
      trap cleanup_test_dockerd EXIT
      return 0
    fi
  fi
  if ! ip link show docker0 >/dev/null 2>&1; then
    ip link add name docker0 type bridge && test_made_docker0=yes
  fi
  # Short paths: a unix socket path must fit in 108 bytes.
  run=$(mktemp -d /tmp/imgsmith-dockerd.XXXXXX)
  trap cleanup_test_dockerd EXIT
  start_dockerd "$1" "$run" || { tail -5 "$run/log"; skip "dockerd did not start"; }
}

cleanup_test_dockerd() {
  if [ -z "$test_shared_engine" ]; then
    stop_dockerd
    [ -n "$test_made_docker0" ] && ip link delete docker0 2>/dev/null
    rm -rf "$run"
  fi
  rm -rf "$tmp"
}
