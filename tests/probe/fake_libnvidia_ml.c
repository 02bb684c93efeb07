/* A stand-in for libnvidia-ml.so.1, for tests on machines without an
 * NVIDIA GPU. FAKE_NVML_INIT=<nvmlReturn_t> scripts nvmlInit_v2 (default 0);
 * FAKE_NVML_FREE=<bytes>[,<bytes>...] scripts the free memory of each NVML
 * device in NVML's order (default total - 1 GiB), the rest counted as used;
 * FAKE_TOTAL_MEM=<bytes> the total (as the stand-in libcuda's); FAKE_DEVICE_COUNT devices
 * (as the stand-in libcuda), in CUDA's order unless FAKE_NVML_REVERSED=1
 * puts them the other way round, as NVML's PCI order can; a handle is
 * found by index or by the UUID the stand-in libcuda gives the device;
 * with FAKE_MIG=1 (as the stand-in libcuda) each device is a MIG slice,
 * found only by its "MIG-" UUID, with 18 GiB of its own;
 * the rest answer fixed values: driver 550.54.15 (580.65.06 where
 * FAKE_DRIVER_VERSION is 13000 or more), 1 GiB used, 37% busy (NOT_SUPPORTED
 * for a MIG slice, as the real NVML answers), 41 C. Built by the tests, found through
 * LD_LIBRARY_PATH, never shipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned long long total, free, used;
} memory_t;
typedef struct {
  unsigned int gpu, memory;
} utilization_t;

int nvmlInit_v2(void) {
  const char* v = getenv("FAKE_NVML_INIT");
  return v != NULL && *v != '\0' ? atoi(v) : 0;
}
int nvmlShutdown(void) { return 0; }
int nvmlSystemGetDriverVersion(char* version, unsigned len) {
  /* A driver of the stand-in libcuda's CUDA (FAKE_DRIVER_VERSION): R580 for 13.x. */
  const char* cuda = getenv("FAKE_DRIVER_VERSION");
  strncpy(version, cuda != NULL && atoi(cuda) >= 13000 ? "580.65.06" : "550.54.15", len - 1);
  version[len - 1] = '\0';
  return 0;
}
static unsigned device_count(void) {
  const char* v = getenv("FAKE_DEVICE_COUNT");
  return v != NULL && *v != '\0' ? (unsigned)atoi(v) : 1;
}
/* A handle is the NVML index + 1. */
int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = device_count();
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** handle) {
  if (index >= device_count()) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
  *handle = (void*)(unsigned long)(index + 1);
  return 0;
}
static int mig(void) {
  const char* v = getenv("FAKE_MIG");
  return v != NULL && strcmp(v, "1") == 0;
}
/* The stand-in libcuda gives CUDA device d the UUID bytes 0x10*d + i, and
 * a MIG slice 0x80 + 0x10*d + i. */
int nvmlDeviceGetHandleByUUID(const char* uuid, void** handle) {
  unsigned first = 0;
  if (strncmp(uuid, mig() ? "MIG-" : "GPU-", 4) != 0 || sscanf(uuid + 4, "%2x", &first) != 1)
    return 6;
  if (mig()) first -= 0x80;
  const unsigned cuda = first / 0x10, n = device_count();
  if (cuda >= n) return 6; /* NVML_ERROR_NOT_FOUND */
  const char* reversed = getenv("FAKE_NVML_REVERSED");
  const unsigned index = reversed != NULL && *reversed == '1' ? n - 1 - cuda : cuda;
  *handle = (void*)(unsigned long)(index + 1);
  return 0;
}
int nvmlDeviceGetMemoryInfo(void* handle, memory_t* m) {
  const unsigned index = (unsigned)(unsigned long)handle - 1;
  const char* total = getenv("FAKE_TOTAL_MEM"); /* as the stand-in libcuda's */
  m->total = total != NULL && *total != '\0' ? strtoull(total, NULL, 10)
             : mig()                         ? 19327352832ULL
                                             : 150754820096ULL;
  m->used = 1073741824ULL;
  m->free = m->total - m->used;
  const char* list = getenv("FAKE_NVML_FREE");
  for (unsigned i = 0; list != NULL && *list != '\0'; ++i) {
    char* end = NULL;
    const unsigned long long bytes = strtoull(list, &end, 10);
    if (i == index) {
      m->free = bytes;
      if (bytes <= m->total) m->used = m->total - bytes;
    }
    list = *end == ',' ? end + 1 : end;
    if (end == list && *end != '\0') break;
  }
  return 0;
}
int nvmlDeviceGetUtilizationRates(void* handle, utilization_t* u) {
  (void)handle;
  if (mig()) return 3; /* NVML_ERROR_NOT_SUPPORTED: NVML has no utilisation for a MIG slice */
  u->gpu = 37;
  u->memory = 5;
  return 0;
}
int nvmlDeviceGetTemperature(void* handle, int sensor, unsigned* t) {
  (void)handle;
  (void)sensor;
  *t = 41;
  return 0;
}
const char* nvmlErrorString(int r) { return r == 999 ? "Unknown Error" : "error"; }
