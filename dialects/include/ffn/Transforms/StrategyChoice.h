//===- StrategyChoice.h - the CPU schedule heuristic ------------*- C++ -*-===//
//
// The choice ffn-select-strategy makes, as plain functions so `ffnc info`
// reports exactly what the compiler will pick.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TRANSFORMS_STRATEGYCHOICE_H
#define FFN_TRANSFORMS_STRATEGYCHOICE_H

#include <algorithm>
#include <cstdint>
#include <string>

namespace mlir::ffn {

struct StrategyChoice {
  int64_t vectorBits, mr, nr, mc;
  bool prefetch;
  /// Runs with m <= fusedMaxM take the fused d_ff-chunked schedule (0: no
  /// run does); chunk = d_ff columns per chunk, groups = work units.
  int64_t fusedMaxM = 0, chunk = 0, groups = 0;
};

/// What the caller fixes; 0 (or -1 where 0 is meaningful) lets the
/// heuristic choose.
struct StrategyOverrides {
  int64_t mr = 0, nr = 0, mc = 0;
  int prefetch = -1;      ///< 1/0
  int64_t fusedMaxM = -1; ///< 0 = never fused
  int64_t chunk = 0, groups = 0;
};

/// Weights above this size cannot stay in any CPU's last-level cache from
/// one token to the next, so each run streams them from DRAM.
constexpr uint64_t kStreamedWeightBytes = 64ull << 20;

/// Fills the register file with accumulators (8 x 2 zmm of 32 with
/// AVX-512, 6 x 2 ymm of 16 with AVX2), leaving room for the weight vectors
/// and the broadcast; 256-row cache blocks (a packed weight panel stays in
/// L2 while the block's rows stream past it); prefetching of the next weight
/// panel when the weights (`weightBytes` in all) are streamed from DRAM
/// (measured: LLaMA-7B at M = 16 44.4 -> 39.4 ms; BERT-base, whose weights
/// stay in L3, 5-10% slower with it).
///
/// The fused schedule serves the decode bucket m <= kFusedMaxM of FFNs whose
/// weights stay in cache: there its single parallel phase replaces two
/// (GEMM 1, GEMM 2) and their barrier, which measured 1.14-1.25x faster on
/// two threads for BERT-base at m = 1 and 8 (3-7% slower on one thread; the
/// runtime uses every core by default). Streamed weights (LLaMA-7B) gain
/// nothing at m = 1 and lose at m = 16, so they keep the two-pass schedule
/// (docs/performance.md has the table). 256-column chunks keep an
/// m x 256 f32 hidden block in L1; 8 groups give 2..8 cores whole units
/// while the partial outputs they sum stay small next to the weights.
constexpr int64_t kFusedMaxM = 8;
constexpr int64_t kFusedChunk = 256;
constexpr int64_t kFusedGroups = 8;

inline StrategyChoice chooseStrategy(int64_t vectorBits, uint64_t weightBytes,
                                     int64_t dFf,
                                     const StrategyOverrides &o = {}) {
  int64_t lanes = vectorBits / 32;
  StrategyChoice c;
  c.vectorBits = vectorBits;
  c.nr = o.nr ? o.nr : 2 * lanes;
  c.mr = o.mr ? o.mr : (vectorBits == 512 ? 8 : 6);
  c.mc = o.mc ? o.mc : 256 / c.mr * c.mr;
  c.prefetch =
      o.prefetch >= 0 ? o.prefetch != 0 : weightBytes > kStreamedWeightBytes;
  c.fusedMaxM = o.fusedMaxM >= 0 ? o.fusedMaxM
                : weightBytes > kStreamedWeightBytes
                    ? 0
                    : std::min(kFusedMaxM, c.mc);
  if (c.fusedMaxM > 0) {
    c.groups = o.groups ? o.groups : kFusedGroups;
    // Narrower chunks for a small d_ff, so every group has work (d_ff = 96
    // in one 256-column chunk would leave one unit for all threads).
    int64_t perGroup = dFf / c.groups / c.nr * c.nr;
    c.chunk = o.chunk
                  ? o.chunk
                  : std::clamp(perGroup, c.nr,
                               std::max(kFusedChunk / c.nr, int64_t(1)) * c.nr);
  }
  return c;
}

/// Columns of one up (and gate) panel: a gated FFN splits the tile's
/// columns between gate and up.
inline int64_t upPanelWidth(int64_t nr, int64_t vectorBits, bool gated) {
  int64_t lanes = vectorBits / 32;
  int64_t width = gated ? std::max(lanes, nr / 2) : nr;
  return width / lanes * lanes;
}

/// The fused schedule as a kernel runs it, from the strategy's chunk and
/// groups: a chunk is a whole number of up panels and no wider than d_ff
/// needs; there are no more groups than chunks, and every group but the
/// last has the same number of chunks (so a nominal 8 groups of BERT-base's
/// 12 chunks run as 6 groups of 2).
struct FusedShape {
  int64_t panelsPerChunk, chunk, chunks, chunksPerGroup, groups;
};

inline FusedShape fusedShape(int64_t chunk, int64_t groups, int64_t nrUp,
                             int64_t dFf) {
  FusedShape s;
  int64_t upPanels = (dFf + nrUp - 1) / nrUp;
  s.panelsPerChunk = std::max<int64_t>(std::min(chunk / nrUp, upPanels), 1);
  s.chunk = s.panelsPerChunk * nrUp;
  s.chunks = (upPanels + s.panelsPerChunk - 1) / s.panelsPerChunk;
  int64_t g = std::max<int64_t>(std::min(groups, s.chunks), 1);
  s.chunksPerGroup = (s.chunks + g - 1) / g;
  s.groups = (s.chunks + s.chunksPerGroup - 1) / s.chunksPerGroup;
  return s;
}

/// One line for --emit output, `ffnc info` and the kernel descriptor; the
/// fused bucket's chunk and groups as the kernel runs them.
inline std::string describeStrategy(const StrategyChoice &c, bool gated,
                                    int64_t dFf) {
  std::string text;
  if (c.fusedMaxM > 0) {
    FusedShape f = fusedShape(c.chunk, c.groups,
                              upPanelWidth(c.nr, c.vectorBits, gated), dFf);
    text = "m <= " + std::to_string(c.fusedMaxM) +
           ": fused whole-FFN, d_ff in chunks of " + std::to_string(f.chunk) +
           " over " + std::to_string(f.groups) + " group" +
           (f.groups == 1 ? "" : "s") + "; m > " + std::to_string(c.fusedMaxM) +
           ": two-pass; ";
  }
  int64_t nrUp = upPanelWidth(c.nr, c.vectorBits, gated);
  text += "packed " + std::to_string(c.vectorBits) +
          "-bit vectors, register tile " + std::to_string(c.mr) + "x" +
          std::to_string(c.nr) +
          (gated ? " (gate+up " + std::to_string(nrUp) + "+" +
                       std::to_string(nrUp) + ")"
                 : std::string()) +
          ", cache block " + std::to_string(c.mc) + " rows" +
          (c.prefetch ? ", next-panel prefetch" : "") +
          ", fused bias+activation epilogue";
  return text;
}

} // namespace mlir::ffn

#endif // FFN_TRANSFORMS_STRATEGYCHOICE_H
