//===- CostModel.h - the GPU strategy and its cost model --------*- C++ -*-===//
//
// The NVIDIA back end's strategy as plain data (what ffn-gpu-select-strategy
// writes into #ffn.gpu_strategy and ffn-gpu-lower builds kernels from), the
// devices it is priced for, and how it is chosen: per token-count bucket,
// the block tile the cost model prices fastest at the bucket's largest m,
// the pipeline depth that fits the device's shared memory, the MMA
// instruction, and a K split where the bucket's grid would leave SMs idle.
//
// A compiled library without MLIR (FfnGpuCostModel): the selection pass,
// the attribute's parser and the driver's warnings share it, so what --emit
// prints is what the kernels are built from.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_GPU_COSTMODEL_H
#define FFN_TARGET_GPU_COSTMODEL_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlir::ffn {

/// The instruction a bucket's GEMM tiles multiply with.
enum class GpuMma : int8_t {
  Fma = 0,     ///< f32 FMA on CUDA cores (f32 FFNs)
  MmaSync = 1, ///< mma.sync.m16n8k16 from ldmatrix (bf16/f16, sm_80+)
  Wgmma = 2,   ///< warpgroup MMA from swizzled shared memory (sm_90a)
};
const char *gpuMmaName(GpuMma mma);
std::optional<GpuMma> parseGpuMma(std::string_view name);

/// One token-count bucket: the kernels for runs with previous bound < m <=
/// maxM (maxM = 0: no bound, the last bucket).
struct GpuBucket {
  int64_t maxM = 0;
  int64_t blockM = 0, blockN = 0; ///< the block's output tile
  int64_t warpsM = 0, warpsN = 0; ///< its warp grid
  int64_t blockK = 0;             ///< K per pipeline stage
  int64_t stages = 0; ///< cp.async ring depth; 0: no ring, the 16-row
                      ///< tile's register stream (GemmStream.cpp)
  /// The register stream's weights through each warp's own cp.async ring
  /// of this many stages (whole 128-byte lines a copy) instead of straight
  /// into registers; 0: straight. Only with stages = 0.
  int64_t warpStages = 0;
  GpuMma mma = GpuMma::MmaSync;
  int64_t splitUp = 1, splitDown = 1; ///< K slices of GEMM 1 and GEMM 2
  /// Quantized weights widened by each warp in registers from the ring's
  /// integer tile (`widen = registers`) rather than by the block into
  /// converted tiles in shared memory (gpuRegisterWidenBlocker).
  bool registerWiden = false;

  bool operator==(const GpuBucket &o) const {
    return maxM == o.maxM && blockM == o.blockM && blockN == o.blockN &&
           warpsM == o.warpsM && warpsN == o.warpsN && blockK == o.blockK &&
           stages == o.stages && warpStages == o.warpStages && mma == o.mma &&
           splitUp == o.splitUp && splitDown == o.splitDown &&
           registerWiden == o.registerWiden;
  }
};

constexpr int kMaxGpuBuckets = 8;

/// The GPU strategy. Complete (what an ffn.ffn holds for ffn-gpu-lower):
/// `sms` and the buckets, ascending, the last unbounded. An override (what
/// `--strategy=` and the selection pass's `overrides` give) sets some of
/// the knobs below instead, and the cost model chooses the rest:
///   - sms: size the grids for a device with this many multiprocessors;
///   - bounds: the bounded buckets' largest m, ascending (one more,
///     unbounded bucket follows);
///   - blockM x blockN: the block tile of every bucket (a tile the kernels
///     are built and verified for: 16x128, 64x128, 128x256 on tensor cores
///     and the sm_90a ping-pong 128x128 wgmma tile, 128x128 for f32);
///   - stages: the ring depth (2-4; 5-6 for the ping-pong tile) of every
///     bucket, or 0 (the register stream: only where every bucket has the
///     16-row tile);
///   - warpStages: the register stream's weights through a warp-private
///     cp.async ring of this depth (2-6), in every bucket that streams;
///   - splitK: the K split of every bounded bucket's GEMMs (1: none; a
///     mixture of experts splits GEMM 2 only);
///   - mma: mma_sync on sm_90a keeps wgmma off;
///   - widen: `registers` widens quantized weights in registers in every
///     bucket (gpuRegisterWidenBlocker says which FFNs can), `shared` (the
///     default) in shared memory.
/// Fixed-size arrays keep the record trivially copyable: the attribute's
/// storage holds it by value.
struct GpuStrategy {
  std::optional<int64_t> sms;
  int32_t numBuckets = 0;
  GpuBucket buckets[kMaxGpuBuckets] = {};
  int32_t numBounds = 0;
  int64_t bounds[kMaxGpuBuckets] = {};
  std::optional<int64_t> blockM, blockN, stages, warpStages, splitK;
  std::optional<GpuMma> mma;
  std::optional<bool> registerWiden;

  bool isComplete() const { return sms && numBuckets > 0; }
  /// Whether any knob of an override is set.
  bool hasOverrides() const {
    return numBounds > 0 || blockM || blockN || stages || warpStages ||
           splitK || mma || registerWiden;
  }
  bool operator==(const GpuStrategy &o) const;
};

/// A rejected strategy: which knob, and why.
struct GpuKnobError {
  std::string key, message;
};

/// The rules every strategy obeys on its own (ranges, ascending bounds, a
/// complete strategy's buckets); the rules that need the FFN and the chip
/// are selectGpuStrategy's and checkGpuStrategy's.
std::optional<GpuKnobError> checkGpuKnobs(const GpuStrategy &s);

/// What `#ffn.gpu_strategy` prints between its angle brackets.
std::string gpuKnobsText(const GpuStrategy &s);

/// The figures a device is priced by. ffnc builds for a chip, not a board:
/// sm_80 is priced as an A100 SXM4, sm_90 and sm_90a as an H100 SXM5
/// (their data sheets); `sms` overrides the multiprocessor count.
struct GpuDevice {
  std::string name;
  int64_t sms = 0;
  int64_t sharedPerBlock = 0; ///< opt-in dynamic shared memory per block
  int64_t sharedPerSm = 0;    ///< shared memory of an SM, all its blocks
  double tensorTflops = 0;    ///< dense bf16/f16 MMA, f32 accumulate
  double mmaSyncShare = 0;    ///< the share of it mma.sync can issue
  double fmaTflops = 0;       ///< f32 FMA on CUDA cores
  double hbmGBs = 0, l2GBs = 0;
  double smemBytesPerClock = 0; ///< per SM
  double clockGHz = 0;
};
/// The device of `chip` ("sm_80", "sm_90", "sm_90a"); nullopt if unknown.
std::optional<GpuDevice> nominalGpuDevice(std::string_view chip);
/// The same device resized to `sms` multiprocessors (a strategy's `sms`):
/// the same SMs, more or fewer of them, so the peaks scale and each SM's
/// rates stay (a smaller board's memory is not known: HBM stays).
GpuDevice resizedGpuDevice(GpuDevice device, int64_t sms);

/// Blocks of `threads` threads using `sharedBytes` of dynamic shared memory
/// that one SM of `d` holds at once by its shared memory (the driver
/// reserves 1 KiB a block) and its 2048 threads; registers not counted.
int64_t gpuBlocksPerSm(const GpuDevice &d, int64_t sharedBytes,
                       int64_t threads);

/// The chip an NVIDIA target's name stands for (nvptx-sm90a -> sm_90a);
/// empty for any other name.
std::string gpuChipOfTarget(std::string_view isa);

/// The FFN as the GPU model sees it.
struct GpuFfnShape {
  int64_t dModel = 0, dFf = 0;
  int64_t elementBytes = 2; ///< 4: f32 (FMA), 2: bf16/f16 (tensor cores)
  bool f16 = false;         ///< the 2-byte dtype is f16 (else bf16)
  bool gated = false;
  bool batchInvariant = false;
  /// A grouped FFN's blocks (1: dense): each block is an FFN of d_model /
  /// groups -> d_ff / groups, and the grid covers every block's tiles.
  int64_t groups = 1;
  /// Weight-only quantization: the matrices' integers are 8 or 4 bits
  /// wide (0: the weights are in the dtype), one scale in the dtype per
  /// quantGroup K rows of each column, and with zero points a byte more.
  int64_t weightBits = 0, quantGroup = 0;
  bool zeroPoints = false;

  bool quantized() const { return weightBits != 0; }
  /// The dtype terms tensor cores multiply each weight as: 2 where scale
  /// groups are not a multiple of their K step (16), so that no group's
  /// sum can be scaled apart: s q = hi + lo instead, both exact in the
  /// dtype.
  int64_t mmaTerms() const {
    return quantized() && elementBytes != 4 && quantGroup % 16 != 0 ? 2 : 1;
  }
  /// A mixture of experts (experts > 0): each row takes topK of the routed
  /// experts and every shared one; the per-expert widths are dModel, dFf.
  int64_t experts = 0, topK = 0, sharedExperts = 0;
  bool moe() const { return experts > 0; }
  /// Bytes of the packed weights per weight element (integers, scales and
  /// zero points).
  double weightBytes() const {
    if (!quantized())
      return double(elementBytes);
    return weightBits / 8.0 +
           (elementBytes + (zeroPoints ? 1 : 0)) / double(quantGroup);
  }
};

/// The packed dimensions every bucket's grid covers exactly, per block of a
/// grouped FFN (the whole FFN when dense): GEMM 1's K is the block's d_model
/// rounded up to 64, its d_ff and GEMM 2's N are rounded up to the widest
/// block tile (256). The blocks' packed weights follow one another.
constexpr int64_t kGpuPad = 256;
inline int64_t gpuRoundUp(int64_t v, int64_t to) {
  return (v + to - 1) / to * to;
}
struct GpuPackedDims {
  int64_t kUp, hidden, nDown;
  int64_t groups = 1;
  /// Packed B rows of GEMM 1 and GEMM 2 over all blocks (gate and up both
  /// count when gated).
  int64_t upRows(bool gated) const { return groups * (gated ? 2 : 1) * hidden; }
  int64_t downRows() const { return groups * nDown; }
};
inline GpuPackedDims gpuPackedDims(const GpuFfnShape &f) {
  int64_t g = f.groups > 0 ? f.groups : 1;
  int64_t dm = f.dModel / g, df = f.dFf / g;
  return {gpuRoundUp(dm, 64), gpuRoundUp(df, kGpuPad), gpuRoundUp(dm, kGpuPad),
          g};
}

/// Whether bucket `b` runs the ping-pong wgmma kernel (GemmTma.cpp): its
/// two consumer warpgroups each multiply their own 128 x 128 tile, their
/// main loops taking turns so that one's epilogue overlaps the other's
/// MMAs (sm_90a, fed by TMA).
inline bool gpuPingPong(const GpuBucket &b) {
  return b.mma == GpuMma::Wgmma && b.blockM == 128 && b.blockN == 128;
}

/// Ring depths: every ring takes 2-4 stages (the cost model's choice is
/// the deepest that fits, up to 4); the ping-pong tile's 32 KiB stages
/// may go to 6 (193 KiB), an override's choice until a GPU has timed it.
constexpr int64_t kMaxRingStages = 4;
constexpr int64_t kMaxPingPongStages = 6;
/// The deepest warp-private ring of the register stream (16 KiB a stage
/// for the 16x128 tile: six and A's 48 KiB slice fit an A100's block).
constexpr int64_t kMaxWarpStages = 6;

/// Dynamic shared memory of a GEMM block: the ring of A and B tiles; with
/// quantized weights (`weightBits` 8 or 4) the ring holds B's integers, and
/// two more B tiles (per term: GpuFfnShape::mmaTerms) hold them converted
/// to the dtype.
int64_t gpuGemmSharedBytes(const GpuBucket &b, int64_t elementBytes,
                           int64_t weightBits = 0, int64_t terms = 1);

/// Bytes of an A row in the ring of a bucket that widens in registers: K
/// tile rows padded to 64 bytes past a multiple of 128, so that a quarter
/// warp's 16-byte loads of two rows cover the 32 banks once.
inline int64_t gpuRegisterWidenARowBytes(int64_t blockK, int64_t elementBytes) {
  int64_t row = blockK * elementBytes;
  return row % 128 == 64 ? row : row + 64;
}

/// Why bucket `b` of `f` cannot widen its quantized weights in registers
/// (GpuBucket::registerWiden), or empty where it can: a cp.async ring tile
/// on tensor cores whose integers are exact in the dtype's significand
/// (int4; int8 on f16) in scale groups of a multiple of 32 (each 32-k
/// chunk's two MMA steps inside one group).
std::string gpuRegisterWidenBlocker(const GpuBucket &b, const GpuFfnShape &f);

/// Whether a bucket may stream its weights into registers (stages = 0, no
/// shared-memory ring): the 16-row mma.sync tile of an FFN whose weights are
/// in its bf16/f16 dtype and which is not a mixture of experts.
bool gpuStreamable(const GpuBucket &b, const GpuFfnShape &f);

/// The K split the model gives a GEMM of `colBlocks` x `rowBlocks` blocks
/// over `k`: as many slices as bring the grid to `wantBlocks`, keeping at
/// least four K tiles per slice for the copy ring to overlap.
int64_t gpuSplitFor(int64_t rowBlocks, int64_t colBlocks, int64_t k,
                    int64_t blockK, int64_t wantBlocks);

/// Whether a GEMM split `split` ways over blockM x blockN tiles reduces its
/// slices in its own launch (the block finishing a tile's last slice sums
/// them) rather than in a reduction kernel: where one block's loads cover
/// the tile in a few round trips to the L2 (kFixupElementsPerRound
/// elements a round, every slice's at once): the decode tiles. Larger tiles
/// spread their reduction over every SM instead.
constexpr int64_t kFixupTileElements = 4096;
constexpr int64_t kFixupElementsPerRound = 512;
inline bool gpuSplitFixup(int64_t blockM, int64_t blockN, int64_t split) {
  return split > 1 && blockM * blockN <= kFixupTileElements;
}

/// Whether bucket `b`'s GEMM 2 applies a dense FFN's post-norm itself
/// (GemmPostNorm.cpp): the block finishing a row band's last tile
/// normalizes the band's blockM rows of dModel columns alone, so only where
/// that is about as much as a decode tile's split-K fix-up reads (the
/// decode tiles of models up to 1024 wide) and where the final z is stored
/// by the GEMM (unsplit, or split with the fix-up) on its 256 ring threads.
/// Taller bands keep the norm kernel, whose rows spread over every SM.
constexpr int64_t kFusedNormBandElements = 16384;
inline bool gpuFusesPostNorm(const GpuBucket &b, int64_t dModel) {
  return b.blockM * dModel <= kFusedNormBandElements &&
         b.warpsM * b.warpsN == 8 && b.mma != GpuMma::Wgmma &&
         (b.splitDown == 1 || gpuSplitFixup(b.blockM, b.blockN, b.splitDown));
}

/// The model's estimate, in microseconds, of one GEMM of m rows over the
/// packed n x k weights with bucket `b`'s tiles (for `ffnc info` and the
/// tile choice). `weightBytes`: the packed weights' bytes per element when
/// they are quantized (0: elementBytes); each block then also converts its
/// B tiles to the dtype, as `terms` terms each multiplied (mmaTerms).
double gpuGemmMicros(const GpuDevice &device, const GpuBucket &b, int64_t m,
                     int64_t n, int64_t k, int64_t elementBytes, int64_t split,
                     double weightBytes = 0, int64_t terms = 1);

/// The model's estimate of the FFN's two GEMMs at m rows with bucket `b`:
/// a mixture's routed experts each get an even share of the m * topK rows
/// (their blocks run in one launch), the shared experts all m rows.
double gpuFfnGemmMicros(const GpuDevice &device, const GpuBucket &b,
                        const GpuFfnShape &ffn, int64_t m);
/// Chooses the strategy for `ffn` on `chip`, honouring `overrides`; an
/// override that cannot hold for this FFN or chip is an error naming the
/// knob.
struct GpuSelection {
  GpuStrategy strategy;
  std::optional<GpuKnobError> error;
};
GpuSelection selectGpuStrategy(const GpuFfnShape &ffn, std::string_view chip,
                               const GpuStrategy &overrides = GpuStrategy());

/// Whether a complete strategy can be built for `ffn` on `chip` (what the
/// lowering checks of a strategy it did not choose).
std::optional<GpuKnobError> checkGpuStrategy(const GpuStrategy &s,
                                             const GpuFfnShape &ffn,
                                             std::string_view chip);

/// One line for --emit, the kernel descriptor and `ffnc info`.
std::string describeGpuStrategy(const GpuStrategy &s, std::string_view chip);

/// The token counts [first, last] (last INT64_MAX: unbounded) of `s`'s
/// buckets whose GEMM 2 applies a dense FFN's post-norm itself (`fused`) or
/// leaves it to the row kernel, consecutive buckets merged.
std::vector<std::pair<int64_t, int64_t>>
gpuPostNormRanges(const GpuStrategy &s, int64_t dModel, bool fused);

/// Where an FFN's post-norm runs under `s`, bucket by bucket
/// (gpuFusesPostNorm; a mixture's combine kernel always applies it), for
/// the same three places.
std::string describeGpuPostNorm(const GpuStrategy &s, int64_t dModel, bool moe);

/// The smallest m whose bucket multiplies with wgmma (0: none does).
int64_t gpuWgmmaFromM(const GpuStrategy &s);

/// Whether every bucket of `s` widens quantized weights in registers.
bool gpuWidensInRegisters(const GpuStrategy &s);

} // namespace mlir::ffn

#endif // FFN_TARGET_GPU_COSTMODEL_H
