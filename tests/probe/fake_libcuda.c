/* A stand-in for libcuda.so.1, for tests on machines without an NVIDIA GPU
 * (like this project's CI). It answers the driver API calls the probe makes
 * with values scripted through the environment:
 *   FAKE_CUINIT=<CUresult>       what cuInit returns (default 0)
 *   FAKE_CUINIT_HANG=1           cuInit never returns (the watchdog test)
 *   FAKE_DRIVER_VERSION=<int>    cuDriverGetVersion (default 12040, CUDA 12.4)
 *   FAKE_DEVICE_COUNT=<int>      devices (default 1)
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
    case 34: *name = "CUDA_ERROR_STUB_LIBRARY"; return 0;
    case 35: *name = "CUDA_ERROR_INSUFFICIENT_DRIVER"; return 0;
    case 100: *name = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 802: *name = "CUDA_ERROR_SYSTEM_NOT_READY"; return 0;
    case 999: *name = "CUDA_ERROR_UNKNOWN"; return 0;
    default: return 1;
  }
}
