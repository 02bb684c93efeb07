// The probe's GPU kernels (probes/kernels.cu) run on the CPU, with CUDA's
// semantics emulated: every thread of a block is a thread here, a block's
// __shared__ arrays are shared by its threads, and __syncthreads() is a
// barrier. No GPU is lent to CI, and a kernel that computes wrongly would
// make the probe call a healthy GPU untrustworthy (its results are checked
// against the CPU's), so each kernel is checked here against a reference,
// on sizes that are not multiples of its tiles. Beside them, the race's CPU
// side (probes/cpu_race.cpp), for every layout and thread count.
#include <barrier>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "cpu_race.hpp"

// ----- CUDA's execution model on host threads -----
struct dim3 {
  unsigned x = 0, y = 0, z = 0;
};
struct float4 {
  float x, y, z, w;
};
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
thread_local std::barrier<>* block_barrier = nullptr;
inline void sync_block_threads() { block_barrier->arrive_and_wait(); }

#define __global__
#define __shared__ static  // one block runs at a time: its threads share it
#define __restrict__ __restrict
#define __syncthreads() sync_block_threads()
#include "kernels.cu"
#undef __global__
#undef __shared__
#undef __restrict__
#undef __syncthreads

namespace {

// Runs `kernel` over a grid of blocks, one block after another, each
// block's threads at once (so that its barriers mean what they mean on a
// GPU). A thread that returns leaves the barrier to the others.
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, Args... args) {
  gridDim = {grid.x, grid.y, 1};
  blockDim = {block.x, block.y, 1};
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      std::barrier<> sync(static_cast<std::ptrdiff_t>(block.x * block.y));
      std::vector<std::thread> threads;
      for (unsigned ty = 0; ty < block.y; ++ty)
        for (unsigned tx = 0; tx < block.x; ++tx)
          threads.emplace_back([&, tx, ty] {
            blockIdx = {bx, by, 0};
            threadIdx = {tx, ty, 0};
            block_barrier = &sync;
            kernel(static_cast<Params>(args)...);
            sync.arrive_and_drop();
          });
      for (auto& t : threads) t.join();
    }
}

std::vector<float> pattern(std::size_t n, int salt) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 37 + salt * 11) % 23) / 23.0f - 0.45f;
  return v;
}

// op(A) * op(B) (+ relu) in double precision: the reference.
std::vector<float> reference_gemm(const std::vector<float>& A, const std::vector<float>& B, int m,
                                  int n, int k, bool trans_a, bool trans_b, bool relu) {
  std::vector<float> C(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += static_cast<double>(trans_a ? A[p * m + i] : A[i * k + p]) *
               (trans_b ? B[j * k + p] : B[p * n + j]);
      C[static_cast<std::size_t>(i) * n + j] = static_cast<float>(relu && sum < 0 ? 0 : sum);
    }
  return C;
}

struct KernelShape {
  int m, n, k;
};

}  // namespace

TEST_CASE(
    "probe kernels: the SGEMM's 64x64 register tiles give op(A)*op(B) for every layout, "
    "edges included",
    "[probe][kernels]") {
  // 70 x 130 x 37 cuts every tile and every step of 16; 64 x 128 x 32 fills
  // them exactly; 1 x 5 x 3 is smaller than one.
  for (const KernelShape s :
       {KernelShape{70, 130, 37}, KernelShape{64, 128, 32}, KernelShape{1, 5, 3}})
    for (const int trans_a : {0, 1})
      for (const int trans_b : {0, 1})
        for (const int relu : {0, 1}) {
          const auto A = pattern(static_cast<std::size_t>(s.m) * s.k, 1);
          const auto B = pattern(static_cast<std::size_t>(s.k) * s.n, 2);
          std::vector<float> C(static_cast<std::size_t>(s.m) * s.n, 99.0f);
          launch(probe_sgemm,
                 dim3{static_cast<unsigned>((s.n + 63) / 64),
                      static_cast<unsigned>((s.m + 63) / 64), 1},
                 dim3{16, 16, 1}, A.data(), B.data(), C.data(), s.m, s.n, s.k, trans_a, trans_b,
                 relu);
          const auto want = reference_gemm(A, B, s.m, s.n, s.k, trans_a, trans_b, relu);
          INFO(s.m << "x" << s.n << "x" << s.k << " trans_a " << trans_a << " trans_b " << trans_b
                   << " relu " << relu);
          CHECK(probe::relative_error(C, want) < 1e-5);
        }
}

TEST_CASE("probe kernels: the copy moves every float4 once, over a grid smaller than the data",
          "[probe][kernels]") {
  const unsigned long long n = 3000;  // 2 blocks of 64 threads: each thread loops
  std::vector<float4> in(n), out(n, float4{0, 0, 0, 0});
  for (std::size_t i = 0; i < n; ++i)
    in[i] = {float(i), float(i) + 0.25f, float(i) + 0.5f, float(i) + 0.75f};
  launch(probe_copy, dim3{2, 1, 1}, dim3{64, 1, 1}, in.data(), out.data(), n);
  CHECK(std::memcmp(in.data(), out.data(), sizeof(float4) * n) == 0);
}

TEST_CASE("probe kernels: the FMA chains leave each thread the value the probe checks",
          "[probe][kernels]") {
  const int iterations = 64;
  const float seed = 1.0f;
  std::vector<float> out(2 * 32, 0.0f);
  launch(probe_fma, dim3{2, 1, 1}, dim3{32, 1, 1}, out.data(), iterations, seed);
  for (unsigned t = 0; t < 32; ++t) {
    float v[8] = {seed + float(t), seed - float(t), seed * 0.5f, seed * 0.25f};
    v[4] = v[0] + 1.0f, v[5] = v[1] + 1.0f, v[6] = v[2] + 1.0f, v[7] = v[3] + 1.0f;
    for (int i = 0; i < iterations; ++i)
      for (float& x : v) x = std::fma(x, 0.999f, 0.001f);
    const float want = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    CHECK(out[t] == Approx(want).epsilon(1e-6));
    CHECK(out[32 + t] == Approx(want).epsilon(1e-6));  // the second block's thread t
  }
}

TEST_CASE(
    "probe kernels: a logistic-regression step (predict, then the block-reduced "
    "gradient) matches the race's CPU side",
    "[probe][kernels]") {
  probe::LogregData data;
  const int rows = probe::kRows, features = probe::kFeatures;
  std::vector<float> w(features, 0.0f), residual(rows);
  const float rate = probe::kLearningRate;
  for (int step = 0; step < 3; ++step) {
    launch(probe_logreg_predict, dim3{static_cast<unsigned>((rows + 255) / 256), 1, 1},
           dim3{256, 1, 1}, data.x.data(), w.data(), data.y.data(), residual.data(), rows,
           features);
    launch(probe_logreg_gradient, dim3{static_cast<unsigned>(features), 1, 1}, dim3{256, 1, 1},
           data.x.data(), residual.data(), w.data(), rows, features, rate);
  }
  // The CPU side's three steps, from the same start.
  std::vector<float> cpu_w(features, 0.0f);
  for (int step = 0; step < 3; ++step) {
    std::vector<double> g(features, 0.0);
    for (int r = 0; r < rows; ++r) {
      double z = 0;
      for (int f = 0; f < features; ++f) z += data.x[r * features + f] * cpu_w[f];
      const double res = 1.0 / (1.0 + std::exp(-z)) - data.y[r];
      for (int f = 0; f < features; ++f) g[f] += data.x[r * features + f] * res;
    }
    for (int f = 0; f < features; ++f) cpu_w[f] -= static_cast<float>(rate * g[f] / rows);
  }
  CHECK(probe::relative_error(w, cpu_w) < 1e-4);
}

TEST_CASE(
    "probe race CPU side: the pooled, register-tiled product is op(A)*op(B) for every "
    "layout and thread count",
    "[probe][race]") {
  // 98 x 200 x 300: two blocks of 256 along k, rows and columns past the
  // last whole tile of 4 x 24; 3 x 5 x 2 smaller than a tile.
  probe::WorkerPool one(1), three(3), eight(8);
  REQUIRE(eight.size() == 8);
  // Each micro-kernel this CPU runs (AVX-512's 16-wide vectors, AVX2's 8,
  // SSE2's 4 here), not only the one the race picks.
  const auto kernels = probe::usable_gemm_kernels();
  REQUIRE(!kernels.empty());
  CHECK(kernels.front() == probe::vector_isa());
  for (const KernelShape s :
       {KernelShape{70, 130, 37}, KernelShape{98, 200, 300}, KernelShape{3, 5, 2}})
    for (const bool trans_a : {false, true})
      for (const bool trans_b : {false, true})
        for (const bool relu : {false, true}) {
          const auto A = pattern(static_cast<std::size_t>(s.m) * s.k, 3);
          const auto B = pattern(static_cast<std::size_t>(s.k) * s.n, 4);
          const auto want = reference_gemm(A, B, s.m, s.n, s.k, trans_a, trans_b, relu);
          for (probe::WorkerPool* pool : {&one, &three, &eight})
            for (const std::string& kernel : kernels) {
              std::vector<float> C(static_cast<std::size_t>(s.m) * s.n, 99.0f);
              probe::cpu_gemm_with(kernel, A.data(), B.data(), C.data(), s.m, s.n, s.k, trans_a,
                                   trans_b, relu, *pool);
              INFO(kernel << ", " << pool->size() << " threads, " << s.m << "x" << s.n << "x" << s.k
                          << " trans_a " << trans_a << " trans_b " << trans_b << " relu " << relu);
              CHECK(probe::relative_error(C, want) < 1e-5);
            }
        }
}

TEST_CASE("probe race CPU side: the worker pool runs each share once per job, job after job",
          "[probe][race]") {
  probe::WorkerPool pool(4);
  std::vector<int> runs(4, 0);
  for (int job = 0; job < 100; ++job) pool.run([&](int t) { ++runs[static_cast<std::size_t>(t)]; });
  CHECK(runs == std::vector<int>(4, 100));
}
