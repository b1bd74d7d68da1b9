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
      StrategyOverrides o;
      o.mr = mr;
      o.nr = nr;
      o.mc = mc;
      o.prefetch = static_cast<int>(prefetch);
      o.fusedMaxM = fusedMaxM;
      o.chunk = chunk;
      o.groups = groups;
      StrategyChoice c = chooseStrategy(vectorBits, weights, op.getDFf(), o);
      if (failed(StrategyAttr::verify(
              [&] { return op.emitOpError(); }, c.vectorBits, c.mr, c.nr, c.mc,
              c.prefetch, c.fusedMaxM, c.chunk, c.groups)))
        return WalkResult::interrupt();
      op.setStrategyAttr(StrategyAttr::get(op.getContext(), c.vectorBits, c.mr,
                                           c.nr, c.mc, c.prefetch, c.fusedMaxM,
                                           c.chunk, c.groups));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
