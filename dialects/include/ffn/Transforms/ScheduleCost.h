//===- ScheduleCost.h - the CPU strategy choice and its cost model -*- C++
//-*-===//
//
// How ffn-select-strategy (and `ffnc info`, which must report the same)
// picks a #ffn.strategy: the register and cache tiles by rule, and for each
// token count m the schedule -- two-pass or fused -- that a cost model
// prices lower on the threads the kernel will run on.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TRANSFORMS_SCHEDULECOST_H
#define FFN_TRANSFORMS_SCHEDULECOST_H

#include "ffn/Transforms/StrategyChoice.h"

#include <algorithm>
#include <cstdint>

namespace mlir::ffn {

/// What the cost model knows of the machine. The defaults are a nominal
/// x86 core (one 512-bit FMA per cycle at 3.5 GHz) and a phase hand-off of
/// the runtime's spinning thread pool (0.2 us measured on the 2-core
/// development VM, with margin); `ffnc probe` measures all of them.
struct MachineAssumptions {
  double peakGflops = 112;   ///< f32 FMA peak of one thread
  double efficiency = 0.9;   ///< share of it a compute-bound phase reaches
  double dramGBs = 20;       ///< read bandwidth from memory, all threads
  double cacheGBs = 60;      ///< read bandwidth from cache, per thread
  double syncSeconds = 1e-6; ///< one phase boundary with several threads
  int64_t threads = 1;       ///< threads the kernel runs on
};

/// The FFN as the cost model sees it.
struct FfnShape {
  int64_t dModel, dFf;
  bool gated;
  int64_t elementBytes; ///< of the weights' storage type
  uint64_t weightBytes() const {
    return uint64_t(gated ? 3 : 2) * dModel * dFf * elementBytes;
  }
};

/// Weights above this size cannot stay in any CPU's last-level cache from
/// one token to the next, so each run streams them from DRAM.
constexpr uint64_t kStreamedWeightBytes = 64ull << 20;
/// The fused bucket serves decode-sized runs at most.
constexpr int64_t kFusedMaxM = 16;
/// 256-column chunks keep an m x 256 f32 hidden block in L1 at decode m.
constexpr int64_t kFusedChunk = 256;
/// Chunks are sized so that d_ff gives at least this many.
constexpr int64_t kFusedMinChunks = 8;

/// Predicted seconds of one run of m tokens in each schedule.
struct SchedulePrices {
  double twoPass = 0, fused = 0;
};

namespace detail {
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// One parallel phase of `flops` and `bytes` of weights whose work the
/// busiest thread holds `share` of, `active` threads taking part. Weights
/// streamed from DRAM share its bandwidth among the threads; cache-resident
/// ones are read at each core's own cache bandwidth.
inline double phaseSeconds(double flops, double bytes, double share,
                           int64_t active, bool streamed,
                           const MachineAssumptions &m) {
  double compute = flops * share / (m.efficiency * m.peakGflops * 1e9);
  double memory = streamed ? bytes * share * active / (m.dramGBs * 1e9)
                           : bytes * share / (m.cacheGBs * 1e9);
  return std::max(compute, memory);
}

/// The busiest thread's share of `units` equal units, split the runtime's
/// way (contiguous ranges, the first threads one unit more).
inline double evenShare(int64_t units, int64_t threads) {
  return double(ceilDiv(units, std::min(units, threads))) / units;
}
} // namespace detail

/// Prices both schedules of `c` (its chunk and groups as the kernel runs
/// them) for m tokens.
///
/// Two-pass: GEMM 1 over up panels, then GEMM 2 over down panels, each a
/// phase of its own, the hidden activations H (m x d_ff f32) written and
/// read through the cache in between; two phase boundaries.
///
/// Fused: one phase over the chunk groups, whose busiest thread holds the
/// most chunks; per chunk it reloads and stores its partial output (m x
/// d_model f32, in L2), and the row phase sums the groups' partials; one
/// phase boundary.
///
/// Both pay the same row phases and compulsory traffic otherwise, so those
/// are left out: the prices compare, they are not the roofline time.
inline SchedulePrices priceSchedules(const FfnShape &s, const StrategyChoice &c,
                                     int64_t m, const MachineAssumptions &a) {
  using namespace detail;
  int64_t threads = std::max<int64_t>(a.threads, 1);
  int64_t mats = s.gated ? 2 : 1;
  int64_t nrUp = upPanelWidth(c.nr, c.vectorBits, s.gated);
  int64_t upPanels = ceilDiv(s.dFf, nrUp);
  int64_t downPanels = ceilDiv(s.dModel, c.nr);
  double upFlops = 2.0 * m * s.dModel * s.dFf * mats;
  double downFlops = 2.0 * m * s.dFf * s.dModel;
  double upBytes = double(mats) * s.dModel * s.dFf * s.elementBytes;
  double downBytes = double(s.dFf) * s.dModel * s.elementBytes;
  bool streamed = s.weightBytes() > kStreamedWeightBytes;
  double sync = threads > 1 ? a.syncSeconds : 0;
  double cache = a.cacheGBs * 1e9;

  SchedulePrices p;
  p.twoPass = phaseSeconds(upFlops, upBytes, evenShare(upPanels, threads),
                           std::min(upPanels, threads), streamed, a) +
              phaseSeconds(downFlops, downBytes, evenShare(downPanels, threads),
                           std::min(downPanels, threads), streamed, a) +
              2.0 * m * s.dFf * 4 * evenShare(upPanels, threads) / cache +
              2 * sync;

  FusedShape f = fusedShape(c.chunk ? c.chunk : kFusedChunk,
                            c.groups ? c.groups : threads, nrUp, s.dFf);
  int64_t active = std::min(f.groups, threads);
  int64_t busiestChunks =
      std::min(ceilDiv(f.groups, active) * f.chunksPerGroup, f.chunks);
  double share = double(busiestChunks) / f.chunks;
  double partial = double(m) * downPanels * c.nr * 4;
  p.fused = phaseSeconds(upFlops + downFlops, upBytes + downBytes, share,
                         active, streamed, a) +
            busiestChunks * 2 * partial / cache +
            f.groups * partial / (cache * std::min(m, threads)) + sync;
  return p;
}

/// Picks the strategy for an FFN of shape `s` on a target of `vectorBits`.
///
/// Register tile: fills the register file with accumulators (8 x 2 zmm of
/// 32 with AVX-512, 6 x 2 ymm of 16 with AVX2), leaving room for the weight
/// vectors and the broadcast; 256-row cache blocks (a packed weight panel
/// stays in L2 while the block's rows stream past it); prefetching of the
/// next weight panel when the weights are streamed from DRAM (measured:
/// LLaMA-7B at M = 16 44.4 -> 39.4 ms; BERT-base, whose weights stay in L3,
/// 5-10% slower with it).
///
/// Fused bucket: 256-column chunks (narrower when d_ff has fewer than 8 of
/// them, so there is work to split); the group count that prices the fused
/// schedule lowest at m = 1; and the bucket bound: the largest m <=
/// min(16, mc) up to which every m prices fused below two-pass (0: none).
inline StrategyChoice chooseStrategy(int64_t vectorBits, const FfnShape &s,
                                     const StrategyOverrides &o = {},
                                     const MachineAssumptions &a = {}) {
  int64_t lanes = vectorBits / 32;
  StrategyChoice c;
  c.vectorBits = vectorBits;
  c.nr = o.nr ? o.nr : 2 * lanes;
  c.mr = o.mr ? o.mr : defaultMr(vectorBits);
  c.mc = o.mc ? o.mc : defaultMc(c.mr);
  c.prefetch = o.prefetch >= 0 ? o.prefetch != 0
                               : s.weightBytes() > kStreamedWeightBytes;
  if (o.fusedMaxM == 0)
    return c;

  int64_t perChunk = s.dFf / kFusedMinChunks / c.nr * c.nr;
  c.chunk = o.chunk
                ? o.chunk
                : std::clamp(perChunk, c.nr,
                             std::max(kFusedChunk / c.nr, int64_t(1)) * c.nr);
  int64_t nrUp = upPanelWidth(c.nr, vectorBits, s.gated);
  if (o.groups) {
    c.groups = o.groups;
  } else {
    int64_t chunks = fusedShape(c.chunk, 64, nrUp, s.dFf).chunks;
    double best = 0;
    for (int64_t g = 1; g <= std::min<int64_t>(chunks, 64); ++g) {
      StrategyChoice t = c;
      t.groups = g;
      double price = priceSchedules(s, t, 1, a).fused;
      if (g == 1 || price < best) {
        best = price;
        c.groups = g;
      }
    }
  }
  if (o.fusedMaxM > 0) {
    c.fusedMaxM = o.fusedMaxM;
  } else {
    for (int64_t m = 1; m <= std::min(kFusedMaxM, c.mc); ++m) {
      SchedulePrices p = priceSchedules(s, c, m, a);
      if (p.fused >= p.twoPass)
        break;
      c.fusedMaxM = m;
    }
  }
  if (c.fusedMaxM == 0)
    c.chunk = c.groups = 0;
  return c;
}

} // namespace mlir::ffn

#endif // FFN_TRANSFORMS_SCHEDULECOST_H
