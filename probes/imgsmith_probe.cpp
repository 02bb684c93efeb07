// imgsmith-probe: the entrypoint baked into images. It checks that the
// container can use its GPU, explains any failure in one line with the fix,
// shows each device, then execs the real command (same PID, same signals).
//
//   imgsmith-probe [--json] [--timeout SECONDS] [-- COMMAND ARGS...]
//
// IMGSMITH_PROBE=warn (default) reports, then runs the command; =require
// exits 3 without running it when no usable GPU is found; =off runs it at
// once. IMGSMITH_PROBE_TIMEOUT bounds the checks (default 10 s), so a hung
// driver cannot hold the application back. IMGSMITH_PROBE_JSON=PATH also
// writes the report as JSON to PATH.
//
// It depends on nothing but the C and C++ runtimes: libstdc++ is linked
// statically and every CUDA library is loaded with dlopen.
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench.hpp"
#include "cuda_api.hpp"
#include "probe_tables.hpp"

namespace probe {
namespace {

constexpr const char* kVersion = IMGSMITH_VERSION;  // from CMake: imgsmith's project() version
constexpr int kExitUsage = 2;
constexpr int kExitNoGpu = 3;
constexpr int kExitExecFailed = 127;

struct Device {
  int index = 0;
  std::string name, uuid, compute_capability;
  unsigned long long memory_total = 0, memory_used = 0;
  bool has_nvml = false;
  unsigned utilization = 0, temperature = 0;
};

struct Report {
  std::string status = "ok";  // ok | no-gpu | driver-too-old | error
  std::string reason, fix;
  std::string driver_version;  // NVML's, e.g. "550.54.15"
  int driver_cuda = 0;         // cuDriverGetVersion, e.g. 12040
  std::string image_cuda;      // CUDA_VERSION of the image
  std::vector<Device> devices;
  std::vector<std::string> notes;
  std::string visible_nvidia, visible_cuda;
  std::string bench_json = "null";
  double elapsed_ms = 0;
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::string cuda_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// The lowest driver for a CUDA major version (minor-version compatibility,
// data/cuda-drivers.json); a major newer than the table's newest needs at
// least what that one needs. 0: too old to know.
int minimum_driver(int cuda_major) {
  int driver = 0, known = 0;
  for (const auto& row : imgsmith::probe_tables::kMinimumDrivers)
    if (row.cuda_major <= cuda_major && row.cuda_major >= known)
      known = row.cuda_major, driver = row.driver;
  return driver;
}

void fail(Report& r, const char* status, std::string reason, std::string fix) {
  if (r.status != "ok") return;  // the first cause explains the rest
  r.status = status;
  r.reason = std::move(reason);
  r.fix = std::move(fix);
}

// Device nodes the NVIDIA container runtime creates. IMGSMITH_PROBE_DEV
// points the check at another directory; the tests use it to stand in for
// hardware this machine lacks.
bool has_device_nodes() {
  const std::string dir = env("IMGSMITH_PROBE_DEV").empty() ? "/dev" : env("IMGSMITH_PROBE_DEV");
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  bool found = false;
  while (dirent* e = ::readdir(d))
    if (std::strncmp(e->d_name, "nvidia", 6) == 0 && e->d_name[6] >= '0' && e->d_name[6] <= '9')
      found = true;
  ::closedir(d);
  return found;
}

template <typename Fn>
void load(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
}

bool open_driver(CudaDriver& cu) {
  cu.handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cu.handle == nullptr) return false;
  load(cu.handle, "cuInit", cu.cuInit);
  load(cu.handle, "cuDriverGetVersion", cu.cuDriverGetVersion);
  load(cu.handle, "cuDeviceGetCount", cu.cuDeviceGetCount);
  load(cu.handle, "cuDeviceGet", cu.cuDeviceGet);
  load(cu.handle, "cuDeviceGetName", cu.cuDeviceGetName);
  load(cu.handle, "cuDeviceGetUuid", cu.cuDeviceGetUuid);
  load(cu.handle, "cuDeviceGetAttribute", cu.cuDeviceGetAttribute);
  load(cu.handle, "cuDeviceTotalMem_v2", cu.cuDeviceTotalMem);
  load(cu.handle, "cuGetErrorName", cu.cuGetErrorName);
  load(cu.handle, "cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain);
  load(cu.handle, "cuCtxSetCurrent", cu.cuCtxSetCurrent);
  load(cu.handle, "cuCtxSynchronize", cu.cuCtxSynchronize);
  load(cu.handle, "cuModuleLoadData", cu.cuModuleLoadData);
  load(cu.handle, "cuModuleGetFunction", cu.cuModuleGetFunction);
  load(cu.handle, "cuMemAlloc_v2", cu.cuMemAlloc);
  load(cu.handle, "cuMemFree_v2", cu.cuMemFree);
  load(cu.handle, "cuMemHostAlloc", cu.cuMemHostAlloc);
  load(cu.handle, "cuMemFreeHost", cu.cuMemFreeHost);
  load(cu.handle, "cuMemcpyHtoD_v2", cu.cuMemcpyHtoD);
  load(cu.handle, "cuMemcpyDtoH_v2", cu.cuMemcpyDtoH);
  load(cu.handle, "cuEventCreate", cu.cuEventCreate);
  load(cu.handle, "cuEventRecord", cu.cuEventRecord);
  load(cu.handle, "cuEventSynchronize", cu.cuEventSynchronize);
  load(cu.handle, "cuEventElapsedTime", cu.cuEventElapsedTime);
  load(cu.handle, "cuLaunchKernel", cu.cuLaunchKernel);
  return cu.cuInit != nullptr && cu.cuDriverGetVersion != nullptr && cu.cuDeviceGetCount != nullptr;
}

bool open_nvml(Nvml& n) {
  n.handle = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (n.handle == nullptr) return false;
  load(n.handle, "nvmlInit_v2", n.nvmlInit);
  load(n.handle, "nvmlShutdown", n.nvmlShutdown);
  load(n.handle, "nvmlSystemGetDriverVersion", n.nvmlSystemGetDriverVersion);
  load(n.handle, "nvmlDeviceGetHandleByIndex_v2", n.nvmlDeviceGetHandleByIndex);
  load(n.handle, "nvmlDeviceGetMemoryInfo", n.nvmlDeviceGetMemoryInfo);
  load(n.handle, "nvmlDeviceGetUtilizationRates", n.nvmlDeviceGetUtilizationRates);
  load(n.handle, "nvmlDeviceGetTemperature", n.nvmlDeviceGetTemperature);
  load(n.handle, "nvmlErrorString", n.nvmlErrorString);
  return n.nvmlInit != nullptr;
}

std::string error_name(const CudaDriver& cu, CUresult rc) {
  const char* name = nullptr;
  if (cu.cuGetErrorName != nullptr && cu.cuGetErrorName(rc, &name) == CUDA_SUCCESS &&
      name != nullptr)
    return std::string(name) + " (" + std::to_string(rc) + ")";
  return "CUDA error " + std::to_string(rc);
}

std::string uuid_text(const CUuuid& u) {
  char buf[64];
  const unsigned char* b = u.bytes;
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

void check_image_cuda(Report& r) {
  if (r.image_cuda.empty() || r.driver_cuda == 0) return;
  const int major = std::atoi(r.image_cuda.c_str());
  const auto dot = r.image_cuda.find('.');
  const int minor = dot == std::string::npos ? 0 : std::atoi(r.image_cuda.c_str() + dot + 1);
  const int image = major * 1000 + minor * 10;
  if (major > r.driver_cuda / 1000) {
    fail(r, "driver-too-old",
         "this image needs CUDA " + std::to_string(major) + "." + std::to_string(minor) +
             " (driver >= " + std::to_string(minimum_driver(major)) +
             "); the host driver supports CUDA " + cuda_text(r.driver_cuda),
         "upgrade the host's NVIDIA driver to " + std::to_string(minimum_driver(major)) +
             " or newer, or use an image built for CUDA " + cuda_text(r.driver_cuda) + " or older");
  } else if (image > r.driver_cuda) {
    r.notes.push_back("the image's CUDA " + r.image_cuda + " is newer than the driver's " +
                      cuda_text(r.driver_cuda) +
                      ": it runs through minor-version compatibility, but PTX built for " +
                      r.image_cuda + " will not load (error 222)");
  }
}

void query_nvml(Report& r) {
  Nvml n;
  if (!open_nvml(n)) {
    r.notes.push_back(
        "libnvidia-ml.so.1 is missing: no utilisation or temperature "
        "(NVIDIA_DRIVER_CAPABILITIES needs 'utility')");
    return;
  }
  const nvmlReturn_t rc = n.nvmlInit();
  if (rc == NVML_ERROR_UNKNOWN) {
    fail(r, "error",
         "NVML: Unknown Error: the host's systemctl daemon-reload dropped this "
         "container's access to the GPU devices",
         "restart the container");
    return;
  }
  if (rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH) {
    fail(r, "error",
         "NVML: Driver/library version mismatch: the host's driver was upgraded "
         "without a reboot",
         "reboot the host");
    return;
  }
  if (rc != NVML_SUCCESS) {
    r.notes.push_back(
        "NVML did not start: " + std::string(n.nvmlErrorString ? n.nvmlErrorString(rc) : "error") +
        " (" + std::to_string(rc) + ")");
    return;
  }
  char version[96] = {};
  if (n.nvmlSystemGetDriverVersion != nullptr &&
      n.nvmlSystemGetDriverVersion(version, sizeof version) == NVML_SUCCESS)
    r.driver_version = version;
  for (auto& d : r.devices) {
    nvmlDevice_t h = nullptr;
    if (n.nvmlDeviceGetHandleByIndex == nullptr ||
        n.nvmlDeviceGetHandleByIndex(static_cast<unsigned>(d.index), &h) != NVML_SUCCESS)
      continue;
    nvmlMemory_t mem{};
    if (n.nvmlDeviceGetMemoryInfo != nullptr &&
        n.nvmlDeviceGetMemoryInfo(h, &mem) == NVML_SUCCESS) {
      d.memory_total = mem.total;
      d.memory_used = mem.used;
    }
    nvmlUtilization_t util{};
    unsigned temp = 0;
    const bool u = n.nvmlDeviceGetUtilizationRates != nullptr &&
                   n.nvmlDeviceGetUtilizationRates(h, &util) == NVML_SUCCESS;
    const bool t =
        n.nvmlDeviceGetTemperature != nullptr &&
        n.nvmlDeviceGetTemperature(h, 0 /* NVML_TEMPERATURE_GPU */, &temp) == NVML_SUCCESS;
    d.has_nvml = u && t;
    d.utilization = util.gpu;
    d.temperature = temp;
  }
  if (n.nvmlShutdown != nullptr) n.nvmlShutdown();
}

void run_checks(Report& r) {
  r.image_cuda = env("CUDA_VERSION");
  r.visible_nvidia = env("NVIDIA_VISIBLE_DEVICES");
  r.visible_cuda = env("CUDA_VISIBLE_DEVICES");
  const bool nodes = has_device_nodes();
  CudaDriver cu;
  const bool driver = open_driver(cu);
  if (!driver) {
    if (!nodes)
      fail(r, "no-gpu",
           "no NVIDIA devices in this container (no /dev/nvidia*, no libcuda.so.1): it was "
           "started without GPUs",
           "docker run --gpus all ... (on a shared machine --gpus '\"device=0\"'); in "
           "Kubernetes, request nvidia.com/gpu");
    else
      fail(r, "error",
           "GPU device nodes are here but libcuda.so.1 is not: NVIDIA_DRIVER_CAPABILITIES "
           "lacks 'compute', so the driver library was not mounted",
           "set NVIDIA_DRIVER_CAPABILITIES=compute,utility (the nvidia/cuda images do)");
    return;
  }
  const CUresult init = cu.cuInit(0);
  int version = 0;
  if (cu.cuDriverGetVersion(&version) == CUDA_SUCCESS) r.driver_cuda = version;
  switch (init) {
    case CUDA_SUCCESS:
      break;
    case CUDA_ERROR_STUB_LIBRARY:
      fail(r, nodes ? "error" : "no-gpu",
           "libcuda.so.1 is the CUDA toolkit's stub, not the driver (error 34): no driver was "
           "mounted into the container",
           "start it with --gpus all, and keep .../lib64/stubs off LD_LIBRARY_PATH at run time");
      return;
    case CUDA_ERROR_NO_DEVICE:
      fail(r, "no-gpu",
           "the driver sees no CUDA device (error 100): NVIDIA_VISIBLE_DEVICES='" +
               r.visible_nvidia + "', CUDA_VISIBLE_DEVICES='" + r.visible_cuda + "'",
           "docker run --gpus all (or --gpus '\"device=0\"'), and check that "
           "CUDA_VISIBLE_DEVICES names a device that exists");
      return;
    case CUDA_ERROR_INSUFFICIENT_DRIVER:
      fail(r, "driver-too-old",
           "the host driver is older than this image's CUDA (error 35): it supports CUDA " +
               (r.driver_cuda != 0 ? cuda_text(r.driver_cuda) : std::string("?")) +
               (r.image_cuda.empty() ? "" : ", the image has " + r.image_cuda),
           "upgrade the host's NVIDIA driver, or use an image built for an older CUDA");
      return;
    case CUDA_ERROR_SYSTEM_NOT_READY:
      fail(r, "error",
           "the system is not yet initialized (error 802): NVIDIA Fabric Manager is not running "
           "on this NVSwitch host",
           "start it on the host: systemctl enable --now nvidia-fabricmanager");
      return;
    default:
      fail(r, "error", "cuInit failed: " + error_name(cu, init),
           "see the driver's logs on the host (dmesg, nvidia-smi)");
      return;
  }
  check_image_cuda(r);
  int count = 0;
  if (cu.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    fail(r, "no-gpu", "the driver reports no CUDA device",
         "docker run --gpus all, and check CUDA_VISIBLE_DEVICES");
    return;
  }
  for (int i = 0; i < count; ++i) {
    Device d;
    d.index = i;
    CUdevice dev = 0;
    if (cu.cuDeviceGet != nullptr && cu.cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
    char name[256] = {};
    if (cu.cuDeviceGetName != nullptr && cu.cuDeviceGetName(name, sizeof name, dev) == CUDA_SUCCESS)
      d.name = name;
    CUuuid uuid{};
    if (cu.cuDeviceGetUuid != nullptr && cu.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS)
      d.uuid = uuid_text(uuid);
    int major = 0, minor = 0;
    if (cu.cuDeviceGetAttribute != nullptr) {
      cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    }
    d.compute_capability = std::to_string(major) + "." + std::to_string(minor);
    std::size_t total = 0;
    if (cu.cuDeviceTotalMem != nullptr && cu.cuDeviceTotalMem(&total, dev) == CUDA_SUCCESS)
      d.memory_total = total;
    r.devices.push_back(d);
  }
  query_nvml(r);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

std::string to_json(const Report& r) {
  std::string o = "{\"schema\":\"imgsmith.probe/v1\",\"status\":" + json_string(r.status);
  o += ",\"reason\":" + json_string(r.reason) + ",\"fix\":" + json_string(r.fix);
  if (r.driver_cuda != 0 || !r.driver_version.empty())
    o += ",\"driver\":{\"version\":" + json_string(r.driver_version) +
         ",\"cuda\":" + json_string(r.driver_cuda != 0 ? cuda_text(r.driver_cuda) : "") + "}";
  else
    o += ",\"driver\":null";
  o +=
      ",\"image_cuda\":" + (r.image_cuda.empty() ? std::string("null") : json_string(r.image_cuda));
  o += ",\"visible_devices\":{\"NVIDIA_VISIBLE_DEVICES\":" + json_string(r.visible_nvidia) +
       ",\"CUDA_VISIBLE_DEVICES\":" + json_string(r.visible_cuda) + "}";
  o += ",\"devices\":[";
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    const Device& d = r.devices[i];
    o += (i ? "," : "") + std::string("{\"index\":") + std::to_string(d.index) +
         ",\"name\":" + json_string(d.name) + ",\"uuid\":" + json_string(d.uuid) +
         ",\"compute_capability\":" + json_string(d.compute_capability) +
         ",\"memory_total_bytes\":" + std::to_string(d.memory_total) +
         ",\"memory_used_bytes\":" + std::to_string(d.memory_used) +
         ",\"utilization_percent\":" + (d.has_nvml ? std::to_string(d.utilization) : "null") +
         ",\"temperature_c\":" + (d.has_nvml ? std::to_string(d.temperature) : "null") + "}";
  }
  o += "],\"notes\":[";
  for (std::size_t i = 0; i < r.notes.size(); ++i) o += (i ? "," : "") + json_string(r.notes[i]);
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f", r.elapsed_ms);
  o += "],\"bench\":" + r.bench_json + ",\"elapsed_ms\":" + std::string(ms) + "}";
  return o;
}

void print_human(const Report& r) {
  if (r.status == "ok") {
    std::fprintf(stderr, "imgsmith-probe: ok: %zu GPU%s, driver %s (CUDA %s)%s\n", r.devices.size(),
                 r.devices.size() == 1 ? "" : "s",
                 r.driver_version.empty() ? "?" : r.driver_version.c_str(),
                 cuda_text(r.driver_cuda).c_str(),
                 r.image_cuda.empty() ? "" : (", image CUDA " + r.image_cuda).c_str());
  } else {
    std::fprintf(stderr, "imgsmith-probe: %s: %s\nimgsmith-probe: fix: %s\n", r.status.c_str(),
                 r.reason.c_str(), r.fix.c_str());
  }
  for (const auto& d : r.devices) {
    std::fprintf(stderr, "imgsmith-probe:   GPU %d %s, %s, sm %s, memory %.1f/%.1f GiB", d.index,
                 d.name.c_str(), d.uuid.c_str(), d.compute_capability.c_str(),
                 static_cast<double>(d.memory_used) / (1 << 30),
                 static_cast<double>(d.memory_total) / (1 << 30));
    if (d.has_nvml) std::fprintf(stderr, ", %u%% busy, %u C", d.utilization, d.temperature);
    std::fprintf(stderr, "\n");
  }
  for (const auto& n : r.notes) std::fprintf(stderr, "imgsmith-probe: note: %s\n", n.c_str());
}

void usage(FILE* to) {
  std::fprintf(to,
               "usage: imgsmith-probe [--json] [--timeout SECONDS] [-- COMMAND [ARGS...]]\n"
               "\n"
               "Checks that this container can use its NVIDIA GPU, explains any failure in one\n"
               "line with the fix, shows each device, then execs COMMAND.\n"
               "\n"
               "  --json             also print the report as JSON on stdout (before COMMAND)\n"
               "  --bench            also measure: host<->device and device bandwidth, FP32,\n"
               "                     and a CPU-vs-GPU race (a network step, a logistic\n"
               "                     regression); about two seconds\n"
               "  --timeout SECONDS  bound the checks (default 10, or IMGSMITH_PROBE_TIMEOUT)\n"
               "\n"
               "Environment:\n"
               "  IMGSMITH_PROBE=warn     report, then run COMMAND (default)\n"
               "  IMGSMITH_PROBE=require  exit 3 without running COMMAND when no GPU is usable\n"
               "  IMGSMITH_PROBE=off      run COMMAND at once\n"
               "  IMGSMITH_PROBE_JSON=PATH  also write the JSON report to PATH\n"
               "\n"
               "Exit status: COMMAND's own; without COMMAND, 0 when a GPU is usable, else 3;\n"
               "3 in require mode when no GPU is usable; 2 bad usage; 127 COMMAND cannot run.\n");
}

[[noreturn]] void exec_command(char** argv) {
  ::execvp(argv[0], argv);
  std::fprintf(stderr, "imgsmith-probe: cannot run '%s': %s\n", argv[0], std::strerror(errno));
  std::fflush(stderr);
  ::_exit(kExitExecFailed);
}

}  // namespace
}  // namespace probe

int main(int argc, char** argv) {
  using namespace probe;
  bool json = false;
  bool bench = false;
  double timeout = 10;
  if (const std::string t = env("IMGSMITH_PROBE_TIMEOUT"); !t.empty())
    timeout = std::atof(t.c_str());
  char** command = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      if (i + 1 < argc) command = argv + i + 1;
      break;
    }
    if (a == "--json") {
      json = true;
    } else if (a == "--bench") {
      bench = true;
    } else if (a == "--timeout" && i + 1 < argc) {
      timeout = std::atof(argv[++i]);
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--version") {
      std::printf("imgsmith-probe %s\n", kVersion);
      return 0;
    } else {
      std::fprintf(stderr, "imgsmith-probe: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return kExitUsage;
    }
  }
  if (!(timeout > 0)) timeout = 10;

  std::string mode = env("IMGSMITH_PROBE");
  if (mode.empty()) mode = "warn";
  if (mode != "warn" && mode != "require" && mode != "off") {
    std::fprintf(stderr,
                 "imgsmith-probe: IMGSMITH_PROBE='%s' is not off, warn or require; using warn\n",
                 mode.c_str());
    mode = "warn";
  }
  if (mode == "off") {
    if (command != nullptr) exec_command(command);
    return 0;
  }

  // The checks run on their own thread: a driver that hangs in cuInit is
  // reported, and in warn mode the application still starts.
  const auto start = std::chrono::steady_clock::now();
  auto* shared = new Report();  // leaked on purpose if the checks hang
  auto* lock = new std::mutex();
  auto* done_cv = new std::condition_variable();
  auto* done = new bool(false);
  std::thread([=] {
    Report r;
    run_checks(r);
    std::lock_guard<std::mutex> g(*lock);
    *shared = std::move(r);
    *done = true;
    done_cv->notify_one();
  }).detach();
  Report report;
  {
    std::unique_lock<std::mutex> g(*lock);
    if (done_cv->wait_for(g, std::chrono::duration<double>(timeout), [&] { return *done; })) {
      report = *shared;
    } else {
      fail(report, "error",
           "the GPU checks did not finish within " + std::to_string(static_cast<int>(timeout)) +
               " s (the driver hangs in cuInit)",
           "check the host: nvidia-smi, dmesg; persistence mode (nvidia-smi -pm 1) shortens "
           "driver start-up");
    }
  }
  std::string bench_lines;
  if (bench) {
    const bool usable = report.status == "ok" && !report.devices.empty();
    CudaDriver cu;
    const bool driver = usable && open_driver(cu);
    const BenchOutput b =
        run_bench(driver ? &cu : nullptr, driver, usable ? report.devices[0].name : std::string());
    report.bench_json = b.json;
    bench_lines = b.lines;
  }
  report.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  print_human(report);
  for (std::size_t at = 0; at < bench_lines.size();) {
    const auto end = bench_lines.find('\n', at);
    std::fprintf(stderr, "imgsmith-probe: %s\n", bench_lines.substr(at, end - at).c_str());
    at = end == std::string::npos ? bench_lines.size() : end + 1;
  }
  const std::string doc = to_json(report);
  if (json) std::printf("%s\n", doc.c_str());
  std::fflush(stdout);
  if (const std::string path = env("IMGSMITH_PROBE_JSON"); !path.empty()) {
    if (FILE* f = std::fopen(path.c_str(), "w")) {
      std::fprintf(f, "%s\n", doc.c_str());
      std::fclose(f);
    } else {
      std::fprintf(stderr, "imgsmith-probe: cannot write %s: %s\n", path.c_str(),
                   std::strerror(errno));
    }
  }
  std::fflush(stderr);
  const bool usable = report.status == "ok";
  if (mode == "require" && !usable) ::_exit(kExitNoGpu);
  if (command != nullptr) exec_command(command);
  ::_exit(usable ? 0 : kExitNoGpu);
}
