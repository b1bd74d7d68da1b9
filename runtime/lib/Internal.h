//===- Internal.h - the runtime's objects behind its C API ------*- C++ -*-===//
//
// ffn_context and ffn_kernel as the runtime's files share them: the context
// (Context.cpp), kernel loading and validation (KernelLoading.cpp), the
// parameters (Params.cpp) and one executor per device (cpu/Executor.cpp,
// cuda/Executor.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FFN_RUNTIME_INTERNAL_H
#define FFN_RUNTIME_INTERNAL_H

#include "ffn/runtime.h"

#include "ThreadPool.h"
#include "cuda/DeviceKernel.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace ffn_rt {

/// 64-byte aligned heap memory: packed weight panels and the workspace are
/// read with full-width vector loads.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  ~AlignedBuffer() { std::free(data_); }
  /// Ensures at least `bytes`; keeps the old block when it is big enough.
  bool reserve(size_t bytes) {
    if (bytes <= size_)
      return true;
    size_t rounded = (bytes + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, rounded);
    if (!p)
      return false;
    std::free(data_);
    data_ = p;
    size_ = rounded;
    return true;
  }
  void *data() const { return data_; }

private:
  void *data_ = nullptr;
  size_t size_ = 0;
};

/// A reader-writer lock that lets a waiting writer in: runs (readers) from
/// many threads overlap all the time, and with the default reader
/// preference (std::shared_mutex on glibc) ffn_kernel_set_param would wait
/// for ever. Usable with std::shared_lock / std::unique_lock.
class WriterFirstLock {
public:
  WriterFirstLock() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr,
                                  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~WriterFirstLock() { pthread_rwlock_destroy(&lock_); }
  WriterFirstLock(const WriterFirstLock &) = delete;
  WriterFirstLock &operator=(const WriterFirstLock &) = delete;
  void lock() { pthread_rwlock_wrlock(&lock_); }
  void unlock() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() { pthread_rwlock_rdlock(&lock_); }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

private:
  pthread_rwlock_t lock_;
};

} // namespace ffn_rt

/// A context is shared by every kernel created on it and may be used from
/// many threads at once. It lives until ffn_context_destroy has been called
/// and its last kernel is destroyed (`refs` counts the application's own
/// reference plus one per kernel).
struct ffn_context {
  std::atomic<int64_t> refs{1};
  std::atomic<unsigned> threads{0}; // 0: all cores

  /// One run at a time uses the pool; a run that finds it busy runs on its
  /// caller's thread instead (ffn/runtime.h). Guards `pool`.
  std::mutex poolMutex;
  std::unique_ptr<ffn_rt::ThreadPool> pool;

  /// Each calling thread's last error: concurrent callers do not overwrite
  /// each other's messages. Nodes are stable, so a returned c_str() stays
  /// valid until that thread's next failing call.
  std::mutex errorMutex;
  std::unordered_map<std::thread::id, std::string> errors;

  unsigned threadCount() const {
    unsigned t = threads.load(std::memory_order_relaxed);
    return t ? t : std::max(1u, std::thread::hardware_concurrency());
  }
  /// The pool for `count` threads (caller included), built or rebuilt under
  /// poolMutex, which the caller holds. Throws what std::thread throws.
  ffn_rt::ThreadPool *poolFor(unsigned count) {
    if (count <= 1)
      return nullptr;
    if (!pool || pool->size() != count) {
      pool.reset();
      pool = std::make_unique<ffn_rt::ThreadPool>(count);
    }
    return pool.get();
  }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete this;
  }
};

struct ffn_kernel {
  ffn_context *ctx = nullptr;
  const ffn_kernel_desc *desc = nullptr;
  void *library = nullptr; // dlopen handle, or null for linked-in kernels

  /// Runs hold it shared for their whole duration; ffn_kernel_set_param
  /// packs into a new buffer first and swaps it in exclusively, so a run
  /// sees either the old or the new parameter, never a half-packed one.
  ffn_rt::WriterFirstLock paramsMutex;
  /// Packed; shared with the kernels bound to these parameters
  /// (ffn_kernel_share_params), freed with the last of them.
  std::vector<std::shared_ptr<ffn_rt::AlignedBuffer>> params;
  std::vector<const void *> paramPointers; // null: not set

  /// Scratch for runs: each run takes a buffer of its own (so concurrent
  /// runs never share one) and gives it back; steady-state runs from one
  /// thread reuse a single buffer and allocate nothing.
  std::mutex workspaceMutex;
  std::vector<std::unique_ptr<ffn_rt::AlignedBuffer>> idleWorkspaces;

  /// Device kernels: module, device parameters, launches.
  std::unique_ptr<ffn_rt::DeviceKernel> device;
};

namespace ffn_rt {

/// Records `message` as the calling thread's last error on `ctx` (if any)
/// and returns `status`.
ffn_status fail(ffn_context *ctx, ffn_status status, std::string message);

/// The layout argument of a C caller, validated: in C++ merely loading an
/// enum object that holds a value outside the enumerators' range is
/// undefined, so its bytes are read as the int they are.
/// It takes the parameter's address: passing it by value would load it.
inline bool readLayout(const ffn_weight_layout *layout, int &value) {
  static_assert(sizeof value == sizeof *layout, "enums are ints");
  std::memcpy(&value, layout, sizeof value);
  return value == FFN_LAYOUT_IN_OUT || value == FFN_LAYOUT_OUT_IN;
}

/// Bytes of one element of a descriptor dtype.
inline size_t dtypeSize(int64_t dtype) {
  return dtype == FFN_DTYPE_F32 ? 4 : 2;
}

/// The tensors parameter `p` holds: one per expert FFN of a mixture or per
/// block of a grouped FFN when it is stacked (ffn_param_desc::experts),
/// else 1.
inline int64_t paramTensors(const ffn_param_desc &p) {
  return p.experts > 0 ? p.experts : 1;
}

/// Bytes from one stacked tensor's packed bytes to the next: packed_bytes
/// rounded up to 64, so that each tensor's panels stay 64-byte aligned
/// (ffn/kernel_abi.h). packed_bytes itself for an unstacked parameter.
inline size_t packedStride(const ffn_param_desc &p) {
  size_t bytes = static_cast<size_t>(p.packed_bytes);
  return p.experts > 0 ? (bytes + 63) / 64 * 64 : bytes;
}

/// The whole packed parameter; the descriptor's limits (KernelLoading.cpp)
/// keep it below 2^58.
inline size_t packedSize(const ffn_param_desc &p) {
  return static_cast<size_t>(paramTensors(p)) * packedStride(p);
}

/// `caller`'s x and y (m rows each) must not overlap.
ffn_status checkNoOverlap(ffn_context *ctx, const char *caller,
                          const ffn_kernel_desc *d, int64_t m, const void *x,
                          const void *y);

/// Every parameter was set (the caller holds the parameter lock).
ffn_status checkParamsSet(ffn_kernel *kernel);

} // namespace ffn_rt

#endif // FFN_RUNTIME_INTERNAL_H
