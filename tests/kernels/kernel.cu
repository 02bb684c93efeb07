// One kernel, compiled by build-fixtures.sh with known -gencode sets: the
// CUDA binaries the kernel inventory's tests read.
__global__ void add(float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += b[i];
}

extern "C" int launch_add(float* a, const float* b, int n) {
  add<<<(n + 255) / 256, 256>>>(a, b, n);
  return 0;
}

#ifdef WITH_MAIN
int main() { return launch_add(nullptr, nullptr, 0); }
#endif

#ifdef WITH_RUNTIME_NAME
// A library that names a CUDA runtime it dlopens, in its read-only data:
// linked with -z noseparate-code (ld.bfd's default on aarch64), that data
// shares the first loadable segment with .dynstr.
extern "C" __attribute__((used)) const char kRuntimeName[] = "libcudart.so.12";
#endif
