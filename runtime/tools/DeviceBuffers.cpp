//===- DeviceBuffers.cpp - ffn-gpu-run's device-pointer runs ---------------===//

#include "DeviceBuffers.h"

#include <cstdint>
#include <dlfcn.h>
#include <type_traits>

using namespace ffn_tools;

namespace {
using GetProc = int (*)(const char *, void **, int, uint64_t, int *);
} // namespace

std::string DeviceBuffers::open() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return "no CUDA driver (libcuda.so.1)";
  auto getProc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!getProc)
    return "the CUDA driver is older than CUDA 12";
  std::string missing;
  auto get = [&](auto &fn, const char *name) {
    void *p = nullptr;
    int status = 0;
    if (getProc(name, &p, 12000, 0, &status) != 0 || !p)
      missing = name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  Result (*init)(unsigned) = nullptr;
  Result (*deviceGet)(int *, int) = nullptr;
  Result (*retain)(void **, int) = nullptr;
  Result (*push)(void *) = nullptr;
  Result (*streamCreate)(void **, unsigned) = nullptr;
  get(init, "cuInit");
  get(deviceGet, "cuDeviceGet");
  get(retain, "cuDevicePrimaryCtxRetain");
  get(push, "cuCtxPushCurrent");
  get(streamCreate, "cuStreamCreate");
  get(streamDestroy, "cuStreamDestroy");
  get(memAlloc, "cuMemAlloc");
  get(memFree, "cuMemFree");
  get(copyIn, "cuMemcpyHtoDAsync");
  get(copyOut, "cuMemcpyDtoHAsync");
  get(streamSync, "cuStreamSynchronize");
  if (!missing.empty())
    return "the CUDA driver lacks " + missing;
  int device = 0;
  void *context = nullptr;
  // The runtime runs on device 0's primary context; this thread keeps it
  // current for its own buffers and stream.
  if (init(0) || deviceGet(&device, 0) || retain(&context, device) ||
      push(context))
    return "the CUDA driver has no usable device";
  if (streamCreate(&stream, /*CU_STREAM_NON_BLOCKING=*/1))
    return "cannot create a CUDA stream";
  return "";
}

DeviceBuffers::~DeviceBuffers() {
  if (stream)
    streamSync(stream);
  if (x)
    memFree(x);
  if (y)
    memFree(y);
  if (stream)
    streamDestroy(stream);
}

std::string DeviceBuffers::run(ffn_context *ctx, ffn_kernel *kernel, int64_t m,
                               const void *hx, void *hy, size_t bytes) {
  if (bytes > capacity) {
    streamSync(stream);
    if (x)
      memFree(x);
    if (y)
      memFree(y);
    x = y = 0;
    capacity = 0;
    if (memAlloc(&x, bytes) || memAlloc(&y, bytes))
      return "cannot allocate " + std::to_string(2 * bytes) +
             " bytes of device buffers";
    capacity = bytes;
  }
  if (copyIn(x, hx, bytes, stream))
    return "cannot copy x to the GPU";
  if (ffn_status s =
          ffn_kernel_run_device(kernel, m, reinterpret_cast<void *>(x),
                                reinterpret_cast<void *>(y), stream))
    return std::string(ffn_status_string(s)) + ": " +
           ffn_context_last_error(ctx);
  if (copyOut(hy, y, bytes, stream) || streamSync(stream))
    return "the GPU run failed";
  return "";
}
