// y = a*x + y on the GPU, by a kernel and by cuBLAS; exits 0 when they agree.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "saxpy: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main() {
  const int n = 1 << 20;
  const float a = 2.5f;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 100) / 10.0f;
    y[i] = 1.0f;
  }
  float *dx = nullptr, *dy_kernel = nullptr, *dy_blas = nullptr;
  const size_t bytes = n * sizeof(float);
  if (!ok(cudaMalloc(&dx, bytes), "cudaMalloc") ||
      !ok(cudaMalloc(&dy_kernel, bytes), "cudaMalloc") ||
      !ok(cudaMalloc(&dy_blas, bytes), "cudaMalloc"))
    return 1;
  cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dy_kernel, y.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dy_blas, y.data(), bytes, cudaMemcpyHostToDevice);

  saxpy<<<(n + 255) / 256, 256>>>(n, a, dx, dy_kernel);
  if (!ok(cudaGetLastError(), "kernel launch")) return 1;

  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "saxpy: cublasCreate failed\n");
    return 1;
  }
  cublasSaxpy(handle, n, &a, dx, 1, dy_blas, 1);
  cublasDestroy(handle);

  std::vector<float> from_kernel(n), from_blas(n);
  cudaMemcpy(from_kernel.data(), dy_kernel, bytes, cudaMemcpyDeviceToHost);
  if (!ok(cudaMemcpy(from_blas.data(), dy_blas, bytes, cudaMemcpyDeviceToHost), "copy back"))
    return 1;
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(from_kernel[i] - from_blas[i]) > 1e-5f ||
        std::fabs(from_kernel[i] - (a * x[i] + 1.0f)) > 1e-5f)
      ++wrong;
  std::printf("saxpy: %d elements, %d differ between the kernel and cuBLAS\n", n, wrong);
  cudaFree(dx);
  cudaFree(dy_kernel);
  cudaFree(dy_blas);
  return wrong == 0 ? 0 : 1;
}
