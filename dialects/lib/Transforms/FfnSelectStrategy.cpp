//===- FfnSelectStrategy.cpp - choose the CPU schedule --------------------===//

#include "ffn/IR/FfnOps.h"
#include "ffn/Transforms/Passes.h"
#include "ffn/Transforms/StrategyChoice.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNSELECTSTRATEGY
#include "ffn/Transforms/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;

namespace {
struct FfnSelectStrategyPass
    : ffn::impl::FfnSelectStrategyBase<FfnSelectStrategyPass> {
  using FfnSelectStrategyBase::FfnSelectStrategyBase;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](FfnOp op) {
      if (op.getStrategy())
        return WalkResult::advance();
      uint64_t weights = (op.getGated() ? 3 : 2) *
                         static_cast<uint64_t>(op.getDModel()) * op.getDFf() *
                         (op.getStorageType().getIntOrFloatBitWidth() / 8);
      StrategyChoice c = chooseStrategy(vectorBits, weights, mr, nr, mc,
                                        static_cast<int>(prefetch));
      int64_t tileMr = c.mr, tileNr = c.nr, blockMc = c.mc;
      int64_t bits = vectorBits;
      if (failed(StrategyAttr::verify([&] { return op.emitOpError(); }, bits,
                                      tileMr, tileNr, blockMc, c.prefetch)))
        return WalkResult::interrupt();
      op.setStrategyAttr(StrategyAttr::get(op.getContext(), bits, tileMr,
                                           tileNr, blockMc, c.prefetch));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
