#!/usr/bin/env bash
# imgsmith with Debian's Podman, on storage of the test's own (vfs, in a
# temporary directory) and an API service the test starts and stops by its
# PID:
#   - an image built by Podman (buildah) from a debootstrapped Debian root,
#     with a file deleted in a later layer;
#   - `analyze podman://NAME` (its Docker-compatible API, CONTAINER_HOST)
#     equals `analyze` of each `podman save` format: docker-archive (the
#     default), oci-archive and oci-dir;
#   - a short name reaches the same image; an image Podman lacks, and no
#     service at all, are exit 2 with one line saying what to do.
# Usage: podman_test.sh IMGSMITH CACHE_DIR
# Without root, podman or a Debian root it skips with one line; in CI
# (CI=true) that is a failure instead.
set -u
bin=$1
cache=$2
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=skip.sh
source "$here/skip.sh" podman
# shellcheck source=podman_env.sh
source "$here/podman_env.sh"

service_pid=""
cleanup() {
  if [ -n "$service_pid" ]; then
    kill "$service_pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$service_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$service_pid" 2>/dev/null
    wait "$service_pid" 2>/dev/null
  fi
  podman_cleanup
  rm -rf "$tmp"
}
trap cleanup EXIT

"${pod[@]}" import "$root_tar" localhost/imgsmith-test/minbase:1 >/dev/null 2>"$tmp/err" ||
  { cat "$tmp/err"; skip "podman import does not work here"; }
mkdir -p "$tmp/ctx"
cat >"$tmp/ctx/Containerfile" <<'EOF'
FROM localhost/imgsmith-test/minbase:1
RUN mkdir -p /opt/app && head -c 3000000 /dev/urandom > /opt/app/model.bin && echo keep > /opt/app/keep.txt
RUN rm /opt/app/model.bin && rm -rf /usr/share/doc
EOF
if ! "${pod[@]}" build --network none -t localhost/imgsmith-test/app:1 "$tmp/ctx" >"$tmp/build.log" 2>&1; then
  tail -5 "$tmp/build.log"
  skip "podman build does not work here"
fi

"${pod[@]}" system service --time=0 "unix://$tmp/podman.sock" >"$tmp/service.log" 2>&1 &
service_pid=$!
for _ in $(seq 1 100); do [ -S "$tmp/podman.sock" ] && break; sleep 0.1; done
[ -S "$tmp/podman.sock" ] || { cat "$tmp/service.log"; echo "FAIL: podman system service did not start"; exit 1; }
export CONTAINER_HOST="unix://$tmp/podman.sock"

expect "analyze podman://" 0 "$bin" analyze podman://localhost/imgsmith-test/app:1 --format json -o "$tmp/api.json" -q
for format in docker-archive oci-archive oci-dir; do
  case $format in oci-dir) out=$tmp/oci-dir ;; *) out=$tmp/$format.tar ;; esac
  "${pod[@]}" save --format "$format" -o "$out" localhost/imgsmith-test/app:1 >"$tmp/save.log" 2>&1 ||
    { echo "FAIL: podman save --format $format"; tail -3 "$tmp/save.log"; fail=$((fail + 1)); }
done
for saved in docker-archive.tar oci-archive.tar oci-dir; do
  expect "analyze the podman save $saved" 0 "$bin" analyze "$tmp/$saved" --format json -o "$tmp/$saved.json" -q
  for field in "d['size']['final_bytes']" "d['size']['wasted_bytes']" "d['dive']['efficiency']" \
               "[l['size_bytes'] for l in d['layers']]" "[(c['name'], c['bytes']) for c in d['categories']]"; do
    same "podman:// and the $saved save agree on $field" "$field" "$tmp/api.json" "$tmp/$saved.json"
  done
done
check "the 3 MB deleted in a later layer is waste" test "$(json_field "$tmp/api.json" "d['size']['wasted_bytes']")" -ge 3000000
expect "a short name reaches the same image" 0 "$bin" analyze podman://imgsmith-test/app:1 --format json -o "$tmp/short.json" -q
same "the short name's analysis" "d['size']['final_bytes']" "$tmp/short.json" "$tmp/api.json"
expect "an image Podman lacks" 2 "$bin" analyze podman://localhost/imgsmith-test/none:1
check "it names the image and Podman" grep -q "Podman at unix://$tmp/podman.sock has no image 'localhost/imgsmith-test/none:1'" "$tmp/err"
expect "--docker-read storage is refused for podman://" 2 "$bin" analyze podman://localhost/imgsmith-test/app:1 --docker-read storage
CONTAINER_HOST="unix://$tmp/no.sock" "$bin" analyze podman://app:1 >"$tmp/out" 2>"$tmp/err"
check "no service: exit 2" test $? = 2
check "no service: how to start it" grep -q "podman system service --time=0" "$tmp/err"

echo "podman: $pass passed, $fail failed"
finish
