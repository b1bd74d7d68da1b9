//===- BenchTiming.h - the clock and the gap between timed runs -*- C++ -*-===//

#ifndef FFN_BENCH_BENCHTIMING_H
#define FFN_BENCH_BENCHTIMING_H

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

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

/// Times the contenders interleaved, one run each per round with an idle
/// gap after every run, so that drift on a shared machine hits them alike.
/// The first round is warm-up. Rounds go on while fewer than four ran or
/// the runs took less than `budget` seconds in all, up to `maxRounds`;
/// `quick` stops after four. Returns each contender's best time (INFINITY
/// for an empty one, which is skipped).
inline std::vector<double>
bestInterleaved(const std::vector<std::function<void()>> &runs, double budget,
                int maxRounds, bool quick) {
  std::vector<double> best(runs.size(), INFINITY);
  double spent = 0;
  for (int r = 0; r < maxRounds && (r < 4 || spent < budget); ++r) {
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!runs[i])
        continue;
      double t0 = now();
      runs[i]();
      double t = now() - t0;
      idle(kIdleGap);
      if (r > 0)
        best[i] = std::min(best[i], t);
      spent += t;
    }
    if (quick && r >= 3)
      break;
  }
  return best;
}

} // namespace ffn_bench

#endif // FFN_BENCH_BENCHTIMING_H
