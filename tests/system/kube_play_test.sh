#!/usr/bin/env bash
# gen's Kubernetes manifests, run for real with Debian's Podman
# (`podman kube play`), on storage of the test's own and in a network
# namespace of its own (the ports Podman publishes never reach the machine's):
#   - a GPU server (examples/pytorch-api) as generated, on a machine without
#     a GPU: the probe refuses to start the app (IMGSMITH_PROBE=require), says
#     why, and the port never answers: the pod never becomes ready;
#   - the same Deployment given a GPU the way NVIDIA's device plugin gives
#     one (the driver's libraries and device nodes, here the stand-ins the
#     probe test uses): the probe passes, the app starts, the startup probe's
#     command passes and fails when the GPU goes away, the readiness port
#     answers, and the securityContext holds (the Dockerfile's uid, a
#     read-only root with every mounted volume writable, no privilege
#     escalation, no capabilities);
#   - a CPU app (examples/fraud-api-cpu): no GPU asked, the app starts and
#     answers.
# The images are stand-ins built by Podman from a debootstrapped Debian root
# with what the generated Dockerfile's final stage gives the container: its
# user, the probe it copies and its ENTRYPOINT; the app is a small server on
# the manifest's port.
# Podman 4.3 (Debian 12) does not run startupProbe or readinessProbe (4.4
# maps startupProbe to a startup health check), so the test runs each
# probe's action in the pod as the kubelet would: the exec command, and a TCP
# connection to the port.
# Usage: kube_play_test.sh IMGSMITH CACHE_DIR SOURCE_DIR FAKE_DRIVER_DIR
set -u
bin=$1
cache=$2
src=$3
fake=$4
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=skip.sh
source "$here/skip.sh" kube_play
command -v slirp4netns >/dev/null || skip "slirp4netns is not installed (podman recommends it; scripts/setup.sh installs it)"
# shellcheck source=podman_env.sh
source "$here/podman_env.sh"
trap 'podman_cleanup; rm -rf "$tmp"' EXIT

manifest() { /usr/bin/python3 "$here/kube_manifest.py" "$@"; }

"${pod[@]}" import "$root_tar" localhost/imgsmith-test/minbase:1 >/dev/null 2>"$tmp/err" ||
  { cat "$tmp/err"; skip "podman import does not work here"; }

# standin_image PROJECT: builds the image PROJECT/k8s/deployment.yaml names.
standin_image() {
  local project=$1 deployment=$1/k8s/deployment.yaml image port uid home
  image=$(manifest get "$deployment" "c['image']")
  port=$(manifest get "$deployment" "c['ports'][0]['containerPort']")
  uid=$(grep -o -- '--uid [0-9]*' "$project/Dockerfile" | cut -d' ' -f2)
  home=$(grep -o -- '--home-dir [^ ]*' "$project/Dockerfile" | cut -d' ' -f2)
  {
    echo "FROM localhost/imgsmith-test/minbase:1"
    echo "RUN groupadd --system --gid $uid app && useradd --system --uid $uid --gid app --no-create-home --home-dir $home app"
    # The probe, as the Dockerfile's probe stage takes it from the context.
    if grep -q '^COPY --from=probe /imgsmith-probe /usr/local/bin/imgsmith-probe$' "$project/Dockerfile"; then
      echo "ARG TARGETARCH"
      echo 'COPY .imgsmith/imgsmith-probe-${TARGETARCH} /usr/local/bin/imgsmith-probe'
    fi
    echo "USER app"
    grep -E '^ENTRYPOINT ' "$project/Dockerfile"
    # The app: says when it listens, answers every connection.
    sed "s/PORT/$port/g" <<'APP'
CMD ["perl", "-MIO::Socket::INET", "-e", "my $s = IO::Socket::INET->new(LocalPort => PORT, Listen => 5, ReuseAddr => 1) or die qq(port PORT: $!); print STDERR qq(stand-in app listening on PORT\n); while (my $c = $s->accept) { print $c qq(HTTP/1.0 200 OK\r\n\r\nok\n); close $c }"]
APP
  } >"$tmp/Containerfile"
  "${pod[@]}" build --network none -f "$tmp/Containerfile" -t "$image" "$project" >"$tmp/build.log" 2>&1 ||
    { tail -5 "$tmp/build.log"; skip "podman build of a stand-in for $image does not work here"; }
}

# play MANIFEST: podman kube play in a network namespace of the test's own;
# $app is the app's container.
play() {
  expect "kube play $(basename "$(dirname "$(dirname "$1")")")/$(basename "$1")" 0 \
    unshare --net "${pod[@]}" kube play --network slirp4netns "$1"
  app=$("${pod[@]}" ps -a --format '{{.Names}}' | grep -v -- '-infra$' | head -1)
}
# logged TEXT: waits up to 30 s for TEXT in the app's log.
logged() {
  for _ in $(seq 1 60); do
    "${pod[@]}" logs "$app" 2>&1 | grep -qF -- "$1" && return 0
    sleep 0.5
  done
  return 1
}
in_pod() { "${pod[@]}" exec "$app" "$@" >"$tmp/out" 2>"$tmp/err"; }
answers() {  # answers PORT: a TCP connection in the pod, as a tcpSocket probe makes it
  in_pod perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr => "127.0.0.1:$ARGV[0]", Timeout => 3) or exit 1' "$1"
}
down() { "${pod[@]}" kube down "$1" >/dev/null 2>&1; podman_cleanup; }

api=$tmp/torch-api
cp -r "$src/examples/pytorch-api" "$api"
expect "gen --k8s: a GPU server" 0 "$bin" gen "$api" --k8s
check "its manifests are valid Kubernetes objects" /usr/bin/python3 "$src/tests/cli/k8s_validate.py" "$api"/k8s/*.yaml
standin_image "$api"
deployment=$api/k8s/deployment.yaml
port=$(manifest get "$deployment" "c['ports'][0]['containerPort']")

# As generated, on this machine (no GPU).
play "$deployment"
check "no GPU: the probe says so" logged "imgsmith-probe: no-gpu"
check "no GPU: and names the fix" logged "in Kubernetes, request nvidia.com/gpu"
check "no GPU: the container restarts (the probe exits 3 each time)" \
  test "$("${pod[@]}" inspect "$app" --format '{{.RestartCount}}')" -ge 1
check "no GPU: the app never started" test -z "$("${pod[@]}" logs "$app" 2>&1 | grep 'listening')"
down "$deployment"

# Given a GPU, as the device plugin gives one (stand-ins for it).
mkdir -p "$tmp/driver" "$tmp/dev"
cp -L "$fake/libcuda.so.1" "$fake/libnvidia-ml.so.1" "$tmp/driver/"
touch "$tmp/dev/nvidia0" "$tmp/dev/nvidiactl" "$tmp/dev/nvidia-uvm"
chmod 755 "$tmp/driver" "$tmp/dev"
manifest with-gpu "$deployment" "$tmp/with-gpu.yaml" "$tmp/driver" "$tmp/dev"
play "$tmp/with-gpu.yaml"
check "with a GPU: the probe passes" logged "imgsmith-probe: ok: 1 GPU"
check "with a GPU: then the app starts" logged "stand-in app listening on $port"
read -r -a startup <<<"$(manifest get "$deployment" "c['startupProbe']['exec']['command']")"
check "the startup probe is the probe's check" test "${startup[0]} ${startup[1]}" = "/usr/local/bin/imgsmith-probe --check"
in_pod "${startup[@]}"
check "the startup probe passes ($?)" test "$(wc -l <"$tmp/out")$?" = 00
check "  and says the GPU is ok" grep -q "imgsmith-probe: ok: 1 GPU" "$tmp/err"
# The app has taken 90% of the GPU's memory, as vLLM's preallocation does
# (the stand-in NVML's free memory): the startup probe still passes for a
# model of half the GPU, so the pod is not restarted in a loop.
"${pod[@]}" exec --env FAKE_NVML_FREE=15075482009 --env IMGSMITH_MODEL_VRAM=75377410048 "$app" "${startup[@]}" >"$tmp/out" 2>"$tmp/err"
check "the startup probe beside an app holding 90% of the memory passes (half-GPU model)" test $? = 0
check "  comparing the model with the GPU's total" grep -q "model needs 75.4 GB" "$tmp/err"
# The GPU gone: no device nodes, no driver library.
"${pod[@]}" exec --env IMGSMITH_PROBE_DEV=/nonexistent --env LD_LIBRARY_PATH= "$app" "${startup[@]}" >"$tmp/out" 2>"$tmp/err"
check "the startup probe fails when the GPU goes away (exit 3)" test $? = 3
check "  and says why" grep -q "imgsmith-probe: no-gpu" "$tmp/err"
check "the readiness port ($port) answers" answers "$port"
in_pod id -u
check "runs as the manifest's runAsUser" test "$(cat "$tmp/out")" = "$(manifest get "$deployment" "pod['securityContext']['runAsUser']")"
in_pod touch /written-to-root
check "the root filesystem is read-only" grep -q "Read-only file system" "$tmp/err"
# Every volume is mounted where the manifest says, and writable by the app.
# Except /dev/shm's writability: Podman makes an emptyDir a volume that takes
# the ownership of the image's directory (root's /dev/shm), where the kubelet
# makes every emptyDir mode 0777 (a tmpfs for medium Memory).
in_pod cat /proc/self/mounts
for mount in $(manifest get "$deployment" "[v['mountPath'] for v in c['volumeMounts']]"); do
  check "$mount is a mount of its own" grep -q " $mount " "$tmp/out"
done
for mount in $(manifest get "$deployment" "[v['mountPath'] for v in c['volumeMounts'] if v['mountPath'] != '/dev/shm']"); do
  in_pod touch "$mount/.imgsmith-written"
  check "$mount is writable" test $? = 0
done
in_pod grep -E '^(NoNewPrivs|CapEff):' /proc/self/status
check "no privilege escalation" grep -qE '^NoNewPrivs:\s+1$' "$tmp/out"
check "no capabilities" grep -qE '^CapEff:\s+0+$' "$tmp/out"
down "$tmp/with-gpu.yaml"

# A CPU app: no GPU asked, nothing to check before it starts.
cpu=$tmp/fraud-api
cp -r "$src/examples/fraud-api-cpu" "$cpu"
expect "gen --k8s: a CPU app" 0 "$bin" gen "$cpu" --k8s
standin_image "$cpu"
cpu_port=$(manifest get "$cpu/k8s/deployment.yaml" "c['ports'][0]['containerPort']")
check "the CPU app has no startup probe" test "$(manifest get "$cpu/k8s/deployment.yaml" "'startupProbe' in c")" = False
play "$cpu/k8s/deployment.yaml"
check "the CPU app starts" logged "stand-in app listening on $cpu_port"
check "and answers on its port ($cpu_port)" answers "$cpu_port"
down "$cpu/k8s/deployment.yaml"

echo "kube_play: $pass passed, $fail failed"
finish
