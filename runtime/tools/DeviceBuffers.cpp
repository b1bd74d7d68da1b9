//===- DeviceBuffers.cpp - ffn-gpu-run's device-pointer runs ---------------===//

#include "DeviceBuffers.h"

#include "cuda/CudaDriver.h"

using namespace ffn_tools;
using ffn_rt::cuda::CUstream;
using ffn_rt::cuda::Driver;

namespace {
const Driver &the(const void *driver) {
  return *static_cast<const Driver *>(driver);
}
} // namespace

std::string DeviceBuffers::open() {
  std::string error;
  const Driver *d = ffn_rt::cuda::driver(error);
  if (!d)
    return error;
  // The runtime's context stays current on this thread for the tool's
  // buffers and stream.
  CUstream s = nullptr;
  if (d->CtxPushCurrent(d->context) ||
      d->StreamCreate(&s, ffn_rt::cuda::kStreamNonBlocking))
    return "cannot create a CUDA stream";
  driver = d;
  stream = s;
  return "";
}

DeviceBuffers::~DeviceBuffers() {
  if (!driver)
    return;
  const Driver &d = the(driver);
  d.StreamSynchronize(static_cast<CUstream>(stream));
  if (x)
    d.MemFree(x);
  if (y)
    d.MemFree(y);
  d.StreamDestroy(static_cast<CUstream>(stream));
}

ffn_status DeviceBuffers::run(ffn_context *ctx, ffn_kernel *kernel, int64_t m,
                              const void *hx, void *hy, size_t bytes,
                              std::string &error) {
  const Driver &d = the(driver);
  CUstream s = static_cast<CUstream>(stream);
  if (bytes > capacity) {
    d.StreamSynchronize(s);
    if (x)
      d.MemFree(x);
    if (y)
      d.MemFree(y);
    x = y = 0;
    capacity = 0;
    if (d.MemAlloc(&x, bytes) || d.MemAlloc(&y, bytes)) {
      error = "cannot allocate " + std::to_string(2 * bytes) +
              " bytes of device buffers";
      return FFN_ERROR_DEVICE;
    }
    capacity = bytes;
  }
  if (d.MemcpyHtoDAsync(x, hx, bytes, s)) {
    error = "cannot copy x to the GPU";
    return FFN_ERROR_DEVICE;
  }
  if (ffn_status st =
          ffn_kernel_run_device(kernel, m, reinterpret_cast<void *>(x),
                                reinterpret_cast<void *>(y), stream)) {
    error = std::string(ffn_status_string(st)) + ": " +
            ffn_context_last_error(ctx);
    return st;
  }
  if (d.MemcpyDtoHAsync(hy, y, bytes, s) || d.StreamSynchronize(s)) {
    error = "the GPU run failed";
    return FFN_ERROR_DEVICE;
  }
  return FFN_OK;
}
