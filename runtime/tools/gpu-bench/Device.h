//===- Device.h - the CUDA driver calls of ffn-gpu-bench --------*- C++ -*-===//
//
// The benchmark opens libcuda.so.1 itself (the runtime's loader is internal
// to libffn_runtime) and works in device 0's primary context, the one the
// runtime's ffn_kernel_run_device uses, so that pointers and streams are
// shared. Types come from the toolkit's cuda.h: the benchmark is built only
// where the toolkit is (it also needs cublasLt.h and nvcc).
//
//===----------------------------------------------------------------------===//

#ifndef FFN_GPU_BENCH_DEVICE_H
#define FFN_GPU_BENCH_DEVICE_H

#include <cuda.h>
#include <dlfcn.h>

#include <cstddef>
#include <string>

namespace gpu_bench {

/// Resolves `name` in the library opened as `lib` into `fn`; false if it
/// is not there.
template <typename F> bool resolveSymbol(void *lib, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

struct Device {
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)();
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*StreamCreate)(CUstream *, unsigned);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*EventCreate)(CUevent *, unsigned);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*ModuleLoadData)(CUmodule *, const void *);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*GetErrorString)(CUresult, const char **);

  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::string name;
  int sms = 0, smMajor = 0, smMinor = 0;
  double memoryClockKHz = 0, busWidthBits = 0, l2Bytes = 0;
  double smClockKHz = 0;

  /// Opens the driver, device 0's primary context and a stream; false with
  /// `error` set when there is no driver or device.
  bool open(std::string &error);
  /// Throws nothing: prints `what` and the driver's message and exits 3
  /// (the runners' "device error" status) on failure.
  void check(CUresult r, const char *what) const;
  /// 2 x memory clock x bus width / 8: the HBM's nominal bandwidth.
  double nominalGBs() const {
    return 2 * memoryClockKHz * 1e3 * busWidthBits / 8 / 1e9;
  }
};

/// Device memory freed with its owner.
class Buffer {
public:
  Buffer() = default;
  Buffer(const Device &d, size_t bytes);
  Buffer(Buffer &&o) noexcept : d(o.d), ptr(o.ptr), size(o.size) { o.ptr = 0; }
  Buffer &operator=(Buffer &&o) noexcept;
  ~Buffer();
  CUdeviceptr get() const { return ptr; }
  void *raw() const { return reinterpret_cast<void *>(ptr); }
  size_t bytes() const { return size; }

private:
  const Device *d = nullptr;
  CUdeviceptr ptr = 0;
  size_t size = 0;
};

} // namespace gpu_bench

#endif // FFN_GPU_BENCH_DEVICE_H
