//===- Layout.cpp - sizes of one FFN's packed kernel ----------------------===//

#include "Layout.h"

#include "ffn/Target/CPU/CostModel.h"

using namespace mlir;
using namespace mlir::ffn;

static int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

cpu::Layout cpu::layoutFor(FfnOp op, CpuStrategyAttr attr) {
  // The op's verifier has made the strategy complete.
  const CpuStrategy &s = attr.getKnobs();
  Layout l;
  l.d = op.getBlockDModel();
  l.f = op.getBlockDFf();
  l.dModel = op.getDModel();
  l.blocks = op.getNumBlocks();
  l.blockUnits = l.blocks > 1 && s.blockUnits.value_or(false);
  l.lanes = *s.vectorBits / 32;
  l.mr = *s.mr;
  l.mc = *s.mc;
  l.kc = s.kc.value_or(0);
  l.kcTall = s.kcTall.value_or(0);
  l.groupPanels = s.nc.value_or(*s.nr) / *s.nr;
  l.prefetch = *s.prefetch;
  l.nrUp = upPanelWidth(*s.nr, *s.vectorBits, op.getGated());
  l.npUp = (l.f + l.nrUp - 1) / l.nrUp;
  l.fp = l.npUp * l.nrUp;
  l.nrDown = *s.nr;
  l.npDown = (l.d + l.nrDown - 1) / l.nrDown;
  l.dp = l.npDown * l.nrDown;
  bool f32 = op.getStorageType().isF32();
  bool preNorm =
      op.getNorm() && op.getNorm()->getPosition() == NormPosition::pre;
  l.dot = s.bf16Dot.value_or(false);
  if (std::optional<WeightQuantAttr> q = op.getWeightQuant()) {
    l.quantBits = q->getKind() == WeightQuantKind::int8 ? 8 : 4;
    l.group = q->getGroup();
    l.intDot = q->getInt8Activations();
    l.zeroPoints = q->getZeroPoints();
    l.batchInvariant = op.getBatchInvariant();
  }
  // Widening tiles read an f32 copy of a bf16/f16 input; pair tiles read
  // bf16 input as is.
  // Integer dot products quantize x itself unless it is pre-normed.
  // A grouped FFN gathers each block's columns of x (the GEMMs take
  // identity-layout views, which a column slice of x is not).
  l.needA = preNorm || (!f32 && !l.dot && !l.intDot) || l.blocks > 1;

  // A mixture of experts sums its experts' outputs in a row phase.
  l.finishInGemm =
      !op.getMoe() &&
      !(op.getNorm() && op.getNorm()->getPosition() == NormPosition::post);
  if (std::optional<MoeAttr> moe = op.getMoe()) {
    l.moeExperts = moe->getExperts();
    l.moeTotal = moe->totalExperts();
    l.moeActive = moe->activeExperts();
    l.moeTopK = moe->getTopK();
  }
  // Row strides are multiples of 16 floats so every section and row of the
  // 64-byte aligned workspace stays 64-byte aligned.
  l.aWidth = l.needA ? roundUp(l.d, 16) : 0;
  l.hWidth = roundUp(l.fp, 16);
  l.oWidth = roundUp(l.dp, 16);
  if (*s.fusedMaxM > 0) {
    l.fusedMaxM = *s.fusedMaxM;
    // The verifier makes the chunk a multiple of nr, hence of nrUp.
    FusedShape f = fusedShape(*s.chunk, *s.groups, l.nrUp, l.f);
    l.panelsPerChunk = f.panelsPerChunk;
    l.chunk = f.chunk;
    l.chunks = f.chunks;
    l.chunksPerGroup = f.chunksPerGroup;
    l.groups = f.groups;
  }
  l.sparseMaxM = s.sparseMaxM.value_or(0);
  return l;
}
