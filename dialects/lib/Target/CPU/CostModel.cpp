//===- CostModel.cpp - the CPU strategy and its cost model ----------------===//

#include "ffn/Target/CPU/CostModel.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::ffn;

std::optional<int64_t> *ffn::integerKnob(CpuStrategy &s, std::string_view key) {
  return key == "vector_bits"    ? &s.vectorBits
         : key == "mr"           ? &s.mr
         : key == "nr"           ? &s.nr
         : key == "mc"           ? &s.mc
         : key == "kc"           ? &s.kc
         : key == "kc_tall"      ? &s.kcTall
         : key == "nc"           ? &s.nc
         : key == "fused_max_m"  ? &s.fusedMaxM
         : key == "chunk"        ? &s.chunk
         : key == "groups"       ? &s.groups
         : key == "sparse_max_m" ? &s.sparseMaxM
                                 : nullptr;
}

std::optional<bool> *ffn::booleanKnob(CpuStrategy &s, std::string_view key) {
  return key == "prefetch"      ? &s.prefetch
         : key == "bf16_dot"    ? &s.bf16Dot
         : key == "block_units" ? &s.blockUnits
                                : nullptr;
}

bool ffn::cpuTargetHasFeature(std::string_view isa, std::string_view feature) {
  struct Row {
    std::string_view name, features;
  };
  static const Row rows[] = {
#define FFN_CPU_TARGET(name, cpu, bits, features) {name, features},
#include "ffn/cpu_targets.def"
  };
  for (const Row &row : rows) {
    if (row.name != isa)
      continue;
    std::string_view list = row.features;
    while (!list.empty()) {
      size_t comma = list.find(',');
      if (list.substr(0, comma) == feature)
        return true;
      list = comma == std::string_view::npos ? "" : list.substr(comma + 1);
    }
  }
  return false;
}

std::string ffn::knobsText(const CpuStrategy &s) {
  CpuStrategy knobs = s;
  std::string text;
  for (const char *key : kCpuStrategyKeys) {
    std::string item;
    if (std::optional<bool> *flag = booleanKnob(knobs, key)) {
      if (*flag)
        item = std::string(key) + " = " + (**flag ? "true" : "false");
    } else if (std::optional<int64_t> *knob = integerKnob(knobs, key); *knob) {
      item = std::string(key) + " = " + std::to_string(**knob);
    }
    if (!item.empty())
      text += (text.empty() ? "" : ", ") + item;
  }
  return text;
}

std::optional<KnobError> ffn::checkStrategy(const CpuStrategy &s,
                                            int64_t targetVectorBits) {
  auto error = [](const char *key, std::string message) {
    return std::optional<KnobError>(KnobError{key, std::move(message)});
  };
  auto str = [](int64_t v) { return std::to_string(v); };
  constexpr int64_t kMaxRows = int64_t(1) << 20;
  if (s.vectorBits && *s.vectorBits != 256 && *s.vectorBits != 512)
    return error("vector_bits",
                 "must be 256 or 512, got " + str(*s.vectorBits));
  // Narrower vectors than the target's run (AVX2 code on an AVX-512
  // machine); wider ones do not.
  if (s.vectorBits && targetVectorBits && *s.vectorBits > targetVectorBits)
    return error("vector_bits", "must be at most the target's (" +
                                    str(targetVectorBits) + "), got " +
                                    str(*s.vectorBits));
  // The width decides the lane rules; unknown, the loosest (256-bit) ones
  // apply now and the target's when it is known.
  int64_t bits = s.vectorBits.value_or(targetVectorBits);
  int64_t lanes = bits ? bits / 32 : 8;
  if (s.mr && (*s.mr < 1 || *s.mr > 16))
    return error("mr", "must be in [1, 16], got " + str(*s.mr));
  int64_t maxNr = bits ? 8 * lanes : 128;
  if (s.nr && (*s.nr < lanes || *s.nr % lanes != 0 || *s.nr > maxNr))
    return error(
        "nr", "must be a multiple of " + str(lanes) +
                  (bits ? " (the f32 lanes of a " + str(bits) + "-bit vector)"
                        : std::string(" (f32 lanes)")) +
                  " up to " + str(maxNr) + ", got " + str(*s.nr));
  // A tile row of 3, 5, 6 or 7 vectors is not a legal LLVM vector width: it
  // comes out as element-by-element inserts through the stack, 40x slower
  // (BERT-base M = 256, one thread: nr = 32 34 ms, 48/80/96 1314-1330 ms).
  // Checked once the width is known (the lanes decide the vector count).
  int64_t vectors = s.nr && bits ? *s.nr / lanes : 1;
  if ((vectors & (vectors - 1)) != 0)
    return error("nr", "must be 1, 2, 4 or 8 vectors of " + str(lanes) +
                           " lanes (" + str(lanes) + ", " + str(2 * lanes) +
                           ", " + str(4 * lanes) + " or " + str(8 * lanes) +
                           "; other widths are not vectorized), got " +
                           str(*s.nr));
  int64_t mr = s.mr ? *s.mr : bits ? defaultMr(bits) : 1;
  int64_t nr = s.nr ? *s.nr : 2 * lanes;
  if (s.mc && (*s.mc < mr || *s.mc % mr != 0 || *s.mc > kMaxRows))
    return error("mc", "must be a multiple of mr (" + str(mr) +
                           ") up to 1048576, got " + str(*s.mc));
  // mc as the kernels will have it: the user's, or the cost model's for the
  // tile once mr or the vector width is known. Not known yet, fused_max_m
  // and sparse_max_m take no bound, and the K blocks' partial sums the cost
  // model's largest mc (256).
  bool mcKnown = s.mc || bits || s.mr;
  int64_t mc = s.mc ? *s.mc : mcKnown ? defaultMc(mr) : kMaxRows;
  int64_t sumsRows = mcKnown ? mc : defaultMc(defaultMr(512));
  // Whole pairs per K block for pair tiles; the partial sums (mc x nr f32
  // per weight matrix, two for a gated GEMM 1) live on the stack.
  for (auto [key, knob] : {std::pair<const char *, std::optional<int64_t>>{
                               "kc", s.kc},
                           {"kc_tall", s.kcTall}})
    if (knob && (*knob < 0 || *knob % 16 != 0 || *knob > kMaxRows))
      return error(key, "must be 0 (whole K) or a multiple of 16 up to "
                        "1048576, got " +
                            str(*knob));
  if (s.nc && (*s.nc < nr || *s.nc % nr != 0 || *s.nc > kMaxRows))
    return error("nc", "must be a multiple of nr (" + str(nr) +
                           ") up to 1048576, got " + str(*s.nc));
  if (s.nc && s.kc == 0 && s.kcTall == 0)
    return error("nc", "groups the panels of row blocks that run K in "
                       "blocks, but kc = 0 and kc_tall = 0 run K whole");
  // K blocks keep mc x nc f32 partial sums per weight matrix on the stack.
  // An explicit nc means K blocks (the cost model's kc, if not the user's).
  // (With mc unknown and nc = nr the bound holds: 256 x 128 at most.)
  bool kBlocks = s.kc.value_or(0) > 0 || s.kcTall.value_or(0) > 0 || s.nc;
  int64_t nc = s.nc.value_or(nr);
  if (kBlocks && sumsRows * nc > kMaxKBlockSums)
    return error(s.nc             ? "nc"
                 : s.kc.value_or(0) > 0 ? "kc"
                                        : "kc_tall",
                 "keeps mc x nc partial sums on the stack: mc (" +
                     str(sumsRows) +
                     ") x nc (" + str(nc) + ") must be at most " +
                     str(kMaxKBlockSums) + " with K blocks");
  if (s.fusedMaxM && (*s.fusedMaxM < 0 || *s.fusedMaxM > mc))
    return error("fused_max_m", "must be in [0, mc = " + str(mc) + "], got " +
                                    str(*s.fusedMaxM));
  if (s.fusedMaxM == 0 && (s.chunk || s.groups))
    return error(s.chunk ? "chunk" : "groups",
                 "needs the fused schedule, but fused_max_m = 0 turns it off");
  if (s.chunk && (*s.chunk < nr || *s.chunk % nr != 0 || *s.chunk > kMaxRows))
    return error("chunk", "must be a multiple of nr (" + str(nr) +
                              ") up to 1048576, got " + str(*s.chunk));
  if (s.groups && (*s.groups < 1 || *s.groups > 64))
    return error("groups", "must be in [1, 64], got " + str(*s.groups));
  if (s.sparseMaxM && (*s.sparseMaxM < 0 || *s.sparseMaxM > mc))
    return error("sparse_max_m", "must be in [0, mc = " + str(mc) + "], got " +
                                     str(*s.sparseMaxM));
  // With a fused bucket W_down is packed chunk-major, which the two-pass
  // sparse GEMM 2 (one list over all of d_ff) does not read.
  if (s.sparseMaxM && s.fusedMaxM && *s.fusedMaxM > 0 &&
      *s.sparseMaxM > *s.fusedMaxM)
    return error("sparse_max_m", "must be at most fused_max_m (" +
                                     str(*s.fusedMaxM) +
                                     ") when the fused schedule is on, got " +
                                     str(*s.sparseMaxM));
  // vdpbf16ps tiles are written for zmm registers (16 f32 per bf16 pair
  // vector of 32).
  if (s.bf16Dot.value_or(false) && bits && bits != 512)
    return error("bf16_dot", "needs 512-bit vectors, got " + str(bits));
  return std::nullopt;

}

int64_t ffn::upPanelWidth(int64_t nr, int64_t vectorBits, bool gated) {
  int64_t lanes = vectorBits / 32;
  int64_t width = gated ? std::max(lanes, nr / 2) : nr;
  return width / lanes * lanes;
}

FusedShape ffn::fusedShape(int64_t chunk, int64_t groups, int64_t nrUp,
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

/// The K blocks of a strategy's description: ", K in blocks of 128 for row
/// blocks of 9-96 rows and of 512 above, panels in groups of 4".
static std::string kBlocksText(const CpuStrategy &s) {
  int64_t mr = *s.mr, kc = s.kc.value_or(0), tall = s.kcTall.value_or(0);
  if (!kc && !tall)
    return "";
  std::string few = std::to_string(mr + 1) + "-" +
                    std::to_string(kKBlockMaxTiles * mr) + " rows";
  std::string more = "over " + std::to_string(kKBlockMaxTiles * mr) + " rows";
  std::string text = ", K in blocks of ";
  if (kc && tall)
    text += std::to_string(kc) + " for row blocks of " + few + " and of " +
            std::to_string(tall) + " for those " + more;
  else
    text += std::to_string(kc ? kc : tall) + " for row blocks of " +
            (kc ? few : more);
  int64_t panels = s.nc.value_or(*s.nr) / *s.nr;
  if (panels > 1)
    text += ", panels in groups of " + std::to_string(panels);
  return text;
}

std::string ffn::describeStrategy(const CpuStrategy &s, bool gated, int64_t dFf,
                                  bool batchInvariant) {
  int64_t vectorBits = *s.vectorBits, mr = *s.mr, nr = *s.nr, mc = *s.mc;
  int64_t fusedMaxM = *s.fusedMaxM;
  std::string text;
  if (fusedMaxM > 0) {
    FusedShape f = fusedShape(*s.chunk, *s.groups,
                              upPanelWidth(nr, vectorBits, gated), dFf);
    text = "m <= " + std::to_string(fusedMaxM) +
           ": fused whole-FFN, d_ff in chunks of " + std::to_string(f.chunk) +
           " over " + std::to_string(f.groups) + " group" +
           (f.groups == 1 ? "" : "s") + "; m > " + std::to_string(fusedMaxM) +
           ": two-pass; ";
  }
  if (int64_t sparse = s.sparseMaxM.value_or(0); sparse > 0)
    text += "m <= " + std::to_string(sparse) +
            ": GEMM 2 skips W_down rows of all-zero activations; ";
  int64_t nrUp = upPanelWidth(nr, vectorBits, gated);
  text += "packed " + std::to_string(vectorBits) +
          "-bit vectors, register tile " + std::to_string(mr) + "x" +
          std::to_string(nr) +
          (gated ? " (gate+up " + std::to_string(nrUp) + "+" +
                       std::to_string(nrUp) + ")"
                 : std::string()) +
          ", cache block " + std::to_string(mc) + " rows" +
          kBlocksText(s) +
          (*s.prefetch ? ", weight-stream prefetch" : "") +
          (s.bf16Dot.value_or(false) ? ", bf16 pair dot products (vdpbf16ps)"
                                     : "") +
          ", fused bias+activation epilogue";
  if (batchInvariant)
    text += "; batch-invariant (one reduction order per row for every m)";
  return text;
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

double ffn::sparseListedShare(double nonzeroShare, int64_t m, bool pairRows) {
  double values = double(m) * (pairRows ? 2 : 1);
  return 1.0 - std::pow(1.0 - std::clamp(nonzeroShare, 0.0, 1.0), values);
}

/// One parallel phase of `flops` and `bytes` of weights whose work the
/// busiest thread holds `share` of, `active` threads taking part. Weights
/// streamed from DRAM share its bandwidth among the threads; cache-resident
/// ones are read at each core's own cache bandwidth.
static double phaseSeconds(double flops, double bytes, double share,
                           int64_t active, bool streamed,
                           const MachineAssumptions &m) {
  double compute = flops * share / (m.efficiency * m.peakGflops * 1e9);
  double memory = streamed ? bytes * share * active / (m.dramGBs * 1e9)
                           : bytes * share / (m.cacheGBs * 1e9);
  return std::max(compute, memory);
}

/// The busiest thread's share of `units` equal units, split the runtime's
/// way (contiguous ranges, the first threads one unit more).
static double evenShare(int64_t units, int64_t threads) {
  return double(ceilDiv(units, std::min(units, threads))) / units;
}

SchedulePrices ffn::priceSchedules(const FfnShape &s, const CpuStrategy &c,
                                   int64_t m, const MachineAssumptions &a) {
  int64_t threads = std::max<int64_t>(a.threads, 1);
  int64_t mats = s.gated ? 2 : 1;
  int64_t nr = *c.nr;
  int64_t nrUp = upPanelWidth(nr, *c.vectorBits, s.gated);
  // A grouped FFN's GEMM phases split panels x blocks.
  int64_t upPanels = s.blocks * ceilDiv(s.dFf, nrUp);
  int64_t downPanels = s.blocks * ceilDiv(s.dModel, nr);
  // A vdpbf16ps does the multiply-adds of two FMAs: pair tiles count half
  // the f32 peak's time per flop.
  // A vpdpbusd does the multiply-adds of four; with the per-group
  // conversion and scaling, integer-dot tiles measure 3.6x the f32 peak
  // (Zen 4, LLaMA-7B M = 256): a quarter of its time per flop, less 10%.
  double perFlop = s.intDot                     ? 0.28
                   : c.bf16Dot.value_or(false) ? 0.5
                                                : 1.0;
  double upFlops = perFlop * 2.0 * m * s.dModel * s.dFf * mats * s.blocks;
  double downFlops = perFlop * 2.0 * m * s.dFf * s.dModel * s.blocks;

  double upBytes =
      double(mats) * s.dModel * s.dFf * s.bytesPerWeight() * s.blocks;
  double downBytes = double(s.dFf) * s.dModel * s.bytesPerWeight() * s.blocks;

  bool streamed = s.weightBytes() > kStreamedWeightBytes;
  double sync = threads > 1 ? a.syncSeconds : 0;
  double cache = a.cacheGBs * 1e9;

  // The sparse GEMM 2's cost against the dense one's.
  bool sparse = s.zeroActivations && s.nonzeroShare >= 0;
  double read = sparse
                    ? std::min(kSparseReadCost *
                                   sparseListedShare(s.nonzeroShare, m,
                                                     c.bf16Dot.value_or(false)),
                               kSparseMaxCost)
                    : 1.0;
  SchedulePrices p;
  auto twoPass = [&](double downShare) {
    return phaseSeconds(upFlops, upBytes, evenShare(upPanels, threads),
                        std::min(upPanels, threads), streamed, a) +
           phaseSeconds(downFlops * downShare, downBytes * downShare,
                        evenShare(downPanels, threads),
                        std::min(downPanels, threads), streamed, a) +
           2.0 * m * s.dFf * s.blocks * 4 * evenShare(upPanels, threads) /
               cache +
           2 * sync;
  };
  p.twoPass = twoPass(1.0);
  // Sparse: one thread lists the rows in a phase of its own.
  p.twoPassSparse =
      sparse ? twoPass(read) + double(m) * s.dFf * 4 / cache + sync : p.twoPass;

  FusedShape f = fusedShape(c.chunk.value_or(kFusedChunk),
                            c.groups.value_or(threads), nrUp, s.dFf);
  int64_t active = std::min(f.groups, threads);
  int64_t busiestChunks =
      std::min(ceilDiv(f.groups, active) * f.chunksPerGroup, f.chunks);
  double share = double(busiestChunks) / f.chunks;
  double partial = double(m) * downPanels * nr * 4;
  double partials = busiestChunks * 2 * partial / cache +
                    f.groups * partial / (cache * std::min(m, threads)) + sync;
  p.fused = phaseSeconds(upFlops + downFlops, upBytes + downBytes, share,
                         active, streamed, a) +
            partials;
  p.sparse = p.fused;
  if (sparse) {
    double scan = double(busiestChunks) * m * f.chunk * 4 / cache;
    p.sparse =
        phaseSeconds(upFlops + downFlops * read, upBytes + downBytes * read,
                     share, active, streamed, a) +
        partials + scan;
  }
  return p;
}

/// The sparse GEMM 2's bucket: the largest m up to which every m prices
/// the sparse variant of its schedule (fused or two-pass) below the dense
/// one; `o`'s if it sets one.
static void chooseSparseBound(const FfnShape &s, const CpuStrategy &o,
                              const MachineAssumptions &a, CpuStrategy &c) {
  if (o.sparseMaxM) {
    c.sparseMaxM = o.sparseMaxM;
    return;
  }
  // What pays depends on the data: only a profiled share of nonzero
  // activations lets the model choose it.
  if (!s.zeroActivations || s.nonzeroShare < 0 || s.weightBits || s.blocks > 1)
    return;
  int64_t bound = 0;
  int64_t last = *c.fusedMaxM > 0 ? *c.fusedMaxM : std::min(kFusedMaxM, *c.mc);
  for (int64_t m = 1; m <= last; ++m) {
    SchedulePrices p = priceSchedules(s, c, m, a);
    bool fused = m <= *c.fusedMaxM;
    if ((fused ? p.sparse : p.twoPassSparse) >= (fused ? p.fused : p.twoPass))
      break;
    bound = m;
  }
  if (bound > 0)
    c.sparseMaxM = bound;
}

/// Whether a grouped FFN's blocks are its work units: they keep each
/// block's H in one thread's cache and need no barrier between the GEMMs
/// (at LLaMA-7B's G = 16, M = 256, the panel units' H of 11 MB goes
/// through memory twice; ffn-bench's panel units / block units on Emerald
/// Rapids, 48 interleaved rows: median 1.01, bf16 G = 16 1.04, f32 G = 16
/// 0.98; docs/performance.md), but the runtime then splits whole blocks:
/// worth it while the busiest thread gets at most 1/8 more than an even
/// share.
static bool blockUnitsPay(int64_t blocks, int64_t threads) {
  return 8 * ceilDiv(blocks, threads) * threads <= 9 * blocks;
}

CpuStrategy ffn::chooseStrategy(int64_t targetVectorBits, const FfnShape &s,
                                const CpuStrategy &o,
                                const MachineAssumptions &a) {
  int64_t vectorBits = o.vectorBits.value_or(targetVectorBits);
  int64_t lanes = vectorBits / 32;
  CpuStrategy c;
  c.vectorBits = vectorBits;
  c.nr = o.nr.value_or(2 * lanes);
  c.mr = o.mr.value_or(defaultMr(vectorBits));
  c.mc = o.mc.value_or(defaultMc(*c.mr));
  // K blocks of 16 KiB of weights (all matrices of a tile's K rows): two
  // of them, the one the tiles read and the one on its way, fit L1 beside
  // A's rows. Quantized tiles read K whole, and so does a row block too
  // tall for its partial sums to stay on the stack (an mc override).
  // A K no longer than one block has nothing to block.
  int64_t kc = kBlockRows(*c.nr, s.elementBytes);
  int64_t maxK = std::max(s.dModel, s.dFf);
  bool blockable = !s.weightBits && *c.mc * *c.nr <= kMaxKBlockSums;
  if (o.kc)
    c.kc = o.kc;
  else if (blockable && maxK > kc)
    c.kc = kc;
  // Row blocks of many tiles: K blocks 4x longer, where the longer GEMM's
  // whole-K panel does not stay in L2 beside the block's A rows
  // (kKBlockTallPanelBytes).
  int64_t tall = kKBlockTallFactor * kc;
  if (o.kcTall)
    c.kcTall = o.kcTall;
  else if (blockable && maxK > tall &&
           maxK * *c.nr * s.elementBytes > kKBlockTallPanelBytes)
    c.kcTall = tall;
  // Panels in groups of kKBlockGroupPanels, as many as the stack's partial
  // sums allow (mc x nc).
  if (o.nc)
    c.nc = o.nc;
  else if (c.kc.value_or(0) > 0 || c.kcTall.value_or(0) > 0)
    c.nc = *c.nr * std::clamp<int64_t>(kMaxKBlockSums / (*c.mc * *c.nr), 1,
                                       kKBlockGroupPanels);
  // Every size: the first tile of a block prefetches 2 KiB ahead, the later
  // ones run a K loop without prefetches, so cache-resident weights lose
  // nothing and gain where the first tile misses L2 (BERT-base f32, M = 8,
  // one thread, warm, median: 1.17 -> 0.92 ms with a prefetch; ffn-bench
  // 0.79-0.88x -> 1.16-1.26x oneDNN;
  // docs/bench-cpu-2026-11-29-prefetch-all.txt).
  c.prefetch = o.prefetch.value_or(true);
  if (o.bf16Dot) {
    c.bf16Dot = o.bf16Dot;
  } else if (s.bf16Dot && vectorBits == 512) {
    // Pair tiles or widening ones, priced at decode and at a full cache
    // block (one packed layout serves every bucket: packing the weights
    // twice would double their memory). Pair tiles read the same bytes
    // with half the instructions, so they win unless a machine's dot
    // product is slow; measured on Zen 4, LLaMA-7B, one thread: M = 256
    // 675 -> 307 ms, M = 16 43.0 -> 22.4 ms, M = 1 12.2 -> 10.8 ms.
    CpuStrategy dot = c, widen = c;
    dot.bf16Dot = true;
    widen.bf16Dot = false;
    bool cheaper = true;
    for (int64_t m : {int64_t(1), *c.mc}) {
      SchedulePrices pd = priceSchedules(s, dot, m, a),
                     pw = priceSchedules(s, widen, m, a);
      cheaper &= std::min(pd.twoPass, pd.fused) <=
                 std::min(pw.twoPass, pw.fused);
    }
    c.bf16Dot = cheaper;
  }
  // Quantized weights take the two-pass schedule: the fused one's
  // chunk-major W_down would cut the scale groups. So do a grouped FFN's
  // blocks: the fused schedule is not built for them.
  if (o.fusedMaxM == 0 || s.weightBits || s.blocks > 1) {
    c.fusedMaxM = 0;
    if (s.blocks > 1)
      c.blockUnits = o.blockUnits.value_or(blockUnitsPay(s.blocks, a.threads));
    chooseSparseBound(s, o, a, c);
    return c;
  }

  int64_t nr = *c.nr;
  int64_t perChunk = s.dFf / kFusedMinChunks / nr * nr;
  c.chunk = o.chunk.value_or(
      std::clamp(perChunk, nr, std::max(kFusedChunk / nr, int64_t(1)) * nr));
  int64_t nrUp = upPanelWidth(nr, vectorBits, s.gated);
  if (o.groups) {
    c.groups = o.groups;
  } else {
    int64_t chunks = fusedShape(*c.chunk, 64, nrUp, s.dFf).chunks;
    double best = 0;
    for (int64_t g = 1; g <= std::min<int64_t>(chunks, 64); ++g) {
      CpuStrategy t = c;
      t.groups = g;
      double price = priceSchedules(s, t, 1, a).fused;
      if (g == 1 || price < best) {
        best = price;
        c.groups = g;
      }
    }
  }
  if (o.fusedMaxM) {
    c.fusedMaxM = o.fusedMaxM;
  } else {
    c.fusedMaxM = 0;
    for (int64_t m = 1; m <= std::min(kFusedMaxM, *c.mc); ++m) {
      SchedulePrices p = priceSchedules(s, c, m, a);
      if (p.fused >= p.twoPass)
        break;
      c.fusedMaxM = m;
    }
  }
  // An asked-for sparse bucket beyond the fused one the model picked is
  // served by the two-pass sparse bucket, which reads W_down in the
  // two-pass layout: no fused bucket then.
  if (!o.fusedMaxM && o.sparseMaxM && *o.sparseMaxM > *c.fusedMaxM)
    c.fusedMaxM = 0;
  if (*c.fusedMaxM == 0)
    c.chunk = c.groups = std::nullopt;
  chooseSparseBound(s, o, a, c);
  return c;
}
