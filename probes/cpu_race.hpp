// The CPU side of the probe's CPU-vs-GPU race (--bench), written to be a fair
// opponent: every CPU the container may use, in threads, with the widest
// vector instructions this CPU has (chosen at run time, so the probe still
// runs on any x86-64), and the same work and precision as the GPU's kernels
// (probes/kernels.cu), whose results are compared with these.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace probe {

// The network step: the six matrix products of one training step of a
// two-layer MLP (batch 256, width 768): forward X*W1 (relu), H*W2; backward
// H^T*dY, dY*W2^T, X^T*dH, and the loss gradient product.
inline constexpr int kBatch = 256, kWidth = 768;

// Its work: six products of 2 * 256 * 768 * 768 flops (a multiply-add is two).
inline constexpr double kNetworkStepFlops = 6.0 * 2 * kBatch * kWidth * kWidth;

struct NetBuffers {
  std::vector<float> x, w1, w2, h, y, dy, dw1, dw2, dh;
  NetBuffers();  // deterministic inputs, the same on every run
};

// The logistic regression: a small tabular model, like a fraud detector:
// 5,000 rows of 30 features, 50 full-batch gradient steps from w = 0.
inline constexpr int kRows = 5000, kFeatures = 30, kSteps = 50;
inline constexpr float kLearningRate = 0.5f;
// Its work: a step's two passes over X (the predictions' and the gradient's
// multiply-adds); the sigmoid's exp is not counted.
inline constexpr double kLogregFlops = kSteps * 2.0 * 2 * kRows * kFeatures;

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

// Threads started once and kept for every product of the race: starting a
// thread per product costs tens of microseconds each, which on a many-core
// server is a share of a product that takes a millisecond or two.
class WorkerPool {
 public:
  explicit WorkerPool(int threads);  // the caller is one of them
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // body(0) .. body(size() - 1), each on its own thread (0 on the caller's);
  // returns when all have.
  void run(const std::function<void(int)>& body);

 private:
  void work(int index);
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(int)>* body_ = nullptr;
  unsigned long generation_ = 0;
  int running_ = 0;
  bool stopping_ = false;
};

// C[m x n] = op(A) * op(B) (+ relu), row-major, on the pool's threads; A is
// m x k (k x m when trans_a), B is k x n (n x k when trans_b). With the
// micro-kernel of the widest vectors this CPU has (vector_isa()).
void cpu_gemm(const float* A, const float* B, float* C, int m, int n, int k, bool trans_a,
              bool trans_b, bool relu, WorkerPool& pool);
// The micro-kernels this CPU can run, by vector_isa()'s names, widest first
// ("AVX-512", "AVX2", "SSE2" on x86-64; "NEON" on arm64); and the product
// with one of them (the tests check each).
std::vector<std::string> usable_gemm_kernels();
void cpu_gemm_with(const std::string& kernel, const float* A, const float* B, float* C, int m,
                   int n, int k, bool trans_a, bool trans_b, bool relu, WorkerPool& pool);
// One network step on the pool's threads (fills h, y, dw2, dh, dw1).
void cpu_network_step(NetBuffers& b, WorkerPool& pool);
// kSteps gradient steps from w = 0, on one thread (the problem is too small
// for more to help: the threads would spend longer meeting than working).
void cpu_logreg(LogregData& d);

// How far `got` is from `want`: the largest difference over the largest
// magnitude of `want` (0 when equal).
double relative_error(const std::vector<float>& got, const std::vector<float>& want);

}  // namespace probe
