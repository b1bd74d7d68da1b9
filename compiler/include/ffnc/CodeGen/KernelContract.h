//===- KernelContract.h - what a lowered kernel promises --------*- C++ -*-===//
//
// The compiler's view of #ffn.kernel_abi: the kernel glue builds the
// descriptor from it and the header writer the C declarations.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_CODEGEN_KERNELCONTRACT_H
#define FFNC_CODEGEN_KERNELCONTRACT_H

#include "ffnc/Frontend/Spec.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ffnc {

/// One lowered kernel's contract, read from its #ffn.kernel_abi and its
/// memref-level signature before the LLVM lowering (so the glue, the
/// header and the kernel can never disagree): the model it computes, the
/// shape of each argument (ShapedType::kDynamic = M rows), and for each
/// parameter its name, logical shape, packed size and pack function.
struct KernelSignature {
  struct Arg {
    std::vector<int64_t> shape;
    unsigned elementBytes = 4;
  };
  std::string name; ///< the spec's name, also the lowered func's
  /// The model.
  int64_t dModel = 0, dFF = 0;
  DType dtype = DType::F32;
  Activation activation = Activation::Identity;
  bool gated = false, residual = false;
  NormKind norm = NormKind::None;
  NormPosition normPosition = NormPosition::Pre;
  double normEps = 0;
  /// What the GEMM operands are rounded to (docs/numerics.md).
  DType operandType = DType::F32;
  /// Each parameter's name and logical shape, in argument order.
  std::vector<ParamInfo> paramInfo;
  Arg input, output;
  std::vector<Arg> params; ///< packed shapes, kernelParams() order
  std::vector<std::string> packFunctions; ///< "" = copy as is
  std::vector<Arg> packSources;           ///< logical [in, out] shapes
  bool hasWorkspace = false;
  int64_t workspacePerRow = 0; ///< bytes
  std::string strategy;        ///< human-readable schedule
  /// Units of each phase (-1 = m rows), per token-count bucket. Empty: the
  /// kernel is one indivisible call (the baseline path).
  std::vector<std::vector<int64_t>> phaseUnits;
  /// The largest m of each bucket but the last (ascending).
  std::vector<int64_t> bucketMaxM;

  /// Device kernels (NVIDIA targets): the launch plan and the cubin.
  struct DeviceLaunch {
    std::string kernel;
    int64_t minM = 1, maxM = INT64_MAX, rowsPerBlock = 1, gridY = 1, gridZ = 1,
            threads = 256, sharedBytes = 0;
    std::vector<std::pair<int64_t, int64_t>> args; ///< (kind, index)
  };
  std::vector<DeviceLaunch> launches;
  std::string deviceModule; ///< the gpu.module's name
  std::string deviceImage;  ///< its cubin
  bool isDevice() const { return !deviceModule.empty(); }
};

} // namespace ffnc

#endif // FFNC_CODEGEN_KERNELCONTRACT_H
