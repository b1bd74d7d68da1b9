//===- BenchTiming.h - the clock and the gap between timed runs -*- C++ -*-===//

#ifndef FFN_BENCH_BENCHTIMING_H
#define FFN_BENCH_BENCHTIMING_H

#include <chrono>

namespace ffn_bench {

/// Between two timed runs: longer than either library's workers spin.
constexpr double kIdleGap = 400e-6;

inline double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Waits `seconds` on this thread without sleeping: a vCPU that goes idle
/// comes back with cold caches (measured: BERT-base M = 1 ran at half speed
/// for both libraries after a 400 us sleep).
inline void idle(double seconds = kIdleGap) {
  double end = now() + seconds;
  while (now() < end)
    ;
}

} // namespace ffn_bench

#endif // FFN_BENCH_BENCHTIMING_H
