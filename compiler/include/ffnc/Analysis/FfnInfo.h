//===- FfnInfo.h - sizes and work of an FFN ---------------------*- C++ -*-===//
//
// The numbers `ffnc info` prints. Formulas (docs/info.md):
//   matrix weights: plain 2*d*F, gated 3*d*F
//   biases: F per up/gate bias, d for the down bias; norm: 2*d (LayerNorm)
//   or d (RMSNorm)
//   FLOPs per token: 2 * matrix weights (one multiply-add per weight)
//   bytes at M tokens: all parameters + M*d in + M*d out, in the dtype
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_ANALYSIS_FFNINFO_H
#define FFNC_ANALYSIS_FFNINFO_H

#include "ffnc/Frontend/Spec.h"

#include <cstdint>

namespace ffnc {

struct FfnCounts {
  uint64_t matrixWeights = 0;
  uint64_t biasParams = 0;
  uint64_t normParams = 0;

  /// The FFN's own parameters (matrices and biases), as a model card counts
  /// them; the norm's scale/shift belong to the surrounding block.
  uint64_t ffnParams() const { return matrixWeights + biasParams; }
  uint64_t totalParams() const { return ffnParams() + normParams; }
};

FfnCounts countParameters(const FfnSpec &spec);
/// Bytes of every parameter (matrices, biases, norm) in the storage dtype.
uint64_t weightBytes(const FfnSpec &spec);
/// Multiply-add FLOPs per token row: 2 per matrix weight.
uint64_t flopsPerToken(const FfnSpec &spec);
/// FLOPs per byte of compulsory memory traffic at `tokens` rows: weights
/// read once, the input read once and the output written once.
double arithmeticIntensity(const FfnSpec &spec, uint64_t tokens);

} // namespace ffnc

#endif // FFNC_ANALYSIS_FFNINFO_H
