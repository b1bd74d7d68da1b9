//===- CostModel.cpp - the CPU strategy and its cost model ----------------===//

#include "ffn/Target/CPU/CostModel.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::ffn;

std::optional<OverrideError> ffn::checkOverrides(int64_t vectorBits,
                                                 const StrategyOverrides &o) {
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

std::string ffn::describeStrategy(const StrategyChoice &c, bool gated,
                                  int64_t dFf, bool batchInvariant) {
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

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

SchedulePrices ffn::priceSchedules(const FfnShape &s, const StrategyChoice &c,
                                   int64_t m, const MachineAssumptions &a) {
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

StrategyChoice ffn::chooseStrategy(int64_t vectorBits, const FfnShape &s,
                                   const StrategyOverrides &o,
                                   const MachineAssumptions &a) {
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
