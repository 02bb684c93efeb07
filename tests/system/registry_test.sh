#!/usr/bin/env bash
# imgsmith analyze against real registries (Debian's docker-registry) on
# loopback: anonymous, htpasswd basic auth, and token auth with an issuer
# owned by this test; credentials from credential helpers (credHelpers,
# credsStore) and an identity token exchanged at the issuer; a tampered blob; a registry that hangs or dies
# mid-transfer. Every server is started here and stopped by its PID.
# Usage: registry_test.sh IMGSMITH FIXTURES_DIR
set -u
bin=$1
fixtures=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../cli/assert.sh
source "$here/../cli/assert.sh"

# shellcheck source=skip.sh
source "$here/skip.sh" registry
for tool in docker-registry skopeo htpasswd openssl python3; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh installs it)"
done

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  chmod -R u+w "$tmp" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {  # wait_port PORT: until something listens
  for _ in $(seq 1 100); do
    python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),0.2)" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "FAIL: nothing listens on port $1"
  return 1
}
start_registry() {  # start_registry NAME PORT [AUTH_YAML]: a registry with its own storage
  local name=$1 port=$2 auth=${3:-}
  mkdir -p "$tmp/$name"
  {
    echo "version: 0.1"
    echo "log: {level: error}"
    echo "storage: {filesystem: {rootdirectory: $tmp/$name/data}, delete: {enabled: true}}"
    echo "http: {addr: 127.0.0.1:$port}"
    [ -n "$auth" ] && echo "$auth"
  } >"$tmp/$name/config.yml"
  docker-registry serve "$tmp/$name/config.yml" >"$tmp/$name/log" 2>&1 &
  pids+=($!)
  wait_port "$port"
}

# ----- anonymous: the same figures as from the file ---------------------------
port=$(free_port)
start_registry open "$port" || exit 1
reg=127.0.0.1:$port
push() { skopeo copy -q --dest-tls-verify=false "$1" "docker://$reg/$2" >"$tmp/skopeo.log" 2>&1 ||
  { echo "FAIL: skopeo copy $1"; cat "$tmp/skopeo.log"; exit 1; }; }
push "docker-archive:$fixtures/test-docker-image.tar" dive/test:1
push "oci-archive:$fixtures/test-oci-zstd-image.tar" dive/zstd:1

expect "analyze a registry image" 0 "$bin" analyze "$reg/dive/test:1" --format json -o "$tmp/reg.json" -q
expect "analyze the same image's file" 0 "$bin" analyze "$fixtures/test-docker-image.tar" --format json -o "$tmp/file.json" -q
for field in "d['size']['final_bytes']" "d['size']['layers_bytes']" "d['size']['wasted_bytes']" \
             "d['dive']['efficiency']" "d['dive']['wasted_bytes']" "len(d['layers'])" \
             "[l['size_bytes'] for l in d['layers']]" "[l['diff_id'] for l in d['layers']]" \
             "d['image']['config_digest']" "[(c['name'], c['bytes']) for c in d['categories']]"; do
  same "registry and file agree on $field" "$field" "$tmp/reg.json" "$tmp/file.json"
done
check "the registry figures are dive's (1,188,573 final bytes)" test "$(json_field "$tmp/reg.json" "d['size']['final_bytes']")" = 1188573
check "the report says it came from a registry" test "$(json_field "$tmp/reg.json" "d['format']")" = registry
check "compressed sizes come from the manifest" test "$(json_field "$tmp/reg.json" "d['size']['compressed_bytes']")" -gt 0
expect "a zstd OCI image from the registry" 0 "$bin" analyze "$reg/dive/zstd:1" --format json -o "$tmp/zstd.json" -q
"$bin" analyze "$fixtures/test-oci-zstd-image.tar" --format json -o "$tmp/zstd-file.json" -q
same "zstd layers stream through decompression" "d['size']['final_bytes']" "$tmp/zstd.json" "$tmp/zstd-file.json"

manifest_digest=$(curl -s -o /dev/null -D - -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
  "http://$reg/v2/dive/test/manifests/1" | tr -d '\r' | awk -F': ' 'tolower($1)=="docker-content-digest"{print $2}')
expect "a reference pinned by digest" 0 "$bin" analyze "$reg/dive/test@$manifest_digest" --format json -o "$tmp/pinned.json" -q
check "the pinned image is the tagged one" test "$(json_field "$tmp/pinned.json" "d['size']['final_bytes']")" = 1188573

expect "a digest imgsmith cannot verify is refused" 2 "$bin" analyze "$reg/dive/test@sha512:$(printf 'a%.0s' $(seq 1 128))"
check "it says why" grep -q "only sha256" "$tmp/err"

# --manifest-only: the manifest's sizes, no layer read.
expect "--manifest-only" 0 "$bin" analyze "$reg/dive/test:1" --manifest-only --format json -o "$tmp/manifest.json" -q
curl -s -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' "http://$reg/v2/dive/test/manifests/1" >"$tmp/raw-manifest.json"
check "--manifest-only gives each layer's manifest size" test \
  "$(json_field "$tmp/manifest.json" "[l['compressed_bytes'] for l in d['layers']]")" = \
  "$(json_field "$tmp/raw-manifest.json" "[l['size'] for l in d['layers']]")"
check "--manifest-only's total is their sum" test \
  "$(json_field "$tmp/manifest.json" "d['compressed_bytes']")" = "$(json_field "$tmp/raw-manifest.json" "sum(l['size'] for l in d['layers'])")"
check "--manifest-only reads no layer" test "$(json_field "$tmp/manifest.json" "d['io']['bytes_read']")" -lt 20000
check "--manifest-only keeps the history" test "$(json_field "$tmp/manifest.json" "d['layers'][2]['created_by']")" = \
  "/bin/sh -c mkdir -p /root/example/really/nested"
expect "--manifest-only refuses gates" 2 "$bin" analyze "$reg/dive/test:1" --manifest-only --max-size 1GB
expect "--manifest-only refuses a file" 2 "$bin" analyze "$fixtures/test-docker-image.tar" --manifest-only

# A multi-platform index: --platform chooses, the attestation is skipped.
python3 "$here/registry/make_multiarch.py" "$tmp/multi" "$fixtures/test-oci-gzip-image.tar" \
  "$fixtures/test-oci-zstd-image.tar" 1
skopeo copy -q --all --dest-tls-verify=false "oci:$tmp/multi:1" "docker://$reg/dive/multi:1" >"$tmp/skopeo.log" 2>&1 ||
  { echo "FAIL: skopeo copy --all"; cat "$tmp/skopeo.log"; }
expect "a multi-platform index, default platform" 0 "$bin" analyze "$reg/dive/multi:1" --format json -o "$tmp/amd64.json" -q
expect "a multi-platform index, --platform linux/arm64" 0 "$bin" analyze "$reg/dive/multi:1" --platform linux/arm64 --format json -o "$tmp/arm64.json" -q
"$bin" analyze "$fixtures/test-oci-gzip-image.tar" --format json -o "$tmp/gzip-file.json" -q
same "linux/amd64 is the gzip image" "[l['compression'] for l in d['layers']]" "$tmp/amd64.json" "$tmp/gzip-file.json"
same "linux/arm64 is the zstd image" "[l['compression'] for l in d['layers']]" "$tmp/arm64.json" "$tmp/zstd-file.json"
check "the two platforms differ" test "$(json_field "$tmp/amd64.json" "[l['compression'] for l in d['layers']]")" != \
  "$(json_field "$tmp/arm64.json" "[l['compression'] for l in d['layers']]")"
expect "a platform the index lacks" 2 "$bin" analyze "$reg/dive/multi:1" --platform linux/s390x
check "it lists what there is" grep -q "available: linux/amd64, linux/arm64" "$tmp/err"

# Unknown names.
expect "an unknown tag" 2 "$bin" analyze "$reg/dive/test:nope"
check "the message names the tag and the repository" grep -q "no tag 'nope' in $reg/dive/test" "$tmp/err"
expect "an unknown repository" 2 "$bin" analyze "$reg/nothing/here:1"
check "the message names the repository" grep -q "nothing/here" "$tmp/err"

# ----- a registry that hangs or dies mid-transfer ------------------------------
for mode in stall reset; do
  pport=$(free_port)
  python3 "$here/registry/proxy.py" "$pport" "$port" "$mode" 200000 &
  pids+=($!)
  wait_port "$pport"
  start=$(date +%s)
  expect "a registry that ${mode}s mid-transfer" 2 "$bin" analyze "127.0.0.1:$pport/dive/test:1" --registry-timeout 2 --threads 1
  elapsed=$(( $(date +%s) - start ))
  check "the $mode is reported within the timeout (${elapsed}s)" test "$elapsed" -le 10
  check "the $mode message says what happened" grep -qE "stopped sending|transfer failed" "$tmp/err"
done
pport=$(free_port)
python3 "$here/registry/proxy.py" "$pport" "$port" ratelimit 0 &
pids+=($!)
wait_port "$pport"
expect "a rate-limited registry" 2 "$bin" analyze "127.0.0.1:$pport/dive/test:1"
check "the 429 is reported with its headers" grep -q "429 Too Many Requests, ratelimit-limit: 100;w=21600, ratelimit-remaining: 0;w=21600, retry-after: 3600" "$tmp/err"
expect "a registry that is not there" 2 "$bin" analyze "127.0.0.1:$(free_port)/dive/test:1"
check "it says it cannot reach it" grep -q "cannot reach" "$tmp/err"

# ----- a tampered blob: digest mismatch, exit 2, no report ----------------------
big=$(json_field "$tmp/raw-manifest.json" "max(d['layers'], key=lambda l: l['size'])['digest'].split(':')[1]")
blob=$(find "$tmp/open/data" -path "*/blobs/sha256/*/$big/data")
python3 - "$blob" <<'EOF'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0xFF
open(path, "wb").write(bytes(data))
EOF
expect "a tampered blob" 2 "$bin" analyze "$reg/dive/test:1" -o "$tmp/tampered.txt"
check "it is called a digest mismatch" grep -q "digest mismatch" "$tmp/err"
check "the message names the blob" grep -q "sha256:$big" "$tmp/err"
check "no report is written" test ! -e "$tmp/tampered.txt"
expect "--manifest-only does not read the tampered layer" 0 "$bin" analyze "$reg/dive/test:1" --manifest-only -q

# ----- basic auth (htpasswd) ----------------------------------------------------
htpasswd -Bbn tester s3cret >"$tmp/htpasswd" 2>/dev/null
bport=$(free_port)
start_registry basic "$bport" "auth: {htpasswd: {realm: imgsmith-test, path: $tmp/htpasswd}}" || exit 1
skopeo copy -q --dest-tls-verify=false --dest-creds tester:s3cret "docker-archive:$fixtures/test-docker-image.tar" \
  "docker://127.0.0.1:$bport/private/app:1" >"$tmp/skopeo.log" 2>&1 || { echo "FAIL: push with basic auth"; cat "$tmp/skopeo.log"; }
docker_config() {  # docker_config DIR HOST USER PASS
  mkdir -p "$1"
  printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$2" "$(printf '%s:%s' "$3" "$4" | base64 -w0)" >"$1/config.json"
}
docker_config "$tmp/creds-good" "127.0.0.1:$bport" tester s3cret
docker_config "$tmp/creds-bad" "127.0.0.1:$bport" tester wrong
expect "basic auth with config.json credentials" 0 env DOCKER_CONFIG="$tmp/creds-good" "$bin" analyze "127.0.0.1:$bport/private/app:1" --format json -o "$tmp/basic.json" -q
check "basic auth reads the same image" test "$(json_field "$tmp/basic.json" "d['size']['final_bytes']")" = 1188573
expect "basic auth with a wrong password" 2 env DOCKER_CONFIG="$tmp/creds-bad" "$bin" analyze "127.0.0.1:$bport/private/app:1"
check "wrong credentials are named, not printed" grep -q "refused the credentials" "$tmp/err"
check "the password never appears" test -z "$(grep -e wrong -e s3cret "$tmp/err")"
expect "basic auth with no credentials" 2 env DOCKER_CONFIG="$tmp/nowhere" "$bin" analyze "127.0.0.1:$bport/private/app:1"
check "it says to log in" grep -q "docker login" "$tmp/err"

# ----- token auth: the bearer flow ----------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/token.key" -out "$tmp/token.crt" -days 2 \
  -subj /CN=imgsmith-test-tokens >/dev/null 2>&1
tport=$(free_port)
python3 "$here/registry/token_server.py" "$tport" "$tmp/token.key" "$tmp/token.crt" imgsmith-issuer \
  imgsmith-registry tester s3cret &
pids+=($!)
wait_port "$tport"
kport=$(free_port)
start_registry token "$kport" "auth: {token: {realm: 'http://127.0.0.1:$tport/token', service: imgsmith-registry, issuer: imgsmith-issuer, rootcertbundle: $tmp/token.crt}}" || exit 1
# The registry's storage is filled directly from the open registry's: the
# token flow is what is tested here, not pushing through it.
cp -r "$tmp/open/data/." "$tmp/token/data/"
docker_config "$tmp/creds-token" "127.0.0.1:$kport" tester s3cret
docker_config "$tmp/creds-token-bad" "127.0.0.1:$kport" tester wrong
expect "the bearer flow with good credentials" 0 env DOCKER_CONFIG="$tmp/creds-token" "$bin" analyze "127.0.0.1:$kport/dive/zstd:1" --format json -o "$tmp/token.json" -q
same "the bearer flow reads the image" "d['size']['final_bytes']" "$tmp/token.json" "$tmp/zstd-file.json"
expect "the bearer flow with a wrong password" 2 env DOCKER_CONFIG="$tmp/creds-token-bad" "$bin" analyze "127.0.0.1:$kport/dive/zstd:1"
check "the token service's refusal is explained" grep -q "token service" "$tmp/err"
expect "the bearer flow without credentials" 2 env DOCKER_CONFIG="$tmp/nowhere" "$bin" analyze "127.0.0.1:$kport/dive/zstd:1"
check "it says to log in" grep -q "docker login" "$tmp/err"

# ----- credential helpers (credHelpers, credsStore) and identity tokens --------
# A helper as docker-credential-helpers' protocol has it: `get`, the server
# on standard input, JSON out; "<token>" as the user marks an OAuth2 refresh
# token, which goes to the token realm as a POST (token_server.py takes
# "rt-" and the password).
mkdir -p "$tmp/helpers" "$tmp/creds-helper" "$tmp/creds-store"
cat >"$tmp/helpers/docker-credential-imgsmithtest" <<HELPER
#!/bin/sh
server=\$(cat)
echo "\$server" >>"$tmp/helper-asked"
case "\$server" in
  127.0.0.1:$bport) echo '{"ServerURL":"127.0.0.1:$bport","Username":"tester","Secret":"s3cret"}' ;;
  127.0.0.1:$kport) echo "{\"Username\":\"<token>\",\"Secret\":\"\$IMGSMITH_TEST_REFRESH\"}" ;;
  *) echo "credentials not found in native keychain"; exit 1 ;;
esac
HELPER
chmod +x "$tmp/helpers/docker-credential-imgsmithtest"
# credHelpers wins over a (wrong) password in auths, as in Docker.
printf '{"auths": {"127.0.0.1:%s": {"auth": "%s"}}, "credHelpers": {"127.0.0.1:%s": "imgsmithtest"}}\n' \
  "$bport" "$(printf 'tester:wrong' | base64 -w0)" "$bport" >"$tmp/creds-helper/config.json"
# docker login with a credsStore leaves an empty auths entry.
printf '{"auths": {"127.0.0.1:%s": {}}, "credsStore": "imgsmithtest"}\n' "$kport" >"$tmp/creds-store/config.json"
with_helpers=(env PATH="$tmp/helpers:$PATH")
expect "basic auth with credentials from credHelpers" 0 "${with_helpers[@]}" DOCKER_CONFIG="$tmp/creds-helper" \
  "$bin" analyze "127.0.0.1:$bport/private/app:1" --format json -o "$tmp/helper-basic.json" -q
check "credHelpers reads the same image" test "$(json_field "$tmp/helper-basic.json" "d['size']['final_bytes']")" = 1188573
expect "an identity token from credsStore, exchanged at the token realm" 0 "${with_helpers[@]}" \
  IMGSMITH_TEST_REFRESH=rt-s3cret DOCKER_CONFIG="$tmp/creds-store" \
  "$bin" analyze "127.0.0.1:$kport/dive/zstd:1" --format json -o "$tmp/helper-token.json" -q
same "the identity token reads the image" "d['size']['final_bytes']" "$tmp/helper-token.json" "$tmp/zstd-file.json"
check "the helper was asked once per image, with the registry's host" \
  test "$(cat "$tmp/helper-asked")" = "$(printf '127.0.0.1:%s\n127.0.0.1:%s' "$bport" "$kport")"
expect "a stale identity token" 2 "${with_helpers[@]}" IMGSMITH_TEST_REFRESH=rt-old DOCKER_CONFIG="$tmp/creds-store" \
  "$bin" analyze "127.0.0.1:$kport/dive/zstd:1"
check "the refusal names the identity token and the helper" \
  grep -q "refused the identity token for 127.0.0.1:$kport in the credential helper docker-credential-imgsmithtest" "$tmp/err"
check "the refresh token never appears" test -z "$(grep -e rt-old "$tmp/err")"
expect "a helper that is not installed" 2 env DOCKER_CONFIG="$tmp/creds-store" "$bin" analyze "127.0.0.1:$kport/dive/zstd:1"
check "it names the helper missing from PATH" grep -q "docker-credential-imgsmithtest is not on PATH" "$tmp/err"

echo "registry: $pass passed, $fail failed"
[ "$fail" = 0 ]
