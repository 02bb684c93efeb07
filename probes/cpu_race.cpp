#include "cpu_race.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

// Each function marked so is compiled three times on x86-64 (AVX-512, AVX2
// with FMA, and the SSE2 every x86-64 has) and the dynamic loader picks the
// best this CPU runs (an ifunc), so one binary is fast on new servers and
// still runs on old ones. arm64's NEON is always there. The clones are
// named by ISA level (x86-64-v4, -v3), which the resolver tests by CPU
// feature: "arch=skylake-avx512" would be chosen by CPU model, and every
// AMD EPYC and every later Intel Xeon would run the SSE2 clone. The matrix
// product goes further: one function per ISA with a vector as wide as its
// registers (gemm_rows_avx512 and the others below), chosen by vector_isa().
#if defined(__x86_64__)
#define PROBE_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PROBE_VECTOR_CLONES
#endif

namespace probe {

NetBuffers::NetBuffers()
    : x(kBatch * kWidth),
      w1(kWidth * kWidth),
      w2(kWidth * kWidth),
      h(kBatch * kWidth),
      y(kBatch * kWidth),
      dy(kBatch * kWidth),
      dw1(kWidth * kWidth),
      dw2(kWidth * kWidth),
      dh(kBatch * kWidth) {
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((i * 37) % 101) / 101.0f - 0.5f;
  for (std::size_t i = 0; i < w1.size(); ++i)
    w1[i] = static_cast<float>((i * 17) % 97) / 970.0f - 0.05f;
  for (std::size_t i = 0; i < w2.size(); ++i)
    w2[i] = static_cast<float>((i * 13) % 89) / 890.0f - 0.05f;
  for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<float>((i * 7) % 61) / 610.0f;
}

LogregData::LogregData() : x(kRows * kFeatures), y(kRows), w(kFeatures, 0.0f), residual(kRows) {
  for (int r = 0; r < kRows; ++r) {
    float z = 0;
    for (int f = 0; f < kFeatures; ++f) {
      const float v = static_cast<float>((r * 31 + f * 17) % 113) / 113.0f - 0.5f;
      x[r * kFeatures + f] = v;
      z += v * (f % 3 == 0 ? 1.0f : -0.5f);
    }
    y[r] = z > 0 ? 1.0f : 0.0f;
  }
}

namespace {

// A cgroup's CPU quota in CPUs (rounded up), 0 when there is none: cgroup
// v2's cpu.max ("max 100000" or "200000 100000"), else v1's cfs files.
int cgroup_cpu_quota() {
  long long quota = -1, period = 0;
  // stdio, not iostreams: static libstdc++'s streams would add megabytes.
  if (FILE* v2 = std::fopen("/sys/fs/cgroup/cpu.max", "r")) {
    char q[32] = {};
    const int got = std::fscanf(v2, "%31s %lld", q, &period);
    std::fclose(v2);
    if (got != 2 || std::strcmp(q, "max") == 0) return 0;
    quota = std::atoll(q);
  } else {
    FILE* q = std::fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r");
    FILE* p = std::fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r");
    if (q == nullptr || p == nullptr || std::fscanf(q, "%lld", &quota) != 1 ||
        std::fscanf(p, "%lld", &period) != 1)
      quota = -1;
    if (q != nullptr) std::fclose(q);
    if (p != nullptr) std::fclose(p);
  }
  if (quota <= 0 || period <= 0) return 0;
  return static_cast<int>((quota + period - 1) / period);
}

// Four, eight or sixteen floats: one SSE/NEON, AVX or AVX-512 register in a
// function compiled for that ISA. Loaded and stored unaligned, by
// __builtin_memcpy written out in place.
typedef float Vec4 __attribute__((vector_size(16)));
typedef float Vec8 __attribute__((vector_size(32)));
typedef float Vec16 __attribute__((vector_size(64)));

// Rows [r0, r1) of C += op(A) * B, B k x n row-major. The micro-kernel
// keeps a tile of 4 rows by 3 vectors of C in twelve vector registers
// while a block of B's rows passes under it: each load of B serves four
// rows, each broadcast of A three vectors, and C is read and written once
// a block. A's four rows of the block are first packed side by side, so
// the kernel reads them in order whatever A's layout (transposed or not).
// Inlined into one function per ISA below, whose target decides the
// registers: a 16-wide vector in AVX-512's, 8 in AVX2's, 4 in SSE2's.
template <typename Vec>
[[gnu::always_inline]] inline void gemm_rows_with(const float* A, const float* B, float* C, int m,
                                                  int n, int k, bool trans_a, int r0, int r1) {
  constexpr int kLanes = static_cast<int>(sizeof(Vec) / sizeof(float));
  constexpr int kRowsPerTile = 4, kVectors = 3, kColumnsPerTile = kLanes * kVectors, kBlock = 256;
  const auto a_at = [&](int i, int p) {
    return trans_a ? A[static_cast<std::size_t>(p) * m + i]
                   : A[static_cast<std::size_t>(i) * k + p];
  };
  float packed[kBlock][kRowsPerTile];
  for (int p0 = 0; p0 < k; p0 += kBlock) {
    const int p1 = std::min(k, p0 + kBlock);
    int i = r0;
    for (; i + kRowsPerTile <= r1; i += kRowsPerTile) {
      for (int p = p0; p < p1; ++p)
        for (int r = 0; r < kRowsPerTile; ++r) packed[p - p0][r] = a_at(i + r, p);
      int j0 = 0;
      for (; j0 + kColumnsPerTile <= n; j0 += kColumnsPerTile) {
        Vec acc[kRowsPerTile][kVectors];
        for (int r = 0; r < kRowsPerTile; ++r)
          for (int v = 0; v < kVectors; ++v)
            __builtin_memcpy(&acc[r][v], C + static_cast<std::size_t>(i + r) * n + j0 + kLanes * v,
                             sizeof(Vec));
        for (int p = p0; p < p1; ++p) {
          const float* b = B + static_cast<std::size_t>(p) * n + j0;
          Vec b0, b1, b2;
          __builtin_memcpy(&b0, b, sizeof b0);
          __builtin_memcpy(&b1, b + kLanes, sizeof b1);
          __builtin_memcpy(&b2, b + 2 * kLanes, sizeof b2);
          for (int r = 0; r < kRowsPerTile; ++r) {
            const Vec a = Vec{} + packed[p - p0][r];
            acc[r][0] += a * b0;
            acc[r][1] += a * b1;
            acc[r][2] += a * b2;
          }
        }
        for (int r = 0; r < kRowsPerTile; ++r)
          for (int v = 0; v < kVectors; ++v)
            __builtin_memcpy(C + static_cast<std::size_t>(i + r) * n + j0 + kLanes * v, &acc[r][v],
                             sizeof(Vec));
      }
      for (int r = 0; r < kRowsPerTile; ++r)  // columns past the last whole tile
        for (int p = p0; p < p1; ++p)
          for (int j = j0; j < n; ++j)
            C[static_cast<std::size_t>(i + r) * n + j] +=
                packed[p - p0][r] * B[static_cast<std::size_t>(p) * n + j];
    }
    for (; i < r1; ++i)  // rows past the last whole tile
      for (int p = p0; p < p1; ++p)
        for (int j = 0; j < n; ++j)
          C[static_cast<std::size_t>(i) * n + j] +=
              a_at(i, p) * B[static_cast<std::size_t>(p) * n + j];
  }
}

using GemmRows = void (*)(const float*, const float*, float*, int, int, int, bool, int, int);

#if defined(__x86_64__)
__attribute__((target("arch=x86-64-v4"))) void gemm_rows_avx512(const float* A, const float* B,
                                                                float* C, int m, int n, int k,
                                                                bool trans_a, int r0, int r1) {
  gemm_rows_with<Vec16>(A, B, C, m, n, k, trans_a, r0, r1);
}
__attribute__((target("arch=x86-64-v3"))) void gemm_rows_avx2(const float* A, const float* B,
                                                              float* C, int m, int n, int k,
                                                              bool trans_a, int r0, int r1) {
  gemm_rows_with<Vec8>(A, B, C, m, n, k, trans_a, r0, r1);
}
#endif
void gemm_rows_baseline(const float* A, const float* B, float* C, int m, int n, int k, bool trans_a,
                        int r0, int r1) {
  gemm_rows_with<Vec4>(A, B, C, m, n, k, trans_a, r0, r1);
}

PROBE_VECTOR_CLONES
void logreg_steps(LogregData& d) {
  float g[kFeatures];
  for (int s = 0; s < kSteps; ++s) {
    for (int r = 0; r < kRows; ++r) {
      const float* x = &d.x[static_cast<std::size_t>(r) * kFeatures];
      float z = 0;
      for (int f = 0; f < kFeatures; ++f) z += x[f] * d.w[f];
      d.residual[r] = 1.0f / (1.0f + std::exp(-z)) - d.y[r];
    }
    std::fill(g, g + kFeatures, 0.0f);
    for (int r = 0; r < kRows; ++r) {
      const float* x = &d.x[static_cast<std::size_t>(r) * kFeatures];
      const float res = d.residual[r];
      for (int f = 0; f < kFeatures; ++f) g[f] += x[f] * res;
    }
    for (int f = 0; f < kFeatures; ++f) d.w[f] -= kLearningRate * g[f] / kRows;
  }
}

}  // namespace

int usable_cpus() {
  cpu_set_t set;
  int cpus = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int quota = cgroup_cpu_quota();
  return quota > 0 ? std::min(cpus, quota) : cpus;
}

std::string vector_isa() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  // The features of the ISA levels the clones are compiled for.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512cd"))
    return "AVX-512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("bmi2"))
    return "AVX2";
  return "SSE2";
#elif defined(__aarch64__)
  return "NEON";
#else
  return "scalar code";
#endif
}

WorkerPool::WorkerPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back(&WorkerPool::work, this, i);
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (auto& t : workers_) t.join();
}

void WorkerPool::work(int index) {
  unsigned long seen = 0;
  for (;;) {
    const std::function<void(int)>* body = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      body = body_;
    }
    (*body)(index);
    std::lock_guard<std::mutex> lock(mutex_);
    if (--running_ == 0) done_.notify_one();
  }
}

void WorkerPool::run(const std::function<void(int)>& body) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    running_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  start_.notify_all();
  body(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return running_ == 0; });
}

namespace {

// The micro-kernel of an ISA, by vector_isa()'s name.
GemmRows gemm_rows_for(const std::string& isa) {
#if defined(__x86_64__)
  if (isa == "AVX-512") return gemm_rows_avx512;
  if (isa == "AVX2") return gemm_rows_avx2;
#endif
  return gemm_rows_baseline;
}

}  // namespace

std::vector<std::string> usable_gemm_kernels() {
  const std::string widest = vector_isa();
  std::vector<std::string> kernels;
#if defined(__x86_64__)
  for (const char* isa : {"AVX-512", "AVX2", "SSE2"})
    if (!kernels.empty() || widest == isa) kernels.push_back(isa);
#else
  kernels.push_back(widest);
#endif
  return kernels;
}

void cpu_gemm(const float* A, const float* B, float* C, int m, int n, int k, bool trans_a,
              bool trans_b, bool relu, WorkerPool& pool) {
  static const std::string widest = vector_isa();
  cpu_gemm_with(widest, A, B, C, m, n, k, trans_a, trans_b, relu, pool);
}

void cpu_gemm_with(const std::string& kernel, const float* A, const float* B, float* C, int m,
                   int n, int k, bool trans_a, bool trans_b, bool relu, WorkerPool& pool) {
  // B transposed is read down its columns; copying it once into row order
  // lets the inner loop run over contiguous memory, in vectors.
  std::vector<float> bt;
  if (trans_b) {
    bt.resize(static_cast<std::size_t>(k) * n);
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p)
        bt[static_cast<std::size_t>(p) * n + j] = B[static_cast<std::size_t>(j) * k + p];
    B = bt.data();
  }
  // Each thread its band of rows, whole tiles of four where there are
  // enough; the relu on its own band while it is still in cache.
  const int threads = pool.size();
  const GemmRows gemm_rows = gemm_rows_for(kernel);
  const int per = ((m + threads - 1) / threads + 3) / 4 * 4;
  pool.run([&](int t) {
    const int r0 = std::min(m, t * per), r1 = std::min(m, r0 + per);
    if (r0 >= r1) return;
    float* rows = C + static_cast<std::size_t>(r0) * n;
    const std::size_t count = static_cast<std::size_t>(r1 - r0) * n;
    std::fill(rows, rows + count, 0.0f);
    gemm_rows(A, B, C, m, n, k, trans_a, r0, r1);
    if (relu)
      for (std::size_t i = 0; i < count; ++i) rows[i] = std::max(rows[i], 0.0f);
  });
}

void cpu_network_step(NetBuffers& b, WorkerPool& pool) {
  cpu_gemm(b.x.data(), b.w1.data(), b.h.data(), kBatch, kWidth, kWidth, false, false, true, pool);
  cpu_gemm(b.h.data(), b.w2.data(), b.y.data(), kBatch, kWidth, kWidth, false, false, false, pool);
  cpu_gemm(b.h.data(), b.dy.data(), b.dw2.data(), kWidth, kWidth, kBatch, true, false, false, pool);
  cpu_gemm(b.dy.data(), b.w2.data(), b.dh.data(), kBatch, kWidth, kWidth, false, true, false, pool);
  cpu_gemm(b.x.data(), b.dh.data(), b.dw1.data(), kWidth, kWidth, kBatch, true, false, false, pool);
  cpu_gemm(b.y.data(), b.w2.data(), b.dh.data(), kBatch, kWidth, kWidth, false, true, false, pool);
}

void cpu_logreg(LogregData& d) {
  std::fill(d.w.begin(), d.w.end(), 0.0f);
  logreg_steps(d);
}

double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double largest = 0, diff = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    largest = std::max(largest, static_cast<double>(std::fabs(want[i])));
    const double g = i < got.size() ? got[i] : 0.0;
    if (std::isnan(g) || std::isinf(g)) return 1e9;  // std::max would drop a NaN
    diff = std::max(diff, std::fabs(g - want[i]));
  }
  if (got.size() != want.size()) return 1e9;
  return largest > 0 ? diff / largest : diff;
}

}  // namespace probe
