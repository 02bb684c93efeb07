/* A stand-in for libnvidia-ml.so.1, for tests on machines without an
 * NVIDIA GPU. FAKE_NVML_INIT=<nvmlReturn_t> scripts nvmlInit_v2 (default 0);
 * FAKE_NVML_FREE=<bytes> scripts the free memory (default total - used);
 * the rest answer fixed values: driver 550.54.15, 1 GiB used, 37% busy,
 * 41 C. Built by the tests, found through LD_LIBRARY_PATH, never shipped. */
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
  strncpy(version, "550.54.15", len - 1);
  version[len - 1] = '\0';
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** handle) {
  *handle = (void*)(unsigned long)(index + 1);
  return 0;
}
int nvmlDeviceGetMemoryInfo(void* handle, memory_t* m) {
  (void)handle;
  m->total = 150754820096ULL;
  m->used = 1073741824ULL;
  const char* free_bytes = getenv("FAKE_NVML_FREE");
  m->free = free_bytes != NULL && *free_bytes != '\0' ? strtoull(free_bytes, NULL, 10)
                                                      : m->total - m->used;
  return 0;
}
int nvmlDeviceGetUtilizationRates(void* handle, utilization_t* u) {
  (void)handle;
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
