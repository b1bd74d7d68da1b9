//===- FfnSelectStrategy.cpp - choose the CPU schedule --------------------===//

#include "ffn/IR/FfnOps.h"
#include "ffn/Target/CPU/CostModel.h"
#include "ffn/Target/CPU/Passes.h"

#include "mlir/AsmParser/AsmParser.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNSELECTSTRATEGY
#include "ffn/Target/CPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;

namespace {
struct FfnSelectStrategyPass
    : ffn::impl::FfnSelectStrategyBase<FfnSelectStrategyPass> {
  using FfnSelectStrategyBase::FfnSelectStrategyBase;

  /// The knobs `overrides` fixes (none when it is empty).
  CpuStrategy fixed;

  LogicalResult initialize(MLIRContext *ctx) override {
    if (overrides.empty())
      return success();
    // The attribute's own parser: its rules and its words.
    Attribute parsed = parseAttribute(overrides, ctx);
    auto strategy = dyn_cast_or_null<CpuStrategyAttr>(parsed);
    if (!strategy) {
      if (parsed)
        emitError(UnknownLoc::get(ctx),
                  "ffn-select-strategy: overrides must be a "
                  "#ffn.cpu_strategy, got ")
            << parsed;
      return failure();
    }
    fixed = strategy.getKnobs();
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    TargetAttr target = TargetAttr::lookup(func);
    if (!target || !target.isCpu()) {
      func.emitError("ffn-select-strategy: ")
          << (target ? "the module's target '" + target.getIsa().str() +
                           "' is not a CPU"
                     : std::string("the module has no #ffn.target (run "
                                   "ffn-attach-target first)"));
      return signalPassFailure();
    }
    int64_t vectorBits = target.getVectorBits();
    bool bf16DotTarget =
        cpuTargetHasFeature(target.getIsa().str(), "avx512bf16");

    MachineAssumptions machine = target.machine();

    WalkResult result = func.walk([&](FfnOp op) {
      if (op.getStrategy())
        return WalkResult::advance();
      FfnShape shape{op.getBlockDModel(), op.getBlockDFf(), op.getGated(),
                     op.getStorageType().getIntOrFloatBitWidth() / 8};
      shape.blocks = op.getNumBlocks();
      std::optional<WeightQuantAttr> quant = op.getWeightQuant();
      if (quant)
        shape.weightBits = quant->getKind() == WeightQuantKind::int8 ? 8 : 4;
      shape.intDot = quant && quant->getInt8Activations();
      // Quantized weights, experts and blocks have no sparse GEMM 2.
      shape.zeroActivations = op.getActivation() == Activation::relu &&
                              !quant && !op.getMoe() && !op.getGroups();
      if (FloatAttr sparsity = op.getActivationSparsityAttr())
        shape.nonzeroShare = 1 - sparsity.getValueAsDouble();
      shape.bf16Dot =
          op.getStorageType().isBF16() && bf16DotTarget && !quant;
      CpuStrategy o = fixed;
      if (quant && o.fusedMaxM.value_or(0) > 0) {
        op.emitOpError("has quantized weights, which take the two-pass "
                       "schedule; the fused one (fused_max_m = ")
            << *o.fusedMaxM << ") is not built for them";
        return WalkResult::interrupt();
      }

      if (o.sparseMaxM.value_or(0) > 0 &&
          (quant || op.getMoe() || op.getGroups())) {
        op.emitOpError("strategy option sparse_max_m = ")
            << *o.sparseMaxM << ": the sparse GEMM 2 is built for unquantized "
            << "dense FFNs; this one has "
            << (quant         ? "quantized weights"
                : op.getMoe() ? "experts"
                              : "blocks (groups)");
        return WalkResult::interrupt();
      }

      // Quantized tiles read their scales per group of K and take no K
      // blocks; an explicit kc would be ignored, so it is refused.
      for (auto [key, knob] : kBlockKnobs(o))
        if (knob.value_or(0) > 0 && quant) {
          op.emitOpError("strategy option ")
              << key << " = " << *knob
              << ": K blocks are built for the widening and bf16 pair "
              << "tiles; this FFN has quantized weights (kc = 0)";
          return WalkResult::interrupt();
        }

      if (o.blockUnits && !op.getGroups()) {
        op.emitOpError("strategy option block_units: a grouped FFN's work "
                       "units; this FFN has no blocks (groups)");
        return WalkResult::interrupt();
      }

      if (o.bf16Dot.value_or(false) && !shape.bf16Dot) {
        op.emitOpError("strategy option bf16_dot needs a bf16 FFN on a "
                       "target with avx512bf16 (x86-64-avx512-bf16); this "
                       "is ")
            << op.getStorageType() << " on '" << target.getIsa() << "'";
        return WalkResult::interrupt();
      }

      if (op.getMoe()) {
        // Each expert runs the two-pass GEMMs on the rows routed to it.
        if (o.fusedMaxM.value_or(0) > 0) {
          op.emitOpError("is a mixture of experts, whose experts take the "
                         "two-pass schedule; the fused one (fused_max_m = ")
              << *o.fusedMaxM << ") is not built for them";
          return WalkResult::interrupt();
        }
        o.fusedMaxM = 0;
      }
      if (op.getGroups()) {
        // Each block runs the two-pass GEMMs on its own columns.
        if (o.fusedMaxM.value_or(0) > 0) {
          op.emitOpError("is a grouped FFN, whose blocks take the two-pass "
                         "schedule; the fused one (fused_max_m = ")
              << *o.fusedMaxM << ") is not built for them";
          return WalkResult::interrupt();
        }
        o.fusedMaxM = 0;
      }
      if (batchInvariant)
        op.setBatchInvariant(true);
      if (op.getBatchInvariant()) {
        // The fused schedule sums d_ff in chunks for small m only: a row's
        // reduction order would then depend on m.
        if (o.fusedMaxM > 0) {
          op.emitOpError("is batch_invariant; it cannot take the fused "
                         "schedule (fused_max_m = ")
              << *o.fusedMaxM << ")";
          return WalkResult::interrupt();
        }
        o.fusedMaxM = 0;
      }
      if (std::optional<KnobError> bad = checkStrategy(o, vectorBits)) {
        op.emitOpError("strategy option ") << bad->key << " " << bad->message;
        return WalkResult::interrupt();
      }
      auto strategy = CpuStrategyAttr::getChecked(
          [&] { return op.emitOpError(); }, op.getContext(),
          chooseStrategy(vectorBits, shape, o, machine));
      if (!strategy)
        return WalkResult::interrupt();
      op.setStrategyAttr(strategy);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
