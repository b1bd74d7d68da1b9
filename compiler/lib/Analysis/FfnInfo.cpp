//===- FfnInfo.cpp - sizes and work of an FFN -----------------------------===//

#include "ffnc/Analysis/FfnInfo.h"

#include <algorithm>

using namespace ffnc;

// Dimensions are at most kMaxDimension (2^18) and expert counts at most
// kMaxExperts (2^8, routed and shared each), so every product here, bytes
// of 512 stacked gated experts included (< 2^50), fits comfortably in 64
// bits.

static uint64_t normParams(const FfnSpec &spec) {
  uint64_t d = static_cast<uint64_t>(spec.dModel);
  switch (spec.norm) {
  case NormKind::None:
    return 0;
  case NormKind::LayerNorm:
    return 2 * d;
  case NormKind::RMSNorm:
    return d;
  }
  return 0;
}

static uint64_t routerParams(const FfnSpec &spec) {
  return spec.isMoe() ? static_cast<uint64_t>(spec.dModel) *
                            static_cast<uint64_t>(spec.experts)
                      : 0;
}

FfnCounts ffnc::countExpertParameters(const FfnSpec &spec) {
  // A grouped FFN: its blocks' (block-diagonal) matrices only.
  uint64_t d = static_cast<uint64_t>(spec.blockDModel());
  uint64_t f = static_cast<uint64_t>(spec.blockDFF());
  uint64_t blocks = static_cast<uint64_t>(spec.groups);
  FfnCounts c;
  c.matrixWeights = (spec.isGated() ? 3 : 2) * d * f * blocks;
  c.biasParams = ((spec.biasUp ? f : 0) + (spec.hasBiasGate() ? f : 0) +
                  (spec.biasDown ? d : 0)) *
                 blocks;
  return c;
}

/// `experts` expert FFNs, plus the norm and (for a mixture) the router.
static FfnCounts countWithExperts(const FfnSpec &spec, uint64_t experts) {
  FfnCounts c = countExpertParameters(spec);
  c.matrixWeights *= experts;
  c.biasParams *= experts;
  c.normParams = normParams(spec);
  c.routerParams = routerParams(spec);
  return c;
}

FfnCounts ffnc::countParameters(const FfnSpec &spec) {
  return countWithExperts(
      spec, spec.isMoe() ? static_cast<uint64_t>(spec.totalExperts()) : 1);
}

FfnCounts ffnc::countActiveParameters(const FfnSpec &spec) {
  return countWithExperts(
      spec, spec.isMoe() ? static_cast<uint64_t>(spec.activeExperts()) : 1);
}

/// Bytes of one expert FFN's matrices and biases.
static uint64_t expertBytes(const FfnSpec &spec) {
  FfnCounts c = countExpertParameters(spec);
  uint64_t element = byteWidth(spec.dtype);
  if (spec.weightQuant == WeightQuant::None)
    return c.ffnParams() * element;
  // Quantized matrices: 1 or 1/2 byte per weight, plus one scale (in the
  // dtype) per group of input rows of each column.
  // (Per block of a grouped FFN: groups restart at each block's rows.)
  uint64_t d = static_cast<uint64_t>(spec.blockDModel());
  uint64_t f = static_cast<uint64_t>(spec.blockDFF());
  uint64_t g = static_cast<uint64_t>(spec.quantGroup);
  uint64_t scales = ((spec.isGated() ? 2 : 1) * ((d + g - 1) / g) * f +
                     ((f + g - 1) / g) * d) *
                    static_cast<uint64_t>(spec.groups);
  uint64_t integers = spec.weightQuant == WeightQuant::Int8
                          ? c.matrixWeights
                          : (c.matrixWeights + 1) / 2;
  // Zero points: one byte per group and column.
  return integers + scales * element + (spec.zeroPoints ? scales : 0) +
         c.biasParams * element;
}

/// `experts` expert FFNs' bytes, plus the norm's and the router's, which
/// stay in the dtype (routing is too sensitive to quantize).
static uint64_t bytesWithExperts(const FfnSpec &spec, uint64_t experts) {
  return experts * expertBytes(spec) +
         (normParams(spec) + routerParams(spec)) * byteWidth(spec.dtype);
}

uint64_t ffnc::weightBytes(const FfnSpec &spec) {
  return bytesWithExperts(
      spec, spec.isMoe() ? static_cast<uint64_t>(spec.totalExperts()) : 1);
}

uint64_t ffnc::weightBytesRead(const FfnSpec &spec, uint64_t tokens) {
  if (!spec.isMoe())
    return weightBytes(spec);
  uint64_t experts = static_cast<uint64_t>(spec.experts);
  // tokens * top_k cannot overflow once tokens < experts (<= 256).
  uint64_t routed =
      tokens >= experts
          ? experts
          : std::min(experts, tokens * static_cast<uint64_t>(spec.topK));
  return bytesWithExperts(spec,
                          routed + static_cast<uint64_t>(spec.sharedExperts));
}

uint64_t ffnc::flopsPerToken(const FfnSpec &spec) {
  return 2 * (countActiveParameters(spec).matrixWeights + routerParams(spec));
}

double ffnc::arithmeticIntensity(const FfnSpec &spec, uint64_t tokens) {
  double flops = static_cast<double>(flopsPerToken(spec)) * tokens;
  double activationBytes =
      2.0 * static_cast<double>(tokens) * spec.dModel * byteWidth(spec.dtype);
  return flops /
         (static_cast<double>(weightBytesRead(spec, tokens)) + activationBytes);
}
