//===- FfnSelectStrategy.cpp - choose the CPU schedule --------------------===//

#include "ffn/IR/FfnOps.h"
#include "ffn/Transforms/Passes.h"
#include "ffn/Transforms/ScheduleCost.h"

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
      if (threads < 1 || threads > 1024) {
        op.emitOpError("threads must be in [1, 1024], got ")
            << static_cast<int64_t>(threads);
        return WalkResult::interrupt();
      }
      FfnShape shape{op.getDModel(), op.getDFf(), op.getGated(),
                     op.getStorageType().getIntOrFloatBitWidth() / 8};
      MachineAssumptions machine;
      machine.threads = threads;
      StrategyOverrides o;
      o.mr = mr;
      o.nr = nr;
      o.mc = mc;
      o.prefetch = static_cast<int>(prefetch);
      o.fusedMaxM = fusedMaxM;
      o.chunk = chunk;
      o.groups = groups;
      StrategyChoice c = chooseStrategy(vectorBits, shape, o, machine);
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
