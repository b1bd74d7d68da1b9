// Drives the runtime's thread pool through both of its waiting modes: loops
// back to back (threads hand over by spinning) and loops separated by more
// than the spin time (threads block and are woken), with as many threads as
// cores and with more (no spinning at all). Each loop must run every unit
// exactly once, on the thread the contiguous split assigns it to.

#include "ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

using ffn_rt::ThreadPool;

static bool runLoops(unsigned threads, int loops, double gapSeconds) {
  ThreadPool pool(threads);
  std::vector<std::atomic<int>> visits(97);
  std::vector<std::atomic<int64_t>> firstUnit(threads);
  for (int loop = 0; loop < loops; ++loop) {
    int64_t units = 1 + loop % 97;
    for (auto &v : visits)
      v.store(0);
    std::atomic<unsigned> calls{0};
    pool.parallelFor(units, [&](int64_t begin, int64_t end) {
      ++calls;
      for (int64_t i = begin; i < end; ++i)
        ++visits[i];
    });
    for (int64_t i = 0; i < 97; ++i)
      if (visits[i].load() != (i < units ? 1 : 0)) {
        std::printf("threads %u loop %d: unit %lld ran %d times\n", threads,
                    loop, static_cast<long long>(i), visits[i].load());
        return false;
      }
    // Each thread runs at most one contiguous range per loop.
    if (calls.load() > threads || calls.load() < 1) {
      std::printf("threads %u loop %d: %u ranges\n", threads, loop,
                  calls.load());
      return false;
    }
    if (gapSeconds > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(gapSeconds));
  }
  return true;
}

int main() {
  unsigned cores = std::max(2u, std::thread::hardware_concurrency());
  bool ok = true;
  for (unsigned threads : {cores, cores + 2})
    for (double gap : {0.0, 4 * ThreadPool::kSpinSeconds}) {
      bool pass = runLoops(threads, gap > 0 ? 300 : 20000, gap);
      std::printf("%s threads=%s gap=%s\n", pass ? "ok" : "FAIL",
                  threads > cores ? "oversubscribed" : "cores",
                  gap > 0 ? "sleep" : "spin");
      ok &= pass;
    }
  return ok ? 0 : 1;
}
