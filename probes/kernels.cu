// The probe's benchmark kernels, compiled by nvcc into a fatbin (SASS for
// each supported architecture, PTX for the lowest) that the probe embeds and
// loads with cuModuleLoadData: the probe links no CUDA library.
//
// extern "C" keeps the names the probe looks up with cuModuleGetFunction.

// Device-to-device copy, one float4 per thread per step (bandwidth).
extern "C" __global__ void probe_copy(const float4* __restrict__ in, float4* __restrict__ out,
                                      unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    out[i] = in[i];
}

// FP32 throughput: independent FMA chains, 2 flops each, `iterations` x 8.
extern "C" __global__ void probe_fma(float* out, int iterations, float seed) {
  float a = seed + threadIdx.x, b = seed - threadIdx.x, c = seed * 0.5f, d = seed * 0.25f;
  float e = a + 1.0f, f = b + 1.0f, g = c + 1.0f, h = d + 1.0f;
  const float x = 0.999f, y = 0.001f;
  // Unrolled so that the loop's counter and branch do not take issue slots
  // from the FMAs (rolled, they cap it near 90% of peak).
#pragma unroll 16
  for (int i = 0; i < iterations; ++i) {
    a = fmaf(a, x, y);
    b = fmaf(b, x, y);
    c = fmaf(c, x, y);
    d = fmaf(d, x, y);
    e = fmaf(e, x, y);
    f = fmaf(f, x, y);
    g = fmaf(g, x, y);
    h = fmaf(h, x, y);
  }
  // Written so the compiler cannot drop the work.
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d + e + f + g + h;
}

// C[m x n] = op(A) * op(B) (+ relu), row-major, op = transpose when asked,
// 16x16 shared-memory tiles: the matrix products of the network step in the
// CPU-vs-GPU race. A is m x k (k x m when trans_a), B is k x n (n x k).
extern "C" __global__ void probe_sgemm(const float* A, const float* B, float* C, int m, int n,
                                       int k, int trans_a, int trans_b, int relu) {
  __shared__ float as[16][16];
  __shared__ float bs[16][16];
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < k; t += 16) {
    const int ka = t + threadIdx.x, kb = t + threadIdx.y;
    as[threadIdx.y][threadIdx.x] =
        (row < m && ka < k) ? (trans_a ? A[ka * m + row] : A[row * k + ka]) : 0.0f;
    bs[threadIdx.y][threadIdx.x] =
        (col < n && kb < k) ? (trans_b ? B[col * k + kb] : B[kb * n + col]) : 0.0f;
    __syncthreads();
    for (int i = 0; i < 16; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) C[row * n + col] = relu && acc < 0.0f ? 0.0f : acc;
}

// One gradient step of logistic regression over rows x features, the way a
// fraud model trains: p = sigmoid(X w); grad = X^T (p - y) / rows. expf, not
// __expf: the same precision as the CPU side of the race, whose results the
// probe compares with these.
extern "C" __global__ void probe_logreg_predict(const float* X, const float* w, const float* y,
                                                float* residual, int rows, int features) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float z = 0.0f;
  for (int f = 0; f < features; ++f) z += X[r * features + f] * w[f];
  residual[r] = 1.0f / (1.0f + expf(-z)) - y[r];
}

// One block per feature, 256 threads: each sums a strided share of the
// rows, then the block reduces in shared memory (a parallel reduction, not
// one thread walking every row).
extern "C" __global__ void probe_logreg_gradient(const float* X, const float* residual, float* w,
                                                 int rows, int features, float rate) {
  __shared__ float partial[256];
  const int f = blockIdx.x;
  if (f >= features) return;
  float g = 0.0f;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) g += X[r * features + f] * residual[r];
  partial[threadIdx.x] = g;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) w[f] -= rate * partial[0] / rows;
}
