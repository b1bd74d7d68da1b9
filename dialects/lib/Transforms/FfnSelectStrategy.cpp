//===- FfnSelectStrategy.cpp - choose the CPU schedule --------------------===//

#include "ffn/IR/FfnOps.h"
#include "ffn/Transforms/Passes.h"

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
      int64_t lanes = vectorBits / 32;
      // Two vectors of accumulators per row; as many rows as the register
      // file holds next to the two weight vectors and the broadcast:
      // 8 x 2 = 16 of 32 zmm, 6 x 2 = 12 of 16 ymm.
      int64_t tileNr = nr ? nr : 2 * lanes;
      int64_t tileMr = mr ? mr : (vectorBits == 512 ? 8 : 6);
      int64_t blockMc = mc;
      if (!blockMc) {
        // Keep an mc x d_model f32 block of activations within 256 KiB.
        int64_t rows = (256 * 1024) / (4 * op.getDModel());
        blockMc = std::max<int64_t>(tileMr, std::min<int64_t>(rows, 256));
        blockMc = blockMc / tileMr * tileMr;
      }
      int64_t bits = vectorBits;
      if (failed(StrategyAttr::verify([&] { return op.emitOpError(); }, bits,
                                      tileMr, tileNr, blockMc)))
        return WalkResult::interrupt();
      op.setStrategyAttr(StrategyAttr::get(op.getContext(), bits, tileMr,
                                           tileNr, blockMc));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
