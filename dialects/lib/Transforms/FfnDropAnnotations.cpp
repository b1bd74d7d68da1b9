//===- FfnDropAnnotations.cpp - drop the ffn.* annotations ----------------===//

#include "ffn/IR/FfnAttrs.h"
#include "ffn/Transforms/Passes.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNDROPANNOTATIONS
#include "ffn/Transforms/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;

namespace {
struct FfnDropAnnotationsPass
    : ffn::impl::FfnDropAnnotationsBase<FfnDropAnnotationsPass> {
  void runOnOperation() override {
    getOperation()->walk([](func::FuncOp func) {
      for (NamedAttribute attr : llvm::to_vector(func->getDiscardableAttrs()))
        if (attr.getName().strref().starts_with("ffn.") &&
            attr.getName() != ffn::KernelAbiAttr::kAttrName)
          func->removeAttr(attr.getName());
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        func.removeArgAttr(i, "ffn.param");
    });
  }
};
} // namespace
