//===- DeviceKernel.h - running a CUDA kernel's launch plan -----*- C++ -*-===//
//
// The device side of an ffn_kernel whose descriptor says FFN_DEVICE_CUDA:
// its module (loaded from the descriptor's cubin on first use), the packed
// parameters in device memory, and a run: every launch of the plan whose
// token-count bucket holds m, on one stream, with a workspace allocated on
// that stream.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_RUNTIME_DEVICEKERNEL_H
#define FFN_RUNTIME_DEVICEKERNEL_H

#include "ffn/kernel_abi.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace ffn_rt {

class DeviceKernel {
public:
  explicit DeviceKernel(const ffn_kernel_desc &desc) : desc(desc) {}
  ~DeviceKernel();
  DeviceKernel(const DeviceKernel &) = delete;
  DeviceKernel &operator=(const DeviceKernel &) = delete;

  /// Checks the descriptor's CUDA entry (no driver needed): each pointer
  /// with `inImage` (memory of a loaded object) before it is read, then the
  /// plan's geometry and arguments against the descriptor. Returns "" or
  /// what is wrong.
  static std::string validate(const ffn_kernel_desc &desc,
                              bool (*inImage)(const void *));

  /// Copies packed parameter `index` (`bytes` long) to device memory,
  /// replacing an earlier one once the device is done with it. The caller
  /// holds the kernel's parameter lock exclusively.
  bool setParam(int64_t index, const void *packed, size_t bytes,
                std::string &error);

  /// Launches the plan for m rows on `stream` (a CUstream; null: the
  /// default stream). x and y are device pointers. The caller holds the
  /// parameter lock shared and has checked that every parameter is set.
  ///
  /// The workspace (split-K partials, the hidden rows, tile counters) of
  /// runs on the first stream that runs the kernel is kept between runs
  /// (`reuse`; sized for the largest m so far, in powers of two, freed with
  /// the kernel): a stream-ordered allocation and free per run cost 8 of
  /// the 20 us of a BERT-base decode run on an H200 (docs/gpu.md). Runs on
  /// that stream are ordered, so one buffer serves them all; runs on other
  /// streams, or while another thread is enqueuing a run, allocate their
  /// own as before. A stream handle can name a new stream only once the
  /// old one's work has completed, so a destroyed owner cannot race its
  /// successor. The per-thread default stream is never an owner: it is one
  /// handle for many streams.
  bool run(int64_t m, const void *x, void *y, void *stream, std::string &error,
           bool reuse = true);

  /// The same with host pointers: copies in, runs on a stream of its own,
  /// waits, copies out.
  bool runHost(int64_t m, const void *x, void *y, std::string &error);

private:
  const ffn_kernel_desc &desc;
  std::mutex loadMutex;
  bool loaded = false;
  void *module = nullptr;
  std::vector<void *> functions; // one per launch
  bool dependent = false; // launched as programmatic dependent launches
  std::vector<unsigned long long> params;
  std::mutex keptMutex; // guards the kept workspace below
  bool keptClaimed = false;
  void *keptStream = nullptr;
  unsigned long long keptBuffer = 0;
  size_t keptBytes = 0;

  bool ensureLoaded(std::string &error);
};

} // namespace ffn_rt

#endif // FFN_RUNTIME_DEVICEKERNEL_H
