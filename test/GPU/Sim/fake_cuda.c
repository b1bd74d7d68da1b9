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
 * CUDA_ERROR_OUT_OF_MEMORY, to check how the runtime reports it;
 * FFN_FAKE_CUDA_NO_TMA hides cuTensorMapEncodeTiled and
 * FFN_FAKE_CUDA_NO_LAUNCH_EX cuLaunchKernelEx, as an old driver lacks them.
 * A launch through cuLaunchKernelEx with programmatic stream serialization
 * logs " programmatic" at the end of its line.
 * FFN_FAKE_CUDA_PTX=a.ptx[:b.ptx...] names the PTX of the modules the
 * runtime loads (ffnc --emit=ptx of the same specs and target): launches
 * then run through the PTX interpreter (PtxSim.h), so results are real, and
 * a kernel that faults (an access outside every allocation, a deadlock, an
 * instruction the interpreter does not model) fails its launch with
 * CUDA_ERROR_LAUNCH_FAILED and the reason in the log.
 * cuTensorMapEncodeTiled checks its arguments as the CUDA documentation of
 * that function lists them and writes the interpreter's own layout of a
 * tensor map (PtxsimTensorMap); what the interpreter does not model
 * (interleaved layouts, the 128B_ATOM swizzles, element strides, NaN
 * fill, packed element types) it refuses as invalid.
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

/* Both launch calls: `how` ends the log line ("" or " programmatic"). */
static CUresult launch(void *function, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned shared,
                       void **params, const char *how) {
  const struct Function *f = function;
  if (!params || gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 ||
      bz == 0 || gx > 0x7FFFFFFFu || gy > 65535 || gz > 65535 ||
      bx * by * bz > 1024 || (int)shared > f->maxDynamicShared) {
    LOG("launch %s grid %u %u %u block %u shared %u%s: refused\n", f->name,
        gx, gy, gz, bx, shared, how);
    return kInvalidValue;
  }
  LOG("launch %s grid %u %u %u block %u shared %u%s\n", f->name, gx, gy, gz,
      bx, shared, how);
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

static CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy,
                               unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, void *stream,
                               void **params, void **extra) {
  (void)stream;
  (void)extra;
  return launch(function, gx, gy, gz, bx, by, bz, shared, params, "");
}

/* cuda.h's CUlaunchAttribute and CUlaunchConfig, as far as read here. */
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    unsigned programmatic;
    char bytes[64];
  } value;
};
struct LaunchConfig {
  unsigned gx, gy, gz, bx, by, bz, shared;
  void *stream;
  struct LaunchAttribute *attrs;
  unsigned numAttrs;
};

/* Launches as cuLaunchKernel (one kernel at a time already meets every
 * ordering) and logs the launch with " programmatic" where attribute 6,
 * programmatic stream serialization, is set; any other attribute is
 * refused. */
static CUresult cuLaunchKernelEx(const struct LaunchConfig *config,
                                 void *function, void **params,
                                 void **extra) {
  (void)extra;
  if (!config || (config->numAttrs && !config->attrs))
    return kInvalidValue;
  int programmatic = 0;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const struct LaunchAttribute *a = &config->attrs[i];
    if (a->id != 6 || a->value.programmatic > 1)
      return kInvalidValue;
    programmatic |= a->value.programmatic != 0;
  }
  return launch(function, config->gx, config->gy, config->gz, config->bx,
                config->by, config->bz, config->shared, params,
                programmatic ? " programmatic" : "");
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
  CUresult r = allocate(ptr, bytes, "cuMemAllocAsync");
  /* A stream-ordered pool hands back memory earlier work wrote: a kernel
   * that reads workspace it did not write (or have zeroed) sees garbage. */
  if (r == kSuccess)
    memset((void *)(uintptr_t)*ptr, 0xA5, bytes);
  return r;
}

static CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                                 void *stream) {
  (void)stream;
  LOG("cuMemsetD32Async %zu\n", count);
  uint32_t *p = (uint32_t *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return kSuccess;
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

/* Bytes per element of a CUtensorMapDataType; 0 for the packed 4- and
 * 6-bit types (13..15) and unknown values. */
static unsigned tensorElementBytes(int type) {
  static const unsigned bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return type >= 0 && type < (int)(sizeof bytes / sizeof bytes[0]) ? bytes[type]
                                                                   : 0;
}

/* The swizzle span in bytes of a CUtensorMapSwizzle (NONE, 32B, 64B, 128B
 * and the three 128B_ATOM modes), -1 for unknown values. */
static int swizzleSpan(int swizzle) {
  static const int spans[] = {0, 32, 64, 128, 128, 128, 128};
  return swizzle >= 0 && swizzle < 7 ? spans[swizzle] : -1;
}

/* Which requirement of the CUDA documentation of cuTensorMapEncodeTiled its
 * arguments break, written into `why` (left empty when none). */
static void tensorMapInvalid(char *why, size_t size, const void *map, int type,
                             unsigned rank, const void *address,
                             const uint64_t *dims, const uint64_t *strides,
                             const uint32_t *box,
                             const uint32_t *elementStrides, int interleave,
                             int swizzle, int l2Promotion, int oobFill) {
  unsigned elem = tensorElementBytes(type);
  int span = swizzleSpan(swizzle);
  int floating = type >= 6 && type <= 12; /* FLOAT16 .. TFLOAT32_FTZ */
  /* Of globalAddress and of the strides. */
  unsigned align = interleave == 2 || type == 14 || type == 15 ? 32 : 16;
  if (!map || (uintptr_t)map % 64)
    snprintf(why, size, "tensorMap is not 64-byte aligned");
  else if (type < 0 || type > 15)
    snprintf(why, size, "unknown data type %d", type);
  else if (rank < 1 || rank > 5)
    snprintf(why, size, "rank %u is not in [1, 5]", rank);
  else if (!dims || !box || !elementStrides || (rank > 1 && !strides))
    snprintf(why, size, "an array argument is null");
  else if (interleave < 0 || interleave > 2)
    snprintf(why, size, "unknown interleave %d", interleave);
  else if (interleave != 0 && rank < 3)
    snprintf(why, size, "an interleaved layout needs rank 3 or more");
  else if (span < 0)
    snprintf(why, size, "unknown swizzle %d", swizzle);
  else if (interleave == 2 && swizzle != 1)
    snprintf(why, size, "the 32B interleave needs the 32B swizzle");
  else if (l2Promotion < 0 || l2Promotion > 3)
    snprintf(why, size, "unknown L2 promotion %d", l2Promotion);
  else if (oobFill < 0 || oobFill > 1)
    snprintf(why, size, "unknown out-of-bounds fill %d", oobFill);
  else if (oobFill == 1 && !floating)
    snprintf(why, size, "the NaN fill needs a floating-point data type");
  else if ((uintptr_t)address % align)
    snprintf(why, size, "globalAddress %p is not %u-byte aligned", address,
             align);
  for (unsigned i = 0; i < rank && !why[0]; ++i) {
    if (dims[i] == 0 || dims[i] > (1ull << 32))
      snprintf(why, size, "globalDim[%u] %llu is not in [1, 2^32]", i,
               (unsigned long long)dims[i]);
    else if (i + 1 < rank && (strides[i] % align || strides[i] >= (1ull << 40)))
      snprintf(why, size,
               "globalStrides[%u] %llu is not a multiple of %u below 2^40", i,
               (unsigned long long)strides[i], align);
    else if (box[i] == 0 || box[i] > 256)
      snprintf(why, size, "boxDim[%u] %u is not in [1, 256]", i, box[i]);
    else if (elementStrides[i] == 0 || elementStrides[i] > 8)
      snprintf(why, size, "elementStrides[%u] %u is not in [1, 8]", i,
               elementStrides[i]);
  }
  if (why[0] || interleave != 0 || !elem)
    return;
  if (box[0] * elem % 16)
    snprintf(why, size, "boxDim[0] %u times %u bytes is not a multiple of 16",
             box[0], elem);
  else if (span > 0 && box[0] * elem > (unsigned)span)
    snprintf(why, size,
             "boxDim[0] %u times %u bytes exceeds the swizzle span %d", box[0],
             elem, span);
}

/* What the interpreter does not model among valid arguments, into `why`. */
static void tensorMapUnmodelled(char *why, size_t size, int type, unsigned rank,
                                const uint32_t *elementStrides, int interleave,
                                int swizzle, int oobFill) {
  if (!tensorElementBytes(type))
    snprintf(why, size, "packed data type %d is not modelled", type);
  else if (interleave != 0)
    snprintf(why, size, "interleaved layouts are not modelled");
  else if (swizzle > 3)
    snprintf(why, size, "swizzle %d (128B_ATOM) is not modelled", swizzle);
  else if (oobFill != 0)
    snprintf(why, size, "the NaN out-of-bounds fill is not modelled");
  /* Without interleave the hardware ignores dimension 0's stride. */
  for (unsigned i = 1; i < rank && !why[0]; ++i)
    if (elementStrides[i] != 1)
      snprintf(why, size, "elementStrides[%u] %u is not modelled (only 1)", i,
               elementStrides[i]);
}

static CUresult
cuTensorMapEncodeTiled(void *tensorMap, int dataType, uint32_t rank,
                       void *globalAddress, const uint64_t *globalDim,
                       const uint64_t *globalStrides, const uint32_t *boxDim,
                       const uint32_t *elementStrides, int interleave,
                       int swizzle, int l2Promotion, int oobFill) {
  char why[160] = "";
  tensorMapInvalid(why, sizeof why, tensorMap, dataType, rank, globalAddress,
                   globalDim, globalStrides, boxDim, elementStrides, interleave,
                   swizzle, l2Promotion, oobFill);
  if (!why[0])
    tensorMapUnmodelled(why, sizeof why, dataType, rank, elementStrides,
                        interleave, swizzle, oobFill);
  if (why[0]) {
    LOG("cuTensorMapEncodeTiled: %s: refused\n", why);
    return kInvalidValue;
  }
  PtxsimTensorMap m;
  memset(&m, 0, sizeof m);
  m.magic = PTXSIM_TENSOR_MAP_MAGIC;
  m.globalAddress = (uint64_t)(uintptr_t)globalAddress;
  m.rank = (uint8_t)rank;
  m.dataType = (uint8_t)dataType;
  m.elementBytes = (uint8_t)tensorElementBytes(dataType);
  m.swizzle = (uint8_t)swizzleSpan(swizzle);
  m.interleave = (uint8_t)interleave;
  m.l2Promotion = (uint8_t)l2Promotion;
  m.oobFill = (uint8_t)oobFill;
  char dims[128] = "", boxes[64] = "";
  size_t nd = 0, nb = 0;
  for (unsigned i = 0; i < rank; ++i) {
    m.globalDim[i] = globalDim[i];
    if (i + 1 < rank)
      m.globalStrides[i] = globalStrides[i];
    m.boxDim[i] = boxDim[i];
    m.elementStrides[i] = (uint8_t)elementStrides[i];
    nd += (size_t)snprintf(dims + nd, sizeof dims - nd, " %llu",
                           (unsigned long long)globalDim[i]);
    nb += (size_t)snprintf(boxes + nb, sizeof boxes - nb, " %u", boxDim[i]);
  }
  memcpy(tensorMap, &m, sizeof m);
  LOG("cuTensorMapEncodeTiled rank %u dims%s box%s swizzle %d\n", rank, dims,
      boxes, swizzleSpan(swizzle));
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
    ENTRY(cuLaunchKernelEx),
    ENTRY(cuMemAlloc),
    ENTRY(cuMemFree),
    ENTRY(cuMemAllocAsync),
    ENTRY(cuMemFreeAsync),
    ENTRY(cuMemsetD32Async),
    ENTRY(cuMemcpyHtoD),
    ENTRY(cuMemcpyHtoDAsync),
    ENTRY(cuMemcpyDtoHAsync),
    ENTRY(cuStreamCreate),
    ENTRY(cuStreamDestroy),
    ENTRY(cuStreamSynchronize),
    ENTRY(cuTensorMapEncodeTiled),
    ENTRY(cuGetErrorName),
    ENTRY(cuGetErrorString),
};

/* The one exported symbol: the runtime resolves everything through it. */
__attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *name, void **fn, int version, uint64_t flags,
                    int *status) {
  (void)version;
  (void)flags;
  /* FFN_FAKE_CUDA_NO_TMA: a driver without the tensor-map encoder, to
   * check what the runtime says when a kernel needs it. */
  int hide = (getenv("FFN_FAKE_CUDA_NO_TMA") != NULL &&
              strcmp(name, "cuTensorMapEncodeTiled") == 0) ||
             (getenv("FFN_FAKE_CUDA_NO_LAUNCH_EX") != NULL &&
              strcmp(name, "cuLaunchKernelEx") == 0);
  for (size_t i = 0; !hide && i < sizeof entries / sizeof entries[0]; ++i)
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
