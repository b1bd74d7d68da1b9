//===- FfnDropAnnotations.cpp - drop the ffn.* annotations ----------------===//

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
    // The module's #ffn.target has been read by strategy selection.
    for (NamedAttribute attr :
         llvm::to_vector(getOperation()->getDiscardableAttrs()))
      if (attr.getName().strref().starts_with("ffn."))
        getOperation()->removeAttr(attr.getName());
    getOperation()->walk([](func::FuncOp func) {
      for (NamedAttribute attr : llvm::to_vector(func->getDiscardableAttrs()))
        if (attr.getName().strref().starts_with("ffn."))
          func->removeAttr(attr.getName());
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        func.removeArgAttr(i, "ffn.param");
    });
  }
};
} // namespace
