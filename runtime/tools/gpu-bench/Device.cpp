//===- Device.cpp - the CUDA driver calls of ffn-gpu-bench ----------------===//

#include "Device.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

using namespace gpu_bench;

// Entry points are resolved by the ABI's versioned symbol where the driver
// has one (cuMemAlloc_v2 and so on).
bool Device::open(std::string &error) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    error = "no CUDA driver (libcuda.so.1 not found)";
    return false;
  }
  bool ok =
      resolveSymbol(lib, Init, "cuInit") &&
      resolveSymbol(lib, DeviceGet, "cuDeviceGet") &&
      resolveSymbol(lib, DeviceGetName, "cuDeviceGetName") &&
      resolveSymbol(lib, DeviceGetAttribute, "cuDeviceGetAttribute") &&
      resolveSymbol(lib, DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
      resolveSymbol(lib, CtxSetCurrent, "cuCtxSetCurrent") &&
      resolveSymbol(lib, CtxSynchronize, "cuCtxSynchronize") &&
      resolveSymbol(lib, MemAlloc, "cuMemAlloc_v2") &&
      resolveSymbol(lib, MemFree, "cuMemFree_v2") &&
      resolveSymbol(lib, MemcpyHtoD, "cuMemcpyHtoD_v2") &&
      resolveSymbol(lib, MemcpyDtoH, "cuMemcpyDtoH_v2") &&
      resolveSymbol(lib, MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2") &&
      resolveSymbol(lib, StreamCreate, "cuStreamCreate") &&
      resolveSymbol(lib, StreamSynchronize, "cuStreamSynchronize") &&
      resolveSymbol(lib, EventCreate, "cuEventCreate") &&
      resolveSymbol(lib, EventRecord, "cuEventRecord") &&
      resolveSymbol(lib, EventSynchronize, "cuEventSynchronize") &&
      resolveSymbol(lib, ModuleLoadData, "cuModuleLoadData") &&
      resolveSymbol(lib, ModuleGetFunction, "cuModuleGetFunction") &&
      resolveSymbol(lib, LaunchKernel, "cuLaunchKernel") &&
      resolveSymbol(lib, GetErrorString, "cuGetErrorString");
  // CUDA 12.8 added a _v2 of cuEventElapsedTime; older drivers have only
  // the first.
  if (!resolveSymbol(lib, EventElapsedTime, "cuEventElapsedTime_v2"))
    ok = ok && resolveSymbol(lib, EventElapsedTime, "cuEventElapsedTime");
  if (!ok) {
    error = "the CUDA driver lacks an entry point ffn-gpu-bench needs";
    return false;
  }
  if (Init(0) != CUDA_SUCCESS || DeviceGet(&device, 0) != CUDA_SUCCESS) {
    error = "no CUDA device (cuInit or cuDeviceGet failed)";
    return false;
  }
  char buffer[256] = {0};
  DeviceGetName(buffer, sizeof(buffer) - 1, device);
  name = buffer;
  auto attribute = [&](CUdevice_attribute a) {
    int v = 0;
    DeviceGetAttribute(&v, a, device);
    return v;
  };
  sms = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  smMajor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  smMinor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  memoryClockKHz = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  busWidthBits = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  l2Bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  smClockKHz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  check(DevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(CtxSetCurrent(context), "cuCtxSetCurrent");
  check(StreamCreate(&stream, 0), "cuStreamCreate");
  return true;
}

void Device::check(CUresult r, const char *what) const {
  if (r == CUDA_SUCCESS)
    return;
  const char *message = "unknown error";
  if (GetErrorString)
    GetErrorString(r, &message);
  std::fprintf(stderr, "ffn-gpu-bench: %s: %s\n", what, message);
  std::exit(3);
}

Buffer::Buffer(const Device &dev, size_t bytes) : d(&dev), size(bytes) {
  dev.check(dev.MemAlloc(&ptr, bytes ? bytes : 16), "cuMemAlloc");
}

Buffer &Buffer::operator=(Buffer &&o) noexcept {
  if (this != &o) {
    if (ptr)
      d->MemFree(ptr);
    d = o.d;
    ptr = o.ptr;
    size = o.size;
    o.ptr = 0;
  }
  return *this;
}

Buffer::~Buffer() {
  if (ptr)
    d->MemFree(ptr);
}
