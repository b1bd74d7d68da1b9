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
      // A weight panel (d_model x nr floats, 512 KiB for d_model 4096)
      // stays in L2 while the rows of a block stream past it, so the larger
      // the block, the fewer times the weights are read from memory; the
      // mr-row tile being computed needs only its own rows of A. 256 rows
      // measured best for BERT-base and LLaMA-7B alike (ffn-bench).
      int64_t blockMc = mc ? mc : 256 / tileMr * tileMr;
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
