#include "bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cpu_race.hpp"
#include "cuda_tables.hpp"
#include "peak_match.hpp"
#include "probe_report.hpp"
#include "probe_tables.hpp"

// The kernels, embedded by the build (probes/CMakeLists.txt): the fatbin and
// the same kernels as low-ISA PTX text (probes/build-fatbin.sh says why);
// absent when the build had no nvcc, and the benchmark then says so.
#ifndef IMGSMITH_PROBE_NO_KERNELS
extern "C" const unsigned char imgsmith_probe_kernels[];
extern "C" const char imgsmith_probe_kernels_ptx[];
#endif
// The CUDA release nvcc built the kernels with (13000 for 13.0); 0 unknown.
#ifndef IMGSMITH_PROBE_KERNELS_CUDA
#define IMGSMITH_PROBE_KERNELS_CUDA 0
#endif

namespace probe {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string num(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A figure measured several times: the median, and the spread of the runs
// around it ((max - min) / median).
struct Measure {
  double median = 0, spread = 0;
};

Measure summarize(std::vector<double> runs) {
  Measure m;
  if (runs.empty()) return m;
  std::sort(runs.begin(), runs.end());
  const std::size_t n = runs.size();
  m.median = n % 2 ? runs[n / 2] : (runs[n / 2 - 1] + runs[n / 2]) / 2;
  if (m.median > 0) m.spread = (runs.back() - runs.front()) / m.median;
  return m;
}

// Wall-clock milliseconds of `body`: one warm-up run, then up to `repeats`
// timed runs while `budget_ms` lasts (at least one).
template <typename Body>
Measure wall_clock(Body body, int repeats, double budget_ms) {
  body();
  std::vector<double> runs;
  const auto start = Clock::now();
  do {
    const auto t = Clock::now();
    if (!body()) return {};
    runs.push_back(ms_since(t));
  } while (static_cast<int>(runs.size()) < repeats && ms_since(start) < budget_ms);
  return summarize(runs);
}

// Published peaks (data/gpu-peaks.json), matched by name (peak_match.hpp).
using imgsmith::probe_tables::Peak;
using imgsmith::probe_tables::peak_for;

// What the FMA kernel (probes/kernels.cu) leaves for thread `t`: the same
// chains with the same fused multiply-adds, so the GPU's answer can be
// checked to the last bit or two.
float fma_expected(unsigned t, int iterations, float seed) {
  float v[8] = {seed + static_cast<float>(t), seed - static_cast<float>(t), seed * 0.5f,
                seed * 0.25f};
  v[4] = v[0] + 1.0f, v[5] = v[1] + 1.0f, v[6] = v[2] + 1.0f, v[7] = v[3] + 1.0f;
  for (int i = 0; i < iterations; ++i)
    for (float& x : v) x = std::fma(x, 0.999f, 0.001f);
  return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}

#ifndef IMGSMITH_PROBE_NO_KERNELS
// The PTX ISA version a PTX text declares (".version 7.0" -> 70), 0 when
// none: the driver compiles it only if its CUDA is at least that ISA's.
int ptx_isa(const char* ptx) {
  const char* v = std::strstr(ptx, "\n.version ");
  int major = 0, minor = 0;
  if (v == nullptr || std::sscanf(v, "\n.version %d.%d", &major, &minor) != 2) return 0;
  return major * 10 + minor;
}
#endif

std::string isa_text(int isa) { return std::to_string(isa / 10) + "." + std::to_string(isa % 10); }

// The GPU half: a primary context on CUDA device 0, the kernels loaded, and
// everything it allocates kept here and freed when it ends, so that the
// application the probe then runs finds the GPU as the probe found it.
class Gpu {
 public:
  explicit Gpu(const CudaDriver& driver) : cu(driver) {}
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;
  ~Gpu() { release(); }

  const CudaDriver& cu;
  std::string error;  // the first failure, named
  CUfunction copy = nullptr, fma = nullptr, gemm = nullptr, predict = nullptr, gradient = nullptr;
  // Which embedded kernels the driver took ("fatbin" or "ptx"), how long the
  // load took (a PTX load includes the driver's compilation), and why the
  // fatbin was passed over or refused, when it was.
  std::string kernels, kernels_fallback;
  double kernels_load_ms = 0;

  bool ok(CUresult rc, const std::string& what) {
    if (rc == CUDA_SUCCESS) return true;
    if (error.empty())
      error = what + " failed: " + name(rc) +
              (rc == CUDA_ERROR_OUT_OF_MEMORY ? ": GPU 0's memory is taken" : "");
    return false;
  }

  bool start(int driver_cuda) {
    driver_cuda_ = driver_cuda;
    const bool complete =
        cu.cuDeviceGet && cu.cuDevicePrimaryCtxRetain && cu.cuDevicePrimaryCtxRelease &&
        cu.cuCtxSetCurrent && cu.cuCtxSynchronize && cu.cuModuleLoadData && cu.cuModuleUnload &&
        cu.cuModuleGetFunction && cu.cuMemGetInfo && cu.cuMemAlloc && cu.cuMemFree &&
        cu.cuMemHostAlloc && cu.cuMemFreeHost && cu.cuMemcpyHtoD && cu.cuMemcpyDtoH &&
        cu.cuEventCreate && cu.cuEventDestroy && cu.cuEventRecord && cu.cuEventSynchronize &&
        cu.cuEventElapsedTime && cu.cuLaunchKernel;
    if (!complete) {
      error = "the driver library lacks the entry points the benchmark needs";
      return false;
    }
#ifdef IMGSMITH_PROBE_NO_KERNELS
    error = "this probe was built without GPU kernels (no nvcc at build time)";
    return false;
#else
    // CUDA's device 0, by ordinal: the one an application takes by default.
    if (!ok(cu.cuDeviceGet(&dev_, 0), "cuDeviceGet") ||
        !ok(cu.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain"))
      return false;
    retained_ = true;
    if (!ok(cu.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent")) return false;
    if (!load_kernels()) return false;
    return ok(cu.cuModuleGetFunction(&copy, module_, "probe_copy"), "probe_copy") &&
           ok(cu.cuModuleGetFunction(&fma, module_, "probe_fma"), "probe_fma") &&
           ok(cu.cuModuleGetFunction(&gemm, module_, "probe_sgemm"), "probe_sgemm") &&
           ok(cu.cuModuleGetFunction(&predict, module_, "probe_logreg_predict"), "logreg") &&
           ok(cu.cuModuleGetFunction(&gradient, module_, "probe_logreg_gradient"), "logreg") &&
           ok(cu.cuEventCreate(&event_a_, 0), "cuEventCreate") &&
           ok(cu.cuEventCreate(&event_b_, 0), "cuEventCreate");
#endif
  }

  // Free memory on the device now (cuMemGetInfo), 0 when unknown.
  std::size_t free_memory() {
    std::size_t free = 0, total = 0;
    return ok(cu.cuMemGetInfo(&free, &total), "cuMemGetInfo") ? free : 0;
  }

  CUdeviceptr alloc(std::size_t bytes) {
    CUdeviceptr p = 0;
    if (!ok(cu.cuMemAlloc(&p, bytes), "cuMemAlloc of " + std::to_string(bytes >> 20) + " MiB"))
      return 0;
    device_memory_.push_back(p);
    return p;
  }

  void* host_alloc(std::size_t bytes) {
    void* p = nullptr;
    if (!ok(cu.cuMemHostAlloc(&p, bytes, 0),
            "cuMemHostAlloc (pinned) of " + std::to_string(bytes >> 20) + " MiB"))
      return nullptr;
    host_memory_.push_back(p);
    return p;
  }

  bool launch(CUfunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by, void** args) {
    return ok(cu.cuLaunchKernel(f, gx, gy, 1, bx, by, 1, 0, nullptr, args, nullptr),
              "cuLaunchKernel");
  }

  bool to_device(CUdeviceptr d, const void* h, std::size_t n) {
    return ok(cu.cuMemcpyHtoD(d, h, n), "cuMemcpyHtoD");
  }
  bool to_host(void* h, CUdeviceptr d, std::size_t n) {
    return ok(cu.cuMemcpyDtoH(h, d, n), "cuMemcpyDtoH");
  }
  bool synchronize(const char* what) { return ok(cu.cuCtxSynchronize(), what); }

  // Milliseconds per call of `body`, by CUDA events: `pairs` event pairs,
  // each around `per_pair` calls, so that a pair spans milliseconds rather
  // than one launch's fraction of one; the median and spread of the pairs.
  template <typename Body>
  bool timed(Body body, int per_pair, int pairs, Measure& out) {
    std::vector<double> runs;
    for (int i = 0; i < pairs; ++i) {
      if (!ok(cu.cuEventRecord(event_a_, nullptr), "cuEventRecord")) return false;
      for (int j = 0; j < per_pair; ++j)
        if (!body()) return false;
      if (!ok(cu.cuEventRecord(event_b_, nullptr), "cuEventRecord") ||
          !ok(cu.cuEventSynchronize(event_b_), "the timed work (cuEventSynchronize)"))
        return false;
      float ms = 0;
      if (!ok(cu.cuEventElapsedTime(&ms, event_a_, event_b_), "cuEventElapsedTime")) return false;
      if (!(ms > 0)) {
        error = "cuEventElapsedTime measured no time (" + num(ms, 4) + " ms)";
        return false;
      }
      runs.push_back(ms / per_pair);
    }
    // cuEventElapsedTime (_v2 in CUDA 13) need not report an error of the
    // work between the events; a synchronisation does.
    if (!synchronize("the timed work (cuCtxSynchronize)")) return false;
    out = summarize(runs);
    return true;
  }

 private:
  std::string name(CUresult rc) const {
    const char* n = nullptr;
    return (cu.cuGetErrorName != nullptr && cu.cuGetErrorName(rc, &n) == CUDA_SUCCESS && n
                ? std::string(n)
                : std::string("error")) +
           " (" + std::to_string(rc) + ")";
  }

  // Why an image of the kernels did not load, with what to do about it.
  std::string explain(CUresult rc, bool ptx) const {
    switch (rc) {
      case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        return ptx ? ": the driver refused PTX ISA " + isa_text(ptx_isa_) + ptx_need() +
                         "; this driver supports CUDA " + cuda_text(driver_cuda_)
                   : ": the fatbin's PTX is newer than this driver, and no SASS in it matches "
                     "this GPU";
      case CUDA_ERROR_NO_BINARY_FOR_GPU:
        return ptx ? ": the driver compiles no PTX here (CUDA_DISABLE_PTX_JIT set?)"
                   : ": the fatbin has no SASS for this GPU's architecture and its PTX cannot "
                     "be compiled for it (CUDA_DISABLE_PTX_JIT set?)";
      case CUDA_ERROR_INVALID_PTX:
      case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
        return ": the driver cannot compile PTX (its JIT compiler, "
               "libnvidia-ptxjitcompiler.so.1, was not mounted: NVIDIA_DRIVER_CAPABILITIES "
               "needs 'compute')";
      case CUDA_ERROR_INVALID_IMAGE:
        return ": the embedded kernels are damaged (rebuild the probe)";
      default:
        return "";
    }
  }

  // " (CUDA 11.0, driver R450 or newer)": what the embedded PTX needs.
  std::string ptx_need() const {
    const int cuda = cuda_for_ptx_isa(ptx_isa_);
    if (cuda == 0) return "";
    const int driver = driver_for_cuda(cuda);
    return " (CUDA " + cuda_text(cuda) +
           (driver ? ", driver R" + std::to_string(driver) + " or newer)" : " or newer)");
  }

#ifndef IMGSMITH_PROBE_NO_KERNELS
  // The fatbin (SASS: no compilation, the fast path) loads on drivers of the
  // CUDA major release nvcc was, or newer: CUDA 13's cubins need R580. Older
  // drivers, most fleets' R535-R570, get the PTX text declared at a low ISA
  // version, which the driver compiles; so does a driver that refuses the
  // fatbin for another reason. IMGSMITH_PROBE_KERNELS=fatbin or =ptx loads
  // that one alone (the device check measures both).
  bool load_kernels() {
    ptx_isa_ = ptx_isa(imgsmith_probe_kernels_ptx);
    const std::string choice = env("IMGSMITH_PROBE_KERNELS");
    if (!choice.empty() && choice != "fatbin" && choice != "ptx") {
      error = "IMGSMITH_PROBE_KERNELS=" + choice + ": the choices are fatbin and ptx";
      return false;
    }
    const int built = IMGSMITH_PROBE_KERNELS_CUDA;
    const bool driver_old = built != 0 && driver_cuda_ != 0 && driver_cuda_ / 1000 < built / 1000;
    const std::string fatbin_name =
        "the fatbin" + (built ? " (CUDA " + cuda_text(built) + ")" : "");
    const std::string ptx_name = "the PTX (ISA " + isa_text(ptx_isa_) + ")";
    bool try_fatbin = choice != "ptx", try_ptx = choice != "fatbin";
    if (choice.empty() && driver_old) {
      try_fatbin = false;
      kernels_fallback = fatbin_name + " needs a driver of CUDA " + std::to_string(built / 1000) +
                         " or newer; this one supports CUDA " + cuda_text(driver_cuda_);
    }
    std::string failures;
    for (const bool ptx : {false, true}) {
      if (!(ptx ? try_ptx : try_fatbin)) continue;
      const void* image = ptx ? static_cast<const void*>(imgsmith_probe_kernels_ptx)
                              : static_cast<const void*>(imgsmith_probe_kernels);
      const auto t = Clock::now();
      const CUresult rc = cu.cuModuleLoadData(&module_, image);
      if (rc == CUDA_SUCCESS) {
        kernels = ptx ? "ptx" : "fatbin";
        kernels_load_ms = ms_since(t);
        return true;
      }
      module_ = nullptr;
      const std::string failure =
          "loading " + (ptx ? ptx_name : fatbin_name) + " failed: " + name(rc) + explain(rc, ptx);
      failures += (failures.empty() ? "" : "; ") + failure;
      if (!ptx) kernels_fallback = failure;
    }
    error = "the probe's kernels did not load: " + failures;
    return false;
  }
#endif

  void release() {
    if (!retained_) return;
    // Work still queued must end before its memory goes.
    cu.cuCtxSynchronize();
    for (const CUdeviceptr p : device_memory_) cu.cuMemFree(p);
    for (void* p : host_memory_) cu.cuMemFreeHost(p);
    if (event_a_ != nullptr) cu.cuEventDestroy(event_a_);
    if (event_b_ != nullptr) cu.cuEventDestroy(event_b_);
    if (module_ != nullptr) cu.cuModuleUnload(module_);
    cu.cuDevicePrimaryCtxRelease(dev_);
    retained_ = false;
  }

  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUmodule module_ = nullptr;
  CUevent event_a_ = nullptr, event_b_ = nullptr;
  bool retained_ = false;
  int driver_cuda_ = 0, ptx_isa_ = 0;
  std::vector<CUdeviceptr> device_memory_;
  std::vector<void*> host_memory_;
};

// The figures of the GPU half.
struct GpuFigures {
  std::size_t buffer_bytes = 0;
  double warm_up_ms = 0;
  Measure h2d, d2h, d2d, fma;  // milliseconds per copy or launch
  double h2d_gbps = 0, d2h_gbps = 0, d2d_gbps = 0, tflops = 0;
  int multiprocessors = 0;
  double net_ms = 0, logreg_ms = 0;
  double net_error = 0, logreg_error = 0;
  std::string wrong;  // what the GPU got wrong, when it did
};

constexpr std::size_t kMiB = 1u << 20;
constexpr int kPairs = 5;
constexpr int kFmaIterations = 4096;

// A word pattern in which every 32-bit word differs from its neighbours, so
// that a copy that drops, repeats or moves data shows.
std::uint32_t pattern(std::size_t i) { return static_cast<std::uint32_t>(i * 2654435761u + 1); }

bool measure_gpu(Gpu& g, NetBuffers& net, LogregData& cpu_logreg_result, GpuFigures& f) {
  const CudaDriver& cu = g.cu;
  // Buffers of a quarter of the free memory, up to 1 GiB (HBM reaches its
  // bandwidth only on large transfers); below 64 MiB the figures would mean
  // little, and the GPU is too full to measure.
  const std::size_t free = g.free_memory();
  if (free == 0) return false;
  f.buffer_bytes = std::min<std::size_t>(1024 * kMiB, free / 4) / kMiB * kMiB;
  if (f.buffer_bytes < 64 * kMiB) {
    g.error = "only " + std::to_string(free / kMiB) +
              " MiB of GPU 0's memory is free: the benchmark needs 256 MiB (another process "
              "holds the rest; nvidia-smi shows which)";
    return false;
  }
  const std::size_t bytes = f.buffer_bytes;
  int sms = 0;
  if (!g.ok(cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0),
            "cuDeviceGetAttribute"))
    return false;
  f.multiprocessors = sms;
  const unsigned fma_blocks = static_cast<unsigned>(std::max(1, sms) * 8);

  CUdeviceptr in = g.alloc(bytes), dst = in ? g.alloc(bytes) : 0;
  auto* host = dst ? static_cast<std::uint32_t*>(g.host_alloc(bytes)) : nullptr;
  if (host == nullptr) return false;
  const std::size_t words = bytes / sizeof(std::uint32_t);
  for (std::size_t i = 0; i < words; ++i) host[i] = pattern(i);

  // Warm-up: a GPU clocks up from idle over tens to hundreds of
  // milliseconds. The FMA kernel runs until 200 ms of GPU time have passed
  // and two rounds in a row agree within 3% (1.5 s or 200 rounds at most).
  int iterations = kFmaIterations;
  float seed = 1.0f;
  void* fma_args[] = {&dst, &iterations, &seed};
  const auto run_fma = [&] { return g.launch(g.fma, fma_blocks, 1, 256, 1, fma_args); };
  {
    const auto start = Clock::now();
    double gpu_ms = 0, last = 0;
    for (int round = 0; round < 200 && ms_since(start) < 1500; ++round) {
      Measure m;
      if (!g.timed(run_fma, 10, 1, m)) return false;
      gpu_ms += m.median * 10;
      const bool settled = gpu_ms >= 200 && last > 0 && std::fabs(m.median - last) <= 0.03 * last;
      last = m.median;
      if (settled) break;
    }
    f.warm_up_ms = ms_since(start);
  }

  // Bandwidth: host->device, device->device (20 launches a pair), then
  // device->host into the host buffer cleared: the pattern must come back
  // whole through all three.
  unsigned long long n16 = bytes / 16;
  void* copy_args[] = {&in, &dst, &n16};
  if (!g.timed([&] { return g.to_device(in, host, bytes); }, 1, kPairs, f.h2d) ||
      !g.timed([&] { return g.launch(g.copy, 4096, 1, 256, 1, copy_args); }, 20, kPairs, f.d2d))
    return false;
  std::memset(host, 0, bytes);
  if (!g.timed([&] { return g.to_host(host, dst, bytes); }, 1, kPairs, f.d2h)) return false;
  for (std::size_t i = 0; i < words; ++i)
    if (host[i] != pattern(i)) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "the GPU's copies are wrong: word %zu of %zu came back as 0x%08x, not 0x%08x",
                    i, words, host[i], pattern(i));
      f.wrong = buf;
      return true;
    }
  f.h2d_gbps = static_cast<double>(bytes) / (f.h2d.median * 1e6);
  f.d2h_gbps = static_cast<double>(bytes) / (f.d2h.median * 1e6);
  f.d2d_gbps = 2.0 * static_cast<double>(bytes) / (f.d2d.median * 1e6);  // read + write

  // FP32: independent FMA chains; each thread's result checked for four threads.
  if (!g.timed(run_fma, 20, kPairs, f.fma)) return false;
  f.tflops = 2.0 * 8 * kFmaIterations * fma_blocks * 256.0 / (f.fma.median * 1e9);
  float sample[256];
  if (!g.to_host(sample, dst, sizeof sample)) return false;
  for (const unsigned t : {0u, 1u, 128u, 255u}) {
    const float want = fma_expected(t, kFmaIterations, seed);
    if (!(std::fabs(sample[t] - want) <= 1e-5f * std::max(1.0f, std::fabs(want)))) {
      f.wrong = "the GPU's FMA results are wrong: thread " + std::to_string(t) + " computed " +
                num(sample[t], 6) + ", not " + num(want, 6);
      return true;
    }
  }

  // The race. The network step is timed as a training loop runs it: the
  // weights stay on the GPU, each step's batch (X and dY) comes from pinned
  // memory, and the gradients stay there for the optimizer; they come back
  // once, after the timing, to be checked. Timed by events, as the other
  // figures: the copies and any wait for a launch fall between them.
  const std::size_t act = sizeof(float) * kBatch * kWidth, wts = sizeof(float) * kWidth * kWidth;
  CUdeviceptr x = g.alloc(act), h = g.alloc(act), y = g.alloc(act), dy = g.alloc(act),
              dh = g.alloc(act), w1 = g.alloc(wts), w2 = g.alloc(wts), dw1 = g.alloc(wts),
              dw2 = g.alloc(wts);
  auto* batch = static_cast<float*>(g.host_alloc(2 * act));
  if (!g.error.empty() || batch == nullptr) return false;
  std::memcpy(batch, net.x.data(), act);
  std::memcpy(batch + kBatch * kWidth, net.dy.data(), act);
  if (!g.to_device(w1, net.w1.data(), wts) || !g.to_device(w2, net.w2.data(), wts)) return false;
  std::vector<float> gpu_dw1(net.dw1.size()), gpu_dw2(net.dw2.size());
  const auto gemm = [&](CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, int m, int n, int k, int ta,
                        int tb, int relu) {
    void* args[] = {&A, &B, &C, &m, &n, &k, &ta, &tb, &relu};
    // 64 x 64 tiles of C, 16 x 16 threads each (probes/kernels.cu).
    return g.launch(g.gemm, static_cast<unsigned>((n + 63) / 64),
                    static_cast<unsigned>((m + 63) / 64), 16, 16, args);
  };
  const auto net_step = [&] {
    return g.to_device(x, batch, act) && g.to_device(dy, batch + kBatch * kWidth, act) &&
           gemm(x, w1, h, kBatch, kWidth, kWidth, 0, 0, 1) &&
           gemm(h, w2, y, kBatch, kWidth, kWidth, 0, 0, 0) &&
           gemm(h, dy, dw2, kWidth, kWidth, kBatch, 1, 0, 0) &&
           gemm(dy, w2, dh, kBatch, kWidth, kWidth, 0, 1, 0) &&
           gemm(x, dh, dw1, kWidth, kWidth, kBatch, 1, 0, 0) &&
           gemm(y, w2, dh, kBatch, kWidth, kWidth, 0, 1, 0);
  };
  Measure net_measure;
  if (!net_step() || !g.timed(net_step, 1, kPairs, net_measure)) return false;
  f.net_ms = net_measure.median;
  if (!g.to_host(gpu_dw1.data(), dw1, wts) || !g.to_host(gpu_dw2.data(), dw2, wts)) return false;
  f.net_error = std::max(relative_error(gpu_dw1, net.dw1), relative_error(gpu_dw2, net.dw2));

  CUdeviceptr lx = g.alloc(sizeof(float) * kRows * kFeatures), ly = g.alloc(sizeof(float) * kRows),
              lw = g.alloc(sizeof(float) * kFeatures), lres = g.alloc(sizeof(float) * kRows);
  if (!g.error.empty()) return false;
  LogregData data;  // w = 0
  std::vector<float> gpu_w(kFeatures);
  const auto train = [&] {
    int rows = kRows, features = kFeatures;
    float rate = kLearningRate;
    void* p_args[] = {&lx, &lw, &ly, &lres, &rows, &features};
    void* g_args[] = {&lx, &lres, &lw, &rows, &features, &rate};
    if (!g.to_device(lx, data.x.data(), sizeof(float) * kRows * kFeatures) ||
        !g.to_device(ly, data.y.data(), sizeof(float) * kRows) ||
        !g.to_device(lw, data.w.data(), sizeof(float) * kFeatures))
      return false;
    for (int s = 0; s < kSteps; ++s)
      if (!g.launch(g.predict, (kRows + 255) / 256, 1, 256, 1, p_args) ||
          !g.launch(g.gradient, kFeatures, 1, 256, 1, g_args))
        return false;
    return g.to_host(gpu_w.data(), lw, sizeof(float) * kFeatures) &&
           g.synchronize("the logistic regression (cuCtxSynchronize)");
  };
  Measure logreg_measure;
  if (!train() || !g.timed(train, 1, 3, logreg_measure)) return false;
  f.logreg_ms = logreg_measure.median;
  f.logreg_error = relative_error(gpu_w, cpu_logreg_result.w);

  // Sums in another order differ in the last bits; a wrong kernel, memory
  // error or failed copy differs by far more.
  constexpr double kTolerance = 1e-3;
  if (f.net_error > kTolerance)
    f.wrong = "the GPU's network step differs from the CPU's: largest relative error " +
              num(f.net_error, 6);
  else if (f.logreg_error > kTolerance)
    f.wrong = "the GPU's logistic regression differs from the CPU's: largest relative error " +
              num(f.logreg_error, 6);
  return true;
}

// GFLOP/s of `flops` done in `ms` milliseconds (0 when nothing was timed).
double gflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e6) : 0; }

// What a speed-up means for the choice of hardware, from the measured ratio.
std::string verdict_band(double x) {
  if (x < 1.0) return "the CPU is faster: not worth a GPU";
  if (x < 2.0) return "under 2x: not worth a GPU for that kind of work";
  if (x < 10.0) return "a GPU helps";
  return "GPU work";
}

std::string cpu_json(const Measure& net, double net_gflops, const Measure& logreg,
                     double logreg_gflops, int threads, const std::string& isa) {
  return "{\"network_step_ms\":" + num(net.median) +
         ",\"network_step_gflops\":" + num(net_gflops, 1) +
         ",\"logistic_regression_ms\":" + num(logreg.median) +
         ",\"logistic_regression_gflops\":" + num(logreg_gflops, 2) +
         ",\"network_step_threads\":" + std::to_string(threads) + ",\"vector_isa\":\"" + isa +
         "\",\"logistic_regression_threads\":1}";
}

}  // namespace

std::string embedded_kernels() {
#ifdef IMGSMITH_PROBE_NO_KERNELS
  return "none (built without nvcc)";
#else
  const auto driver = [](int cuda) {
    const int d = driver_for_cuda(cuda);
    return d != 0 ? " (R" + std::to_string(d) + "+)" : std::string();
  };
  const int built = IMGSMITH_PROBE_KERNELS_CUDA;
  // A fatbin's cubins load on drivers of its CUDA major release: the first
  // driver of X.0.
  const std::string fatbin = built != 0
                                 ? "fatbin CUDA " + cuda_text(built) + driver(built / 1000 * 1000)
                                 : std::string("fatbin CUDA unknown");
  const int isa = ptx_isa(imgsmith_probe_kernels_ptx);
  return fatbin + ", PTX ISA " + isa_text(isa) + driver(cuda_for_ptx_isa(isa));
#endif
}

BenchOutput run_bench(const CudaDriver* cu, const BenchDevice& device) {
  BenchOutput out;
  // The CPU half: every usable CPU on the network step, one on the small
  // logistic regression; their results are what the GPU's are checked against.
  const int threads = usable_cpus();
  const std::string isa = vector_isa();
  NetBuffers net;
  LogregData logreg;
  WorkerPool pool(threads);
  const Measure cpu_net = wall_clock(
      [&] {
        cpu_network_step(net, pool);
        return true;
      },
      3, 600);
  const Measure cpu_lr = wall_clock(
      [&] {
        cpu_logreg(logreg);
        return true;
      },
      3, 300);
  const std::string cpu_side =
      std::to_string(threads) + " CPU thread" + (threads == 1 ? "" : "s") + " (" + isa + ")";
  const double cpu_net_gflops = gflops(kNetworkStepFlops, cpu_net.median),
               cpu_lr_gflops = gflops(kLogregFlops, cpu_lr.median);
  std::string json =
      "{\"cpu\":" + cpu_json(cpu_net, cpu_net_gflops, cpu_lr, cpu_lr_gflops, threads, isa);
  const std::string cpu_line = "CPU: network step " + num(cpu_net.median, 1) + " ms on " +
                               cpu_side + " (" + num(cpu_net_gflops, 1) +
                               " GFLOP/s), logistic regression " + num(cpu_lr.median, 1) +
                               " ms on one thread (" + num(cpu_lr_gflops, 2) + " GFLOP/s)";
  if (cu == nullptr) {
    json += ",\"gpu\":null,\"verdict\":\"no GPU: " + cpu_side + " ran the network step in " +
            num(cpu_net.median, 1) + " ms; one thread the logistic regression in " +
            num(cpu_lr.median, 1) + " ms\"}";
    out.json = json;
    out.lines = "bench: no GPU; " + cpu_line + "\n";
    return out;
  }

  GpuFigures f;
  std::string error, kernels, kernels_fallback;
  double kernels_load_ms = 0;
  {
    Gpu g(*cu);
    if (g.start(device.driver_cuda)) measure_gpu(g, net, logreg, f);
    error = g.error;
    kernels = g.kernels, kernels_fallback = g.kernels_fallback;
    kernels_load_ms = g.kernels_load_ms;
  }  // everything the GPU half held is freed here
  if (error.empty() && !f.wrong.empty()) {
    out.wrong_results = true;
    out.wrong_reason = f.wrong;
    error = f.wrong;
  }
  if (!error.empty()) {
    json += ",\"gpu\":{\"error\":" + json_string(error) +
            "},\"verdict\":" + json_string("the GPU half did not run: " + error) + "}";
    out.json = json;
    out.lines = "bench: GPU half did not run: " + error + "\nbench: " + cpu_line + "\n";
    return out;
  }

  const double gpu_net_gflops = gflops(kNetworkStepFlops, f.net_ms),
               gpu_lr_gflops = gflops(kLogregFlops, f.logreg_ms);
  // A MIG slice has a share of the GPU's bandwidth and compute: no
  // whole-GPU peak applies to it.
  const Peak* peak = device.mig ? nullptr : peak_for(device.name);
  const auto pct = [&](double v, double peak_value) {
    return peak == nullptr || peak_value <= 0 ? std::string("null")
                                              : num(100.0 * v / peak_value, 1);
  };
  const auto spread = [](const Measure& m) { return num(100.0 * m.spread, 1); };
  json += ",\"gpu\":{\"buffer_bytes\":" + std::to_string(f.buffer_bytes) +
          ",\"warm_up_ms\":" + num(f.warm_up_ms, 0) + ",\"device_copy_gbps\":" + num(f.d2d_gbps) +
          ",\"device_copy_counts\":\"read+write\"" +
          ",\"device_copy_peak_percent\":" + pct(f.d2d_gbps, peak ? peak->memory_gbps : 0) +
          ",\"device_copy_spread_percent\":" + spread(f.d2d) + ",\"h2d_gbps\":" + num(f.h2d_gbps) +
          ",\"h2d_spread_percent\":" + spread(f.h2d) + ",\"d2h_gbps\":" + num(f.d2h_gbps) +
          ",\"d2h_spread_percent\":" + spread(f.d2h) +
          ",\"h2d_peak_percent\":" + pct(f.h2d_gbps, peak ? peak->link_gbps : 0) +
          ",\"d2h_peak_percent\":" + pct(f.d2h_gbps, peak ? peak->link_gbps : 0) +
          ",\"fp32_tflops\":" + num(f.tflops) +
          ",\"fp32_peak_percent\":" + pct(f.tflops, peak ? peak->fp32_tflops : 0) +
          ",\"fp32_spread_percent\":" + spread(f.fma) + ",\"peak_reference\":" +
          (peak ? "\"" + std::string(peak->name) + "\"" : std::string("null")) +
          ",\"mig\":" + (device.mig ? "true" : "false") +
          ",\"multiprocessors\":" + std::to_string(f.multiprocessors) +
          ",\"network_step_ms\":" + num(f.net_ms) +
          ",\"network_step_gflops\":" + num(gpu_net_gflops, 1) +
          ",\"logistic_regression_ms\":" + num(f.logreg_ms) +
          ",\"logistic_regression_gflops\":" + num(gpu_lr_gflops, 2) +
          ",\"results_checked\":true,\"network_step_relative_error\":" + num(f.net_error, 8) +
          ",\"logistic_regression_relative_error\":" + num(f.logreg_error, 8) + ",\"kernels\":\"" +
          kernels + "\",\"kernels_load_ms\":" + num(kernels_load_ms, 1) + ",\"kernels_fallback\":" +
          (kernels_fallback.empty() ? std::string("null") : json_string(kernels_fallback)) + "}";
  const double net_x = f.net_ms > 0 ? cpu_net.median / f.net_ms : 0,
               lr_x = f.logreg_ms > 0 ? cpu_lr.median / f.logreg_ms : 0;
  // Each side's GFLOP/s beside the ratio, so that a reader can tell a slow
  // GPU from a slow CPU; the words follow the measured ratio.
  const std::string verdict =
      "network step: GPU " + num(net_x, 1) + "x " + cpu_side + " (" + num(gpu_net_gflops, 0) +
      " vs " + num(cpu_net_gflops, 0) + " GFLOP/s) - " + verdict_band(net_x) +
      "; logistic regression: GPU " + num(lr_x, 1) + "x one CPU thread (" + num(gpu_lr_gflops, 1) +
      " vs " + num(cpu_lr_gflops, 1) + " GFLOP/s) - " + verdict_band(lr_x) +
      " (GPU times include the copies to it, not the context's creation; results checked "
      "against the CPU's)";
  json += ",\"speedup\":{\"network_step\":" + num(net_x) + ",\"logistic_regression\":" + num(lr_x) +
          "},\"verdict\":" + json_string(verdict) + "}";
  out.json = json;
  const std::string peak_text =
      peak ? pct(f.d2d_gbps, peak->memory_gbps) + "% of " + peak->name + " peak"
           : (device.mig ? "a MIG slice: no peak applies" : "no published peak for this GPU");
  out.lines = "bench: device copy " + num(f.d2d_gbps, 0) + " GB/s (read+write, " + peak_text +
              ", spread " + spread(f.d2d) + "%); host->device " + num(f.h2d_gbps, 1) +
              " GB/s, device->host " + num(f.d2h_gbps, 1) + " GB/s; FP32 " + num(f.tflops, 1) +
              " TFLOP/s" + (peak ? " (" + pct(f.tflops, peak->fp32_tflops) + "% of peak)" : "") +
              "; buffers " + std::to_string(f.buffer_bytes >> 20) + " MiB, warm-up " +
              num(f.warm_up_ms, 0) + " ms\nbench: kernels: " +
              (kernels == "ptx" ? "PTX, compiled by the driver" : std::string("the fatbin's")) +
              ", loaded in " + num(kernels_load_ms, 1) + " ms" +
              (kernels_fallback.empty() ? "" : " (" + kernels_fallback + ")") +
              "\nbench: " + verdict + "\nbench: " + cpu_line + "\n";
  return out;
}

}  // namespace probe
