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

// C[m x n] = op(A) * op(B) (+ relu), row-major, op = transpose when asked:
// the matrix products of the network step in the CPU-vs-GPU race. A is
// m x k (k x m when trans_a), B is k x n (n x k when trans_b).
// A block of 16 x 16 threads computes a 64 x 64 tile of C, each thread a
// 4 x 4 tile in registers: per step of 16 along k the block stages 64 x 16
// of A and 16 x 64 of B in shared memory (each global load coalesced, in
// whichever layout the operand has), and each thread does 16 FMAs for
// every 8 shared-memory reads. A thread's rows and columns are 16 apart,
// so that a warp's stores to C are contiguous. Launched as a grid of
// ((n + 63) / 64, (m + 63) / 64) blocks of (16, 16).
#define PROBE_TILE 64
#define PROBE_STEP 16
extern "C" __global__ void probe_sgemm(const float* A, const float* B, float* C, int m, int n,
                                       int k, int trans_a, int trans_b, int relu) {
  // +1: the staging stores of consecutive threads fall in different banks.
  __shared__ float as[PROBE_STEP][PROBE_TILE + 1];  // as[p][row]
  __shared__ float bs[PROBE_STEP][PROBE_TILE + 1];  // bs[p][column]
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int row0 = blockIdx.y * PROBE_TILE, col0 = blockIdx.x * PROBE_TILE;
  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
  for (int t = 0; t < k; t += PROBE_STEP) {
    for (int e = tid; e < PROBE_TILE * PROBE_STEP; e += 256) {
      // The index that runs along the operand's contiguous dimension varies
      // fastest between threads.
      const int r = trans_a ? e % PROBE_TILE : e / PROBE_STEP;
      const int p = trans_a ? e / PROBE_TILE : e % PROBE_STEP;
      const int gr = row0 + r, gp = t + p;
      as[p][r] = gr < m && gp < k ? (trans_a ? A[gp * m + gr] : A[gr * k + gp]) : 0.0f;
      const int c = trans_b ? e / PROBE_STEP : e % PROBE_TILE;
      const int q = trans_b ? e % PROBE_STEP : e / PROBE_TILE;
      const int gc = col0 + c, gq = t + q;
      bs[q][c] = gc < n && gq < k ? (trans_b ? B[gc * k + gq] : B[gq * n + gc]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < PROBE_STEP; ++p) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = as[p][ty + 16 * i];
      for (int j = 0; j < 4; ++j) b[j] = bs[p][tx + 16 * j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int row = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
      if (row < m && col < n) C[row * n + col] = relu && acc[i][j] < 0.0f ? 0.0f : acc[i][j];
    }
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
