//===- FfnMatmulLoopOrder.cpp - (m, k, n) loops for plain matmuls ---------===//

#include "ffn/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNMATMULLOOPORDER
#include "ffn/Target/CPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;

namespace {
struct FfnMatmulLoopOrderPass
    : ffn::impl::FfnMatmulLoopOrderBase<FfnMatmulLoopOrderPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });
    for (linalg::MatmulOp mm : matmuls) {
      // Discardable attributes (ffn.role) would be lost by generalization.
      NamedAttrList kept;
      for (NamedAttribute attr : mm->getDiscardableAttrs())
        kept.push_back(attr);
      rewriter.setInsertionPoint(mm);
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, mm);
      if (failed(generic))
        return signalPassFailure();
      // Loops of linalg.matmul are (m, n, k); make them (m, k, n).
      FailureOr<linalg::GenericOp> ordered =
          linalg::interchangeGenericOp(rewriter, *generic, {0, 2, 1});
      if (failed(ordered))
        return signalPassFailure();
      for (NamedAttribute attr : kept)
        (*ordered)->setAttr(attr.getName(), attr.getValue());
    }
  }
};
} // namespace
