# The Dockerfile a first attempt at the CUDA example looks like, kept to
# compare sizes with gen's: one stage on the devel image, compilers, headers
# and sources all shipped. (The image name is the test's local stand-in.)
FROM standin/nvidia/cuda:13.0.0-devel-ubuntu24.04
RUN apt-get update && apt-get install -y cmake g++ make
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES="75-real;80-real;86-real;89-real;90-real;100-real;120" \
 && cmake --build build --parallel && cmake --install build
CMD ["/usr/local/bin/saxpy"]
