//===- FfnInfo.cpp - sizes and work of an FFN -----------------------------===//

#include "ffnc/Analysis/FfnInfo.h"

using namespace ffnc;

FfnCounts ffnc::countParameters(const FfnSpec &spec) {
  // Dimensions are at most kMaxDimension (2^18), so every product here fits
  // comfortably in 64 bits.
  uint64_t d = static_cast<uint64_t>(spec.dModel);
  uint64_t f = static_cast<uint64_t>(spec.dFF);
  FfnCounts c;
  c.matrixWeights = (spec.isGated() ? 3 : 2) * d * f;
  c.biasParams = (spec.biasUp ? f : 0) + (spec.hasBiasGate() ? f : 0) +
                 (spec.biasDown ? d : 0);
  switch (spec.norm) {
  case NormKind::None:
    break;
  case NormKind::LayerNorm:
    c.normParams = 2 * d;
    break;
  case NormKind::RMSNorm:
    c.normParams = d;
    break;
  }
  return c;
}

uint64_t ffnc::weightBytes(const FfnSpec &spec) {
  FfnCounts c = countParameters(spec);
  uint64_t element = byteWidth(spec.dtype);
  if (spec.weightQuant == WeightQuant::None)
    return c.totalParams() * element;
  // Quantized matrices: 1 or 1/2 byte per weight, plus one scale (in the
  // dtype) per group of input rows of each column.
  uint64_t d = static_cast<uint64_t>(spec.dModel);
  uint64_t f = static_cast<uint64_t>(spec.dFF);
  uint64_t g = static_cast<uint64_t>(spec.quantGroup);
  uint64_t scales = (spec.isGated() ? 2 : 1) * ((d + g - 1) / g) * f +
                    ((f + g - 1) / g) * d;
  uint64_t integers = spec.weightQuant == WeightQuant::Int8
                          ? c.matrixWeights
                          : (c.matrixWeights + 1) / 2;
  // Zero points: one byte per group and column.
  return integers + scales * element + (spec.zeroPoints ? scales : 0) +
         (c.totalParams() - c.matrixWeights) * element;
}

uint64_t ffnc::flopsPerToken(const FfnSpec &spec) {
  return 2 * countParameters(spec).matrixWeights;
}

double ffnc::arithmeticIntensity(const FfnSpec &spec, uint64_t tokens) {
  double flops = static_cast<double>(flopsPerToken(spec)) * tokens;
  double activationBytes =
      2.0 * static_cast<double>(tokens) * spec.dModel * byteWidth(spec.dtype);
  return flops / (static_cast<double>(weightBytes(spec)) + activationBytes);
}
