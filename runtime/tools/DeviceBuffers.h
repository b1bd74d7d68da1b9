//===- DeviceBuffers.h - ffn-gpu-run's device-pointer runs ------*- C++ -*-===//
//
// `ffn-gpu-run --stream` runs kernels as an application embedding them on a
// GPU does: x and y in device memory, ffn_kernel_run_device on a stream of
// the caller's, which is also the path where the runtime keeps a kernel's
// workspace between runs. The tool links no CUDA: it opens the driver with
// the runtime's own loader (cuda/CudaDriver.cpp, compiled into the tool).
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TOOLS_DEVICEBUFFERS_H
#define FFN_TOOLS_DEVICEBUFFERS_H

#include "ffn/runtime.h"

#include <cstddef>
#include <string>

namespace ffn_tools {

class DeviceBuffers {
public:
  DeviceBuffers() = default;
  DeviceBuffers(const DeviceBuffers &) = delete;
  DeviceBuffers &operator=(const DeviceBuffers &) = delete;
  ~DeviceBuffers();

  /// Opens the driver, makes device 0's primary context (the runtime's)
  /// current on this thread and creates the stream. Returns "" or why not.
  std::string open();

  /// Copies x in, runs `kernel` for m rows on the stream, copies y out and
  /// waits. Returns FFN_OK, or the failure's status (FFN_ERROR_DEVICE for
  /// the driver's own calls) with `error` set (the runtime's message
  /// included).
  ffn_status run(ffn_context *ctx, ffn_kernel *kernel, int64_t m,
                 const void *x, void *y, size_t bytes, std::string &error);

private:
  const void *driver = nullptr; // ffn_rt::cuda::Driver
  void *stream = nullptr;
  unsigned long long x = 0, y = 0;
  size_t capacity = 0;
};

} // namespace ffn_tools

#endif // FFN_TOOLS_DEVICEBUFFERS_H
