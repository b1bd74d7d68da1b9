//===- ThreadPool.h - the runtime's worker threads --------------*- C++ -*-===//
//
// A fixed set of workers that run one parallel loop at a time: the calling
// thread takes the first chunk, each worker one more, and the call returns
// when all chunks are done. Nothing is allocated per loop, so a kernel run
// allocates nothing once its workspace has grown.
//
// A kernel run is a few parallel phases back to back, each as short as tens
// of microseconds at decode sizes, so the hand-off between phases must cost
// far less than that. Waking a thread blocked on a condition variable costs
// 10-50 us on the development VM; instead, a thread that has to wait (a
// worker for the next loop, the caller for the workers) first spins on an
// atomic for a short while (kSpinSeconds), which covers every phase
// boundary inside a run, and only then blocks. Idle workers therefore burn
// their core for at most kSpinSeconds after a run, not for ever; and not at
// all when the pool has more threads than the machine has cores, where a
// spinning thread would take the core of the thread it waits for.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_RUNTIME_THREADPOOL_H
#define FFN_RUNTIME_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ffn_rt {

class ThreadPool {
public:
  /// How long a waiting thread spins before it blocks.
  static constexpr double kSpinSeconds = 100e-6;

  /// `threads` includes the caller: threads - 1 workers are started. Throws
  /// std::system_error (after stopping the ones it started) if the system
  /// cannot start them.
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
  void shutdown();
  static void chunk(int64_t units, unsigned parts, unsigned i, int64_t &begin,
                    int64_t &end);

  std::vector<std::thread> workers;
  /// kSpinSeconds, or 0 when oversubscribed.
  double spinSeconds;

  // One loop's work, written by the caller before it bumps `generation`
  // (release) and read by the workers after they see the bump (acquire).
  int64_t units = 0;
  const std::function<void(int64_t, int64_t)> *body = nullptr;

  /// Bumped once per loop (and on shutdown); workers wait for a change.
  std::atomic<uint64_t> generation{0};
  /// Workers still running the current loop; the caller waits for 0.
  std::atomic<unsigned> pending{0};
  std::atomic<bool> stopping{false};

  // Blocking, after the spin: a thread announces that it is about to sleep
  // (sleepingWorkers / callerSleeping) before it checks its condition under
  // `mutex`; the other side changes the condition first and then looks at
  // the announcement. Both are sequentially consistent, so at least one of
  // them sees the other and no wake-up is lost.
  std::mutex mutex;
  std::condition_variable start, done;
  std::atomic<unsigned> sleepingWorkers{0};
  std::atomic<bool> callerSleeping{false};
};

} // namespace ffn_rt

#endif // FFN_RUNTIME_THREADPOOL_H
