//===- FfnGpuSelectStrategy.cpp - choose the GPU schedule -----------------===//
//
// The pass only translates between the IR and the MLIR-free cost model
// (ffn/Target/GPU/CostModel.h), which the driver's warnings also ask: what
// the kernels are built from is what --emit prints and ffnc warns about.
//
//===----------------------------------------------------------------------===//

#include "FfnShape.h"

#include "ffn/IR/FfnOps.h"
#include "ffn/Target/GPU/CostModel.h"
#include "ffn/Target/GPU/Passes.h"

#include "mlir/AsmParser/AsmParser.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNGPUSELECTSTRATEGY
#include "ffn/Target/GPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;

namespace {
struct FfnGpuSelectStrategyPass
    : ffn::impl::FfnGpuSelectStrategyBase<FfnGpuSelectStrategyPass> {
  using FfnGpuSelectStrategyBase::FfnGpuSelectStrategyBase;

  /// The knobs `overrides` fixes (none when it is empty).
  GpuStrategy fixed;

  LogicalResult initialize(MLIRContext *ctx) override {
    if (overrides.empty())
      return success();
    // The attribute's own parser: its rules and its words.
    Attribute parsed = parseAttribute(overrides, ctx);
    auto strategy = dyn_cast_or_null<GpuStrategyAttr>(parsed);
    if (!strategy) {
      if (parsed)
        emitError(UnknownLoc::get(ctx),
                  "ffn-gpu-select-strategy: overrides must be a "
                  "#ffn.gpu_strategy, got ")
            << parsed;
      return failure();
    }
    fixed = strategy.getKnobs();
    if (fixed.numBuckets > 0) {
      emitError(UnknownLoc::get(ctx),
                "ffn-gpu-select-strategy: overrides set knobs; a complete "
                "strategy (with buckets) goes on the ffn.ffn itself");
      return failure();
    }
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    TargetAttr target = TargetAttr::lookup(func);
    std::string chip = target ? gpuChipOfTarget(target.getIsa().str()) : "";
    if (chip.empty() || !nominalGpuDevice(chip)) {
      func.emitError("ffn-gpu-select-strategy: ")
          << (target ? "the module's target '" + target.getIsa().str() +
                           "' is not an NVIDIA GPU"
                     : std::string("the module has no #ffn.target (run "
                                   "ffn-attach-target first)"));
      return signalPassFailure();
    }
    WalkResult result = func.walk([&](FfnOp op) {
      GpuFfnShape shape = gpu_target::gpuShapeOf(op);
      if (Attribute given = op.getStrategyAttr()) {
        auto strategy = dyn_cast<GpuStrategyAttr>(given);
        std::optional<GpuKnobError> bad =
            !strategy ? GpuKnobError{"strategy", "is not an #ffn.gpu_strategy"}
            : !strategy.isComplete()
                ? GpuKnobError{"strategy", "is not complete (it needs sms "
                                           "and buckets)"}
                : checkGpuStrategy(strategy.getKnobs(), shape, chip);
        if (bad) {
          op.emitOpError("strategy: ") << bad->key << " " << bad->message;
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      }
      GpuSelection chosen = selectGpuStrategy(shape, chip, fixed);
      if (chosen.error) {
        op.emitOpError("strategy option ")
            << chosen.error->key << " " << chosen.error->message;
        return WalkResult::interrupt();
      }
      op.setStrategyAttr(
          GpuStrategyAttr::get(op.getContext(), chosen.strategy));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
