//===- CostModel.h - the CPU strategy and its cost model --------*- C++ -*-===//
//
// The CPU strategy as plain data (what ffn-select-strategy writes into
// #ffn.cpu_strategy), the layout facts that the lowering and the cost model
// both derive from it, its one-line description, and how it is chosen: the
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

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace mlir::ffn {

/// The CPU strategy: every knob of the schedule, and the one record of
/// them. #ffn.cpu_strategy wraps it (its text is the attribute's, which
/// `--strategy=` and ffn-select-strategy's `overrides` parse), the cost
/// model fills it. A knob left unset in overrides is the cost model's to
/// choose; the strategy on an ffn.ffn is complete:
///   - vector_bits: SIMD width (512 AVX-512 zmm, 256 AVX2 ymm);
///   - mr x nr: the register tile (token rows x accumulator columns);
///   - mc: token rows per cache block;
///   - kc: a block of more than mr rows runs K in blocks of kc, every tile
///     over one K block before the next, partial sums parked on the stack
///     and the next K block prefetched while all tiles compute (weights
///     stream from memory during the FMAs instead of before them). Unset
///     means 0 (whole K); the widening and pair tiles of whole panels only
///     (not quantized weights, the fused schedule's chunks or the sparse
///     GEMM 2).
///   - kc_tall: the same for a block of more than kKBlockMaxTiles tiles
///     (K in blocks of kc_tall; unset means 0, whole K);
///   - nc: a K-blocked block runs its panels in groups of nc columns (a
///     multiple of nr): every panel of the group over one K block before
///     the next K block, so the block's A rows of a K block are read from
///     cache by all the group's panels; partial sums mc x nc per weight
///     matrix. Unset means nr (one panel);
///   - prefetch: multi-row tiles prefetch down the weight stream;
///   - fused_max_m: runs with m <= fused_max_m take the fused d_ff-chunked
///     schedule (0: none); chunk = d_ff columns per chunk, groups = work
///     units; set exactly when fused_max_m > 0;
///   - bf16_dot: the register tiles multiply bf16 pairs (vdpbf16ps; weights
///     packed pair-interleaved, the matmuls' inputs rounded to bf16) instead
///     of widening each weight to f32: bf16 FFNs on an AVX-512 BF16 target.
///     Unset means false; the cost model sets it only where it can be true.
///   - sparse_max_m: runs with m <= sparse_max_m skip the rows of W_down
///     whose hidden activations are exactly zero in every row of the run
///     (ReLU FFNs and ReGLU at decode): the fused schedule per chunk, the
///     two-pass one over all of d_ff (a bucket of its own, only without a
///     fused bucket: an override beyond the fused bucket the model would
///     pick turns that off). Unset means 0 (never); same results as the
///     dense GEMM 2.
///   - block_units: a grouped FFN's work units are its blocks, each block's
///     GEMM 1 and GEMM 2 run back to back by one thread (its hidden
///     activations stay in that thread's cache, no barrier between the
///     GEMMs); false: panels x blocks per GEMM, a barrier between them.
///     Set exactly for grouped FFNs.
struct CpuStrategy {
  std::optional<int64_t> vectorBits, mr, nr, mc, kc, kcTall, nc;
  std::optional<bool> prefetch;
  std::optional<int64_t> fusedMaxM, chunk, groups;
  std::optional<bool> bf16Dot;
  std::optional<int64_t> sparseMaxM;
  std::optional<bool> blockUnits;

  /// Every knob decided: what the lowering needs.
  bool isComplete() const {
    return vectorBits && mr && nr && mc && prefetch && fusedMaxM &&
           (*fusedMaxM > 0) == bool(chunk) && bool(chunk) == bool(groups);

  }
  bool operator==(const CpuStrategy &o) const {
    return vectorBits == o.vectorBits && mr == o.mr && nr == o.nr &&
           mc == o.mc && kc == o.kc && kcTall == o.kcTall && nc == o.nc &&
           prefetch == o.prefetch && fusedMaxM == o.fusedMaxM &&
           chunk == o.chunk && groups == o.groups && bf16Dot == o.bf16Dot &&
           sparseMaxM == o.sparseMaxM && blockUnits == o.blockUnits;
  }
  bool operator!=(const CpuStrategy &o) const { return !(*this == o); }
};

/// The knobs' names in the strategy's text, in printing order.
constexpr const char *kCpuStrategyKeys[] = {
    "vector_bits", "mr",       "nr",       "mc",    "kc",
    "kc_tall",     "nc",       "prefetch", "fused_max_m", "chunk",
    "groups",      "bf16_dot", "sparse_max_m", "block_units"};

/// A knob of the record and its name in the strategy's text.
using NamedKnob = std::pair<const char *, std::optional<int64_t>>;

/// The K-block knobs (kc, kc_tall, nc), for the checks that refuse them
/// where K runs whole: quantized tiles (scales per group of K) and the
/// Halide back end.
inline std::array<NamedKnob, 3> kBlockKnobs(const CpuStrategy &s) {
  return {{{"kc", s.kc}, {"kc_tall", s.kcTall}, {"nc", s.nc}}};
}

/// A knob of the record by its name (nullptr: no such knob, or one of the
/// other kind).
std::optional<int64_t> *integerKnob(CpuStrategy &s, std::string_view key);
std::optional<bool> *booleanKnob(CpuStrategy &s, std::string_view key);

/// Whether ffnc's CPU target `isa` (a row of ffn/cpu_targets.def) has the
/// LLVM feature `feature` ("avx512bf16").
bool cpuTargetHasFeature(std::string_view isa, std::string_view feature);

/// The knobs that are set, as `#ffn.cpu_strategy` prints them between its
/// angle brackets (`mr = 4, prefetch = true`): the attribute's printer and
/// the driver's `overrides` option share this one spelling.
std::string knobsText(const CpuStrategy &s);

/// The register tile rows and cache block rows the heuristic picks when the
/// caller fixes none (one accumulator budget per ISA).
inline int64_t defaultMr(int64_t vectorBits) {
  return vectorBits == 512 ? 8 : 6;
}
inline int64_t defaultMc(int64_t mr) { return 256 / mr * mr; }

/// The most partial sums (mc x nc) a K-blocked GEMM parks on the stack:
/// 128 KiB of f32 (a gated GEMM 1's gate and up split the nc columns).
constexpr int64_t kMaxKBlockSums = 32768;

/// The most tiles a row block may have for the GEMMs to run its K in blocks
/// of kc (more than one tile, and at most this many; taller blocks take
/// kc_tall). LLaMA-7B f32, one thread, Emerald Rapids VM, kc = 128 vs whole
/// K (one panel at a time), warm medians: M = 16 67 -> 43 ms, 32 96 -> 75,
/// 64 157 -> 127, 96 210 -> 193, 128 352 -> 333 (best 300 -> 305), 192 395
/// -> 417, 256 534 -> 662: past a dozen tiles the FMAs hide the weight
/// stream anyway, and 16 KiB K blocks cut A's rows into streams too short
/// for the hardware prefetcher (kKBlockTallFactor).
constexpr int64_t kKBlockMaxTiles = 12;

/// The panels of a group the cost model picks (nc = this x nr, as mc x nc
/// allows). LLaMA-7B f32, one thread, Emerald Rapids VM, kc = 128, warm
/// medians, one panel -> groups of 2 / 4 / 8: M = 16 43.8 -> 42.1 / 41.9 /
/// 44.9 ms, M = 64 129.7 -> 126.6 / 124.2 / 123.8, M = 96 203 -> 193 / 186
/// / 194: a K block of A is read once from memory per group, not per panel.
constexpr int64_t kKBlockGroupPanels = 4;

/// Tall blocks (more than kKBlockMaxTiles tiles) run K in blocks of
/// kc_tall = kKBlockTallFactor x kc where a GEMM's whole-K panel (all its
/// weight matrices) is larger than kKBlockTallPanelBytes: such a panel does
/// not stay in L2 while A's rows stream past it. LLaMA-7B f32 M = 256, one
/// thread, whole K -> kc_tall = 512 in groups of 4 panels: 512 -> 453 ms
/// (GEMM 2, 1.4 MiB panels: 220 -> 168 ms; GEMM 1: 364 -> 340); 128 and
/// 2048 did 3-7% worse than 512. BERT-base M = 2048 (panels of at most
/// 384 KiB) gains nothing from it (138 ms whole K, 139-145 blocked).
constexpr int64_t kKBlockTallFactor = 4;
constexpr int64_t kKBlockTallPanelBytes = 512 * 1024;

/// The K block the cost model picks: 16 KiB of a panel's weights (nr
/// columns of `elementBytes` each per k, all matrices of a gated GEMM 1
/// together), a multiple of 16. f32 nr = 32: 128; bf16: 256.
inline int64_t kBlockRows(int64_t nr, int64_t elementBytes) {
  int64_t rows = 16384 / (nr * elementBytes) / 16 * 16;
  return rows < 16 ? 16 : rows;
}

/// A rejected strategy: which knob, and why.
struct KnobError {
  std::string key, message;
};

/// The rules of a strategy, checked before anything is derived from it (a
/// bad nr would otherwise divide by zero in the layout arithmetic): each
/// set knob against the others, the defaults standing in for unset ones,
/// so that overrides that pass always yield a complete strategy that passes
/// too. `targetVectorBits` is the target's SIMD width (0: not known yet, as
/// when the attribute is parsed); a strategy may use narrower vectors than
/// the target's (its own vector_bits then decides the lane rules).
std::optional<KnobError> checkStrategy(const CpuStrategy &s,
                                       int64_t targetVectorBits = 0);

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

/// One line for --emit output, `ffnc info` and the kernel descriptor, of a
/// complete strategy; the fused bucket's chunk and groups as the kernel runs
/// them.
std::string describeStrategy(const CpuStrategy &c, bool gated, int64_t dFf,
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
  /// The GEMMs' widths: one block's of a grouped FFN.
  int64_t dModel, dFf;
  bool gated;
  int64_t elementBytes; ///< of the weights' storage type
  /// bf16 weights on a target with the bf16 dot product (avx512bf16).
  bool bf16Dot = false;
  /// Bits per weight of quantized weights (8, 4; 0: the storage type's).
  int64_t weightBits = 0;
  /// Quantized weights times int8 activations (VNNI integer dot products).
  bool intDot = false;
  /// The hidden activations are exactly zero wherever the activation's
  /// input is not positive (ReLU, gated or not): GEMM 2 can skip W_down's
  /// rows of zero activations.
  bool zeroActivations = false;
  /// The share of hidden activations that are not zero at decode, from the
  /// model's profile (the spec's activation_sparsity); < 0: unknown, and
  /// then the cost model does not choose the sparse GEMM 2.
  double nonzeroShare = -1;
  /// A grouped FFN's blocks, each a (dModel, dFf) FFN on its own columns;
  /// they take the two-pass schedule.
  int64_t blocks = 1;

  /// Bytes of one weight, scales left out (under 2% for groups of 32+).
  double bytesPerWeight() const {
    return weightBits ? weightBits / 8.0 : double(elementBytes);
  }
  uint64_t weightBytes() const {
    return uint64_t(double(gated ? 3 : 2) * blocks * dModel * dFf *
                    bytesPerWeight());
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

/// The sparse GEMM 2's cost relative to the dense one when it lists a
/// share s of W_down's panel rows (a row, or with bf16 pair tiles a pair of
/// rows, is listed when any of the run's activations in it is nonzero):
/// min(kSparseReadCost s, kSparseMaxCost). The listed rows are 64-128 byte
/// pieces of each panel, and the hardware prefetchers fetch much of what
/// lies between them, while the dense GEMM streams: measured on Zen 4
/// (OPT-6.7B's MLP in f32 and bf16, ffn-bench; docs/performance.md), the
/// whole FFN took 0.64-0.85 of the dense time at s = 0.10-0.19, 1.0-1.17
/// at s = 0.34, 1.0-1.6 above (GEMM 2 being half of it).
constexpr double kSparseReadCost = 3.0;
constexpr double kSparseMaxCost = 1.6;
/// The share of W_down's panel rows a run of m rows lists when a share p of
/// activations is nonzero (independently): 1 - (1 - p)^(m x rows per panel
/// row).
double sparseListedShare(double nonzeroShare, int64_t m, bool pairRows);

/// Predicted seconds of one run of m tokens in each schedule: two-pass,
/// fused, and fused with the sparse GEMM 2 (zero-activation FFNs; else
/// equal to fused).
struct SchedulePrices {
  double twoPass = 0, fused = 0, sparse = 0, twoPassSparse = 0;
};

/// Prices both schedules of `c` (vector_bits, mr, nr and mc set; its chunk
/// and groups as the kernel runs them, nominal ones where unset) for m
/// tokens.
///
/// Two-pass: GEMM 1 over up panels, then GEMM 2 over down panels, each a
/// phase of its own, the hidden activations H (m x d_ff f32) written and
/// read through the cache in between; two phase boundaries.
///
/// Two-pass sparse: one thread lists the rows of W_down some row's
/// activation needs (a phase of its own), and GEMM 2 reads only those.
///
/// Fused: one phase over the chunk groups, whose busiest thread holds the
/// most chunks; per chunk it reloads and stores its partial output (m x
/// d_model f32, in L2), and the row phase sums the groups' partials; one
/// phase boundary.
///
/// Sparse: the fused schedule whose GEMM 2 reads only the rows of W_down
/// that some row's activation needs (the expected share plus the list's
/// overhead), after scanning each chunk's activations in L1.
///
/// Both pay the same row phases and compulsory traffic otherwise, so those
/// are left out: the prices compare, they are not the roofline time.
SchedulePrices priceSchedules(const FfnShape &s, const CpuStrategy &c,
                              int64_t m, const MachineAssumptions &a);

/// Picks the strategy for an FFN of shape `s` on a target of `vectorBits`.
///
/// Register tile: fills the register file with accumulators (8 x 2 zmm of
/// 32 with AVX-512, 6 x 2 ymm of 16 with AVX2), leaving room for the weight
/// vectors and the broadcast; 256-row cache blocks (a packed weight panel
/// stays in L2 while the block's rows stream past it); prefetching down the
/// weight stream when the weights are streamed from DRAM (measured with
/// the earlier next-panel prefetch: LLaMA-7B at M = 16 44.4 -> 39.4 ms;
/// BERT-base, whose weights stay in L3, 5-10% slower with it).
///
/// Fused bucket: 256-column chunks (narrower when d_ff has fewer than 8 of
/// them, so there is work to split); the group count that prices the fused
/// schedule lowest at m = 1; and the bucket bound: the largest m <=
/// min(16, mc) up to which every m prices fused below two-pass (0: none).
/// Sparse GEMM 2 (zero-activation FFNs, unquantized, with a profiled
/// nonzero share): the largest m <= min(16, mc) up to which every m prices
/// the sparse variant of its schedule (fused or two-pass) below the dense
/// one (kSparseReadCost); left unset when that is none.
/// The knobs `o` sets are kept (they must pass checkStrategy against
/// `targetVectorBits`, whose width is used unless `o` narrows it); the
/// result is complete.
CpuStrategy chooseStrategy(int64_t targetVectorBits, const FfnShape &s,
                           const CpuStrategy &o = {},
                           const MachineAssumptions &a = {});

} // namespace mlir::ffn

#endif // FFN_TARGET_CPU_COSTMODEL_H
