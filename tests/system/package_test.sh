#!/usr/bin/env bash
# imgsmith as users install it, on a real Docker engine (dockerd.sh):
#   - the Debian package from CPack (`--target package`): its control fields
#     (version, dpkg-shlibdeps' dependencies), installed with apt into a
#     clean debootstrapped Debian 12 container; there `imgsmith --version`,
#     an analysis of a fixture equal to this build's, `man -w` for each page,
#     and bash-completion completing `imgsmith analyze --fo<TAB>`;
#   - with IMGSMITH_TEST_IMAGE=1 (outside CI's time budget: it compiles
#     imgsmith once more), the imgsmith image from the repository's
#     Dockerfile, every stage built
#     (the kernels on a stand-in of NVIDIA's devel image, imgsmith compiled
#     and packaged, the package installed on the runtime stage): it runs as
#     non-root with no compiler, analyses a fixture mounted into it and
#     docker:// through the daemon's socket, prints the package's version,
#     and passes its own --max-size gate.
# Usage: package_test.sh IMGSMITH BUILD_DIR CACHE_DIR SOURCE_DIR FIXTURES VERSION
# Without root, dockerd or a Debian root it skips with one line; in CI
# (CI=true) that is a failure instead.
set -u
bin=$1
build_dir=$2
cache=$3
source_dir=$4
fixtures=$5
version=$6
here=$(cd "$(dirname "$0")" && pwd)
docker=/usr/bin/docker

# shellcheck source=skip.sh
source "$here/skip.sh" package
[ "$(id -u)" -eq 0 ] || skip "dockerd needs root"
command -v dockerd >/dev/null && [ -x "$docker" ] || skip "docker.io is not installed (scripts/setup.sh installs it)"
command -v dpkg-deb >/dev/null || skip "dpkg-deb is not installed"
root_tar=$("$here/debootstrap_root.sh" "$cache/debootstrap") || skip "no Debian root could be made"
# shellcheck source=../cli/assert.sh
source "$here/../cli/assert.sh"
command -v ip >/dev/null || skip "ip (iproute2) is not installed (scripts/setup.sh installs it)"
fixture=$fixtures/test-docker-image.tar
[ -f "$fixture" ] || skip "no fixture $fixture"

# ----- the Debian package ---------------------------------------------------------
rm -rf "$build_dir/packages"
if ! cmake --build "$build_dir" --target package >"$tmp/package.log" 2>&1; then
  echo "FAIL: cmake --build --target package"; tail -20 "$tmp/package.log"; exit 1
fi
deb=$(ls "$build_dir"/packages/imgsmith_*.deb 2>/dev/null | head -1)
check "the package is imgsmith_${version}_amd64.deb" test "$(basename "$deb")" = "imgsmith_${version}_amd64.deb"
check "its Version field is the project's" test "$(dpkg-deb -f "$deb" Version)" = "$version"
depends=$(dpkg-deb -f "$deb" Depends)
# libarchive13 and libcurl4 are loaded with dlopen and named by hand
# (cmake/packaging.cmake); the rest dpkg-shlibdeps finds.
for lib in libarchive13 libcurl4 libssl3 libc6; do
  check "the package depends on $lib" grep -q "$lib" <<<"$depends"
done
dpkg-deb -c "$deb" >"$tmp/contents"
for f in usr/bin/imgsmith usr/bin/imgsmith-probe usr/share/bash-completion/completions/imgsmith \
         usr/share/zsh/vendor-completions/_imgsmith usr/share/fish/vendor_completions.d/imgsmith.fish \
         usr/share/doc/imgsmith/copyright usr/share/doc/imgsmith/CHANGELOG.md \
         usr/share/man/man1/imgsmith.1.gz usr/share/man/man1/imgsmith-analyze.1.gz \
         usr/share/man/man1/imgsmith-gen.1.gz usr/share/man/man1/imgsmith-diff.1.gz \
         usr/share/man/man1/imgsmith-slim.1.gz \
         usr/share/man/man1/imgsmith-probe.1.gz; do
  check "the package holds /$f" grep -q " \./$f\$" "$tmp/contents"
done
echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"

# shellcheck source=dockerd.sh
source "$here/dockerd.sh"
start_test_dockerd "$cache/docker"
"$docker" import "$root_tar" imgsmith-test/bookworm:minbase >/dev/null || { echo "FAIL: docker import"; exit 1; }

# This build's own analysis of the fixture, to compare the installed ones with.
"$bin" analyze "$fixture" --format json -q -o "$tmp/host.json" || { echo "FAIL: analyze on the host"; exit 1; }

mkdir -p "$tmp/pkg"
cp "$deb" "$tmp/pkg/"
cp "$fixture" "$tmp/pkg/fixture.tar"
cat >"$tmp/pkg/install-and-run.sh" <<'EOF'
set -eu
apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  /pkg/imgsmith_*.deb man-db bash-completion >/tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log; exit 1; }
imgsmith --version >/out/version
dpkg-query -W -f '${Version}' imgsmith >/out/dpkg-version
imgsmith analyze /pkg/fixture.tar --format json -q -o /out/installed.json
# A gzip-compressed save is read through libarchive, loaded on first use:
# from the package's dependency, and without it, a message that names it.
gzip -c /pkg/fixture.tar >/tmp/fixture.tar.gz
imgsmith analyze /tmp/fixture.tar.gz --format json -q -o /out/installed-gz.json
dpkg -r --force-depends libarchive13 >/dev/null 2>&1
status=0
imgsmith analyze /tmp/fixture.tar.gz -q >/dev/null 2>/out/no-libarchive || status=$?
echo "$status" >/out/no-libarchive-status
imgsmith --version >/out/version-without-libarchive
for page in imgsmith imgsmith-analyze imgsmith-diff imgsmith-gen imgsmith-slim imgsmith-probe; do man -w "$page"; done >/out/man
# bash-completion finds the script where the package put it, on demand.
bash -c '. /usr/share/bash-completion/bash_completion
  _completion_loader imgsmith
  COMP_WORDS=(imgsmith analyze --fo); COMP_CWORD=2; COMP_LINE="imgsmith analyze --fo"
  _imgsmith; echo "${COMPREPLY[*]}"' >/out/completion
EOF
mkdir -p "$tmp/pkg-out"
if "$docker" run --rm --network host -v "$tmp/pkg:/pkg:ro" -v "$tmp/pkg-out:/out" imgsmith-test/bookworm:minbase \
     bash /pkg/install-and-run.sh >"$tmp/install.log" 2>&1; then
  check "the installed imgsmith --version names the package's version, and ISA-L inflating gzip" \
    grep -q "^imgsmith $version (gzip layers: ISA-L [0-9.]*)\$" "$tmp/pkg-out/version"
  check "dpkg knows it as $version" test "$(cat "$tmp/pkg-out/dpkg-version")" = "$version"
  for field in "d['size']['final_bytes']" "d['size']['wasted_bytes']" "d['dive']['efficiency']" \
               "[(c['name'], c['bytes']) for c in d['categories']]"; do
    same "the installed imgsmith's analysis equals this build's on $field" "$field" "$tmp/pkg-out/installed.json" "$tmp/host.json"
  done
  same "a gzip-compressed save, through the libarchive loaded on first use, gives the same final bytes" \
    "d['size']['final_bytes']" "$tmp/pkg-out/installed-gz.json" "$tmp/host.json"
  check "without libarchive13 a compressed save fails with exit 2" test "$(cat "$tmp/pkg-out/no-libarchive-status")" = 2
  check "and the message names the library and the package" \
    grep -q "cannot load libarchive.so.13, which imgsmith needs to read compressed layers and saves: .*install Debian's libarchive13" "$tmp/pkg-out/no-libarchive"
  check "imgsmith --version needs no libarchive" grep -q "^imgsmith $version" "$tmp/pkg-out/version-without-libarchive"
  check "man -w finds every page" test "$(grep -c '/usr/share/man/man1/imgsmith.*\.1\.gz$' "$tmp/pkg-out/man")" = 6
  check "bash completes 'imgsmith analyze --fo' to --format" test "$(cat "$tmp/pkg-out/completion")" = "--format"
else
  echo "FAIL: the package does not install and run in a clean Debian 12 container"; tail -20 "$tmp/install.log"
  fail=$((fail + 1))
fi

# ----- the imgsmith image ---------------------------------------------------------
# Building it compiles imgsmith a whole time more, in a container (about 7
# minutes of both CPUs here): it runs when IMGSMITH_TEST_IMAGE=1, outside
# CI's time budget; run it after changing the Dockerfile, scripts/setup.sh
# or the packaging (README.md, "Tests").
cuda_dir=$(readlink -f /usr/local/cuda 2>/dev/null || true)
if [ "${IMGSMITH_TEST_IMAGE:-0}" != 1 ]; then
  echo "package: the imgsmith image is not built (IMGSMITH_TEST_IMAGE=1 builds it)"
elif [ ! -x "$cuda_dir/bin/nvcc" ]; then
  skip_part "the imgsmith image: no CUDA toolkit in /usr/local/cuda for the devel stand-in its kernels stage uses"
else
  "$here/cuda_standins.sh" standin "$root_tar" "$cuda_dir" 13.0.0 || { echo "FAIL: the CUDA stand-ins"; exit 1; }
  image=imgsmith-test/imgsmith:$version
  echo "package: building the imgsmith image (compiles imgsmith in its build stage: minutes)"
  if DOCKER_BUILDKIT=1 "$docker" build --network host -t "$image" \
       --build-arg CUDA_DEVEL_IMAGE=standin/nvidia/cuda:13.0.0-devel-ubuntu24.04 \
       --build-arg BUILD_IMAGE=imgsmith-test/bookworm:minbase \
       --build-arg RUNTIME_IMAGE=imgsmith-test/bookworm:minbase \
       "$source_dir" >"$tmp/image.log" 2>&1; then
    run_image() { "$docker" run --rm "$@"; }
    check "the image's imgsmith --version is the package's" \
      test "$(run_image "$image" --version | cut -d' ' -f1-2)" = "imgsmith $version"
    check "it runs as a non-root user" test "$(run_image --entrypoint id "$image" -u)" = 10001
    check "its final stage has no compiler" \
      test -z "$(run_image --entrypoint sh "$image" -c 'command -v gcc cc g++ c++ nvcc cmake' || true)"
    # The kernels stage's fatbin is in the probe: its header's magic, 0xBA55ED50.
    run_image --entrypoint cat "$image" /usr/bin/imgsmith-probe >"$tmp/image-probe"
    check "the image's probe carries the kernels' fatbin" python3 -c \
      'import sys; sys.exit(bytes.fromhex("50ed55ba") not in open(sys.argv[1], "rb").read())' "$tmp/image-probe"
    mkdir -p "$tmp/work" && cp "$fixture" "$tmp/work/img.tar" && chmod -R a+rX "$tmp/work"
    if run_image -v "$tmp/work:/work:ro" "$image" analyze /work/img.tar --format json -q >"$tmp/image.json"; then
      same "the image's analysis of a mounted file equals this build's" "d['size']['final_bytes']" \
        "$tmp/image.json" "$tmp/host.json"
    else
      echo "FAIL: docker run IMAGE analyze /work/img.tar"; fail=$((fail + 1))
    fi
    sock=${DOCKER_HOST#unix://}
    "$bin" analyze "docker://$image" --format json -q -o "$tmp/self-host.json"
    if run_image -v "$sock:/var/run/docker.sock" --group-add "$(stat -c %g "$sock")" "$image" \
         analyze "docker://$image" --format json -q --progress never >"$tmp/self.json" 2>"$tmp/self.err"; then
      same "docker:// through the socket, from inside the image, equals the host's" "d['size']['final_bytes']" \
        "$tmp/self.json" "$tmp/self-host.json"
    else
      echo "FAIL: docker run IMAGE analyze docker://$image through the socket"; cat "$tmp/self.err"
      fail=$((fail + 1))
    fi
    # Its own size gate: the base it was built on plus at most 40 MB (the
    # package and the libraries it depends on).
    base=$("$bin" analyze docker://imgsmith-test/bookworm:minbase --format json -q |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["size"]["final_bytes"])')
    limit=$((base + 40000000))
    expect "the image passes its own --max-size gate (base + 40 MB)" 0 run_image \
      -v "$sock:/var/run/docker.sock" --group-add "$(stat -c %g "$sock")" "$image" \
      analyze "docker://$image" --max-size "$limit" -q
    size=$(json_field "$tmp/self-host.json" "d['size']['final_bytes']")
    echo "package: the image is $size bytes, $((size - base)) over its base of $base"
  else
    echo "FAIL: docker build of the repository's Dockerfile"; tail -30 "$tmp/image.log"
    fail=$((fail + 1))
  fi
fi

[ "${fail:-0}" = 0 ] && [ -z "$skipped_parts" ] && echo "package: ok"
finish
