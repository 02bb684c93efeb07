// The CUDA driver's and NVML's entry points, looked up with dlsym in the
// libraries the container runtime mounts: the probe links neither.
#include <dlfcn.h>

#include <cstring>

#include "probe_report.hpp"

namespace probe {
namespace {

template <typename Fn>
void load(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
}

}  // namespace

bool open_driver(CudaDriver& cu) {
  cu.handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cu.handle == nullptr) {
    // "cannot open shared object file" is a library that is not there;
    // anything else is one that is there and broken, which needs its own fix.
    const char* why = ::dlerror();
    if (why != nullptr && std::strstr(why, "cannot open shared object file") == nullptr)
      cu.load_error = why;
    return false;
  }
  load(cu.handle, "cuInit", cu.cuInit);
  Dl_info info{};
  if (cu.cuInit != nullptr && ::dladdr(reinterpret_cast<void*>(cu.cuInit), &info) != 0 &&
      info.dli_fname != nullptr)
    cu.path = info.dli_fname;
  load(cu.handle, "cuDriverGetVersion", cu.cuDriverGetVersion);
  load(cu.handle, "cuDeviceGetCount", cu.cuDeviceGetCount);
  load(cu.handle, "cuDeviceGet", cu.cuDeviceGet);
  load(cu.handle, "cuDeviceGetName", cu.cuDeviceGetName);
  // CUDA 12+ headers map cuDeviceGetUuid to _v2 (which answers a MIG
  // instance's own UUID); older drivers have only the first.
  load(cu.handle, "cuDeviceGetUuid_v2", cu.cuDeviceGetUuid);
  if (cu.cuDeviceGetUuid == nullptr) load(cu.handle, "cuDeviceGetUuid", cu.cuDeviceGetUuid);
  load(cu.handle, "cuDeviceGetAttribute", cu.cuDeviceGetAttribute);
  load(cu.handle, "cuDeviceTotalMem_v2", cu.cuDeviceTotalMem);
  load(cu.handle, "cuGetErrorName", cu.cuGetErrorName);
  load(cu.handle, "cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain);
  load(cu.handle, "cuDevicePrimaryCtxRelease_v2", cu.cuDevicePrimaryCtxRelease);
  load(cu.handle, "cuMemGetInfo_v2", cu.cuMemGetInfo);
  load(cu.handle, "cuModuleUnload", cu.cuModuleUnload);
  load(cu.handle, "cuEventDestroy_v2", cu.cuEventDestroy);
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
  // CUDA 12.8+ headers map cuEventElapsedTime to _v2; older drivers have only the first.
  load(cu.handle, "cuEventElapsedTime_v2", cu.cuEventElapsedTime);
  if (cu.cuEventElapsedTime == nullptr)
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
  load(n.handle, "nvmlDeviceGetHandleByUUID", n.nvmlDeviceGetHandleByUUID);
  load(n.handle, "nvmlDeviceGetCount_v2", n.nvmlDeviceGetCount);
  load(n.handle, "nvmlDeviceGetMemoryInfo", n.nvmlDeviceGetMemoryInfo);
  load(n.handle, "nvmlDeviceGetUtilizationRates", n.nvmlDeviceGetUtilizationRates);
  load(n.handle, "nvmlDeviceGetTemperature", n.nvmlDeviceGetTemperature);
  load(n.handle, "nvmlErrorString", n.nvmlErrorString);
  return n.nvmlInit != nullptr;
}

}  // namespace probe
