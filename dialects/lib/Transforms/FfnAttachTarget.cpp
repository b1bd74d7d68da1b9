//===- FfnAttachTarget.cpp - attach the module's #ffn.target --------------===//

#include "ffn/IR/FfnAttrs.h"
#include "ffn/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNATTACHTARGET
#include "ffn/Transforms/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;

/// The SIMD width a target's name implies; nullopt for an unknown name.
static std::optional<int64_t> vectorBitsOf(StringRef isa) {
  if (isa == "x86-64-avx512")
    return 512;
  if (isa == "x86-64-avx2")
    return 256;
  if (isa == "nvptx-sm80" || isa == "nvptx-sm90" || isa == "nvptx-sm90a")
    return 0;
  return std::nullopt;
}

namespace {
struct FfnAttachTargetPass
    : ffn::impl::FfnAttachTargetBase<FfnAttachTargetPass> {
  using FfnAttachTargetBase::FfnAttachTargetBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (auto existing =
            module->getAttrOfType<TargetAttr>(TargetAttr::kAttrName)) {
      if (isa.empty() || isa == existing.getIsa())
        return;
      module.emitError("ffn-attach-target: the module already targets '")
          << existing.getIsa() << "'; asked for '" << isa << "'";
      return signalPassFailure();
    }
    std::string name = isa.empty() ? std::string("x86-64-avx512") : isa;
    std::optional<int64_t> bits = vectorBitsOf(name);
    if (!bits) {
      module.emitError("ffn-attach-target: unknown isa '")
          << name
          << "' (x86-64-avx512, x86-64-avx2, nvptx-sm80, nvptx-sm90, "
             "nvptx-sm90a)";
      return signalPassFailure();
    }
    MachineAssumptions nominal;
    // The option's "not given" value stands for the nominal figure; any
    // other is checked by the attribute's verifier.
    auto figure = [](double given, double nominal, double unset) {
      return llvm::APFloat(given == unset ? nominal : given);
    };
    auto emitError = [&] { return module.emitError("ffn-attach-target: "); };
    TargetAttr target = TargetAttr::getChecked(
        emitError, module.getContext(), StringRef(name), int64_t(*bits),
        int64_t(threads), figure(peakGflops, nominal.peakGflops, 0),
        figure(dramGBs, nominal.dramGBs, 0),
        figure(cacheGBs, nominal.cacheGBs, 0),
        figure(syncMicros, nominal.syncSeconds * 1e6, -1));
    if (!target)
      return signalPassFailure();
    module->setAttr(TargetAttr::kAttrName, target);
  }
};
} // namespace
