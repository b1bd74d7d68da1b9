//===- FfnApproximateMath.cpp - polynomial exp/tanh/erf -------------------===//

#include "ffn/Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNAPPROXIMATEMATH
#include "ffn/Transforms/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;

namespace {
struct FfnApproximateMathPass
    : ffn::impl::FfnApproximateMathBase<FfnApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Widens non-f32 math ops to f32 and expands the f32 ones into
    // polynomials (exp, expm1, log, log1p, tanh, erf, sin, cos, atan, ...).
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
