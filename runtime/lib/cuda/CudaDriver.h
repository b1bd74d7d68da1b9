//===- CudaDriver.h - the CUDA driver API, opened at run time ---*- C++ -*-===//
//
// The runtime runs device kernels through the CUDA driver API without
// linking against it: libcuda.so.1 is opened with dlopen on the first use
// of a device kernel, and every entry point is resolved through
// cuGetProcAddress (which returns the ABI version this code was written
// for: cuMemAlloc is cuMemAlloc_v2 and so on). A machine without a GPU or
// driver builds and runs every CPU kernel; a device kernel there fails with
// a message. The few driver types and constants used are declared here
// (the driver ABI's values), so building needs no CUDA toolkit either.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_RUNTIME_CUDADRIVER_H
#define FFN_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace ffn_rt::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;

/// The driver's entry points ffnc uses; null until load() succeeds.
struct Driver {
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*CtxPushCurrent)(CUcontext);
  CUresult (*CtxPopCurrent)(CUcontext *);
  CUresult (*CtxSynchronize)();
  CUresult (*ModuleLoadData)(CUmodule *, const void *);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*FuncSetAttribute)(CUfunction, int, int);
  CUresult (*FuncGetAttribute)(int *, int, CUfunction);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, unsigned, CUstream,
                           void **, void **);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*MemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*StreamCreate)(CUstream *, unsigned);
  CUresult (*StreamDestroy)(CUstream);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*GetErrorName)(CUresult, const char **);
  CUresult (*GetErrorString)(CUresult, const char **);
  /// cuTensorMapEncodeTiled (CUDA 12): null on an older driver, where
  /// kernels that take tensor maps (sm_90a's TMA loads) fail with a message
  /// and every other kernel runs.
  CUresult (*TensorMapEncodeTiled)(void *map, int dataType, unsigned rank,
                                   void *address, const uint64_t *dims,
                                   const uint64_t *strides, const unsigned *box,
                                   const unsigned *elementStrides,
                                   int interleave, int swizzle, int l2Promotion,
                                   int oobFill) = nullptr;

  /// cuLaunchKernelEx (CUDA 11.8): null on an older driver, where every
  /// kernel is launched plainly (the dependent launch is only an overlap).
  CUresult (*LaunchKernelEx)(const void *config, CUfunction, void **,
                             void **) = nullptr;

  CUcontext context = nullptr; ///< device 0's primary context
  CUdevice device = 0;
  int smMajor = 0, smMinor = 0;
};

/// The driver, loaded and initialized once per process (thread-safe); null
/// with `error` set when there is no usable driver or device.
const Driver *driver(std::string &error);

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a driver result.
std::string describe(const Driver &d, CUresult r);

/// Makes the driver's context current on this thread for a scope.
class ScopedContext {
public:
  explicit ScopedContext(const Driver &d) : d(d) {
    d.CtxPushCurrent(d.context);
  }
  ~ScopedContext() {
    CUcontext old;
    d.CtxPopCurrent(&old);
  }

private:
  const Driver &d;
};

// Driver ABI constants (cuda.h).
constexpr int kAttrComputeMajor = 75;
constexpr int kAttrComputeMinor = 76;
constexpr int kAttrMaxSharedOptin = 97;
constexpr int kFuncAttrLocalBytes = 3;
constexpr int kFuncAttrNumRegs = 4;
constexpr int kFuncAttrMaxDynamicShared = 8;
constexpr unsigned kStreamNonBlocking = 1;
/// CU_STREAM_PER_THREAD: each thread's own default stream, one handle.
constexpr uintptr_t kPerThreadStreamHandle = 0x2;
constexpr int kTensorMapFloat16 = 6;
constexpr int kTensorMapFloat32 = 7;
constexpr int kTensorMapBfloat16 = 9;
constexpr int kTensorMapL2Promotion128B = 2;
constexpr size_t kTensorMapBytes = 128;
constexpr int kLaunchAttrProgrammaticSerialization = 6;

/// CUlaunchAttribute: the attribute's id, then its 64-byte value union at
/// offset 8.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    unsigned programmaticStreamSerializationAllowed;
    char bytes[64];
  } value;
};
static_assert(sizeof(LaunchAttribute) == 72, "cuda.h's CUlaunchAttribute");

/// CUlaunchConfig.
struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};

} // namespace ffn_rt::cuda

#endif // FFN_RUNTIME_CUDADRIVER_H
