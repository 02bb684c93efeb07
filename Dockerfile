# The imgsmith image: imgsmith and its libraries on Debian 12, non-root, no
# compilers, `imgsmith` as the entrypoint.
#   DOCKER_BUILDKIT=1 docker build -t imgsmith .
#   docker run --rm -v "$PWD:/work" imgsmith analyze /work/img.tar
#   docker run --rm -v /var/run/docker.sock:/var/run/docker.sock \
#     --group-add "$(stat -c %g /var/run/docker.sock)" imgsmith analyze docker://app:tag
# Three stages: the probe's GPU kernels are compiled where nvcc is (NVIDIA's
# devel image); imgsmith is built and packaged as a .deb on Debian 12; the
# final stage installs that package, so the image, the package and
# `imgsmith --version` carry one version. The base images are arguments so
# a mirror or local copies can stand in for them.
ARG CUDA_DEVEL_IMAGE=nvidia/cuda:13.0.2-devel-ubuntu24.04
ARG BUILD_IMAGE=debian:bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${CUDA_DEVEL_IMAGE} AS kernels
# nvcc runs the host compiler's preprocessor; NVIDIA's devel images have g++.
RUN command -v g++ >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y --no-install-recommends g++ && rm -rf /var/lib/apt/lists/*; }
COPY probes/build-fatbin.sh probes/kernels.cu /src/
RUN /src/build-fatbin.sh /usr/local/cuda/bin/nvcc /src/kernels.cu /kernels.fatbin

FROM ${BUILD_IMAGE} AS build
COPY scripts/setup.sh /src/scripts/setup.sh
RUN /src/scripts/setup.sh --build-only && rm -rf /var/lib/apt/lists/*
COPY . /src
COPY --from=kernels /kernels.fatbin /kernels.fatbin.ptx /kernels.fatbin.cuda /
RUN cmake -S /src -B /build -DCMAKE_BUILD_TYPE=Release -DIMGSMITH_BUILD_TESTS=OFF \
      -DIMGSMITH_PROBE_FATBIN=/kernels.fatbin >/dev/null \
 && cmake --build /build -j"$(nproc)" \
 && cmake --build /build --target package

FROM ${RUNTIME_IMAGE}
COPY --from=build /build/packages/ /tmp/packages/
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      /tmp/packages/imgsmith_*.deb ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /tmp/packages \
 && useradd --uid 10001 --user-group --create-home --home-dir /home/imgsmith imgsmith \
 && mkdir /work && chown imgsmith:imgsmith /work
WORKDIR /work
USER 10001:10001
ENTRYPOINT ["imgsmith"]
CMD ["--help"]
