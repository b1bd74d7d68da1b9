//===- CostModel.h - the CPU strategy and its cost model --------*- C++ -*-===//
//
// The CPU strategy as plain data (what ffn-select-strategy writes into
// #ffn.strategy), the layout facts that the lowering and the cost model both
// derive from it, its one-line description, and how it is chosen: the
// register and cache tiles by rule, and for each token count m the schedule
// -- two-pass or fused -- that a cost model prices lower on the threads the
// kernel will run on.
//
// A compiled library without MLIR (FfnCpuCostModel): ffn-select-strategy,
// `ffnc info` and the strategy fuzzer link the same code, so what info
// reports is what the compiler picks.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_CPU_COSTMODEL_H
#define FFN_TARGET_CPU_COSTMODEL_H

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
inline int64_t defaultMr(int64_t vectorBits) {
  return vectorBits == 512 ? 8 : 6;
}
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
std::optional<OverrideError> checkOverrides(int64_t vectorBits,
                                            const StrategyOverrides &o);

/// Columns of one up (and gate) panel: a gated FFN splits the tile's
/// columns between gate and up.
int64_t upPanelWidth(int64_t nr, int64_t vectorBits, bool gated);

/// The fused schedule as a kernel runs it, from the strategy's chunk and
/// groups: a chunk is a whole number of up panels and no wider than d_ff
/// needs; there are no more groups than chunks, and every group but the
/// last has the same number of chunks (so a nominal 8 groups of BERT-base's
/// 12 chunks run as 6 groups of 2).
struct FusedShape {
  int64_t panelsPerChunk, chunk, chunks, chunksPerGroup, groups;
};

FusedShape fusedShape(int64_t chunk, int64_t groups, int64_t nrUp, int64_t dFf);

/// One line for --emit output, `ffnc info` and the kernel descriptor; the
/// fused bucket's chunk and groups as the kernel runs them.
std::string describeStrategy(const StrategyChoice &c, bool gated, int64_t dFf,
                             bool batchInvariant = false);

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
SchedulePrices priceSchedules(const FfnShape &s, const StrategyChoice &c,
                              int64_t m, const MachineAssumptions &a);

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
StrategyChoice chooseStrategy(int64_t vectorBits, const FfnShape &s,
                              const StrategyOverrides &o = {},
                              const MachineAssumptions &a = {});

} // namespace mlir::ffn

#endif // FFN_TARGET_CPU_COSTMODEL_H
