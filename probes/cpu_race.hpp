// The CPU side of the probe's CPU-vs-GPU race (--bench), written to be a fair
// opponent: every CPU the container may use, in threads, with the widest
// vector instructions this CPU has (chosen at run time, so the probe still
// runs on any x86-64), and the same work and precision as the GPU's kernels
// (probes/kernels.cu), whose results are compared with these.
#pragma once

#include <string>
#include <vector>

namespace probe {

// The network step: the six matrix products of one training step of a
// two-layer MLP (batch 256, width 768): forward X*W1 (relu), H*W2; backward
// H^T*dY, dY*W2^T, X^T*dH, and the loss gradient product.
inline constexpr int kBatch = 256, kWidth = 768;

struct NetBuffers {
  std::vector<float> x, w1, w2, h, y, dy, dw1, dw2, dh;
  NetBuffers();  // deterministic inputs, the same on every run
};

// The logistic regression: a small tabular model, like a fraud detector:
// 5,000 rows of 30 features, 50 full-batch gradient steps from w = 0.
inline constexpr int kRows = 5000, kFeatures = 30, kSteps = 50;
inline constexpr float kLearningRate = 0.5f;

struct LogregData {
  std::vector<float> x, y, w, residual;
  LogregData();
};

// How many threads the container may run at once: the CPUs of its affinity
// mask, fewer where a cgroup CPU quota (docker --cpus, a Kubernetes CPU
// limit) allows less.
int usable_cpus();
// The vector instructions the matrix products run with: "AVX-512", "AVX2",
// "SSE2" (x86-64), "NEON" (arm64).
std::string vector_isa();

// C[m x n] = op(A) * op(B) (+ relu), row-major, on `threads` threads; A is
// m x k (k x m when trans_a), B is k x n (n x k when trans_b).
void cpu_gemm(const float* A, const float* B, float* C, int m, int n, int k, bool trans_a,
              bool trans_b, bool relu, int threads);
// One network step on `threads` threads (fills h, y, dw2, dh, dw1).
void cpu_network_step(NetBuffers& b, int threads);
// kSteps gradient steps from w = 0, on one thread (the problem is too small
// for more to help: the threads would spend longer meeting than working).
void cpu_logreg(LogregData& d);

// How far `got` is from `want`: the largest difference over the largest
// magnitude of `want` (0 when equal).
double relative_error(const std::vector<float>& got, const std::vector<float>& want);

}  // namespace probe
