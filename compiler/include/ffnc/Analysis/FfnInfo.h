//===- FfnInfo.h - sizes and work of an FFN ---------------------*- C++ -*-===//
//
// The numbers `ffnc info` prints. Formulas (docs/info.md):
//   matrix weights: plain 2*d*F, gated 3*d*F
//   biases: F per up/gate bias, d for the down bias; norm: 2*d (LayerNorm)
//   or d (RMSNorm)
//   FLOPs per token: 2 * matrix weights (one multiply-add per weight)
//   bytes at M tokens: all parameters + M*d in + M*d out, in the dtype
// A mixture of experts holds experts + shared_experts such FFNs and a
// router [d, experts] (in the dtype, never quantized); a token runs the
// router, top_k routed experts and the shared ones.
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
  /// A mixture of experts' router matrix, d_model * experts; 0 otherwise.
  uint64_t routerParams = 0;

  /// The FFN's own parameters (matrices, biases and router), as a model
  /// card counts them; the norm's scale/shift belong to the surrounding
  /// block.
  uint64_t ffnParams() const {
    return matrixWeights + biasParams + routerParams;
  }
  uint64_t totalParams() const { return ffnParams() + normParams; }
};

/// Every parameter the kernel holds: for a mixture of experts all its
/// expert FFNs (routed and shared) and the router.
FfnCounts countParameters(const FfnSpec &spec);
/// One expert FFN's matrices and biases (no norm, no router); for a dense
/// FFN the FFN itself.
FfnCounts countExpertParameters(const FfnSpec &spec);
/// The parameters one token uses: for a mixture of experts the router, the
/// norm and top_k + shared_experts expert FFNs; for a dense FFN all of
/// them (countParameters).
FfnCounts countActiveParameters(const FfnSpec &spec);
/// Bytes of every parameter (matrices, biases, norm, router) in the
/// storage dtype, the matrices in their quantized form if quantized.
uint64_t weightBytes(const FfnSpec &spec);
/// Bytes of the parameters that `tokens` rows read at most: for a dense FFN
/// all of them (weightBytes); for a mixture of experts the router, the
/// norm, the shared experts and min(experts, tokens * top_k) routed ones,
/// as if the rows chose as many different experts as they can. At one token
/// exactly the active parameters' bytes.
uint64_t weightBytesRead(const FfnSpec &spec, uint64_t tokens);
/// Multiply-add FLOPs per token row: 2 per matrix weight the row uses (for
/// a mixture of experts the router's and the active experts').
uint64_t flopsPerToken(const FfnSpec &spec);
/// FLOPs per byte of compulsory memory traffic at `tokens` rows: the
/// weights read (weightBytesRead) once, the input read once and the output
/// written once.
double arithmeticIntensity(const FfnSpec &spec, uint64_t tokens);

} // namespace ffnc

#endif // FFNC_ANALYSIS_FFNINFO_H
