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

namespace {
/// A target ffnc compiles for and its SIMD width (0: an NVIDIA GPU).
struct KnownTarget {
  const char *name;
  int64_t vectorBits;
};
} // namespace

static const KnownTarget kTargets[] = {
#define FFN_CPU_TARGET(name, cpu, bits, features) {name, bits},
#include "ffn/cpu_targets.def"
    {"nvptx-sm80", 0},
    {"nvptx-sm90", 0},
    {"nvptx-sm90a", 0},
};

/// The SIMD width a target's name implies; nullopt for an unknown name.
static std::optional<int64_t> vectorBitsOf(StringRef isa) {
  for (const KnownTarget &t : kTargets)
    if (isa == t.name)
      return t.vectorBits;
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
      InFlightDiagnostic diag =
          module.emitError("ffn-attach-target: unknown isa '") << name << "' (";
      llvm::ListSeparator comma;
      for (const KnownTarget &t : kTargets)
        diag << StringRef(comma) << t.name;
      diag << ")";
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
