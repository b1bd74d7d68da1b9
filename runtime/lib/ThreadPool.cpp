//===- ThreadPool.cpp - the runtime's worker threads ----------------------===//

#include "ThreadPool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

using namespace ffn_rt;

namespace {
/// Tells the core that this is a spin-wait (frees resources for the SMT
/// sibling and avoids the memory-order flush when the wait ends).
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

/// Spins until ready() holds or `seconds` have passed; returns whether it
/// holds.
template <typename Ready> bool spinUntil(double seconds, Ready ready) {
  using Clock = std::chrono::steady_clock;
  if (seconds <= 0)
    return ready();
  const auto limit = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(seconds));
  const Clock::time_point start = Clock::now();
  while (true) {
    // The clock is read once per 64 polls: cheap next to a pause each.
    for (int i = 0; i < 64; ++i) {
      if (ready())
        return true;
      relax();
    }
    if (Clock::now() - start > limit)
      return ready();
  }
}
} // namespace

ThreadPool::ThreadPool(unsigned threads)
    : spinSeconds(threads <= std::thread::hardware_concurrency() ? kSpinSeconds
                                                                 : 0) {
  try {
    for (unsigned i = 1; i < threads; ++i)
      workers.emplace_back([this, i] { workerLoop(i); });
  } catch (...) {
    // The system ran out of threads or memory: stop the workers started so
    // far (the destructor will not run) and let the caller report it.
    shutdown();
    throw;
  }
}

ThreadPool::~ThreadPool() { shutdown(); }

void ThreadPool::shutdown() {
  stopping.store(true);
  generation.fetch_add(1);
  {
    // Taken so that no worker is between its check and its wait.
    std::lock_guard<std::mutex> lock(mutex);
  }
  start.notify_all();
  for (std::thread &t : workers)
    t.join();
}

void ThreadPool::chunk(int64_t units, unsigned parts, unsigned i,
                       int64_t &begin, int64_t &end) {
  int64_t per = units / parts, extra = units % parts;
  begin = i * per + std::min<int64_t>(i, extra);
  end = begin + per + (static_cast<int64_t>(i) < extra ? 1 : 0);
}

void ThreadPool::parallelFor(int64_t count,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (workers.empty() || count <= 1) {
    if (count > 0)
      fn(0, count);
    return;
  }
  units = count;
  body = &fn;
  pending.store(static_cast<unsigned>(workers.size()));
  generation.fetch_add(1); // publishes units, body and pending
  if (sleepingWorkers.load() != 0) {
    { std::lock_guard<std::mutex> lock(mutex); }
    start.notify_all();
  }

  int64_t begin, end;
  chunk(count, size(), 0, begin, end);
  if (begin < end)
    fn(begin, end);

  if (!spinUntil(spinSeconds, [this] { return pending.load() == 0; })) {
    std::unique_lock<std::mutex> lock(mutex);
    callerSleeping.store(true);
    done.wait(lock, [this] { return pending.load() == 0; });
    callerSleeping.store(false);
  }
  body = nullptr;
}

void ThreadPool::workerLoop(unsigned index) {
  uint64_t seen = 0;
  while (true) {
    auto changed = [&] { return generation.load() != seen; };
    if (!spinUntil(spinSeconds, changed)) {
      std::unique_lock<std::mutex> lock(mutex);
      sleepingWorkers.fetch_add(1);
      start.wait(lock, changed);
      sleepingWorkers.fetch_sub(1);
    }
    seen = generation.load();
    if (stopping.load())
      return;
    int64_t begin, end;
    chunk(units, size(), index, begin, end);
    if (begin < end)
      (*body)(begin, end);
    if (pending.fetch_sub(1) == 1 && callerSleeping.load()) {
      { std::lock_guard<std::mutex> lock(mutex); }
      done.notify_one();
    }
  }
}
