//===- CostModel.cpp - the GPU strategy and its cost model ----------------===//
//
// The tile of a bucket is priced, not looked up: a GEMM's time is the larger
// of its tensor (or FMA) time and its memory time, each with the waves the
// grid runs in. The tensor rate of a tile is limited by what its warps read
// from shared memory per MMA (small warp tiles re-read their operands:
// a 16 x 16 warp tile needs four times the bytes per FLOP of a 64 x 64 one)
// and by the share of the peak the cp.async-fed kernels were measured to
// issue (docs/gpu.md: 53% at the widest mma.sync tile, 0.50-0.52 PFLOP/s
// of 0.99 with wgmma on an H100). Memory time reads the weights once from
// HBM and again from L2 for every further row of blocks; a grid with fewer
// than two blocks per SM in flight does not reach HBM's bandwidth, which
// is what the K split is for.
//
//===----------------------------------------------------------------------===//

#include "ffn/Target/GPU/CostModel.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>
#include <limits>
#include <vector>

using namespace mlir::ffn;

const char *mlir::ffn::gpuMmaName(GpuMma mma) {
  switch (mma) {
  case GpuMma::Fma:
    return "fma";
  case GpuMma::MmaSync:
    return "mma_sync";
  case GpuMma::Wgmma:
    return "wgmma";
  }
  return "?";
}

std::optional<GpuMma> mlir::ffn::parseGpuMma(std::string_view name) {
  for (GpuMma m : {GpuMma::Fma, GpuMma::MmaSync, GpuMma::Wgmma})
    if (name == gpuMmaName(m))
      return m;
  return std::nullopt;
}

bool GpuStrategy::operator==(const GpuStrategy &o) const {
  if (sms != o.sms || numBuckets != o.numBuckets || numBounds != o.numBounds ||
      blockM != o.blockM || blockN != o.blockN || stages != o.stages ||
      warpStages != o.warpStages || splitK != o.splitK || mma != o.mma ||
      registerWiden != o.registerWiden)
    return false;
  for (int i = 0; i < numBuckets; ++i)
    if (!(buckets[i] == o.buckets[i]))
      return false;
  for (int i = 0; i < numBounds; ++i)
    if (bounds[i] != o.bounds[i])
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// The tiles the kernels are built and verified for
//===----------------------------------------------------------------------===//

namespace {
struct Tile {
  int64_t blockM, blockN, warpsM, warpsN;
};
} // namespace

/// Decode, medium and wide tiles; each was run against the f64 reference on
/// an H100 (docs/gpu.md). f32's wide tile is narrower: its FMA accumulators
/// live in registers, 64 x 32 per warp at most. The tensor tiles' fourth,
/// 128 x 128, is the ping-pong wgmma tile (gpuPingPong): only an override
/// picks it until a GPU has timed it against the 128 x 256 one.
static const Tile kTensorTiles[] = {
    {16, 128, 1, 8}, {64, 128, 2, 4}, {128, 256, 2, 4}, {128, 128, 2, 4}};
static const Tile kFmaTiles[] = {
    {16, 128, 1, 8}, {64, 128, 2, 4}, {128, 128, 2, 4}};

static const Tile *tilesOf(const GpuFfnShape &f) {
  return f.elementBytes == 4 ? kFmaTiles : kTensorTiles;
}

/// Quantized weights on tensor cores keep a second set of accumulators (a
/// scale group's sums, GemmKernel.cpp): the wide tile's 128 accumulators
/// per thread would not fit twice in the registers. Unquantized bf16/f16
/// FFNs also have the ping-pong tile, which the cost model does not choose
/// (kChosenTiles).
static int tileCount(const GpuFfnShape &f) {
  if (f.elementBytes == 4)
    return 3;
  return f.quantized() ? 2 : 4;
}
/// The tiles the cost model chooses among: the first three of each table
/// (the ping-pong tile, last, only by an override).
constexpr int kChosenTiles = 3;
static int chosenTileCount(const GpuFfnShape &f) {
  return std::min(tileCount(f), kChosenTiles);
}

static const Tile *findTile(int64_t blockM, int64_t blockN,
                            const GpuFfnShape &f) {
  const Tile *tiles = tilesOf(f);
  for (int i = 0; i < tileCount(f); ++i)
    if (tiles[i].blockM == blockM && tiles[i].blockN == blockN)
      return &tiles[i];
  return nullptr;
}

static std::string tileList(const GpuFfnShape &f) {
  const Tile *tiles = tilesOf(f);
  std::string text;
  for (int i = 0; i < tileCount(f); ++i)
    text += (i ? ", " : "") + std::to_string(tiles[i].blockM) + "x" +
            std::to_string(tiles[i].blockN);
  return text;
}

//===----------------------------------------------------------------------===//
// Rules and text
//===----------------------------------------------------------------------===//

std::optional<GpuKnobError> mlir::ffn::checkGpuKnobs(const GpuStrategy &s) {
  if (s.sms && (*s.sms < 1 || *s.sms > 1024))
    return GpuKnobError{"sms",
                        "must be in [1, 1024], got " + std::to_string(*s.sms)};
  if (s.numBuckets > 0 && s.hasOverrides())
    return GpuKnobError{"buckets",
                        "make a complete strategy: it takes only sms beside "
                        "them (bounds, block_m, block_n, stages, "
                        "warp_stages, split_k and mma are an override's "
                        "knobs)"};
  if (s.numBounds >= kMaxGpuBuckets)
    return GpuKnobError{"bounds", "takes at most " +
                                      std::to_string(kMaxGpuBuckets - 1) +
                                      " bounds"};
  for (int i = 0; i < s.numBounds; ++i)
    if (s.bounds[i] < 1 || (i > 0 && s.bounds[i] <= s.bounds[i - 1]))
      return GpuKnobError{"bounds", "must be positive and ascending"};
  if (bool(s.blockM) != bool(s.blockN))
    return GpuKnobError{s.blockM ? "block_m" : "block_n",
                        "needs block_m and block_n together (the tile)"};
  if (s.stages && *s.stages != 0 &&
      (*s.stages < 2 || *s.stages > kMaxPingPongStages))
    return GpuKnobError{"stages", "must be 0 (the register stream) or in "
                                  "[2, " +
                                      std::to_string(kMaxPingPongStages) +
                                      "], got " + std::to_string(*s.stages)};
  auto warpRingRange = "must be in [2, " + std::to_string(kMaxWarpStages) + "]";
  if (s.warpStages && (*s.warpStages < 2 || *s.warpStages > kMaxWarpStages))
    return GpuKnobError{"warp_stages", warpRingRange + ", got " +
                                           std::to_string(*s.warpStages)};
  if (s.warpStages && s.stages && *s.stages != 0)
    return GpuKnobError{"warp_stages",
                        "is the register stream's (stages = 0), not a "
                        "ring's"};
  if (s.splitK && (*s.splitK < 1 || *s.splitK > 64))
    return GpuKnobError{"split_k",
                        "must be in [1, 64], got " + std::to_string(*s.splitK)};
  for (int i = 0; i < s.numBuckets; ++i) {
    const GpuBucket &b = s.buckets[i];
    bool last = i == s.numBuckets - 1;
    std::string at = "bucket " + std::to_string(i) + " ";
    if (last != (b.maxM == 0))
      return GpuKnobError{"buckets",
                          at + (last ? "is the last: it takes no max_m"
                                     : "needs a max_m (only the last bucket "
                                       "is unbounded)")};
    if (!last && (b.maxM < 1 || (i > 0 && b.maxM <= s.buckets[i - 1].maxM)))
      return GpuKnobError{"buckets", at + "max_m must be positive and above "
                                          "the previous bucket's"};
    if (b.blockM < 1 || b.blockN < 1 || b.warpsM < 1 || b.warpsN < 1 ||
        b.blockM % (16 * b.warpsM) != 0 || b.blockN % (8 * b.warpsN) != 0)
      return GpuKnobError{"buckets",
                          at + "tile must split into 16 x 8 fragments per "
                               "warp"};
    if (b.blockK != 32 && b.blockK != 64)
      return GpuKnobError{"buckets", at + "block_k must be 32 or 64"};
    if (b.stages != 0 && (b.stages < 2 || b.stages > kMaxPingPongStages))
      return GpuKnobError{"buckets",
                          at +
                              "stages must be 0 (the register stream) or "
                              "in [2, " +
                              std::to_string(kMaxPingPongStages) + "]"};
    if (b.warpStages != 0 &&
        (b.stages != 0 || b.warpStages < 2 || b.warpStages > kMaxWarpStages))
      return GpuKnobError{"buckets", at + "warp_stages must be 0, or in [2, " +
                                         std::to_string(kMaxWarpStages) + "]" +
                                         " with stages = 0 (the register "
                                         "stream's)"};
    if (b.splitUp < 1 || b.splitDown < 1 || b.splitUp > 64 || b.splitDown > 64)
      return GpuKnobError{"buckets", at + "split_k must be in [1, 64]"};
  }
  return std::nullopt;
}

static std::string bucketText(const GpuBucket &b) {
  std::string t = "<";
  if (b.maxM)
    t += "max_m = " + std::to_string(b.maxM) + ", ";
  t += "block_m = " + std::to_string(b.blockM) +
       ", block_n = " + std::to_string(b.blockN) +
       ", warps_m = " + std::to_string(b.warpsM) +
       ", warps_n = " + std::to_string(b.warpsN) +
       ", block_k = " + std::to_string(b.blockK) +
       ", stages = " + std::to_string(b.stages) +
       (b.warpStages ? ", warp_stages = " + std::to_string(b.warpStages)
                     : std::string()) +
       ", mma = " + gpuMmaName(b.mma) + ", split_k = [" +
       std::to_string(b.splitUp) + ", " + std::to_string(b.splitDown) + "]" +
       (b.registerWiden ? ", widen = registers" : "") + ">";
  return t;
}

std::string mlir::ffn::gpuKnobsText(const GpuStrategy &s) {
  std::string t;
  auto add = [&](const std::string &item) {
    t += (t.empty() ? "" : ", ") + item;
  };
  if (s.sms)
    add("sms = " + std::to_string(*s.sms));
  if (s.numBounds) {
    std::string list;
    for (int i = 0; i < s.numBounds; ++i)
      list += (i ? ", " : "") + std::to_string(s.bounds[i]);
    add("bounds = [" + list + "]");
  }
  if (s.blockM)
    add("block_m = " + std::to_string(*s.blockM));
  if (s.blockN)
    add("block_n = " + std::to_string(*s.blockN));
  if (s.stages)
    add("stages = " + std::to_string(*s.stages));
  if (s.warpStages)
    add("warp_stages = " + std::to_string(*s.warpStages));
  if (s.splitK)
    add("split_k = " + std::to_string(*s.splitK));
  if (s.mma)
    add(std::string("mma = ") + gpuMmaName(*s.mma));
  if (s.registerWiden)
    add(std::string("widen = ") + (*s.registerWiden ? "registers" : "shared"));
  if (s.numBuckets) {
    std::string list;
    for (int i = 0; i < s.numBuckets; ++i)
      list += (i ? ", " : "") + bucketText(s.buckets[i]);
    add("buckets = [" + list + "]");
  }
  return t;
}

//===----------------------------------------------------------------------===//
// Devices and prices
//===----------------------------------------------------------------------===//

int64_t mlir::ffn::gpuBlocksPerSm(const GpuDevice &d, int64_t sharedBytes,
                                  int64_t threads) {
  constexpr int64_t kReservedPerBlock = 1024, kThreadsPerSm = 2048;
  return std::min(d.sharedPerSm / (sharedBytes + kReservedPerBlock),
                  kThreadsPerSm / threads);
}

std::optional<GpuDevice> mlir::ffn::nominalGpuDevice(std::string_view chip) {
  // Each figure is named: the devices' data sheets.
  GpuDevice d;
  d.smemBytesPerClock = 128;
  if (chip == "sm_80") {
    // A100 SXM4 80 GB: 312 TFLOP/s bf16 on mma.sync, 19.5 f32, 2.04 TB/s;
    // 163 KiB of shared memory for one block, 164 KiB an SM.
    d.name = "A100 SXM4 (nominal)";
    d.sms = 108;
    d.sharedPerBlock = 163 * 1024;
    d.sharedPerSm = 164 * 1024;
    d.tensorTflops = 312;
    d.mmaSyncShare = 1.0;
    d.fmaTflops = 19.5;
    d.hbmGBs = 2039;
    d.l2GBs = 5000;
    d.clockGHz = 1.41;
    return d;
  }
  if (chip == "sm_90" || chip == "sm_90a") {
    // H100 SXM5: 989 TFLOP/s bf16 dense (wgmma; mma.sync issues about two
    // thirds of it), 67 f32, 3.35 TB/s; 227 KiB of shared memory per block,
    // 228 KiB an SM.
    d.name = "H100 SXM5 (nominal)";
    d.sms = 132;
    d.sharedPerBlock = 227 * 1024;
    d.sharedPerSm = 228 * 1024;
    d.tensorTflops = 989;
    d.mmaSyncShare = 0.66;
    d.fmaTflops = 67;
    d.hbmGBs = 3352;
    d.l2GBs = 10000;
    d.clockGHz = 1.83;
    return d;
  }
  return std::nullopt;
}

GpuDevice mlir::ffn::resizedGpuDevice(GpuDevice device, int64_t sms) {
  double scale = double(sms) / device.sms;
  device.tensorTflops *= scale;
  device.fmaTflops *= scale;
  device.sms = sms;
  return device;
}

std::string mlir::ffn::gpuChipOfTarget(std::string_view isa) {
  constexpr std::string_view prefix = "nvptx-sm";
  if (isa.substr(0, prefix.size()) != prefix || isa.size() < prefix.size() + 2)
    return "";
  return "sm_" + std::string(isa.substr(prefix.size()));
}

int64_t mlir::ffn::gpuGemmSharedBytes(const GpuBucket &b, int64_t elementBytes,
                                      int64_t weightBits, int64_t terms) {
  // The GEMM builder's ring (GemmKernel.cpp, whose sharedBytes() is this):
  // wgmma's tiles are swizzled, unpadded and 1024-byte aligned (the extra
  // KiB lets the kernel align the dynamic shared memory itself); the others
  // have 16 bytes of padding per row against bank conflicts. wgmma's ring
  // ends with its TMA mbarriers (a full and an empty one per stage).
  int64_t row = b.blockK + 16 / elementBytes;
  // The register stream has no ring: the split-K fix-up's flag, and the A
  // slice the kernel stages where it fits in 48 KiB (it sizes that
  // itself, from the K split: GemmConfig::sharedBytes), and each warp's
  // ring where the weights go through one (whole K tiles of its rows: the
  // block's B tile a stage).
  if (b.stages == 0)
    return 16 + b.warpStages * b.blockN * b.blockK * elementBytes;
  // Widened in registers: no converted tiles, and A's rows padded.
  if (weightBits && b.registerWiden)
    return b.stages *
           (b.blockM * gpuRegisterWidenARowBytes(b.blockK, elementBytes) +
            b.blockN * b.blockK * weightBits / 8);
  if (weightBits)
    return b.stages * b.blockM * row * elementBytes +
           2 * terms * b.blockN * row * elementBytes +
           b.stages * b.blockN * b.blockK * weightBits / 8;
  // Ping-pong adds the two warpgroups' order barriers.
  if (b.mma == GpuMma::Wgmma)
    return b.stages * (b.blockM + b.blockN) * b.blockK * elementBytes + 1024 +
           2 * 8 * b.stages + (gpuPingPong(b) ? 2 * 8 : 0);
  return b.stages * (b.blockM + b.blockN) * row * elementBytes;
}

std::string mlir::ffn::gpuRegisterWidenBlocker(const GpuBucket &b,
                                               const GpuFfnShape &f) {
  if (!f.quantized())
    return "needs quantized weights";
  if (f.elementBytes == 4)
    return "needs tensor cores (a bf16 or f16 dtype), not f32";
  if (f.weightBits == 8 && !f.f16)
    return "needs int4 weights on bf16 (int8 is exact in f16's significand, "
           "not bf16's)";
  if (f.quantGroup % 32 != 0)
    return "needs scale groups of a multiple of 32 (a 32-k chunk's MMA "
           "steps inside one group), not " +
           std::to_string(f.quantGroup);
  if (b.stages == 0 || b.mma != GpuMma::MmaSync || b.blockK != 64)
    return "needs an mma_sync ring tile with block_k = 64";
  return "";
}

bool mlir::ffn::gpuStreamable(const GpuBucket &b, const GpuFfnShape &f) {
  return b.blockM == 16 && b.warpsM == 1 && b.mma == GpuMma::MmaSync &&
         f.elementBytes != 4 && !f.weightBits && !f.moe();
}

int64_t mlir::ffn::gpuSplitFor(int64_t rowBlocks, int64_t colBlocks, int64_t k,
                               int64_t blockK, int64_t wantBlocks) {
  int64_t tiles = k / blockK, split = 1;
  while (rowBlocks * colBlocks * split < wantBlocks && tiles / (split + 1) >= 4)
    ++split;
  return split;
}

/// The share of the MMA rate a warp tile keeps: each k step reads its
/// operands from shared memory, and an SM's shared memory serves a fixed
/// number of bytes a clock. mma.sync: the warp's A and B fragments, (wm +
/// wn) * k elements for wm * wn * k MACs. FMA: every thread its own row and
/// column pieces, 2 t elements for t * t FMAs of its t x t register tile
/// (t^2 = wm * wn / 32).
static double warpTileShare(const GpuDevice &d, const GpuBucket &b,
                            double macsPerClockPerSm, int64_t elementBytes) {
  if (b.mma == GpuMma::Wgmma)
    return 1.0; // the warpgroup reads each operand tile once per k16 step
  double wm = double(b.blockM) / b.warpsM, wn = double(b.blockN) / b.warpsN;
  double bytesPerMac = b.mma == GpuMma::Fma
                           ? 2.0 * elementBytes / std::sqrt(wm * wn / 32)
                           : elementBytes * (wm + wn) / (wm * wn);
  return std::min(1.0, d.smemBytesPerClock / (macsPerClockPerSm * bytesPerMac));
}

/// What the cp.async-fed kernels were measured to issue at their best tile
/// (docs/gpu.md, H100): the rest is pipeline stalls and epilogues.
constexpr double kIssueShare = 0.53;

double mlir::ffn::gpuGemmMicros(const GpuDevice &d, const GpuBucket &b,
                                int64_t m, int64_t n, int64_t k,
                                int64_t elementBytes, int64_t split,
                                double weightBytes, int64_t terms) {
  if (weightBytes == 0)
    weightBytes = double(elementBytes);
  double rowBlocks = std::ceil(double(m) / b.blockM);
  double colBlocks = double(n) / b.blockN;
  double blocks = rowBlocks * colBlocks * split;

  // Compute: the padded rows are multiplied too.
  double peak = b.mma == GpuMma::Fma       ? d.fmaTflops
                : b.mma == GpuMma::MmaSync ? d.tensorTflops * d.mmaSyncShare
                                           : d.tensorTflops;
  double macsPerClockPerSm = peak * 1e12 / 2 / d.sms / (d.clockGHz * 1e9);
  double rate = peak * 1e12 * kIssueShare *
                warpTileShare(d, b, macsPerClockPerSm, elementBytes);
  double flops = 2.0 * terms * rowBlocks * b.blockM * n * k;
  // The SM with the most blocks finishes last: a grid of fewer blocks than
  // SMs, or one wave and a bit, leaves SMs idle.
  double computeUs =
      std::ceil(blocks / d.sms) * (flops / blocks) / (rate / d.sms) * 1e6;
  if (weightBytes != elementBytes) {
    // Every block converts its B tiles: about four instructions per weight
    // and row of blocks (two more for a second term), issued by the SMs'
    // 128 lanes a clock.
    double instructions = (terms == 2 ? 6.0 : 4.0) * rowBlocks * n * k;
    computeUs += instructions / (d.sms * 128.0 * d.clockGHz * 1e9) * 1e6;
  }

  // Memory: weights once from HBM, again from L2 per further row of
  // blocks; the A rows from L2 for every column of blocks; f32 partials
  // written when split (and read back by the blocks that reduce their own
  // tiles; a reduction kernel reads them in its own time, below).
  bool fixup = gpuSplitFixup(b.blockM, b.blockN, split);
  double weights = double(n) * k * weightBytes;
  double partials = double(split) * m * n * 4;
  double hbm = weights + double(m) * n * (split > 1 ? 0 : elementBytes);
  double l2 =
      (rowBlocks - 1) * weights + colBlocks * double(m) * k * elementBytes;
  if (split > 1)
    hbm += (fixup ? 2 : 1) * partials;
  // Every SM pulls about an equal share of the bandwidth, so the SM that
  // streams the most blocks sets the time: 544 blocks on 132 SMs take five
  // blocks' time where 384 take three (on an H200, LLaMA-7B's decode split
  // 4/17 ran 10% slower than 3/12: docs/bench-gpu-2026-11-28-h200-sweep.txt).
  // (Enough loads in flight to reach HBM's bandwidth is the K split's job.)
  double perSm = blocks / d.sms;
  double busiest = std::ceil(perSm) / perSm;
  double memoryUs =
      (hbm / (d.hbmGBs * 1e9) + l2 / (d.l2GBs * 1e9)) * 1e6 * busiest;
  // A split GEMM's reduction is one more launch, or, when the GEMM's own
  // blocks reduce their tiles, a tail: the last block's round trips to the
  // L2 over its tile's valid rows.
  constexpr double kLaunchUs = 2.5, kL2RoundTripUs = 0.5;
  double reduceUs = 0;
  if (fixup)
    reduceUs =
        kL2RoundTripUs * std::ceil(double(std::min<int64_t>(m, b.blockM)) *
                                   b.blockN / kFixupElementsPerRound);
  else if (split > 1)
    // The reduction kernel overlaps nothing: it reads every slice's
    // partials and writes the result after the GEMM (splitting LLaMA-7B's
    // GEMM 1 two ways at m = 256, 90 MB of partials, measured slower than
    // not splitting it).
    reduceUs = kLaunchUs + (partials + double(m) * n * elementBytes) /
                               (d.hbmGBs * 1e9) * 1e6;
  return std::max(computeUs, memoryUs) + kLaunchUs + reduceUs;
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

namespace {
/// One bucket being chosen.
class Chooser {
public:
  Chooser(const GpuFfnShape &f, std::string_view chip, const GpuDevice &d,
          const GpuStrategy &o)
      : f(f), chip(chip), d(d), o(o), dims(gpuPackedDims(f)) {}

  std::optional<GpuKnobError> build(GpuBucket &b, int64_t maxM, int64_t priceM,
                                    bool memoryBound) const;
  /// Bucket `b` up to `maxM` on bucket `like`'s tile, with its own split.
  void keepTile(GpuBucket &b, const GpuBucket &like, int64_t maxM) const {
    fill(b, Tile{like.blockM, like.blockN, like.warpsM, like.warpsN}, maxM,
         /*memoryBound=*/false);
  }

private:
  const GpuFfnShape &f;
  std::string_view chip;
  const GpuDevice &d;
  const GpuStrategy &o;
  GpuPackedDims dims;

  void fill(GpuBucket &b, const Tile &t, int64_t maxM, bool memoryBound) const;
  int64_t fullestWaveSplit(int64_t rows, int64_t cols, int64_t kTiles,
                           bool registerStream) const;
  int64_t cheapestSplit(const GpuBucket &b, int64_t m, int64_t n, int64_t k,
                        bool gemm1) const;
  double price(const GpuBucket &b, int64_t m) const;
};
} // namespace

void Chooser::fill(GpuBucket &b, const Tile &t, int64_t maxM,
                   bool memoryBound) const {
  bool tc = f.elementBytes != 4;
  b.maxM = maxM;
  b.blockM = t.blockM;
  b.blockN = t.blockN;
  b.warpsM = t.warpsM;
  b.warpsN = t.warpsN;
  // 128 bytes of K per stage on tensor cores, 32 f32 on CUDA cores.
  b.blockK = tc ? 64 : 32;
  // wgmma on sm_90a where the tile is its 128 x 256 (two warpgroups, each
  // m64 n256) or the ping-pong 128 x 128 (each warpgroup its own tile),
  // unless the override keeps it off.
  bool wgmmaTile = chip == "sm_90a" && tc && t.blockM == 128 &&
                   (t.blockN == 256 || t.blockN == 128);
  b.mma = !tc                                     ? GpuMma::Fma
          : wgmmaTile && o.mma != GpuMma::MmaSync ? GpuMma::Wgmma
                                                  : GpuMma::MmaSync;
  // At decode the 16-row tile of unquantized tensor-core FFNs streams its
  // weights into registers (no ring, stages = 0: each byte is used once,
  // so shared memory buys nothing); the other tiles, and the 16-row tile
  // of larger m (where its rows of blocks re-read the weights from L2 and
  // the ring measured faster: BERT-base m = 64, 24.7 us against 32.6),
  // take the deepest ring the block's shared memory holds, up to four.
  b.registerWiden = o.registerWiden.value_or(false);
  b.stages = kMaxRingStages;
  while (b.stages > 2 && gpuGemmSharedBytes(b, f.elementBytes, f.weightBits,
                                            f.mmaTerms()) > d.sharedPerBlock)
    --b.stages;
  if (memoryBound && gpuStreamable(b, f))
    b.stages = 0;
  if (o.stages)
    b.stages = *o.stages;
  b.warpStages = b.stages == 0 ? o.warpStages.value_or(0) : 0;
  // The K split, as measured on an H200
  // (docs/bench-gpu-2026-11-28-h200-sweep.txt): decode fills its last wave
  // (below); compute-bound buckets take the split the model prices
  // cheapest, where only GEMM 2 and tiles that reduce their own partials
  // may split. The unbounded bucket never splits.
  b.splitUp = b.splitDown = 1;
  if (maxM == 0 || f.batchInvariant)
    return;
  int64_t rows = (maxM + b.blockM - 1) / b.blockM;
  int64_t colsUp = dims.upRows(f.gated) / b.blockN;
  int64_t colsDown = dims.downRows() / b.blockN;
  if (f.moe()) {
    // Only GEMM 2 splits (grid.z: experts x slices; the combine kernel
    // adds the slices), over the experts the bucket's largest m reaches,
    // each with an even share of the rows; decode buckets size it for one
    // row (top_k experts: the latency that matters, and the partials of a
    // few rows cost next to nothing when more experts run).
    int64_t choices = (memoryBound ? 1 : maxM) * f.topK;
    int64_t active = std::min(f.experts, choices);
    int64_t perExpert = (choices + active - 1) / active;
    rows = (perExpert + b.blockM - 1) / b.blockM;
    int64_t want = (memoryBound ? 4 : 1) * d.sms;
    b.splitDown = gpuSplitFor(rows, colsDown * (active + f.sharedExperts),
                              dims.hidden, b.blockK, want);
    if (o.splitK)
      b.splitDown = *o.splitK;
    return;
  }
  if (memoryBound) {
    bool stream = b.stages == 0;
    b.splitUp = fullestWaveSplit(rows, colsUp, dims.kUp / b.blockK, stream);
    b.splitDown =
        fullestWaveSplit(rows, colsDown, dims.hidden / b.blockK, stream);
  } else {
    b.splitUp =
        cheapestSplit(b, maxM, dims.upRows(f.gated), dims.kUp, /*gemm1=*/true);
    b.splitDown = cheapestSplit(b, maxM, dims.downRows(), dims.hidden,
                                /*gemm1=*/false);
  }
  if (o.splitK) {
    b.splitUp = *o.splitK;
    b.splitDown = *o.splitK;
  }
}

/// The most K slices a GEMM of `kTiles` K tiles takes: each slice keeps
/// four K tiles for the copy ring to overlap (and at most 64 slices).
static int64_t mostSlices(int64_t kTiles) {
  return std::clamp<int64_t>(kTiles / 4, 1, 64);
}

int64_t Chooser::fullestWaveSplit(int64_t rows, int64_t cols, int64_t kTiles,
                                  bool registerStream) const {
  // Decode streams its weights once: it needs two blocks per SM for enough
  // loads in flight, and then the split whose last wave is fullest (every
  // SM streams about an equal share, so the SM with the most blocks sets
  // the time: LLaMA-7B's 4/17 split, 688 and 544 blocks on 132 SMs, ran
  // 10% slower than 3/12, 516 and 384), up to four blocks per SM. Ties
  // keep the smaller split (fewer partials) on the ring; the register
  // stream's loads in flight are its resident blocks' registers, so there
  // ties take the larger split (LLaMA-7B's GEMM 2: 16 slices, 512 blocks,
  // 3.9 an SM, where 12 left 2.9: m = 1 4% faster on an H200, 80.5 against
  // 84.1 us, docs/bench-gpu-2026-11-30-h200-final.txt).
  int64_t most = mostSlices(kTiles);
  int64_t split = 1;
  while (split < most && rows * cols * split < 2 * d.sms)
    ++split;
  int64_t best = split;
  auto fullness = [&](int64_t s) {
    double perSm = double(rows * cols * s) / d.sms;
    return perSm / std::ceil(perSm);
  };
  for (++split; split <= most && rows * cols * split <= 4 * d.sms; ++split)
    if (fullness(split) > fullness(best) + 1e-9 ||
        (registerStream && fullness(split) > fullness(best) - 1e-9))
      best = split;
  return best;
}

int64_t Chooser::cheapestSplit(const GpuBucket &b, int64_t m, int64_t n,
                               int64_t k, bool gemm1) const {
  // A split whose partials a reduction kernel adds must pay for that
  // kernel, which overlaps nothing; GEMM 1's reduction also applies the
  // activation, and splitting it measured slower at every compute-bound m
  // (BERT-base m = 128: 3/12 50.6 us, 1/6 33.9 us; LLaMA-7B m = 256: 2/4
  // 206 us, 1/3 177 us), so GEMM 1 splits only where its blocks reduce
  // their own tiles.
  int64_t most = mostSlices(k / b.blockK);
  // Only a GEMM whose tiles leave SMs idle splits: past one full wave a
  // split would only even out the last one, which the model prices too
  // finely to trust (it offered LLaMA-7B f32's 512-tile GEMM 2 at m = 2048
  // nine slices, 300 MB of partials, for 1%), and every split measured
  // faster on a GPU had fewer tiles than SMs.
  int64_t tiles = (m + b.blockM - 1) / b.blockM * (n / b.blockN);
  if (tiles >= d.sms)
    return 1;
  // A larger split must be 1% cheaper: the model's resolution.
  constexpr double kGain = 0.01;
  int64_t best = 1;
  double bestUs = std::numeric_limits<double>::infinity();
  for (int64_t split = 1; split <= most; ++split) {
    if (gemm1 && split > 1 && !gpuSplitFixup(b.blockM, b.blockN, split))
      break;
    double us = gpuGemmMicros(d, b, m, n, k, f.elementBytes, split,
                              f.weightBytes(), f.mmaTerms());
    if (us < bestUs * (1 - kGain)) {
      best = split;
      bestUs = us;
    }
  }
  return best;
}

double Chooser::price(const GpuBucket &b, int64_t m) const {
  return gpuFfnGemmMicros(d, b, f, m);
}

double mlir::ffn::gpuFfnGemmMicros(const GpuDevice &d, const GpuBucket &b,
                                   const GpuFfnShape &f, int64_t m) {
  GpuPackedDims dims = gpuPackedDims(f);
  // A grouped FFN's blocks multiply their own K columns: every block row of
  // B has the block's K. `experts` copies of the weights, m rows each.
  auto both = [&](int64_t rows, int64_t experts) {
    return gpuGemmMicros(d, b, rows, experts * dims.upRows(f.gated), dims.kUp,
                         f.elementBytes, b.splitUp, f.weightBytes(),
                         f.mmaTerms()) +
           gpuGemmMicros(d, b, rows, experts * dims.downRows(), dims.hidden,
                         f.elementBytes, b.splitDown, f.weightBytes(),
                         f.mmaTerms());
  };
  if (!f.moe())
    return both(m, 1);
  int64_t choices = m * f.topK;
  int64_t active = std::min(f.experts, choices);
  double us = both((choices + active - 1) / active, active);
  if (f.sharedExperts)
    us += both(m, f.sharedExperts);
  return us;
}

std::optional<GpuKnobError> Chooser::build(GpuBucket &b, int64_t maxM,
                                           int64_t priceM,
                                           bool memoryBound) const {
  const Tile *tiles = tilesOf(f);
  if (o.blockM) {
    const Tile *t = findTile(*o.blockM, *o.blockN, f);
    if (!t)
      return GpuKnobError{"block_m",
                          "tile " + std::to_string(*o.blockM) + "x" +
                              std::to_string(*o.blockN) + " is not built for " +
                              (f.elementBytes == 4 ? "f32" : "bf16/f16") +
                              (f.quantized() ? " with quantized weights" : "") +
                              " (tiles: " + tileList(f) + ")"};
    fill(b, *t, maxM, memoryBound);
    return std::nullopt;
  }
  int count = chosenTileCount(f);
  if (f.batchInvariant) {
    fill(b, tiles[count - 1], maxM, memoryBound);
    return std::nullopt;
  }
  // Decode takes the register stream where the FFN has it: the model
  // prices its partials but not the ring's fill and drain it avoids, and
  // on an H200 it beat the priced choice (BERT-base m = 1: 17.8 us against
  // 23.6 us for 64x128 ring tiles; docs/gpu.md).
  GpuBucket candidates[kChosenTiles];
  assert(count <= kChosenTiles && "a candidate per tile");
  for (int i = 0; i < count; ++i)
    fill(candidates[i], tiles[i], maxM, memoryBound);
  if (memoryBound && !o.stages)
    for (int i = 0; i < count; ++i)
      if (candidates[i].stages == 0) {
        b = candidates[i];
        return std::nullopt;
      }
  // The cheapest tile at the bucket's largest m. Prices within the model's
  // resolution (3%) tie; of tied tiles the one that multiplies fewer padded
  // rows wins (a decode run in a 128-row tile wastes what the model cannot
  // see: registers, issue slots), then the wider one (fewer blocks, more
  // reuse per operand byte).
  constexpr double kTie = 0.03;
  double prices[kChosenTiles];
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < count; ++i) {
    prices[i] = price(candidates[i], priceM);
    best = std::min(best, prices[i]);
  }
  auto padded = [&](const GpuBucket &c) {
    return (priceM + c.blockM - 1) / c.blockM * c.blockM;
  };
  int chosen = -1;
  for (int i = 0; i < count; ++i) {
    if (prices[i] > best * (1 + kTie))
      continue;
    if (chosen < 0 || padded(candidates[i]) < padded(candidates[chosen]) ||
        (padded(candidates[i]) == padded(candidates[chosen]) &&
         candidates[i].blockM * candidates[i].blockN >
             candidates[chosen].blockM * candidates[chosen].blockN))
      chosen = i;
  }
  b = candidates[chosen];
  return std::nullopt;
}

/// The bucket bounds without an override: decode (weights stream once),
/// small, medium, large, and everything beyond.
static const int64_t kDefaultBounds[] = {16, 64, 256, 1024};
/// Where the unbounded bucket's tiles may still leave SMs idle, buckets up
/// to these m take its tile with their own K split (selectGpuStrategy).
static const int64_t kSplitBounds[] = {2048, 4096, 8192};
static_assert(std::size(kDefaultBounds) + std::size(kSplitBounds) + 1 <=
                  kMaxGpuBuckets,
              "the default and split buckets and the unbounded one fit");

GpuSelection mlir::ffn::selectGpuStrategy(const GpuFfnShape &f,
                                          std::string_view chip,
                                          const GpuStrategy &o) {
  GpuSelection out;
  if (auto bad = checkGpuKnobs(o)) {
    out.error = bad;
    return out;
  }
  if (o.numBuckets > 0) {
    // A complete strategy given whole: checked, not chosen.
    out.strategy = o;
    out.error = checkGpuStrategy(o, f, chip);
    return out;
  }
  std::optional<GpuDevice> device = nominalGpuDevice(chip);
  if (!device) {
    out.error = GpuKnobError{"chip", "unknown chip '" + std::string(chip) +
                                         "' (sm_80, sm_90, sm_90a)"};
    return out;
  }
  if (o.sms)
    device = resizedGpuDevice(*device, *o.sms);
  bool tc = f.elementBytes != 4;
  if (o.mma) {
    if (*o.mma == GpuMma::Fma && tc)
      out.error = GpuKnobError{"mma", "fma is f32's; a bf16/f16 FFN "
                                      "multiplies on tensor cores"};
    else if (*o.mma != GpuMma::Fma && !tc)
      out.error = GpuKnobError{"mma", std::string(gpuMmaName(*o.mma)) +
                                          " needs bf16/f16 operands; an f32 "
                                          "FFN runs FMA tiles"};
    else if (*o.mma == GpuMma::Wgmma && chip != "sm_90a")
      out.error =
          GpuKnobError{"mma", "wgmma needs sm_90a, not " + std::string(chip)};
    else if (*o.mma == GpuMma::Wgmma && f.quantized())
      out.error = GpuKnobError{"mma", "quantized weights multiply with "
                                      "mma_sync tiles (each scale group "
                                      "is summed apart)"};
    else if (*o.mma == GpuMma::Wgmma && o.blockM &&
             (*o.blockM != 128 || (*o.blockN != 256 && *o.blockN != 128)))
      out.error = GpuKnobError{"mma", "wgmma multiplies 128x256 and "
                                      "128x128 (ping-pong) tiles"};
    else if (*o.mma == GpuMma::MmaSync && tc && o.blockM && *o.blockM == 128 &&
             *o.blockN == 128)
      out.error = GpuKnobError{"mma", "the 128x128 tensor tile is the "
                                      "ping-pong wgmma kernel's"};
    if (out.error)
      return out;
  }
  if (f.batchInvariant && (o.numBounds || o.splitK))
    return {o, GpuKnobError{o.numBounds ? "bounds" : "split_k",
                            "cannot hold for a batch_invariant FFN: every m "
                            "takes one bucket without a K split"}};

  std::vector<int64_t> bounds;
  if (f.batchInvariant)
    bounds = {};
  else if (o.numBounds)
    bounds.assign(o.bounds, o.bounds + o.numBounds);
  else
    bounds.assign(std::begin(kDefaultBounds), std::end(kDefaultBounds));

  GpuStrategy &s = out.strategy;
  s.sms = device->sms;
  Chooser chooser(f, chip, *device, o);
  for (size_t i = 0; i <= bounds.size(); ++i) {
    bool last = i == bounds.size();
    int64_t maxM = last ? 0 : bounds[i];
    // The unbounded bucket is priced at four times the last bound (large
    // m: the wide tiles win from there on).
    int64_t priceM = last ? 4 * (bounds.empty() ? 1024 : bounds.back()) : maxM;
    GpuBucket &b = s.buckets[s.numBuckets++];
    if (auto bad = chooser.build(b, maxM, priceM, !last && maxM <= 16))
      return {s, bad};
  }
  // Past the default bounds a narrow GEMM's wide tiles can still leave SMs
  // idle (BERT-base's 768-wide GEMM 2: 48 tiles at m = 2048, where a
  // two-way split ran 1.26x faster on an H200 and 1.30-1.40x at m = 1100
  // and 1536, docs/bench-gpu-2026-11-30-h200-bounds.txt). Buckets up to
  // 2048, 4096 and 8192 then take the unbounded bucket's tile with the
  // split the model gives them there; one that plans the same kernels as
  // the bucket after it leaves it its range, so an FFN that gains nothing
  // keeps its four bounds. Bounds or a split the user gave stay as given.
  if (!o.numBounds && !o.splitK && !f.batchInvariant && !f.moe()) {
    GpuBucket large = s.buckets[s.numBuckets - 1];
    --s.numBuckets;
    for (int64_t maxM : kSplitBounds)
      chooser.keepTile(s.buckets[s.numBuckets++], large, maxM);
    s.buckets[s.numBuckets++] = large;
    for (int32_t i = std::size(kDefaultBounds); i + 1 < s.numBuckets;) {
      GpuBucket widened = s.buckets[i];
      widened.maxM = s.buckets[i + 1].maxM;
      if (widened == s.buckets[i + 1]) {
        std::copy(s.buckets + i + 1, s.buckets + s.numBuckets, s.buckets + i);
        --s.numBuckets;
      } else {
        ++i;
      }
    }
  }
  // warp_stages changes the register stream: say so where no bucket has
  // one rather than ignore the knob.
  if (o.warpStages &&
      std::none_of(s.buckets, s.buckets + s.numBuckets,
                   [](const GpuBucket &b) { return b.stages == 0; }))
    return {s, GpuKnobError{"warp_stages",
                            "needs a bucket that takes the register stream "
                            "(the 16-row decode tile of an unquantized "
                            "bf16/f16 FFN that is not a mixture of experts)"}};
  // widen = registers names what cannot be widened so rather than leave
  // the knob unused.
  if (o.registerWiden && *o.registerWiden)
    for (int i = 0; i < s.numBuckets; ++i) {
      std::string why = gpuRegisterWidenBlocker(s.buckets[i], f);
      if (!why.empty())
        return {s, GpuKnobError{"widen", "registers " + why}};
    }
  out.error = checkGpuStrategy(s, f, chip);
  return out;
}

std::optional<GpuKnobError> mlir::ffn::checkGpuStrategy(const GpuStrategy &s,
                                                        const GpuFfnShape &f,
                                                        std::string_view chip) {
  if (auto bad = checkGpuKnobs(s))
    return bad;
  if (!s.isComplete())
    return GpuKnobError{"buckets", "a complete strategy needs sms and "
                                   "buckets"};
  std::optional<GpuDevice> d = nominalGpuDevice(chip);
  if (!d)
    return GpuKnobError{"chip", "unknown chip '" + std::string(chip) + "'"};
  bool tc = f.elementBytes != 4;
  GpuPackedDims dims = gpuPackedDims(f);
  for (int i = 0; i < s.numBuckets; ++i) {
    const GpuBucket &b = s.buckets[i];
    std::string at = "bucket " + std::to_string(i) + ": ";
    const Tile *tile = findTile(b.blockM, b.blockN, f);
    if (!tile || tile->warpsM != b.warpsM || tile->warpsN != b.warpsN)
      return GpuKnobError{"buckets", at +
                                         "the kernels are built for the "
                                         "tiles " +
                                         tileList(f) +
                                         " with their warp grids"};
    if (b.blockK != (tc ? 64 : 32))
      return GpuKnobError{"buckets", at + "block_k is " +
                                         std::to_string(tc ? 64 : 32) +
                                         " for this dtype"};
    if ((b.mma == GpuMma::Fma) == tc)
      return GpuKnobError{"buckets", at + "mma must be " +
                                         (tc ? "mma_sync or wgmma for "
                                               "bf16/f16"
                                             : "fma for f32")};
    if (b.mma == GpuMma::Wgmma && (chip != "sm_90a" || b.blockM != 128 ||
                                   (b.blockN != 256 && b.blockN != 128)))
      return GpuKnobError{"buckets", at + "wgmma needs sm_90a and the "
                                          "128x256 or 128x128 tile"};
    // The ping-pong tile exists as the TMA kernel only: the cp.async ring
    // keeps its warps on one tile (and a mixture's wgmma tiles gather).
    if (tc && b.blockM == 128 && b.blockN == 128 &&
        (b.mma != GpuMma::Wgmma || f.moe()))
      return GpuKnobError{"buckets",
                          at + "the 128x128 tensor tile is the ping-pong wgmma "
                               "kernel's: sm_90a, fed by TMA (not a mixture of "
                               "experts, whose rows are gathered)"};
    if (b.stages > kMaxRingStages && !gpuPingPong(b))
      return GpuKnobError{
          "stages", at + std::to_string(b.stages) +
                        " stages are the ping-pong tile's (128x128 wgmma, "
                        "sm_90a); the other rings take 2-" +
                        std::to_string(kMaxRingStages)};
    if (b.stages == 0 && !gpuStreamable(b, f))
      return GpuKnobError{"stages",
                          at + "stages = 0 (the register stream) is the "
                               "16-row tile's on tensor cores, for weights "
                               "in the dtype and not a mixture of experts"};
    if (b.registerWiden) {
      std::string why = gpuRegisterWidenBlocker(b, f);
      if (!why.empty())
        return GpuKnobError{"widen", at + "registers " + why};
    }
    int64_t shared =
        gpuGemmSharedBytes(b, f.elementBytes, f.weightBits, f.mmaTerms());
    if (shared > d->sharedPerBlock)
      return GpuKnobError{
          "stages",
          at + std::to_string(b.stages) + " stages take " +
              std::to_string(shared) + " bytes of shared memory; a block has " +
              std::to_string(d->sharedPerBlock) + " on " + std::string(chip)};
    if (f.moe() && b.splitUp != 1)
      return GpuKnobError{"split_k", at + "a mixture of experts' GEMM 1 does "
                                          "not split K (only GEMM 2's "
                                          "slices are added, by the combine "
                                          "kernel)"};
    // Every slice keeps at least one K tile.
    if (b.splitUp > dims.kUp / b.blockK || b.splitDown > dims.hidden / b.blockK)
      return GpuKnobError{
          "split_k", at + "more K slices than K tiles (" +
                         std::to_string(dims.kUp / b.blockK) + " in " +
                         "GEMM 1, " + std::to_string(dims.hidden / b.blockK) +
                         " in GEMM 2)"};
    if (f.batchInvariant &&
        (s.numBuckets != 1 || b.splitUp != 1 || b.splitDown != 1))
      return GpuKnobError{"buckets", "a batch_invariant FFN takes one "
                                     "bucket without a K split"};
  }
  return std::nullopt;
}

int64_t mlir::ffn::gpuWgmmaFromM(const GpuStrategy &s) {
  int64_t from = 1;
  for (int i = 0; i < s.numBuckets; ++i) {
    if (s.buckets[i].mma == GpuMma::Wgmma)
      return from;
    from = s.buckets[i].maxM + 1;
  }
  return 0;
}

bool mlir::ffn::gpuWidensInRegisters(const GpuStrategy &s) {
  return s.numBuckets > 0 &&
         std::all_of(s.buckets, s.buckets + s.numBuckets,
                     [](const GpuBucket &b) { return b.registerWiden; });
}

std::string mlir::ffn::describeGpuStrategy(const GpuStrategy &s,
                                           std::string_view chip) {
  std::string t = "gpu" + (chip.empty() ? "" : " " + std::string(chip)) + " (" +
                  std::to_string(s.sms.value_or(0)) + " SMs):";
  int64_t from = 1;
  for (int i = 0; i < s.numBuckets; ++i) {
    const GpuBucket &b = s.buckets[i];
    t += i ? ";" : "";
    t +=
        " m " +
        (b.maxM ? std::to_string(from) + "-" + std::to_string(b.maxM)
                : ">= " + std::to_string(from)) +
        " " + std::to_string(b.blockM) + "x" + std::to_string(b.blockN) +
        " tiles " + gpuMmaName(b.mma) + (gpuPingPong(b) ? " ping-pong " : " ") +
        (b.registerWiden ? "widening in registers " : "") +
        (b.stages       ? std::to_string(b.stages) + " stages"
         : b.warpStages ? "register stream through " +
                              std::to_string(b.warpStages) + "-stage warp rings"
                        : std::string("register stream"));
    if (b.splitUp > 1 || b.splitDown > 1)
      t += " split-K " + std::to_string(b.splitUp) + "/" +
           std::to_string(b.splitDown);
    from = b.maxM + 1;
  }
  return t;
}

std::vector<std::pair<int64_t, int64_t>>
mlir::ffn::gpuPostNormRanges(const GpuStrategy &s, int64_t dModel, bool fused) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int64_t from = 1;
  for (int i = 0; i < s.numBuckets; ++i) {
    const GpuBucket &b = s.buckets[i];
    int64_t to = b.maxM ? b.maxM : INT64_MAX;
    if (gpuFusesPostNorm(b, dModel) == fused) {
      if (!ranges.empty() && ranges.back().second == from - 1)
        ranges.back().second = to;
      else
        ranges.push_back({from, to});
    }
    from = b.maxM + 1;
  }
  return ranges;
}

std::string mlir::ffn::describeGpuPostNorm(const GpuStrategy &s, int64_t dModel,
                                           bool moe) {
  if (moe)
    return "post-norm applied by the combine kernel";
  auto text = [&](bool fused) {
    std::string r;
    for (auto [lo, hi] : gpuPostNormRanges(s, dModel, fused))
      r += (r.empty() ? " at m " : ", ") + std::to_string(lo) +
           (hi == INT64_MAX ? "+" : "-" + std::to_string(hi));
    return r;
  };
  std::string fused = text(true), kernel = text(false), out;
  if (!fused.empty())
    out += "post-norm fused into GEMM 2" + fused +
           " (the block finishing a row band's last tile normalizes it)";
  if (!kernel.empty())
    out += (out.empty() ? "" : "; ") +
           std::string("post-norm by a row kernel after GEMM 2") + kernel;
  return out;
}
