/* A stand-in for libcuda.so.1, for tests on machines without an NVIDIA GPU
 * (like this project's CI). It answers the driver API calls the probe makes
 * with values scripted through the environment:
 *   FAKE_CUINIT=<CUresult>       what cuInit returns (default 0)
 *   FAKE_CUINIT_HANG=1           cuInit never returns (the watchdog test)
 *   FAKE_CUINIT_CRASH=1          cuInit dies of SIGSEGV, as a driver can
 *   FAKE_CUINIT_SECONDS=<s>      cuInit takes that long (a cold node)
 *   FAKE_DRIVER_VERSION=<int>    cuDriverGetVersion (default 12040, CUDA 12.4)
 *   FAKE_DEVICE_COUNT=<int>      devices (default 1)
 *   FAKE_COMPUTE_MODE=<m>[,<m>]  each device's compute mode (0 default,
 *                                2 prohibited, 3 exclusive-process)
 *   FAKE_CTX_RETAIN=<CUresult>   what cuDevicePrimaryCtxRetain returns
 *                                (46: an exclusive-process GPU in use)
 *   FAKE_EXCLUSIVE_LOCK=<path>   enforces exclusive-process mode across
 *                                processes: a context on a device in mode 3
 *                                is held through <path> (the holder's pid);
 *                                another live process asking gets 46
 *   FAKE_HOST_ALLOC=<CUresult>   what cuMemHostAlloc (pinned memory) returns
 *   FAKE_MIG=1                   each device is a MIG slice ("... MIG 1g.18gb",
 *                                its own UUID and 18 GB; the stand-in NVML
 *                                knows it only as "MIG-<uuid>")
 *   FAKE_TOTAL_MEM=<bytes>       cuDeviceTotalMem and cuMemGetInfo's total
 *   FAKE_FREE_MEM=<bytes>        cuMemGetInfo's free (default total - 1 GiB);
 *                                cuMemAlloc fails (2) beyond it
 *   FAKE_MODULE_LOAD=<CUresult>  what cuModuleLoadData returns (default 222,
 *                                the stand-in's "cannot load" path). With 0
 *                                the kernels "run": each launch computes on
 *                                the CPU what the probe's kernel computes on
 *                                the GPU, in memory the stand-in allocates.
 *                                With "judge" it reads the image as a driver
 *                                of FAKE_DRIVER_VERSION would (judge_image)
 *   FAKE_MODULES_TRIED=<path>    each image cuModuleLoadData is given, one
 *                                line a call: "fatbin" or "ptx <ISA>"
 *   FAKE_WRONG_RESULTS=<kernel>  that kernel (copy, fma, sgemm, logreg)
 *                                computes one value wrongly
 *   FAKE_MEMCPY=<CUresult>       what host<->device copies return
 *   FAKE_LAUNCH=<CUresult>       what cuLaunchKernel returns
 *   FAKE_LAUNCH_HANG=1           cuLaunchKernel never returns
 *   FAKE_EVENT_SYNC=<CUresult>   what cuEventSynchronize returns (an error
 *                                from earlier work surfaces there)
 *   FAKE_ELAPSED_MS=<ms>[,<ms>]  cuEventElapsedTime's answers, in turn and
 *                                round again (default: the wall time between
 *                                the records)
 *   FAKE_GPU_MODEL=<memory GB/s>,<link GB/s>,<FP32 TFLOP/s>
 *                                events time a modelled GPU instead: each
 *                                copy and launch advances a device clock by
 *                                what it would take on a GPU of those rates
 *                                (a launch 5 us at least; SGEMM at a third
 *                                of the FP32 rate), so a run's figures are
 *                                known in advance whatever this CPU is
 *   FAKE_SMS=<int>               multiprocessors (default 4)
 *   FAKE_COMPUTE_CAPABILITY=X.Y  each device's compute capability (default 9.0)
 *   FAKE_LEDGER=<path>           after each call that allocates or frees,
 *                                what is still held, written to <path>
 * It is built by the tests and found through LD_LIBRARY_PATH; it is never
 * shipped. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? atoi(v) : fallback;
}

static unsigned long long env_ull(const char* name, unsigned long long fallback) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? strtoull(v, NULL, 10) : fallback;
}

/* The index-th value of a comma-separated list (the last one past its end). */
static const char* list_item(const char* list, unsigned index, char* buf, size_t size) {
  for (unsigned i = 0;; ++i) {
    const char* comma = strchr(list, ',');
    if (i == index || comma == NULL) {
      const size_t n = comma != NULL ? (size_t)(comma - list) : strlen(list);
      const size_t k = n < size - 1 ? n : size - 1;
      memcpy(buf, list, k);
      buf[k] = '\0';
      return buf;
    }
    list = comma + 1;
  }
}

/* FAKE_COMPUTE_CAPABILITY "12.0" as 120; 9.0 by default. */
static int compute_capability(void) {
  const char* v = getenv("FAKE_COMPUTE_CAPABILITY");
  int major = 0, minor = 0;
  if (v != NULL && sscanf(v, "%d.%d", &major, &minor) == 2) return major * 10 + minor;
  return 90;
}

static int mig(void) { return env_int("FAKE_MIG", 0) == 1; }

static unsigned long long total_mem(void) {
  return env_ull("FAKE_TOTAL_MEM", mig() ? 19327352832ULL : 150754820096ULL);
}

static unsigned long long free_mem(void) {
  return env_ull("FAKE_FREE_MEM", total_mem() - 1073741824ULL);
}

/* ----- what the probe holds, for the tests that check it frees it all --- */
static long device_allocations, host_allocations, events, modules, contexts;
static unsigned long long device_bytes;

static void ledger(void) {
  const char* path = getenv("FAKE_LEDGER");
  if (path == NULL || *path == '\0') return;
  FILE* f = fopen(path, "w");
  if (f == NULL) return;
  fprintf(f, "device_allocations=%ld host_allocations=%ld events=%ld modules=%ld contexts=%ld\n",
          device_allocations, host_allocations, events, modules, contexts);
  fclose(f);
}

/* The devices CUDA_VISIBLE_DEVICES leaves, as the driver reads it: the
 * list's items up to the first that names no device (an ordinal below
 * FAKE_DEVICE_COUNT, or a device's "GPU-" UUID); all when it is unset. */
static int visible_devices(void) {
  const int n = env_int("FAKE_DEVICE_COUNT", 1);
  const char* list = getenv("CUDA_VISIBLE_DEVICES");
  if (list == NULL) return n;
  int count = 0;
  char buf[64];
  unsigned items = 1;
  for (const char* c = list; *c != '\0'; ++c) items += *c == ',';
  for (unsigned i = 0; i < items; ++i) {
    const char* item = list_item(list, i, buf, sizeof buf);
    if (*item == '\0') break;
    unsigned first = 0;
    char* end = NULL;
    const long ordinal = strtol(item, &end, 10);
    const int named = (*end == '\0' && end != item && ordinal >= 0 && ordinal < n) ||
                      (strncmp(item, "GPU-", 4) == 0 && sscanf(item + 4, "%2x", &first) == 1 &&
                       first % 0x10 == 0 && (int)(first / 0x10) < n);
    if (!named) break;
    ++count;
  }
  return count;
}

int cuInit(unsigned flags) {
  (void)flags;
  if (getenv("FAKE_CUINIT_HANG") != NULL)
    for (;;) pause();
  if (getenv("FAKE_CUINIT_CRASH") != NULL) raise(SIGSEGV);
  const int seconds = env_int("FAKE_CUINIT_SECONDS", 0);
  if (seconds > 0) sleep((unsigned)seconds);
  const int rc = env_int("FAKE_CUINIT", 0);
  return rc == 0 && visible_devices() == 0 ? 100 /* CUDA_ERROR_NO_DEVICE */ : rc;
}

int cuDriverGetVersion(int* v) {
  *v = env_int("FAKE_DRIVER_VERSION", 12040);
  return 0;
}

int cuDeviceGetCount(int* n) {
  *n = visible_devices();
  return 0;
}

int cuDeviceGet(int* dev, int ordinal) {
  if (ordinal < 0 || ordinal >= env_int("FAKE_DEVICE_COUNT", 1)) return 101; /* INVALID_DEVICE */
  *dev = ordinal;
  return 0;
}

int cuDeviceGetName(char* name, int len, int dev) {
  (void)dev;
  strncpy(name, mig() ? "NVIDIA H200 MIG 1g.18gb" : "NVIDIA H200 (stand-in)", (size_t)len - 1);
  name[len - 1] = '\0';
  return 0;
}

/* Device d's UUID is the bytes 0x10*d + i (a MIG slice's: 0x80 + 0x10*d + i). */
int cuDeviceGetUuid(unsigned char* uuid, int dev) {
  for (int i = 0; i < 16; ++i) uuid[i] = (unsigned char)(0x10 * dev + i);
  return 0;
}
/* The driver exports both; CUDA 12+ headers call the second, which answers
 * a MIG slice's own UUID where the first answers its parent's. */
int cuDeviceGetUuid_v2(unsigned char* uuid, int dev) {
  for (int i = 0; i < 16; ++i) uuid[i] = (unsigned char)((mig() ? 0x80 : 0) + 0x10 * dev + i);
  return 0;
}

/* Device dev's compute mode: FAKE_COMPUTE_MODE's item, 0 (default) when none. */
static int compute_mode_of(int dev) {
  char buf[32];
  const char* modes = getenv("FAKE_COMPUTE_MODE");
  return modes != NULL && *modes != '\0' ? atoi(list_item(modes, (unsigned)dev, buf, sizeof buf))
                                         : 0;
}

int cuDeviceGetAttribute(int* value, int attribute, int dev) {
  switch (attribute) {
    case 75: /* compute capability major (FAKE_COMPUTE_CAPABILITY, default 9.0) */
      *value = compute_capability() / 10;
      break;
    case 76: /* its minor */
      *value = compute_capability() % 10;
      break;
    case 16: /* multiprocessors */
      *value = env_int("FAKE_SMS", 4);
      break;
    case 20: /* compute mode */
      *value = compute_mode_of(dev);
      break;
    default:
      *value = 0;
  }
  return 0;
}

int cuDeviceTotalMem_v2(size_t* bytes, int dev) {
  (void)dev;
  *bytes = (size_t)total_mem();
  return 0;
}

int cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  const unsigned long long f = free_mem();
  *free_bytes = (size_t)(f > device_bytes ? f - device_bytes : 0);
  *total_bytes = (size_t)total_mem();
  return 0;
}

int cuGetErrorName(int error, const char** name) {
  static const struct {
    int code;
    const char* name;
  } names[] = {{1, "CUDA_ERROR_INVALID_VALUE"},
               {2, "CUDA_ERROR_OUT_OF_MEMORY"},
               {34, "CUDA_ERROR_STUB_LIBRARY"},
               {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
               {100, "CUDA_ERROR_NO_DEVICE"},
               {101, "CUDA_ERROR_INVALID_DEVICE"},
               {200, "CUDA_ERROR_INVALID_IMAGE"},
               {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
               {218, "CUDA_ERROR_INVALID_PTX"},
               {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
               {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
               {500, "CUDA_ERROR_NOT_FOUND"},
               {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
               {802, "CUDA_ERROR_SYSTEM_NOT_READY"},
               {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
               {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
               {999, "CUDA_ERROR_UNKNOWN"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (names[i].code == error) {
      *name = names[i].name;
      return 0;
    }
  return 1;
}

/* ----- contexts and modules ---------------------------------------------- */
/* An exclusive-process device takes one process's contexts: the holder's pid
 * is kept in FAKE_EXCLUSIVE_LOCK while it holds one. The lock of device
 * dev's contexts, NULL where none is enforced. */
static const char* exclusive_lock(int dev) {
  const char* path = getenv("FAKE_EXCLUSIVE_LOCK");
  return path != NULL && *path != '\0' && compute_mode_of(dev) == 3 ? path : NULL;
}
static int take_exclusive(int dev) {
  const char* path = exclusive_lock(dev);
  if (path == NULL) return 0;
  FILE* f = fopen(path, "r");
  if (f != NULL) {
    int pid = 0;
    const int got = fscanf(f, "%d", &pid);
    fclose(f);
    if (got == 1 && pid != (int)getpid() && kill(pid, 0) == 0) return 46;
  }
  f = fopen(path, "w");
  if (f == NULL) return 999;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  return 0;
}
static void release_exclusive(int dev) {
  const char* path = exclusive_lock(dev);
  if (path == NULL) return;
  FILE* f = fopen(path, "r");
  int pid = 0;
  if (f != NULL && fscanf(f, "%d", &pid) == 1 && pid == (int)getpid()) unlink(path);
  if (f != NULL) fclose(f);
}

int cuDevicePrimaryCtxRetain(void** ctx, int dev) {
  int rc = env_int("FAKE_CTX_RETAIN", 0);
  if (rc == 0) rc = take_exclusive(dev);
  if (rc != 0) return rc;
  *ctx = (void*)1;
  ++contexts;
  ledger();
  return 0;
}
int cuDevicePrimaryCtxRelease_v2(int dev) {
  release_exclusive(dev);
  --contexts;
  ledger();
  return 0;
}
int cuCtxSetCurrent(void* ctx) {
  (void)ctx;
  return 0;
}
int cuCtxSynchronize(void) { return env_int("FAKE_EVENT_SYNC", 0); }

enum kernel { K_COPY = 1, K_FMA, K_SGEMM, K_PREDICT, K_GRADIENT };
typedef struct {
  const char* name;
  enum kernel id;
} kernel_t;
static const kernel_t kernels[] = {{"probe_copy", K_COPY},
                                   {"probe_fma", K_FMA},
                                   {"probe_sgemm", K_SGEMM},
                                   {"probe_logreg_predict", K_PREDICT},
                                   {"probe_logreg_gradient", K_GRADIENT}};
static int loaded;

/* The newest PTX ISA (major * 10 + minor) a driver of CUDA `cuda` compiles,
 * from NVIDIA's PTX ISA release history: CUDA 11.x 7.x, 12.0-12.5 8.0-8.5,
 * 12.7-12.9 8.6-8.8, 13.x 9.x. */
static int newest_ptx_isa(int cuda) {
  const int major = cuda / 1000, minor = cuda % 1000 / 10;
  if (major == 12 && minor >= 7) return 80 + minor - 1;
  if (major == 12 && minor == 6) return 85;
  return (major - 4) * 10 + minor;
}

static unsigned read_u32(const unsigned char* p) {
  return (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24;
}

/* What a driver of FAKE_DRIVER_VERSION answers for `image`, as NVIDIA's
 * compatibility rules have it:
 *   - PTX text (".version X.Y"): compiled when the driver's CUDA knows ISA
 *     X.Y, else 222 (UNSUPPORTED_PTX_VERSION);
 *   - a fatbin (magic 0xBA55ED50): its cubins load on a driver of their
 *     toolkit's CUDA major or newer. The stand-in takes the toolkit from the
 *     fatbin's PTX entry (ISA 9.x: CUDA 13), as nvcc writes its own ISA. On
 *     an older driver the PTX entry is tried, and refused when its ISA is
 *     newer than the driver: 222;
 *   - anything else: 200 (INVALID_IMAGE).
 * The fatbin's layout: a 16-byte header (magic, version, header size, size),
 * then entries of {u16 kind (1 PTX, 2 ELF), u16, u32 header size, u64 size,
 * ..., at 24 u16 minor, u16 major}. */
static int judge_image(const unsigned char* image, FILE* tried) {
  const int driver = env_int("FAKE_DRIVER_VERSION", 12040);
  if (read_u32(image) == 0xBA55ED50u) {
    if (tried) fputs("fatbin\n", tried);
    const unsigned header = image[4 + 2] | image[4 + 3] << 8;
    const unsigned long long size = read_u32(image + 8) | (unsigned long long)read_u32(image + 12)
                                                              << 32;
    int ptx_isa = 0;
    for (unsigned long long at = header; at + 32 <= header + size;) {
      const unsigned char* e = image + at;
      const unsigned kind = e[0] | e[1] << 8, entry_header = read_u32(e + 4);
      const unsigned long long entry_size = read_u32(e + 8) | (unsigned long long)read_u32(e + 12)
                                                                  << 32;
      if (kind == 1) ptx_isa = (e[26] | e[27] << 8) * 10 + (e[24] | e[25] << 8);
      if (entry_header == 0) break;
      at += entry_header + entry_size;
    }
    if (ptx_isa == 0 || driver / 1000 >= ptx_isa / 10 + 4) return 0;
    return ptx_isa <= newest_ptx_isa(driver) ? 0 : 222;
  }
  const char* text = (const char*)image;
  const char* version = strstr(text, "\n.version ");
  int major = 0, minor = 0;
  if (version == NULL || sscanf(version, "\n.version %d.%d", &major, &minor) != 2) return 200;
  if (tried) fprintf(tried, "ptx %d.%d\n", major, minor);
  return major * 10 + minor <= newest_ptx_isa(driver) ? 0 : 222;
}

int cuModuleLoadData(void** module, const void* image) {
  *module = NULL;
  const char* mode = getenv("FAKE_MODULE_LOAD");
  int rc = 222;
  if (mode != NULL && strcmp(mode, "judge") == 0) {
    const char* path = getenv("FAKE_MODULES_TRIED");
    FILE* tried = path != NULL ? fopen(path, "a") : NULL;
    rc = judge_image((const unsigned char*)image, tried);
    if (tried) fclose(tried);
  } else if (mode != NULL && *mode != '\0') {
    rc = atoi(mode);
  }
  if (rc != 0) return rc;
  *module = (void*)&loaded;
  loaded = 1;
  ++modules;
  ledger();
  return 0;
}
int cuModuleUnload(void* module) {
  (void)module;
  --modules;
  ledger();
  return 0;
}
int cuModuleGetFunction(void** f, void* module, const char* name) {
  *f = NULL;
  if (module == NULL || !loaded) return 400; /* INVALID_HANDLE */
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; ++i)
    if (strcmp(kernels[i].name, name) == 0) {
      *f = (void*)&kernels[i];
      return 0;
    }
  return 500; /* CUDA_ERROR_NOT_FOUND */
}

/* ----- memory: a device pointer is the address of host memory ------------ */
int cuMemAlloc_v2(unsigned long long* p, size_t n) {
  *p = 0;
  if (device_bytes + n > free_mem()) return 2; /* OUT_OF_MEMORY */
  /* A size header in front, so that cuMemFree knows what it returns. */
  size_t* block = malloc(n + sizeof(size_t) * 2);
  if (block == NULL) return 2;
  block[0] = n;
  *p = (unsigned long long)(unsigned long)(block + 2);
  device_bytes += n;
  ++device_allocations;
  ledger();
  return 0;
}
int cuMemFree_v2(unsigned long long p) {
  if (p == 0) return 1;
  size_t* block = (size_t*)(unsigned long)p - 2;
  device_bytes -= block[0];
  free(block);
  --device_allocations;
  ledger();
  return 0;
}
int cuMemHostAlloc(void** p, size_t n, unsigned flags) {
  (void)flags;
  const int rc = env_int("FAKE_HOST_ALLOC", 0);
  if (rc != 0) return rc;
  *p = malloc(n);
  if (*p == NULL) return 2;
  ++host_allocations;
  ledger();
  return 0;
}
int cuMemFreeHost(void* p) {
  free(p);
  --host_allocations;
  ledger();
  return 0;
}
/* ----- the modelled GPU (FAKE_GPU_MODEL): a device clock in ms ---------- */
static double device_ms;
static int modelled(void) {
  const char* model = getenv("FAKE_GPU_MODEL");
  return model != NULL && *model != '\0';
}
static int model_rate(unsigned i, double* rate) {
  char buf[32];
  if (!modelled()) return 0;
  *rate = atof(list_item(getenv("FAKE_GPU_MODEL"), i, buf, sizeof buf));
  return *rate > 0;
}
static void model_bytes(double bytes, unsigned which) { /* 0 memory, 1 link */
  double gbps = 0;
  if (model_rate(which, &gbps)) device_ms += 0.005 + bytes / (gbps * 1e6);
}
static void model_flops(double flops, double share) {
  double tflops = 0;
  if (model_rate(2, &tflops)) device_ms += 0.005 + flops / (tflops * share * 1e9);
}

int cuMemcpyHtoD_v2(unsigned long long d, const void* h, size_t n) {
  const int rc = env_int("FAKE_MEMCPY", 0);
  if (rc != 0) return rc;
  memcpy((void*)(unsigned long)d, h, n);
  model_bytes((double)n, 1);
  return 0;
}
int cuMemcpyDtoH_v2(void* h, unsigned long long d, size_t n) {
  const int rc = env_int("FAKE_MEMCPY", 0);
  if (rc != 0) return rc;
  memcpy(h, (const void*)(unsigned long)d, n);
  model_bytes((double)n, 1);
  return 0;
}

/* ----- events: the wall time between two records, or scripted ----------- */
typedef struct {
  double ms;
} event_t;
static unsigned elapsed_calls;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
int cuEventCreate(void** e, unsigned flags) {
  (void)flags;
  *e = calloc(1, sizeof(event_t));
  ++events;
  ledger();
  return 0;
}
int cuEventDestroy_v2(void* e) {
  free(e);
  --events;
  ledger();
  return 0;
}
int cuEventRecord(void* e, void* s) {
  (void)s;
  ((event_t*)e)->ms = modelled() ? device_ms : now_ms();
  return 0;
}
int cuEventSynchronize(void* e) {
  (void)e;
  return env_int("FAKE_EVENT_SYNC", 0);
}
static int elapsed(float* ms, void* a, void* b) {
  const char* script = getenv("FAKE_ELAPSED_MS");
  char buf[32];
  if (script != NULL && *script != '\0') {
    unsigned count = 1;
    for (const char* c = script; *c != '\0'; ++c) count += *c == ',';
    *ms = (float)atof(list_item(script, elapsed_calls++ % count, buf, sizeof buf));
  } else
    *ms = (float)(((event_t*)b)->ms - ((event_t*)a)->ms);
  return 0;
}
/* The driver exports both; CUDA 12.8+ headers call the second, which the
 * probe takes where it is. */
int cuEventElapsedTime(float* ms, void* a, void* b) { return elapsed(ms, a, b); }
int cuEventElapsedTime_v2(float* ms, void* a, void* b) { return elapsed(ms, a, b); }

/* ----- the probe's kernels (probes/kernels.cu), computed on the CPU ------ */
static int wrong(const char* kernel) {
  const char* v = getenv("FAKE_WRONG_RESULTS");
  return v != NULL && strcmp(v, kernel) == 0;
}
#define PTR(type, i) ((type*)(unsigned long)*(unsigned long long*)params[i])
#define INT(i) (*(int*)params[i])

static void run_sgemm(void** params) {
  const float *A = PTR(const float, 0), *B = PTR(const float, 1);
  float* C = PTR(float, 2);
  const int m = INT(3), n = INT(4), k = INT(5), ta = INT(6), tb = INT(7), relu = INT(8);
  /* B transposed is copied into row order first, so that the inner loop
   * runs over contiguous memory (the stand-in's time is the tests' time). */
  float* bt = NULL;
  if (tb) {
    bt = malloc(sizeof(float) * (size_t)k * n);
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) bt[(size_t)p * n + j] = B[(size_t)j * k + p];
    B = bt;
  }
  for (int i = 0; i < m; ++i) {
    float* row = C + (size_t)i * n;
    for (int j = 0; j < n; ++j) row[j] = 0.0f;
    for (int p = 0; p < k; ++p) {
      const float a = ta ? A[p * m + i] : A[i * k + p];
      const float* b = B + (size_t)p * n;
      for (int j = 0; j < n; ++j) row[j] += a * b[j];
    }
    if (relu)
      for (int j = 0; j < n; ++j) row[j] = row[j] < 0.0f ? 0.0f : row[j];
  }
  free(bt);
  if (wrong("sgemm")) C[(m * n) / 2] += 1.0f;
}

static void run_fma(void** params, unsigned threads, unsigned block) {
  float* out = PTR(float, 0);
  const int iterations = INT(1);
  const float seed = *(float*)params[2];
  /* A thread's value depends only on threadIdx.x: compute each once, and
   * once for as long as the launch's arguments stay the same. */
  static float* by_thread;
  static unsigned cached_block;
  static int cached_iterations;
  static float cached_seed;
  if (by_thread != NULL && cached_block == block && cached_iterations == iterations &&
      cached_seed == seed) {
    for (unsigned i = 0; i < threads; ++i) out[i] = by_thread[i % block];
    if (wrong("fma")) out[0] += 1.0f;
    return;
  }
  free(by_thread);
  by_thread = malloc(sizeof(float) * block);
  cached_block = block, cached_iterations = iterations, cached_seed = seed;
  for (unsigned t = 0; t < block; ++t) {
    float v[8] = {seed + (float)t, seed - (float)t, seed * 0.5f, seed * 0.25f};
    v[4] = v[0] + 1.0f, v[5] = v[1] + 1.0f, v[6] = v[2] + 1.0f, v[7] = v[3] + 1.0f;
    for (int i = 0; i < iterations; ++i)
      for (int c = 0; c < 8; ++c) v[c] = fmaf(v[c], 0.999f, 0.001f);
    by_thread[t] = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
  }
  for (unsigned i = 0; i < threads; ++i) out[i] = by_thread[i % block];
  if (wrong("fma")) out[0] += 1.0f;
}

int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
  (void)gy;
  (void)gz;
  (void)by;
  (void)bz;
  (void)shared;
  (void)stream;
  (void)extra;
  if (getenv("FAKE_LAUNCH_HANG") != NULL)
    for (;;) pause();
  const int rc = env_int("FAKE_LAUNCH", 0);
  if (rc != 0) return rc;
  if (f == NULL) return 400;
  switch (((const kernel_t*)f)->id) {
    case K_COPY: {
      const unsigned long long n = *(unsigned long long*)params[2];
      memcpy(PTR(char, 1), PTR(const char, 0), (size_t)n * 16);
      model_bytes(2.0 * (double)n * 16, 0); /* read + write */
      if (wrong("copy") && n > 0) PTR(char, 1)[n * 8] ^= 1;
      break;
    }
    case K_FMA:
      run_fma(params, gx * bx, bx);
      model_flops(2.0 * 8 * INT(1) * gx * bx, 1.0);
      break;
    case K_SGEMM:
      run_sgemm(params);
      model_flops(2.0 * INT(3) * INT(4) * INT(5), 1.0 / 3);
      break;
    case K_PREDICT: {
      const float *X = PTR(const float, 0), *w = PTR(const float, 1), *y = PTR(const float, 2);
      float* residual = PTR(float, 3);
      const int rows = INT(4), features = INT(5);
      for (int r = 0; r < rows; ++r) {
        float z = 0.0f;
        for (int c = 0; c < features; ++c) z += X[r * features + c] * w[c];
        residual[r] = 1.0f / (1.0f + expf(-z)) - y[r];
      }
      model_flops(2.0 * rows * features, 0.01); /* too small to fill a GPU */
      break;
    }
    case K_GRADIENT: {
      const float *X = PTR(const float, 0), *residual = PTR(const float, 1);
      float* w = PTR(float, 2);
      const int rows = INT(3), features = INT(4);
      const float rate = *(float*)params[5];
      for (int c = 0; c < features; ++c) {
        float g = 0.0f;
        for (int r = 0; r < rows; ++r) g += X[r * features + c] * residual[r];
        w[c] -= rate * g / (float)rows;
      }
      if (wrong("logreg")) w[0] += 0.5f;
      model_flops(2.0 * rows * features, 0.01);
      break;
    }
  }
  return 0;
}
