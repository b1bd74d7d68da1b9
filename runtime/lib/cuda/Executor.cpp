//===- Executor.cpp - running device kernels on device pointers -----------===//

#include "Internal.h"

#include <shared_mutex>

using namespace ffn_rt;

extern "C" {

ffn_status ffn_kernel_run_device(ffn_kernel *kernel, int64_t m, const void *x,
                                 void *y, void *stream) {
  if (!kernel)
    return FFN_ERROR_INVALID_ARGUMENT;
  ffn_context *ctx = kernel->ctx;
  const ffn_kernel_desc *d = kernel->desc;
  if (!kernel->device)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                std::string("ffn_kernel_run_device: kernel '") + d->name +
                    "' is a CPU kernel; use ffn_kernel_run");
  if (!x || !y)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_run_device: x and y must not be null");
  if (m < 1 || m > (int64_t(1) << 31))
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_run_device: m must be in [1, 2^31], got " +
                    std::to_string(m));
  if (ffn_status s = checkNoOverlap(ctx, "ffn_kernel_run_device", d, m, x, y))
    return s;
  std::shared_lock<WriterFirstLock> params(kernel->paramsMutex);
  if (ffn_status s = checkParamsSet(kernel))
    return s;
  std::string error;
  if (!kernel->device->run(m, x, y, stream, error))
    return fail(ctx, FFN_ERROR_DEVICE,
                "kernel '" + std::string(d->name) + "': " + error);
  return FFN_OK;
}

} // extern "C"
