// The probe's checks: whether this container can use its GPU, and when it
// cannot, the first cause, said in one line with its fix.
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "probe_report.hpp"
#include "probe_tables.hpp"

namespace probe {
namespace {

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

// A GPU in prohibited mode takes no context; one in exclusive-process mode
// takes one process's only, so another holding it leaves the application
// error 46. Retaining the primary context (and releasing it at once) is
// the only way to know, and it is done only in that mode, and only before
// the application: beside it (--check) the holder is most likely the
// application itself, and taking the context could only fail, or, in the
// instant it is free, take it from the application. GPU 0, the one an
// application takes by default, decides the verdict; others get a note.
void check_compute_mode(Report& r, const CudaDriver& cu, CUdevice dev, Device& d, CheckTime when) {
  int mode = CU_COMPUTEMODE_DEFAULT;
  if (cu.cuDeviceGetAttribute == nullptr ||
      cu.cuDeviceGetAttribute(&mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, dev) != CUDA_SUCCESS)
    return;
  std::string problem, fix;
  if (mode == CU_COMPUTEMODE_PROHIBITED) {
    d.compute_mode = "prohibited";
    problem = "is in compute mode Prohibited: no process may use it";
    fix = "on the host: nvidia-smi -i " + std::to_string(d.index) +
          " -c DEFAULT (or give this container another GPU)";
  } else if (mode == CU_COMPUTEMODE_EXCLUSIVE_PROCESS) {
    d.compute_mode = "exclusive-process";
    if (when == CheckTime::BesideApp) return;
    CUcontext ctx = nullptr;
    const CUresult rc = cu.cuDevicePrimaryCtxRetain != nullptr
                            ? cu.cuDevicePrimaryCtxRetain(&ctx, dev)
                            : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS && ctx != nullptr && cu.cuDevicePrimaryCtxRelease != nullptr)
      cu.cuDevicePrimaryCtxRelease(dev);
    if (rc == CUDA_ERROR_DEVICE_UNAVAILABLE) {
      problem = "is in compute mode Exclusive_Process and another process holds it (error 46)";
      fix =
          "stop that process (nvidia-smi on the host shows it), give this container another "
          "GPU, or on the host: nvidia-smi -i " +
          std::to_string(d.index) + " -c DEFAULT";
    } else if (rc != CUDA_SUCCESS) {
      problem = "takes no context: " + error_name(cu, rc);
      fix = "see the driver's logs on the host (dmesg, nvidia-smi)";
    }
  }
  if (problem.empty()) return;
  const std::string gpu = "GPU " + std::to_string(d.index) + " (" + d.name + ") ";
  if (d.index == 0)
    fail(r, Status::Error, gpu + problem, fix);
  else
    r.notes.push_back(gpu + problem + ": " + fix);
}

void check_image_cuda(Report& r) {
  if (r.image_cuda.empty() || r.driver_cuda == 0) return;
  const int major = std::atoi(r.image_cuda.c_str());
  const auto dot = r.image_cuda.find('.');
  const int minor = dot == std::string::npos ? 0 : std::atoi(r.image_cuda.c_str() + dot + 1);
  const int image = major * 1000 + minor * 10;
  if (major > r.driver_cuda / 1000) {
    fail(r, Status::DriverTooOld,
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

// What NVML says when cuInit has failed with an error of no clear cause:
// its own failure names the cause the driver API's does not.
nvmlReturn_t nvml_init_status() {
  Nvml n;
  if (!open_nvml(n)) return NVML_SUCCESS;
  const nvmlReturn_t rc = n.nvmlInit();
  if (rc == NVML_SUCCESS && n.nvmlShutdown != nullptr) n.nvmlShutdown();
  return rc;
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
  // CUDA works (cuInit and the devices answered): an NVML that does not
  // start costs the figures, not the GPU, so it is a note; require mode
  // must not refuse a GPU the application can use.
  if (rc == NVML_ERROR_UNKNOWN) {
    r.notes.push_back(
        "NVML: Unknown Error although CUDA works: no free memory, utilisation or temperature; "
        "if CUDA fails later too, a systemctl daemon-reload on the host dropped this container's "
        "access to the GPU devices: restart the container");
    return;
  }
  if (rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH) {
    r.notes.push_back(
        "NVML: Driver/library version mismatch although CUDA works: libnvidia-ml.so.1 does not "
        "match the host's kernel driver (upgraded without a reboot?): no free memory, "
        "utilisation or temperature until the host is rebooted");
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
  // CUDA's ordinals are not NVML's indices: CUDA_VISIBLE_DEVICES renumbers
  // them and CUDA orders the fastest first, NVML by PCI bus. The UUID names
  // the same GPU in both; the index is trusted only when each side sees
  // exactly one GPU.
  unsigned nvml_count = 0;
  const bool one_each = r.devices.size() == 1 && n.nvmlDeviceGetCount != nullptr &&
                        n.nvmlDeviceGetCount(&nvml_count) == NVML_SUCCESS && nvml_count == 1;
  for (auto& d : r.devices) {
    nvmlDevice_t h = nullptr;
    bool by_uuid = !d.uuid.empty() && n.nvmlDeviceGetHandleByUUID != nullptr &&
                   n.nvmlDeviceGetHandleByUUID(d.uuid.c_str(), &h) == NVML_SUCCESS;
    // A MIG instance's UUID has the same bytes and NVML spells it "MIG-".
    if (!by_uuid && d.uuid.starts_with("GPU-") && n.nvmlDeviceGetHandleByUUID != nullptr) {
      const std::string mig = "MIG-" + d.uuid.substr(4);
      by_uuid = n.nvmlDeviceGetHandleByUUID(mig.c_str(), &h) == NVML_SUCCESS;
      if (by_uuid) d.uuid = mig;
    }
    const bool by_index = !by_uuid && one_each && n.nvmlDeviceGetHandleByIndex != nullptr &&
                          n.nvmlDeviceGetHandleByIndex(0, &h) == NVML_SUCCESS;
    if (!by_uuid && !by_index) {
      r.notes.push_back("NVML does not know GPU " + std::to_string(d.index) + " (" +
                        (d.uuid.empty() ? std::string("no UUID") : d.uuid) +
                        "): no free memory, utilisation or temperature for it");
      continue;
    }
    nvmlMemory_t mem{};
    if (n.nvmlDeviceGetMemoryInfo != nullptr &&
        n.nvmlDeviceGetMemoryInfo(h, &mem) == NVML_SUCCESS) {
      d.memory_total = mem.total;
      d.memory_used = mem.used;
      d.memory_free = mem.free;
      d.has_free = true;
    }
    nvmlUtilization_t util{};
    unsigned temp = 0;
    const bool u = n.nvmlDeviceGetUtilizationRates != nullptr &&
                   n.nvmlDeviceGetUtilizationRates(h, &util) == NVML_SUCCESS;
    const bool t =
        n.nvmlDeviceGetTemperature != nullptr &&
        n.nvmlDeviceGetTemperature(h, 0 /* NVML_TEMPERATURE_GPU */, &temp) == NVML_SUCCESS;
    // Each on its own: NVML answers NOT_SUPPORTED for a MIG slice's
    // utilisation while its temperature may still come.
    d.has_utilization = u;
    d.has_temperature = t;
    d.utilization = util.gpu;
    d.temperature = temp;
  }
  if (n.nvmlShutdown != nullptr) n.nvmlShutdown();
}

}  // namespace

void fail(Report& r, Status status, std::string reason, std::string fix) {
  if (r.status != Status::Ok) return;  // the first cause explains the rest
  r.status = status;
  r.reason = std::move(reason);
  r.fix = std::move(fix);
}

void run_checks(Report& r, CheckTime when) {
  r.image_cuda = env("CUDA_VERSION");
  r.visible_nvidia = env("NVIDIA_VISIBLE_DEVICES");
  r.visible_cuda = env("CUDA_VISIBLE_DEVICES");
  const bool nodes = has_device_nodes();
  CudaDriver cu;
  const bool driver = open_driver(cu);
  if (!driver) {
    if (!cu.load_error.empty())
      fail(r, Status::Error, "libcuda.so.1 is here but does not load: " + cu.load_error,
           "the driver library mounted into the container does not suit it (another "
           "architecture, or a dependency missing): check the NVIDIA Container Toolkit on the "
           "host (nvidia-ctk), and that no libcuda.so.1 of the image shadows the host's");
    else if (!nodes)
      fail(r, Status::NoGpu,
           "no NVIDIA devices in this container (no /dev/nvidia*, no libcuda.so.1): it was "
           "started without GPUs",
           "docker run --gpus all ... (on a shared machine --gpus '\"device=0\"'); in "
           "Kubernetes, request nvidia.com/gpu");
    else
      fail(r, Status::Error,
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
      fail(r, nodes ? Status::Error : Status::NoGpu,
           "libcuda.so.1 is the CUDA toolkit's stub, not the driver (error 34): no driver was "
           "mounted into the container",
           "start it with --gpus all, and keep .../lib64/stubs off LD_LIBRARY_PATH at run time");
      return;
    case CUDA_ERROR_NO_DEVICE:
      fail(r, Status::NoGpu,
           "the driver sees no CUDA device (error 100): NVIDIA_VISIBLE_DEVICES='" +
               r.visible_nvidia + "', CUDA_VISIBLE_DEVICES='" + r.visible_cuda + "'",
           "docker run --gpus all (or --gpus '\"device=0\"'), and check that "
           "CUDA_VISIBLE_DEVICES names a device that exists");
      return;
    case CUDA_ERROR_SYSTEM_NOT_READY:
      fail(r, Status::Error,
           "the system is not yet initialized (error 802): NVIDIA Fabric Manager is not running "
           "on this NVSwitch host",
           "start it on the host: systemctl enable --now nvidia-fabricmanager");
      return;
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      // libcuda.so.1 and the kernel module are of different versions: the
      // image's forward-compatibility libcuda (cuda-compat) on a host whose
      // driver it does not support, or a host driver upgraded without a reboot.
      if (cu.path.find("/compat/") != std::string::npos)
        fail(r, Status::Error,
             "the image's forward-compatibility libcuda (" + cu.path +
                 ") does not match the host's kernel driver (error 803)",
             "take the compat directory off LD_LIBRARY_PATH and use an image whose CUDA the "
             "host driver supports, or move the host to a driver branch cuda-compat supports");
      else
        fail(r, Status::Error,
             "the CUDA driver library does not match the host's kernel driver (error 803): "
             "the driver was upgraded without a reboot" +
                 std::string(nvml_init_status() == NVML_ERROR_LIB_RM_VERSION_MISMATCH
                                 ? " (NVML says the same: Driver/library version mismatch)"
                                 : ""),
             "reboot the host");
      return;
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      fail(r, Status::Error,
           "forward compatibility (the image's cuda-compat libcuda" +
               (cu.path.empty() ? std::string() : ", " + cu.path) +
               ") is not supported on this GPU (error 804): it is for data-center GPUs only",
           "upgrade the host's NVIDIA driver to one that supports the image's CUDA, or use an "
           "image built for CUDA " +
               (r.driver_cuda != 0 ? cuda_text(r.driver_cuda) : std::string("the driver's")) +
               " or older, without cuda-compat on LD_LIBRARY_PATH");
      return;
    case CUDA_ERROR_UNKNOWN:
      if (nvml_init_status() == NVML_ERROR_UNKNOWN) {
        fail(r, Status::Error,
             "cuInit and NVML both fail with Unknown Error (999): the host's systemctl "
             "daemon-reload dropped this container's access to the GPU devices",
             "restart the container (for good: the NVIDIA Container Toolkit's fix for "
             "systemd cgroup drivers, nvidia-ctk system create-dev-char-symlinks)");
        return;
      }
      [[fallthrough]];
    default:
      fail(r, Status::Error, "cuInit failed: " + error_name(cu, init),
           "see the driver's logs on the host (dmesg, nvidia-smi)");
      return;
  }
  check_image_cuda(r);
  int count = 0;
  if (cu.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    fail(r, Status::NoGpu, "the driver reports no CUDA device",
         "docker run --gpus all, and check CUDA_VISIBLE_DEVICES");
    return;
  }
  for (int i = 0; i < count; ++i) {
    Device d;
    d.index = i;
    CUdevice dev = 0;
    if (cu.cuDeviceGet == nullptr || cu.cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
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
    // CUDA names a MIG slice "<GPU> MIG <profile>" and gives it memory of its
    // own; NVML spells its UUID "MIG-" (query_nvml).
    d.mig = d.name.find(" MIG ") != std::string::npos;
    if (d.mig && d.uuid.starts_with("GPU-")) d.uuid = "MIG-" + d.uuid.substr(4);
    check_compute_mode(r, cu, dev, d, when);
    r.devices.push_back(d);
  }
  query_nvml(r);
}

namespace {

bool parse_bytes(const std::string& text, unsigned long long& out) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = std::stoull(text);
  return true;
}

std::string gigabytes(unsigned long long bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return buf;
}

// The smallest GPU of analyze's table (data/gpus.json) that holds `need`:
// " (the smallest in imgsmith's table: T4, 16 GB)".
std::string smallest_known_gpu(unsigned long long need) {
  const imgsmith::probe_tables::KnownGpu* best = nullptr;
  for (const auto& gpu : imgsmith::probe_tables::kKnownGpus)
    if (gpu.memory_gb * 1e9 >= static_cast<double>(need) &&
        (best == nullptr || gpu.memory_gb < best->memory_gb))
      best = &gpu;
  if (best == nullptr)
    return " (more than any one GPU in imgsmith's table holds: split it across GPUs)";
  char buf[160];
  std::snprintf(buf, sizeof buf, " (the smallest in imgsmith's table: %s, %.0f GB)", best->name,
                best->memory_gb);
  return buf;
}

}  // namespace

void check_model_vram(Report& r, CheckTime when) {
  Report::Vram& v = r.vram;
  const std::string need = env("IMGSMITH_MODEL_VRAM");
  if (need.empty()) return;
  if (!parse_bytes(need, v.need) || v.need == 0) {
    r.notes.push_back("IMGSMITH_MODEL_VRAM='" + need +
                      "' is not a byte count; the model's need is not checked");
    v.need = 0;
    return;
  }
  // "bf16:N,int8:N,int4:N"
  const std::string list = env("IMGSMITH_MODEL_VRAM_BY_PRECISION");
  for (std::size_t at = 0; at < list.size();) {
    const std::size_t end = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, end - at);
    const std::size_t colon = item.find(':');
    unsigned long long bytes = 0;
    if (colon != std::string::npos && parse_bytes(item.substr(colon + 1), bytes))
      v.by_precision.emplace_back(item.substr(0, colon), bytes);
    at = end + 1;
  }
  if (!parse_bytes(env("IMGSMITH_MODEL_KV_BYTES_PER_TOKEN"), v.kv_bytes_per_token))
    v.kv_bytes_per_token = 0;
  if (r.status != Status::Ok || r.devices.empty()) return;  // no GPU: said already
  const Device& d = r.devices.front();
  if (when == CheckTime::BesideApp) {
    // The running application's own memory is not a reason to restart it.
    v.checked = d.memory_total > 0;
    v.fits = !v.checked || d.memory_total >= v.need;
    v.line = "the model needs " + gigabytes(v.need) + "; GPU 0 (" + d.name + ") holds " +
             gigabytes(d.memory_total) + " in all: " +
             (v.fits ? std::string("it can fit (a check beside the running application "
                                   "compares with the total: the free memory is the "
                                   "application's to take)")
                     : "it can never fit; use a GPU with at least " + gigabytes(v.need) +
                           smallest_known_gpu(v.need));
    return;
  }
  if (!d.has_free) {
    v.line = "the model needs " + gigabytes(v.need) +
             "; GPU 0's free memory is unknown (no NVML), " +
             (d.memory_total >= v.need ? "its total " + gigabytes(d.memory_total) + " would hold it"
                                       : "and its total " + gigabytes(d.memory_total) + " is less");
    v.checked = d.memory_total > 0 && d.memory_total < v.need;
    v.fits = !v.checked;
    return;
  }
  v.checked = true;
  v.free = d.memory_free;
  v.fits = d.memory_free >= v.need;
  const std::string gpu = "GPU 0 (" + d.name + ") has " + gigabytes(d.memory_free) + " free";
  if (v.fits) {
    const unsigned long long spare = d.memory_free - v.need;
    v.line = "the model needs " + gigabytes(v.need) + "; " + gpu + ": fits, " + gigabytes(spare) +
             " to spare";
    if (v.kv_bytes_per_token > 0)
      v.line += ", room for ~" + std::to_string(spare / v.kv_bytes_per_token / 1000) +
                "k more tokens of KV cache";
    return;
  }
  std::string advice;
  for (const auto& [precision, bytes] : v.by_precision)
    if (bytes <= d.memory_free) {
      advice = "; at " + precision + " it would need " + gigabytes(bytes) + " and fit";
      break;
    }
  v.line = "the model needs " + gigabytes(v.need) + "; " + gpu + ": does not fit" +
           (advice.empty() ? "; use a GPU with at least " + gigabytes(v.need) + " free" +
                                 smallest_known_gpu(v.need)
                           : advice) +
           " (another process may hold GPU memory: nvidia-smi shows which)";
}

}  // namespace probe
