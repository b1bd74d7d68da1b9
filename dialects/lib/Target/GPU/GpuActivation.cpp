//===- GpuActivation.cpp - the activations as the SM computes them fast ---===//
//
// A GEMM's epilogue applies the activation to every element of its tile
// while, with one block an SM for the large tiles, the tensor cores wait:
// its instruction count is the epilogue's. The shared definitions
// (ffn/Transforms/Activation.h) divide with div.rn, a dozen instructions
// and a slow path in SASS, and take gelu_tanh through libdevice's tanhf (a
// polynomial, an ex2 and a reciprocal, then 1 + tanh's cancellation for
// negative x). Here the logistic forms take one ex2 and one rcp.approx
// (at most 1 ulp) each:
//
//   sigmoid(x)   = 1 / (1 + 2^(-x log2 e))
//   silu(x)      = x * sigmoid(x)
//   gelu_tanh(x) = 0.5 x (1 + tanh(u)) = x * sigmoid(2 u),
//                  u = sqrt(2 / pi) (x + 0.044715 x^3)
//
// As with the division, a very negative argument overflows the power to
// +Inf and the reciprocal to exactly 0, never NaN; NaN stays NaN. The
// numerics bound (docs/numerics.md: 16 ulps for the approximations) covers
// the ex2 and the reciprocal. relu and the erf GELU are the shared ones.
//
//===----------------------------------------------------------------------===//

#include "KernelIR.h"

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::gpu_target;

namespace {
/// 1 / (1 + 2^t) of an f32 scalar. The power flushes results below 2^-126
/// to zero (ftz), which 1 + 2^t cannot tell apart; math.exp2's ex2 without
/// ftz took three more instructions an element to keep them.
Value logistic2(ImplicitLocOpBuilder &b, KernelIR &ir, Value t) {
  Value power =
      LLVM::CallIntrinsicOp::create(
          b, b.getF32Type(), b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"), t)
          .getResult(0);
  return NVVM::RcpApproxFtzF32Op::create(b, b.getF32Type(),
                                         ir.addf(power, ir.f32(1.0)));
}
} // namespace

Value mlir::ffn::gpu_target::buildGpuActivation(ImplicitLocOpBuilder &b,
                                                Activation activation,
                                                Value v) {
  KernelIR ir(b);
  const double log2e = M_LOG2E;
  switch (activation) {
  case Activation::sigmoid:
    return logistic2(b, ir, ir.mulf(v, ir.f32(-log2e)));
  case Activation::silu:
    return ir.mulf(v, logistic2(b, ir, ir.mulf(v, ir.f32(-log2e))));
  case Activation::gelu_tanh: {
    // -2 u log2 e = x (c1 + c3 x^2).
    double c1 = -2.0 * std::sqrt(2.0 / M_PI) * log2e;
    double c3 = c1 * 0.044715;
    Value poly = ir.fma(ir.mulf(v, v), ir.f32(c3), ir.f32(c1));
    return ir.mulf(v, logistic2(b, ir, ir.mulf(v, poly)));
  }
  case Activation::relu:
  case Activation::gelu:
  case Activation::identity:
    return buildActivation(b, b.getLoc(), activation, v);
  }
  llvm_unreachable("unknown activation");
}
