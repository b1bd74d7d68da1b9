//===- FfnLoopAnnotationsToBranches.cpp - loop annotations for LLVM -------===//

#include "ffn/Transforms/Passes.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNLOOPANNOTATIONSTOBRANCHES
#include "ffn/Transforms/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;

namespace {
struct FfnLoopAnnotationsToBranchesPass
    : ffn::impl::FfnLoopAnnotationsToBranchesBase<
          FfnLoopAnnotationsToBranchesPass> {
  void runOnOperation() override {
    getOperation()->walk([](LLVM::BrOp br) {
      if (auto annotation = br->getAttrOfType<LLVM::LoopAnnotationAttr>(
              "llvm.loop_annotation")) {
        br.setLoopAnnotationAttr(annotation);
        br->removeAttr("llvm.loop_annotation");
      }
    });
  }
};
} // namespace
