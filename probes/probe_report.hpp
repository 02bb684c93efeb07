// What the probe's parts share: the report the checks fill in
// (diagnosis.cpp), the driver libraries' entry points (driver_symbols.cpp)
// and the report as people and programs read it (report_output.cpp);
// imgsmith_probe.cpp runs them.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_api.hpp"

namespace probe {

struct Device {
  int index = 0;
  std::string name, uuid, compute_capability;
  unsigned long long memory_total = 0, memory_used = 0;
  unsigned long long memory_free = 0;  // NVML's; total - used is not it (reserved memory)
  bool has_free = false;
  bool has_utilization = false, has_temperature = false;  // NVML answered each
  unsigned utilization = 0, temperature = 0;
  // "default", "exclusive-process" or "prohibited" (cuDeviceGetAttribute).
  std::string compute_mode = "default";
  // A MIG slice: its own UUID ("MIG-..."), memory and share of the GPU, so
  // no whole-GPU peak applies to it.
  bool mig = false;
};

// The verdict; the report names it as status_name() says (a new value
// needs its name there too).
enum class Status { Ok, NoGpu, DriverTooOld, Error, NoKernel };

// "ok", "no-gpu", "driver-too-old", "error" or "no-kernel".
const char* status_name(Status status);

struct Report {
  Status status = Status::Ok;
  std::string reason, fix;
  std::string driver_version;  // NVML's, e.g. "550.54.15"
  int driver_cuda = 0;         // cuDriverGetVersion, e.g. 12040
  std::string image_cuda;      // CUDA_VERSION of the image
  std::vector<Device> devices;
  std::vector<std::string> notes;
  std::string visible_nvidia, visible_cuda;
  std::string bench_json = "null";
  // IMGSMITH_MODEL_VRAM: the model's need against GPU 0's free memory.
  struct Vram {
    unsigned long long need = 0;  // 0: no model to check
    // IMGSMITH_MODEL_VRAM_BY_PRECISION "bf16:N,int8:N,int4:N": what a
    // lower precision would need, for the advice.
    std::vector<std::pair<std::string, unsigned long long>> by_precision;
    unsigned long long kv_bytes_per_token = 0;  // IMGSMITH_MODEL_KV_BYTES_PER_TOKEN
    bool checked = false;  // a verdict was reached (from the free memory, or a total too small)
    bool fits = true;
    unsigned long long free = 0;
    std::string line;  // the verdict, in one line
  } vram;
  // The application's CUDA binaries against GPU 0 (kernel_check.cpp).
  struct Kernels {
    bool checked = false;
    std::string source;             // "inventory" (written at build time) or "scan"
    std::string inventory_problem;  // why the inventory was not used, if one was there
    unsigned binaries = 0;          // CUDA binaries judged
    unsigned rescanned = 0;         // of an inventory's, read again (changed since)
    std::vector<std::string> none;  // paths with no code GPU 0 runs
    std::vector<std::string> jit;   // paths it runs only through PTX JIT
    unsigned long long jit_bytes = 0;
    double ms = 0;  // what the check cost
  } kernels;
  double elapsed_ms = 0;
};

inline std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

inline std::string cuda_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// ----- the driver libraries, loaded with dlopen (driver_symbols.cpp) -------

// False when libcuda.so.1 is missing or lacks the calls every check needs.
bool open_driver(CudaDriver& cu);
// False when libnvidia-ml.so.1 is missing or cannot start.
bool open_nvml(Nvml& n);

// ----- the checks (diagnosis.cpp) ----------------------------------------

// Records why the GPU cannot be used, and the fix, unless an earlier cause
// is already recorded.
void fail(Report& r, Status status, std::string reason, std::string fix);
// When the checks run. As the entrypoint, before the application: the GPU
// is the application's to take. As a startup or liveness probe (--check),
// beside a running application that may already hold it: an exclusive-
// process GPU's context and most of its memory (vLLM preallocates 90%) can
// be the application's own, and must not count against it.
enum class CheckTime { BeforeApp, BesideApp };

// The device nodes, the driver, the image's CUDA against it, each device.
void run_checks(Report& r, CheckTime when);
// The model's need (IMGSMITH_MODEL_VRAM), after run_checks: before the
// application, against GPU 0's free memory (what other processes leave);
// beside it, against GPU 0's total, so that only a model that can never fit
// fails. Nothing when no need is set.
void check_model_vram(Report& r, CheckTime when);

// ----- the report (report_output.cpp) ------------------------------------

std::string to_json(const Report& r);
// `s` as a JSON string, quotes included, with `"`, `\` and control
// characters escaped.
std::string json_string(const std::string& s);
void print_human(const Report& r);  // on stderr

}  // namespace probe
