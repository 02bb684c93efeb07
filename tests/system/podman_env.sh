# shellcheck shell=bash disable=SC2034,SC2154
# Podman for a test, all of its state under the test's $tmp (sourced after
# skip.sh, with $here and $cache set): root and Podman are required (else the
# test skips), $root_tar is a debootstrapped Debian root, assert.sh is
# sourced (it makes $tmp), and Podman's storage (vfs), run root, network
# configuration, temporary files and event log all live in $tmp. No image, container, network or setting of
# the machine's own Podman is touched, and nothing is left in /etc, /run or
# /var.
#
#   "${pod[@]}" ARGS...   runs podman on that state
#   podman_cleanup        removes every pod and container it made and
#                         unmounts what they left mounted under $tmp (call
#                         it before $tmp is removed)
#
# Podman's defaults ask the runtime for open-file and process limits above
# what some machines allow (this one's hard limits are lower), so the
# containers get modest ones. CONTAINER_HOST (which a test may export for
# imgsmith) would make podman a remote client, so it is unset for podman.
[ "$(id -u)" -eq 0 ] || skip "podman's storage here needs root"
command -v podman >/dev/null || skip "podman is not installed (scripts/setup.sh installs it)"
root_tar=$("$here/debootstrap_root.sh" "$cache/debootstrap") || skip "no Debian root could be made"
# shellcheck source=../cli/assert.sh
source "$here/../cli/assert.sh"

mkdir -p "$tmp/libpod-tmp" "$tmp/cni"
printf '%s\n' '[containers]' 'default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]' \
  '[network]' "network_config_dir = \"$tmp/cni\"" \
  '[engine]' "tmp_dir = \"$tmp/libpod-tmp\"" 'events_logger = "file"' "events_logfile_path = \"$tmp/events.log\"" \
  >"$tmp/containers.conf"
pod=(env -u CONTAINER_HOST CONTAINERS_CONF="$tmp/containers.conf" podman --root "$tmp/storage" --runroot "$tmp/run"
  --storage-driver vfs --cgroup-manager cgroupfs)

podman_cleanup() {
  "${pod[@]}" pod rm --all --force --time 2 >/dev/null 2>&1
  "${pod[@]}" rm --all --force --time 2 >/dev/null 2>&1
  # A container's /dev/shm and secrets are mounts under the run root.
  findmnt -rn -o TARGET | grep -F "$tmp/" | sort -r | while read -r mount; do umount -l "$mount" 2>/dev/null; done
}
