//===- FfnExpandBf16.cpp - bf16 conversions the target lacks --------------===//

#include "ffn/IR/FfnOps.h"
#include "ffn/Target/CPU/CostModel.h"
#include "ffn/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNEXPANDBF16
#include "ffn/Target/CPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;

namespace {
struct FfnExpandBf16Pass : ffn::impl::FfnExpandBf16Base<FfnExpandBf16Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // With AVX512-BF16 the conversions are instructions: leave them to LLVM.
    if (TargetAttr target = TargetAttr::lookup(module))
      if (cpuTargetHasFeature(target.getIsa().str(), "avx512bf16"))
        return;
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
