// The probe's micro-benchmark (--bench): copy and device bandwidth, FP32
// compute, and a CPU-vs-GPU race, each figure against the device's
// published peak where the device is known, and every GPU result checked
// against the CPU's.
#pragma once

#include <string>

#include "cuda_api.hpp"

namespace probe {

struct BenchOutput {
  std::string json;   // the value of "bench" in the report
  std::string lines;  // for the human report on stderr
  // The GPU ran but computed or copied wrongly: a GPU not to trust, which
  // the report's verdict must say (wrong_reason says what differed).
  bool wrong_results = false;
  std::string wrong_reason;
};

// The GPU the benchmark runs on: CUDA's device 0, the one an application
// takes by default.
struct BenchDevice {
  std::string name;
  bool mig = false;     // a MIG slice: no whole-GPU peak applies
  int driver_cuda = 0;  // the driver's CUDA (the checks read it), e.g. 12040
};

// The kernels the benchmark carries and the oldest driver each loads on:
// "fatbin CUDA 13.0 (R580+), PTX ISA 7.0 (R450+)", or "none (built without
// nvcc)". `imgsmith-probe --version` prints it; the device check reads it.
std::string embedded_kernels();

// Runs the CPU half always, and the GPU half on `device` when `cu` is a
// driver with a usable GPU (nullptr: none). Everything the GPU half
// allocates is freed before it returns.
BenchOutput run_bench(const CudaDriver* cu, const BenchDevice& device);

}  // namespace probe
