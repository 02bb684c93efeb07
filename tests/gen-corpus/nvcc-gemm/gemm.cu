#include <cublas_v2.h>
#include <cuda_runtime.h>
int main() {
  cublasHandle_t h;
  cublasCreate(&h);
  return 0;
}
