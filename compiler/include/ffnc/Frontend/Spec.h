//===- Spec.h - a checked, fully resolved FFN spec --------------*- C++ -*-===//
//
// What Sema produces from one `ffn` block: every dimension evaluated, every
// default applied. Later stages (MLIRGen, info, the reference) read only this.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_FRONTEND_SPEC_H
#define FFNC_FRONTEND_SPEC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ffnc {

enum class Activation { Relu, Gelu, GeluTanh, Silu, Sigmoid, Identity };
enum class Gate { None, Glu, Reglu, Geglu, Swiglu, Bilinear };
enum class NormKind { None, LayerNorm, RMSNorm };
enum class NormPosition { Pre, Post };
enum class DType { F32, BF16, F16 };
/// How the weight matrices are stored: in the spec's dtype, or quantized
/// symmetrically per group of `quantGroup` input rows of one output column
/// (a scale per group, in the spec's dtype).
enum class WeightQuant { None, Int8, Int4 };
/// How a mixture of experts weighs the experts it selects (ffn_router in
/// ffn/kernel_abi.h): softmax over all routed experts then the top k, or
/// the top k logits then softmax over those.
enum class Router { SoftmaxTopK, TopKSoftmax };

llvm::StringRef toString(Activation a);
llvm::StringRef toString(Gate g);
llvm::StringRef toString(NormKind n);
llvm::StringRef toString(NormPosition p);
llvm::StringRef toString(DType d);
llvm::StringRef toString(WeightQuant q);
llvm::StringRef toString(Router r);
std::optional<Router> parseRouter(llvm::StringRef s);
llvm::ArrayRef<llvm::StringRef> routerNames();

std::optional<Activation> parseActivation(llvm::StringRef s);
std::optional<Gate> parseGate(llvm::StringRef s);
std::optional<NormKind> parseNormKind(llvm::StringRef s);
std::optional<NormPosition> parseNormPosition(llvm::StringRef s);
std::optional<DType> parseDType(llvm::StringRef s);

llvm::ArrayRef<llvm::StringRef> activationNames();
llvm::ArrayRef<llvm::StringRef> gateNames();
llvm::ArrayRef<llvm::StringRef> normKindNames(); // including "none"
llvm::ArrayRef<llvm::StringRef> dtypeNames();

/// The activation a gate variant applies to its gate projection.
Activation gateActivation(Gate g);
/// Bytes per element of a storage dtype.
unsigned byteWidth(DType d);

struct FfnSpec {
  std::string name;
  llvm::SMLoc loc; ///< The block's name in the source.

  int64_t dModel = 0;
  int64_t dFF = 0;
  /// For a plain FFN the activation; for a gated one what the gate applies.
  Activation activation = Activation::Relu;
  Gate gate = Gate::None;
  bool biasUp = true;   ///< b1 (plain) or bu (gated)
  bool biasGate = true; ///< bg; meaningful only when gated
  bool biasDown = true; ///< b2 (plain) or bd (gated)
  bool residual = false;
  /// Every token count uses one reduction order per row, so a row's
  /// output bits do not depend on M or on the rows batched with it.
  bool batchInvariant = false;
  NormKind norm = NormKind::None;
  NormPosition normPosition = NormPosition::Pre;
  double normEps = 1e-5;
  DType dtype = DType::F32;
  /// Weight-only quantization (activations stay in `dtype`).
  WeightQuant weightQuant = WeightQuant::None;
  int64_t quantGroup = 0; ///< input rows per scale; 0 without quantization
  /// With quantized weights: the matmuls' inputs quantized to int8 per row
  /// and group as well (integer dot products; a numerics contract change).
  bool int8Activations = false;
  /// int4 only: asymmetric, a zero point per group and column.
  bool zeroPoints = false;
  /// ReLU / ReGLU: the expected share of hidden activations that are exactly
  /// zero at decode (from profiling the model; -1: not given). Changes no
  /// result; the cost model prices the sparse GEMM 2 with it.
  double activationSparsity = -1;

  /// A mixture of experts (experts > 0): `experts` routed expert FFNs of
  /// this family and width, of which each token takes the top `topK`
  /// (weighted by the router), plus `sharedExperts` always-on ones (weight
  /// 1). Residual and norm apply once, around the mixture.
  int64_t experts = 0;
  int64_t topK = 0;
  int64_t sharedExperts = 0;
  Router router = Router::SoftmaxTopK;
  /// softmax_topk only: the selected weights divided by their sum.
  bool routerNormalize = false;

  /// A grouped (block-diagonal) FFN (groups > 1): d_model and d_ff split
  /// into `groups` independent blocks; block g maps input columns
  /// [g * d_model / groups, ...) to the same output columns through its own
  /// FFN of width d_ff / groups. Residual and norm act on the whole row.
  int64_t groups = 1;

  /// The block whose parameters this one uses (empty: its own): the
  /// runtime binds this kernel to that one's packed parameters
  /// (ffn_kernel_share_params), so their memory is paid once.
  std::string share;
  llvm::SMRange shareRange; ///< The `share` value in the source.

  bool isGated() const { return gate != Gate::None; }
  bool isMoe() const { return experts > 0; }
  /// Expert FFNs whose weights a kernel holds (routed and shared).
  int64_t totalExperts() const { return experts + sharedExperts; }
  /// Expert FFNs each token runs.
  int64_t activeExperts() const { return topK + sharedExperts; }
  bool isGrouped() const { return groups > 1; }
  /// One block's widths (the model's when not grouped).
  int64_t blockDModel() const { return dModel / groups; }
  int64_t blockDFF() const { return dFF / groups; }
  bool hasBiasGate() const { return isGated() && biasGate; }
};

/// One parameter tensor of a kernel: a matrix [rows = in, cols = out] or,
/// with cols == 0, a vector of `rows` elements.
struct ParamInfo {
  std::string name;
  int64_t rows = 0;
  int64_t cols = 0;
  /// > 0: that many tensors of this shape stacked, one per expert FFN (a
  /// mixture) or per block (a grouped FFN).
  int64_t experts = 0;
  int rank() const { return cols == 0 ? 1 : 2; }
};

/// The parameters of `spec` in the one order every stage uses (MLIRGen's
/// function arguments after the input, the kernel ABI's params array):
/// w_up, w_gate, w_down, b_up, b_gate, b_down, norm_scale, norm_shift,
/// each only if the spec has it; a mixture of experts stacks the expert
/// FFNs' weights and biases (experts = totalExperts()) and adds w_router
/// [d_model, experts] last; a grouped FFN stacks its blocks' weights and
/// biases (experts = groups, each of one block's shape).
std::vector<ParamInfo> kernelParams(const FfnSpec &spec);

} // namespace ffnc

#endif // FFNC_FRONTEND_SPEC_H
