//===- CudaDriver.cpp - the CUDA driver API, opened at run time -----------===//

#include "CudaDriver.h"

#include <dlfcn.h>
#include <mutex>

using namespace ffn_rt::cuda;

namespace {
// cuGetProcAddress_v2 (CUDA 12+): name, function out, CUDA version the
// caller was written for, flags, symbol status out.
using GetProc = CUresult (*)(const char *, void **, int, uint64_t, int *);

struct Loaded {
  Driver driver{};
  std::string error;
  bool ok = false;
};

Loaded load() {
  Loaded l;
  Driver &d = l.driver;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    l.error = std::string("no CUDA driver: cannot open libcuda.so.1 (") +
              (why ? why : "unknown reason") + ")";
    return l;
  }
  auto getProc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!getProc) {
    l.error = "the CUDA driver is older than CUDA 12 (no cuGetProcAddress_v2)";
    return l;
  }
  bool missing = false;
  auto get = [&](auto &fn, const char *name) {
    void *p = nullptr;
    int status = 0;
    // 12000: the CUDA 12.0 ABI of each entry point, what this code calls.
    if (getProc(name, &p, 12000, 0, &status) != 0 || !p) {
      if (!missing)
        l.error = std::string("the CUDA driver lacks ") + name;
      missing = true;
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  get(d.Init, "cuInit");
  get(d.DeviceGet, "cuDeviceGet");
  get(d.DeviceGetAttribute, "cuDeviceGetAttribute");
  get(d.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  get(d.CtxPushCurrent, "cuCtxPushCurrent");
  get(d.CtxPopCurrent, "cuCtxPopCurrent");
  get(d.CtxSynchronize, "cuCtxSynchronize");
  get(d.ModuleLoadData, "cuModuleLoadData");
  get(d.ModuleUnload, "cuModuleUnload");
  get(d.ModuleGetFunction, "cuModuleGetFunction");
  get(d.FuncSetAttribute, "cuFuncSetAttribute");
  get(d.FuncGetAttribute, "cuFuncGetAttribute");
  get(d.LaunchKernel, "cuLaunchKernel");
  get(d.MemAlloc, "cuMemAlloc");
  get(d.MemFree, "cuMemFree");
  get(d.MemAllocAsync, "cuMemAllocAsync");
  get(d.MemFreeAsync, "cuMemFreeAsync");
  get(d.MemsetD32Async, "cuMemsetD32Async");
  get(d.MemcpyHtoD, "cuMemcpyHtoD");
  get(d.MemcpyHtoDAsync, "cuMemcpyHtoDAsync");
  get(d.MemcpyDtoHAsync, "cuMemcpyDtoHAsync");
  get(d.StreamCreate, "cuStreamCreate");
  get(d.StreamDestroy, "cuStreamDestroy");
  get(d.StreamSynchronize, "cuStreamSynchronize");
  get(d.GetErrorName, "cuGetErrorName");
  get(d.GetErrorString, "cuGetErrorString");
  if (missing)
    return l;
  // Optional: only the kernels with TMA loads need the first; without the
  // second, kernels are launched plainly.
  auto optional = [&](auto &fn, const char *name) {
    void *p = nullptr;
    int status = 0;
    if (getProc(name, &p, 12000, 0, &status) == 0 && p)
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  optional(d.TensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  optional(d.LaunchKernelEx, "cuLaunchKernelEx");
  CUresult r = d.Init(0);
  if (r == 0)
    r = d.DeviceGet(&d.device, 0);
  if (r == 0)
    r = d.PrimaryCtxRetain(&d.context, d.device);
  if (r == 0)
    r = d.DeviceGetAttribute(&d.smMajor, kAttrComputeMajor, d.device);
  if (r == 0)
    r = d.DeviceGetAttribute(&d.smMinor, kAttrComputeMinor, d.device);
  if (r != 0) {
    l.error = "the CUDA driver has no usable device: " + describe(d, r);
    return l;
  }
  l.ok = true;
  return l;
}
} // namespace

const Driver *ffn_rt::cuda::driver(std::string &error) {
  // Loaded on first use only: a process that never runs a device kernel
  // never touches the driver.
  static std::once_flag once;
  static Loaded *loaded = nullptr;
  std::call_once(once, [] { loaded = new Loaded(load()); });
  if (!loaded->ok) {
    error = loaded->error;
    return nullptr;
  }
  return &loaded->driver;
}

std::string ffn_rt::cuda::describe(const Driver &d, CUresult r) {
  const char *name = nullptr, *text = nullptr;
  if (d.GetErrorName)
    d.GetErrorName(r, &name);
  if (d.GetErrorString)
    d.GetErrorString(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(r);
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}
