//===- StrategyChoice.h - the CPU strategy and its layout -------*- C++ -*-===//
//
// The CPU strategy: what ffn-select-strategy writes into #ffn.strategy, the
// layout facts both the lowering and the cost model derive from it, and its
// one-line description. The choice itself is in ScheduleCost.h.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TRANSFORMS_STRATEGYCHOICE_H
#define FFN_TRANSFORMS_STRATEGYCHOICE_H

#include <algorithm>
#include <cstdint>
#include <optional>
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

/// The register tile rows and cache block rows the heuristic picks when the
/// caller fixes none (one accumulator budget per ISA).
inline int64_t defaultMr(int64_t vectorBits) { return vectorBits == 512 ? 8 : 6; }
inline int64_t defaultMc(int64_t mr) { return 256 / mr * mr; }

/// A rejected override: which key, and why.
struct OverrideError {
  std::string key, message;
};

/// Checks caller-fixed knobs against the target before anything is derived
/// from them (a bad nr would otherwise divide by zero in the layout
/// arithmetic). The rules are #ffn.strategy's verifier's, applied to each
/// fixed value with the defaults standing in for the others; a set of
/// overrides that passes always yields a strategy that verifies.
inline std::optional<OverrideError>
checkOverrides(int64_t vectorBits, const StrategyOverrides &o) {
  auto error = [](const char *key, std::string message) {
    return std::optional<OverrideError>(OverrideError{key, std::move(message)});
  };
  int64_t lanes = vectorBits / 32;
  if (o.mr && (o.mr < 1 || o.mr > 16))
    return error("mr", "must be in [1, 16], got " + std::to_string(o.mr));
  if (o.nr && (o.nr < lanes || o.nr % lanes != 0 || o.nr > 8 * lanes))
    return error("nr", "must be a multiple of " + std::to_string(lanes) +
                           " (the f32 lanes of a " +
                           std::to_string(vectorBits) + "-bit vector) up to " +
                           std::to_string(8 * lanes) + ", got " +
                           std::to_string(o.nr));
  int64_t mr = o.mr ? o.mr : defaultMr(vectorBits);
  int64_t nr = o.nr ? o.nr : 2 * lanes;
  if (o.mc && (o.mc < mr || o.mc % mr != 0 || o.mc > (int64_t(1) << 20)))
    return error("mc", "must be a multiple of mr (" + std::to_string(mr) +
                           ") up to 1048576, got " + std::to_string(o.mc));
  int64_t mc = o.mc ? o.mc : defaultMc(mr);
  if (o.fusedMaxM > mc)
    return error("fused_max_m", "must be in [0, mc = " + std::to_string(mc) +
                                    "], got " + std::to_string(o.fusedMaxM));
  if (o.fusedMaxM == 0 && (o.chunk || o.groups))
    return error(o.chunk ? "chunk" : "groups",
                 "needs the fused schedule, but fused_max_m = 0 turns it off");
  if (o.chunk && (o.chunk < nr || o.chunk % nr != 0 || o.chunk > (1 << 20)))
    return error("chunk", "must be a multiple of nr (" + std::to_string(nr) +
                              ") up to 1048576, got " +
                              std::to_string(o.chunk));
  if (o.groups && (o.groups < 1 || o.groups > 64))
    return error("groups",
                 "must be in [1, 64], got " + std::to_string(o.groups));
  return std::nullopt;
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
                                    int64_t dFf, bool batchInvariant = false) {
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
  if (batchInvariant)
    text += "; batch-invariant (one reduction order per row for every m)";
  return text;
}

} // namespace mlir::ffn

#endif // FFN_TRANSFORMS_STRATEGYCHOICE_H
