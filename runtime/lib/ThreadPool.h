//===- ThreadPool.h - the runtime's worker threads --------------*- C++ -*-===//
//
// A fixed set of workers that run one parallel loop at a time: the calling
// thread takes the first chunk, each worker one more, and the call returns
// when all chunks are done. Nothing is allocated per loop, so a kernel run
// allocates nothing once its workspace has grown.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_RUNTIME_THREADPOOL_H
#define FFN_RUNTIME_THREADPOOL_H

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ffn_rt {

class ThreadPool {
public:
  /// `threads` includes the caller: threads - 1 workers are started.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned size() const { return static_cast<unsigned>(workers.size()) + 1; }

  /// Splits [0, units) into size() contiguous chunks (some may be empty)
  /// and runs body(begin, end) on each, concurrently.
  void parallelFor(int64_t units,
                   const std::function<void(int64_t, int64_t)> &body);

private:
  void workerLoop(unsigned index);
  static void chunk(int64_t units, unsigned parts, unsigned i, int64_t &begin,
                    int64_t &end);

  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable start, done;
  uint64_t generation = 0;
  unsigned pending = 0;
  bool stopping = false;
  int64_t units = 0;
  const std::function<void(int64_t, int64_t)> *body = nullptr;
};

} // namespace ffn_rt

#endif // FFN_RUNTIME_THREADPOOL_H
