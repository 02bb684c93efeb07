// The probe's micro-benchmark (--bench): copy and device bandwidth, FP32
// compute, and a CPU-vs-GPU race, each figure against the device's
// published peak where the device is known.
#pragma once

#include <string>

#include "cuda_api.hpp"

namespace probe {

struct BenchOutput {
  std::string json;   // the value of "bench" in the report
  std::string lines;  // for the human report on stderr
};

// Runs the CPU half always, and the GPU half on device 0 when `gpu_usable`.
BenchOutput run_bench(const CudaDriver* cu, bool gpu_usable, const std::string& device_name);

}  // namespace probe
