#include "bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "peak_match.hpp"

// The kernels' fatbin, embedded by the build (probes/CMakeLists.txt); absent
// when the build had no nvcc, and the benchmark then says so.
#ifndef IMGSMITH_PROBE_NO_KERNELS
extern "C" const unsigned char imgsmith_probe_kernels[];
#endif

namespace probe {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Published peaks (data/gpu-peaks.json), matched by name (peak_match.hpp).
using imgsmith::probe_tables::Peak;
using imgsmith::probe_tables::peak_for;

// The network step: the six matrix products of one training step of a
// two-layer MLP (batch 256, width 768): forward X*W1 (relu), H*W2; backward
// H^T*dY, dY*W2^T, X^T*dH, and the loss gradient product. The same products
// on both sides; the GPU side includes copying inputs in and gradients out.
constexpr int kBatch = 256, kWidth = 768;

void cpu_gemm(const float* A, const float* B, float* C, int m, int n, int k, bool ta, bool tb,
              bool relu) {
  std::fill(C, C + static_cast<std::size_t>(m) * n, 0.0f);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      const float a = ta ? A[p * m + i] : A[i * k + p];
      float* c = C + static_cast<std::size_t>(i) * n;
      if (!tb) {
        const float* b = B + static_cast<std::size_t>(p) * n;
        for (int j = 0; j < n; ++j) c[j] += a * b[j];
      } else {
        for (int j = 0; j < n; ++j) c[j] += a * B[j * k + p];
      }
    }
  if (relu)
    for (std::size_t i = 0; i < static_cast<std::size_t>(m) * n; ++i) C[i] = std::max(C[i], 0.0f);
}

struct NetBuffers {
  std::vector<float> x, w1, w2, h, y, dy, dw1, dw2, dh;
  NetBuffers()
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
};

double cpu_network_step(NetBuffers& b) {
  const auto t = Clock::now();
  cpu_gemm(b.x.data(), b.w1.data(), b.h.data(), kBatch, kWidth, kWidth, false, false, true);
  cpu_gemm(b.h.data(), b.w2.data(), b.y.data(), kBatch, kWidth, kWidth, false, false, false);
  cpu_gemm(b.h.data(), b.dy.data(), b.dw2.data(), kWidth, kWidth, kBatch, true, false, false);
  cpu_gemm(b.dy.data(), b.w2.data(), b.dh.data(), kBatch, kWidth, kWidth, false, true, false);
  cpu_gemm(b.x.data(), b.dh.data(), b.dw1.data(), kWidth, kWidth, kBatch, true, false, false);
  cpu_gemm(b.y.data(), b.w2.data(), b.dh.data(), kBatch, kWidth, kWidth, false, true, false);
  return ms_since(t);
}

// The logistic regression: a small tabular model, like a fraud detector:
// 5,000 rows of 30 features, 50 full-batch gradient steps.
constexpr int kRows = 5000, kFeatures = 30, kSteps = 50;

struct LogregData {
  std::vector<float> x, y, w, residual;
  LogregData() : x(kRows * kFeatures), y(kRows), w(kFeatures, 0.0f), residual(kRows) {
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
};

double cpu_logreg(LogregData& d) {
  const auto t = Clock::now();
  for (int s = 0; s < kSteps; ++s) {
    for (int r = 0; r < kRows; ++r) {
      float z = 0;
      for (int f = 0; f < kFeatures; ++f) z += d.x[r * kFeatures + f] * d.w[f];
      d.residual[r] = 1.0f / (1.0f + std::exp(-z)) - d.y[r];
    }
    for (int f = 0; f < kFeatures; ++f) {
      float g = 0;
      for (int r = 0; r < kRows; ++r) g += d.x[r * kFeatures + f] * d.residual[r];
      d.w[f] -= 0.5f * g / kRows;
    }
  }
  return ms_since(t);
}

std::string num(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

struct Gpu {
  explicit Gpu(const CudaDriver& driver) : cu(driver) {}
  const CudaDriver& cu;
  std::string error;
  CUfunction copy = nullptr, fma = nullptr, gemm = nullptr, predict = nullptr, gradient = nullptr;

  bool ok(CUresult rc, const char* what) {
    if (rc == CUDA_SUCCESS) return true;
    if (error.empty()) {
      const char* name = nullptr;
      std::string n =
          cu.cuGetErrorName != nullptr && cu.cuGetErrorName(rc, &name) == CUDA_SUCCESS && name
              ? std::string(name)
              : "error";
      error = std::string(what) + " failed: " + n + " (" + std::to_string(rc) + ")";
      if (rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
        error += ": the kernels' PTX is newer than this driver, and no SASS matches this GPU";
    }
    return false;
  }

  bool start() {
    const bool complete = cu.cuDevicePrimaryCtxRetain && cu.cuCtxSetCurrent &&
                          cu.cuCtxSynchronize && cu.cuModuleLoadData && cu.cuModuleGetFunction &&
                          cu.cuMemAlloc && cu.cuMemFree && cu.cuMemHostAlloc && cu.cuMemFreeHost &&
                          cu.cuMemcpyHtoD && cu.cuMemcpyDtoH && cu.cuEventCreate &&
                          cu.cuEventRecord && cu.cuEventSynchronize && cu.cuEventElapsedTime &&
                          cu.cuLaunchKernel;
    if (!complete) {
      error = "the driver library lacks the entry points the benchmark needs";
      return false;
    }
#ifdef IMGSMITH_PROBE_NO_KERNELS
    error = "this probe was built without GPU kernels (no nvcc at build time)";
    return false;
#else
    CUcontext ctx = nullptr;
    if (!ok(cu.cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain") ||
        !ok(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent"))
      return false;
    CUmodule module = nullptr;
    if (!ok(cu.cuModuleLoadData(&module, imgsmith_probe_kernels), "loading the probe's kernels"))
      return false;
    return ok(cu.cuModuleGetFunction(&copy, module, "probe_copy"), "probe_copy") &&
           ok(cu.cuModuleGetFunction(&fma, module, "probe_fma"), "probe_fma") &&
           ok(cu.cuModuleGetFunction(&gemm, module, "probe_sgemm"), "probe_sgemm") &&
           ok(cu.cuModuleGetFunction(&predict, module, "probe_logreg_predict"), "logreg") &&
           ok(cu.cuModuleGetFunction(&gradient, module, "probe_logreg_gradient"), "logreg");
#endif
  }

  bool launch(CUfunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by, void** args) {
    return ok(cu.cuLaunchKernel(f, gx, gy, 1, bx, by, 1, 0, nullptr, args, nullptr),
              "cuLaunchKernel");
  }

  // Median of three timed runs of `body`, in milliseconds, by CUDA events.
  template <typename Body>
  double timed(Body body) {
    CUevent a = nullptr, b = nullptr;
    if (!ok(cu.cuEventCreate(&a, 0), "cuEventCreate") ||
        !ok(cu.cuEventCreate(&b, 0), "cuEventCreate"))
      return -1;
    body();  // warm-up
    std::vector<double> runs;
    for (int i = 0; i < 3; ++i) {
      cu.cuEventRecord(a, nullptr);
      body();
      cu.cuEventRecord(b, nullptr);
      cu.cuEventSynchronize(b);
      float ms = 0;
      if (!ok(cu.cuEventElapsedTime(&ms, a, b), "cuEventElapsedTime")) return -1;
      runs.push_back(ms);
    }
    std::sort(runs.begin(), runs.end());
    return runs[1];
  }

  bool gemm_on(CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, int m, int n, int k, int ta, int tb,
               int relu) {
    void* args[] = {&A, &B, &C, &m, &n, &k, &ta, &tb, &relu};
    return launch(gemm, static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((m + 15) / 16),
                  16, 16, args);
  }
};

}  // namespace

BenchOutput run_bench(const CudaDriver* cu, bool gpu_usable, const std::string& device_name) {
  BenchOutput out;
  NetBuffers net;
  LogregData data;
  const double cpu_net = cpu_network_step(net);
  const double cpu_lr = cpu_logreg(data);
  std::string json = "{\"cpu\":{\"network_step_ms\":" + num(cpu_net) +
                     ",\"logistic_regression_ms\":" + num(cpu_lr) + "}";
  if (!gpu_usable || cu == nullptr) {
    json += ",\"gpu\":null,\"verdict\":\"no GPU: the CPU ran the network step in " +
            num(cpu_net, 1) + " ms and the logistic regression in " + num(cpu_lr, 1) + " ms\"}";
    out.json = json;
    out.lines = "bench: no GPU; CPU: network step " + num(cpu_net, 1) +
                " ms, logistic regression " + num(cpu_lr, 1) + " ms\n";
    return out;
  }
  Gpu g(*cu);
  double d2d_gbps = 0, h2d_gbps = 0, d2h_gbps = 0, tflops = 0, gpu_net = 0, gpu_lr = 0;
  if (g.start()) {
    // Bandwidth: 256 MiB each way; device copies count the read and the write.
    const std::size_t bytes = 256u << 20;
    CUdeviceptr in = 0, dst = 0;
    void* host = nullptr;
    if (g.ok(cu->cuMemAlloc(&in, bytes), "cuMemAlloc") &&
        g.ok(cu->cuMemAlloc(&dst, bytes), "cuMemAlloc") &&
        g.ok(cu->cuMemHostAlloc(&host, bytes, 0), "cuMemHostAlloc")) {
      std::memset(host, 1, bytes);
      const double h2d = g.timed([&] { cu->cuMemcpyHtoD(in, host, bytes); });
      const double d2h = g.timed([&] { cu->cuMemcpyDtoH(host, in, bytes); });
      unsigned long long n4 = bytes / 16;
      void* copy_args[] = {&in, &dst, &n4};
      const double d2d = g.timed([&] { g.launch(g.copy, 4096, 1, 256, 1, copy_args); });
      if (h2d > 0) h2d_gbps = bytes / (h2d * 1e6);
      if (d2h > 0) d2h_gbps = bytes / (d2h * 1e6);
      if (d2d > 0) d2d_gbps = 2.0 * bytes / (d2d * 1e6);
      int sms = 0;
      cu->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
      const unsigned blocks = static_cast<unsigned>(std::max(1, sms) * 8);
      int iterations = 4096;
      float seed = 1.0f;
      void* fma_args[] = {&dst, &iterations, &seed};
      const double fma_ms = g.timed([&] { g.launch(g.fma, blocks, 1, 256, 1, fma_args); });
      if (fma_ms > 0) tflops = 2.0 * 8 * iterations * blocks * 256.0 / (fma_ms * 1e9);

      // The race, wall clock, copies included.
      const std::size_t act = sizeof(float) * kBatch * kWidth,
                        wts = sizeof(float) * kWidth * kWidth;
      CUdeviceptr x = 0, w1 = 0, w2 = 0, h = 0, y = 0, dy = 0, dw1 = 0, dw2 = 0, dh = 0;
      bool alloc = true;
      for (auto* p : {&x, &h, &y, &dy, &dh})
        alloc = alloc && g.ok(cu->cuMemAlloc(p, act), "cuMemAlloc");
      for (auto* p : {&w1, &w2, &dw1, &dw2})
        alloc = alloc && g.ok(cu->cuMemAlloc(p, wts), "cuMemAlloc");
      auto net_step = [&] {
        cu->cuMemcpyHtoD(x, net.x.data(), act);
        cu->cuMemcpyHtoD(dy, net.dy.data(), act);
        cu->cuMemcpyHtoD(w1, net.w1.data(), wts);
        cu->cuMemcpyHtoD(w2, net.w2.data(), wts);
        g.gemm_on(x, w1, h, kBatch, kWidth, kWidth, 0, 0, 1);
        g.gemm_on(h, w2, y, kBatch, kWidth, kWidth, 0, 0, 0);
        g.gemm_on(h, dy, dw2, kWidth, kWidth, kBatch, 1, 0, 0);
        g.gemm_on(dy, w2, dh, kBatch, kWidth, kWidth, 0, 1, 0);
        g.gemm_on(x, dh, dw1, kWidth, kWidth, kBatch, 1, 0, 0);
        g.gemm_on(y, w2, dh, kBatch, kWidth, kWidth, 0, 1, 0);
        cu->cuMemcpyDtoH(net.dw1.data(), dw1, wts);
        cu->cuMemcpyDtoH(net.dw2.data(), dw2, wts);
        cu->cuCtxSynchronize();
      };
      if (alloc) {
        net_step();  // warm-up
        const auto t = Clock::now();
        net_step();
        gpu_net = ms_since(t);
      }
      CUdeviceptr lx = 0, ly = 0, lw = 0, lres = 0;
      if (g.ok(cu->cuMemAlloc(&lx, sizeof(float) * kRows * kFeatures), "cuMemAlloc") &&
          g.ok(cu->cuMemAlloc(&ly, sizeof(float) * kRows), "cuMemAlloc") &&
          g.ok(cu->cuMemAlloc(&lw, sizeof(float) * kFeatures), "cuMemAlloc") &&
          g.ok(cu->cuMemAlloc(&lres, sizeof(float) * kRows), "cuMemAlloc")) {
        LogregData fresh;
        auto train = [&] {
          cu->cuMemcpyHtoD(lx, fresh.x.data(), sizeof(float) * kRows * kFeatures);
          cu->cuMemcpyHtoD(ly, fresh.y.data(), sizeof(float) * kRows);
          cu->cuMemcpyHtoD(lw, fresh.w.data(), sizeof(float) * kFeatures);
          int rows = kRows, features = kFeatures;
          float rate = 0.5f;
          void* p_args[] = {&lx, &lw, &ly, &lres, &rows, &features};
          void* g_args[] = {&lx, &lres, &lw, &rows, &features, &rate};
          for (int s = 0; s < kSteps; ++s) {
            g.launch(g.predict, (kRows + 255) / 256, 1, 256, 1, p_args);
            g.launch(g.gradient, 1, 1, 32, 1, g_args);
          }
          cu->cuMemcpyDtoH(fresh.w.data(), lw, sizeof(float) * kFeatures);
          cu->cuCtxSynchronize();
        };
        train();
        const auto t = Clock::now();
        train();
        gpu_lr = ms_since(t);
      }
    }
  }
  const Peak* peak = peak_for(device_name);
  json += ",\"gpu\":{";
  if (!g.error.empty()) {
    json += "\"error\":\"" + g.error + "\"}";
    json += ",\"verdict\":\"the GPU half did not run: " + g.error + "\"}";
    out.json = json;
    out.lines = "bench: GPU half did not run: " + g.error + "\nbench: CPU: network step " +
                num(cpu_net, 1) + " ms, logistic regression " + num(cpu_lr, 1) + " ms\n";
    return out;
  }
  const auto pct = [&](double v, double peak_value) {
    return peak == nullptr || peak_value <= 0 ? std::string("null")
                                              : num(100.0 * v / peak_value, 1);
  };
  json += "\"device_copy_gbps\":" + num(d2d_gbps) + ",\"device_copy_counts\":\"read+write\"" +
          ",\"device_copy_peak_percent\":" + pct(d2d_gbps, peak ? peak->memory_gbps : 0) +
          ",\"h2d_gbps\":" + num(h2d_gbps) + ",\"d2h_gbps\":" + num(d2h_gbps) +
          ",\"h2d_peak_percent\":" + pct(h2d_gbps, peak ? peak->link_gbps : 0) +
          ",\"d2h_peak_percent\":" + pct(d2h_gbps, peak ? peak->link_gbps : 0) +
          ",\"fp32_tflops\":" + num(tflops) +
          ",\"fp32_peak_percent\":" + pct(tflops, peak ? peak->fp32_tflops : 0) +
          ",\"peak_reference\":" +
          (peak ? "\"" + std::string(peak->name) + "\"" : std::string("null")) +
          ",\"network_step_ms\":" + num(gpu_net) + ",\"logistic_regression_ms\":" + num(gpu_lr) +
          "}";
  const double net_x = gpu_net > 0 ? cpu_net / gpu_net : 0, lr_x = gpu_lr > 0 ? cpu_lr / gpu_lr : 0;
  const std::string verdict = "GPU " + num(net_x, 1) + "x faster on the network step; " +
                              num(lr_x, 1) + "x on the logistic regression" +
                              (lr_x < 2.0 ? " - not worth a GPU for that kind of work" : "");
  json += ",\"speedup\":{\"network_step\":" + num(net_x) + ",\"logistic_regression\":" + num(lr_x) +
          "},\"verdict\":\"" + verdict + "\"}";
  out.json = json;
  out.lines = "bench: device copy " + num(d2d_gbps, 0) + " GB/s (read+write, " +
              pct(d2d_gbps, peak ? peak->memory_gbps : 0) + "% of peak); host->device " +
              num(h2d_gbps, 1) + " GB/s, device->host " + num(d2h_gbps, 1) + " GB/s; FP32 " +
              num(tflops, 1) + " TFLOP/s (" + pct(tflops, peak ? peak->fp32_tflops : 0) +
              "% of peak)\nbench: " + verdict + "\n";
  return out;
}

}  // namespace probe
