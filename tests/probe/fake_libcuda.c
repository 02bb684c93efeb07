/* A stand-in for libcuda.so.1, for tests on machines without an NVIDIA GPU
 * (like this project's CI). It answers the driver API calls the probe makes
 * with values scripted through the environment:
 *   FAKE_CUINIT=<CUresult>       what cuInit returns (default 0)
 *   FAKE_CUINIT_HANG=1           cuInit never returns (the watchdog test)
 *   FAKE_DRIVER_VERSION=<int>    cuDriverGetVersion (default 12040, CUDA 12.4)
 *   FAKE_DEVICE_COUNT=<int>      devices (default 1)
 *   FAKE_MODULE_LOAD=<CUresult>  what cuModuleLoadData returns (default 222:
 *                                a stand-in cannot run kernels, so the
 *                                benchmark's "cannot load" path is what it tests)
 * It is built by the tests and found through LD_LIBRARY_PATH; it is never
 * shipped. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? atoi(v) : fallback;
}

int cuInit(unsigned flags) {
  (void)flags;
  if (getenv("FAKE_CUINIT_HANG") != NULL)
    for (;;) pause();
  return env_int("FAKE_CUINIT", 0);
}

int cuDriverGetVersion(int* v) {
  *v = env_int("FAKE_DRIVER_VERSION", 12040);
  return 0;
}

int cuDeviceGetCount(int* n) {
  *n = env_int("FAKE_DEVICE_COUNT", 1);
  return 0;
}

int cuDeviceGet(int* dev, int ordinal) {
  *dev = ordinal;
  return 0;
}

int cuDeviceGetName(char* name, int len, int dev) {
  (void)dev;
  strncpy(name, "NVIDIA H200 (stand-in)", (size_t)len - 1);
  name[len - 1] = '\0';
  return 0;
}

int cuDeviceGetUuid(unsigned char* uuid, int dev) {
  for (int i = 0; i < 16; ++i) uuid[i] = (unsigned char)(0x10 * dev + i);
  return 0;
}
/* The driver exports both; CUDA 12+ headers call the second. */
int cuDeviceGetUuid_v2(unsigned char* uuid, int dev) { return cuDeviceGetUuid(uuid, dev); }

int cuDeviceGetAttribute(int* value, int attribute, int dev) {
  (void)dev;
  *value = attribute == 75 ? 9 : 0; /* compute capability 9.0 */
  return 0;
}

int cuDeviceTotalMem_v2(size_t* bytes, int dev) {
  (void)dev;
  *bytes = (size_t)150754820096ULL;
  return 0;
}

int cuGetErrorName(int error, const char** name) {
  switch (error) {
    case 34:
      *name = "CUDA_ERROR_STUB_LIBRARY";
      return 0;
    case 35:
      *name = "CUDA_ERROR_INSUFFICIENT_DRIVER";
      return 0;
    case 100:
      *name = "CUDA_ERROR_NO_DEVICE";
      return 0;
    case 802:
      *name = "CUDA_ERROR_SYSTEM_NOT_READY";
      return 0;
    case 222:
      *name = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
      return 0;
    case 999:
      *name = "CUDA_ERROR_UNKNOWN";
      return 0;
    default:
      return 1;
  }
}

/* Enough of the benchmark's calls for it to reach cuModuleLoadData. */
int cuDevicePrimaryCtxRetain(void** ctx, int dev) {
  (void)dev;
  *ctx = (void*)1;
  return 0;
}
int cuCtxSetCurrent(void* ctx) {
  (void)ctx;
  return 0;
}
int cuCtxSynchronize(void) { return 0; }
int cuModuleLoadData(void** module, const void* image) {
  (void)image;
  *module = NULL;
  return env_int("FAKE_MODULE_LOAD", 222);
}
int cuModuleGetFunction(void** f, void* module, const char* name) {
  (void)module;
  (void)name;
  *f = NULL;
  return 500; /* CUDA_ERROR_NOT_FOUND */
}
int cuMemAlloc_v2(unsigned long long* p, size_t n) {
  (void)n;
  *p = 0;
  return 2;
}
int cuMemFree_v2(unsigned long long p) {
  (void)p;
  return 0;
}
int cuMemHostAlloc(void** p, size_t n, unsigned flags) {
  (void)n;
  (void)flags;
  *p = NULL;
  return 2;
}
int cuMemFreeHost(void* p) {
  (void)p;
  return 0;
}
int cuMemcpyHtoD_v2(unsigned long long d, const void* h, size_t n) {
  (void)d;
  (void)h;
  (void)n;
  return 0;
}
int cuMemcpyDtoH_v2(void* h, unsigned long long d, size_t n) {
  (void)d;
  (void)h;
  (void)n;
  return 0;
}
int cuEventCreate(void** e, unsigned flags) {
  (void)flags;
  *e = (void*)1;
  return 0;
}
int cuEventRecord(void* e, void* s) {
  (void)e;
  (void)s;
  return 0;
}
int cuEventSynchronize(void* e) {
  (void)e;
  return 0;
}
int cuEventElapsedTime(float* ms, void* a, void* b) {
  (void)a;
  (void)b;
  *ms = 1.0f;
  return 0;
}
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
  (void)f;
  (void)gx;
  (void)gy;
  (void)gz;
  (void)bx;
  (void)by;
  (void)bz;
  (void)shared;
  (void)stream;
  (void)params;
  (void)extra;
  return 0;
}
