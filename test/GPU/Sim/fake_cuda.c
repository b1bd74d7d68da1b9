/*===- fake_cuda.c - a stand-in libcuda.so.1 for GPU-less machines ---------===*
 *
 * Built as libcuda.so.1 and found through LD_LIBRARY_PATH, it lets the
 * runtime's CUDA path (driver loading, parameter uploads, the launch plan's
 * buckets and the workspace it allocates for each m) run where there is no
 * GPU. "Device" memory is host memory and kernels do not run: each call is
 * written as one line to the file named by FFN_FAKE_CUDA_LOG (stderr when
 * unset), so a test can check what the runtime asked the driver for. A
 * launch is refused as a real driver would refuse it: a grid or block past
 * the limits, or more than 48 KiB of dynamic shared memory without the
 * function's opt-in (cuFuncSetAttribute) covering it.
 * FFN_FAKE_CUDA_MAX_ALLOC=N makes every allocation above N bytes fail with
 * CUDA_ERROR_OUT_OF_MEMORY, to check how the runtime reports it.
 * FFN_FAKE_CUDA_PTX=a.ptx[:b.ptx...] names the PTX of the modules the
 * runtime loads (ffnc --emit=ptx of the same specs and target): launches
 * then run through the PTX interpreter (PtxSim.h), so results are real, and
 * a kernel that faults (an access outside every allocation, a deadlock, an
 * instruction the interpreter does not model) fails its launch with
 * CUDA_ERROR_LAUNCH_FAILED and the reason in the log.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "PtxSim.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNotFound = 500,
  kLaunchFailed = 719
};

/* Whether launches run through the interpreter (FFN_FAKE_CUDA_PTX). */
static int simulating(void) { return getenv("FFN_FAKE_CUDA_PTX") != NULL; }

static FILE *logFile(void) {
  static FILE *f;
  if (!f) {
    const char *path = getenv("FFN_FAKE_CUDA_LOG");
    f = path ? fopen(path, "a") : NULL;
    if (!f)
      f = stderr;
  }
  return f;
}

#define LOG(...)                                                               \
  do {                                                                         \
    fprintf(logFile(), __VA_ARGS__);                                           \
    fflush(logFile());                                                         \
  } while (0)

static int contextPushed;
static int moduleToken, contextToken, streamToken;

static CUresult cuInit(unsigned flags) {
  (void)flags;
  LOG("cuInit\n");
  return kSuccess;
}

static CUresult cuDeviceGet(int *device, int ordinal) {
  if (ordinal != 0)
    return kInvalidValue;
  *device = 0;
  return kSuccess;
}

static CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  switch (attribute) {
  case 16: /* multiprocessor count */
    *value = 132;
    break;
  case 75: /* compute capability major */
    *value = 9;
    break;
  case 76: /* minor */
    *value = 0;
    break;
  case 97: /* opt-in shared memory per block */
    *value = 227 * 1024;
    break;
  default:
    *value = 0;
  }
  return kSuccess;
}

static CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  (void)device;
  *context = &contextToken;
  return kSuccess;
}

static CUresult cuCtxPushCurrent(void *context) {
  if (context != &contextToken)
    return kInvalidValue;
  ++contextPushed;
  return kSuccess;
}

static CUresult cuCtxPopCurrent(void **context) {
  if (contextPushed == 0)
    return kInvalidValue;
  --contextPushed;
  if (context)
    *context = &contextToken;
  return kSuccess;
}

static CUresult cuCtxSynchronize(void) { return kSuccess; }

static CUresult cuModuleLoadData(void **module, const void *image) {
  /* A cubin is an ELF file. */
  if (memcmp(image, "\177ELF", 4) != 0)
    return kInvalidValue;
  LOG("cuModuleLoadData\n");
  static int loaded;
  if (simulating() && !loaded) {
    const char *err = ptxsim_load(getenv("FFN_FAKE_CUDA_PTX"));
    if (err) {
      LOG("PTX not loaded: %s\n", err);
      return kInvalidValue;
    }
    loaded = 1;
  }
  *module = &moduleToken;
  return kSuccess;
}

static CUresult cuModuleUnload(void *module) {
  return module == &moduleToken ? kSuccess : kInvalidValue;
}

/* A function handle: its name and its dynamic shared memory opt-in. */
struct Function {
  int maxDynamicShared;
  char name[];
};

static CUresult cuModuleGetFunction(void **function, void *module,
                                    const char *name) {
  if (module != &moduleToken)
    return kInvalidValue;
  if (simulating() && !ptxsim_has_kernel(name)) {
    LOG("cuModuleGetFunction %s: not in the PTX\n", name);
    return kNotFound;
  }
  struct Function *f = malloc(sizeof(struct Function) + strlen(name) + 1);
  if (!f)
    return kOutOfMemory;
  f->maxDynamicShared = 48 * 1024;
  strcpy(f->name, name);
  *function = f;
  return kSuccess;
}

static CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  struct Function *f = function;
  LOG("cuFuncSetAttribute %s %d %d\n", f->name, attribute, value);
  if (attribute == 8) { /* max dynamic shared memory */
    if (value < 0 || value > 227 * 1024)
      return kInvalidValue;
    f->maxDynamicShared = value;
  }
  return kSuccess;
}

static CUresult cuFuncGetAttribute(int *value, int attribute, void *function) {
  (void)attribute;
  (void)function;
  *value = 0;
  return kSuccess;
}

static CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy,
                               unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, void *stream,
                               void **params, void **extra) {
  (void)stream;
  (void)extra;
  const struct Function *f = function;
  if (!params || gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 ||
      bz == 0 || gx > 0x7FFFFFFFu || gy > 65535 || gz > 65535 ||
      bx * by * bz > 1024 || (int)shared > f->maxDynamicShared) {
    LOG("launch %s grid %u %u %u block %u shared %u: refused\n", f->name, gx,
        gy, gz, bx, shared);
    return kInvalidValue;
  }
  LOG("launch %s grid %u %u %u block %u shared %u\n", f->name, gx, gy, gz, bx,
      shared);
  if (simulating()) {
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    const char *err = ptxsim_launch(f->name, grid, block, shared, params);
    if (err) {
      LOG("launch %s failed: %s\n", f->name, err);
      return kLaunchFailed;
    }
  }
  return kSuccess;
}

static CUresult allocate(CUdeviceptr *ptr, size_t bytes, const char *what) {
  const char *max = getenv("FFN_FAKE_CUDA_MAX_ALLOC");
  if (bytes == 0 || (max && bytes > strtoull(max, NULL, 10))) {
    LOG("%s %zu: refused\n", what, bytes);
    return kOutOfMemory;
  }
  void *p = calloc(1, bytes);
  if (!p)
    return kOutOfMemory;
  LOG("%s %zu\n", what, bytes);
  *ptr = (CUdeviceptr)(uintptr_t)p;
  ptxsim_track(*ptr, bytes);
  return kSuccess;
}

static CUresult cuMemAlloc(CUdeviceptr *ptr, size_t bytes) {
  return allocate(ptr, bytes, "cuMemAlloc");
}

static CUresult cuMemAllocAsync(CUdeviceptr *ptr, size_t bytes, void *stream) {
  (void)stream;
  return allocate(ptr, bytes, "cuMemAllocAsync");
}

static CUresult cuMemFree(CUdeviceptr ptr) {
  ptxsim_untrack(ptr);
  free((void *)(uintptr_t)ptr);
  return kSuccess;
}

static CUresult cuMemFreeAsync(CUdeviceptr ptr, void *stream) {
  (void)stream;
  ptxsim_untrack(ptr);
  free((void *)(uintptr_t)ptr);
  return kSuccess;
}

static CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return kSuccess;
}

static CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src,
                                  size_t bytes, void *stream) {
  (void)stream;
  return cuMemcpyHtoD(dst, src, bytes);
}

static CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes,
                                  void *stream) {
  (void)stream;
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return kSuccess;
}

static CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  *stream = &streamToken;
  return kSuccess;
}

static CUresult cuStreamDestroy(void *stream) {
  return stream == &streamToken ? kSuccess : kInvalidValue;
}

static CUresult cuStreamSynchronize(void *stream) {
  (void)stream;
  return kSuccess;
}

static CUresult cuGetErrorName(CUresult r, const char **name) {
  *name = r == kOutOfMemory    ? "CUDA_ERROR_OUT_OF_MEMORY"
          : r == kInvalidValue ? "CUDA_ERROR_INVALID_VALUE"
          : r == kLaunchFailed ? "CUDA_ERROR_LAUNCH_FAILED"
          : r == kNotFound     ? "CUDA_ERROR_NOT_FOUND"
                               : "CUDA_ERROR_UNKNOWN";
  return kSuccess;
}

static CUresult cuGetErrorString(CUresult r, const char **text) {
  *text = r == kOutOfMemory ? "out of memory" : "fake driver error";
  return kSuccess;
}

struct Entry {
  const char *name;
  void *fn;
};

#define ENTRY(f)                                                               \
  { #f, (void *)f }
static const struct Entry entries[] = {
    ENTRY(cuInit),
    ENTRY(cuDeviceGet),
    ENTRY(cuDeviceGetAttribute),
    ENTRY(cuDevicePrimaryCtxRetain),
    ENTRY(cuCtxPushCurrent),
    ENTRY(cuCtxPopCurrent),
    ENTRY(cuCtxSynchronize),
    ENTRY(cuModuleLoadData),
    ENTRY(cuModuleUnload),
    ENTRY(cuModuleGetFunction),
    ENTRY(cuFuncSetAttribute),
    ENTRY(cuFuncGetAttribute),
    ENTRY(cuLaunchKernel),
    ENTRY(cuMemAlloc),
    ENTRY(cuMemFree),
    ENTRY(cuMemAllocAsync),
    ENTRY(cuMemFreeAsync),
    ENTRY(cuMemcpyHtoD),
    ENTRY(cuMemcpyHtoDAsync),
    ENTRY(cuMemcpyDtoHAsync),
    ENTRY(cuStreamCreate),
    ENTRY(cuStreamDestroy),
    ENTRY(cuStreamSynchronize),
    ENTRY(cuGetErrorName),
    ENTRY(cuGetErrorString),
};

/* The one exported symbol: the runtime resolves everything through it. */
__attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *name, void **fn, int version, uint64_t flags,
                    int *status) {
  (void)version;
  (void)flags;
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i)
    if (strcmp(entries[i].name, name) == 0) {
      *fn = entries[i].fn;
      if (status)
        *status = 0;
      return kSuccess;
    }
  *fn = NULL;
  if (status)
    *status = 1;
  return kNotFound;
}
