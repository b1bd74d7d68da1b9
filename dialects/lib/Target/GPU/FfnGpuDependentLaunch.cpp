//===- FfnGpuDependentLaunch.cpp - programmatic dependent launch ----------===//
//
// An FFN runs as two to five kernels in a row on one stream. Between two of
// them the GPU idles from the first grid's last block to the second grid's
// first: at decode, where each GEMM streams its weights in 20-60 us, that
// gap is a few percent of the run. On sm_90 a launch may instead be
// programmatic: its blocks are placed as soon as every block of the grid
// before it has said `griddepcontrol.launch_dependents`, and each waits in
// `griddepcontrol.wait` until that grid has completed and its writes are
// visible. This pass gives every kernel both, first thing, so the contract
// the runtime relies on (kernel ABI 14) holds for every kernel by
// construction rather than by each builder remembering it.
//
//===----------------------------------------------------------------------===//

#include "ffn/Target/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNGPUDEPENDENTLAUNCH
#include "ffn/Target/GPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;

namespace {
/// sm_90 and later (sm_90a, sm_100, ...): griddepcontrol's first chip.
bool hasDependentLaunch(StringRef chip) {
  unsigned sm = 0;
  return chip.consume_front("sm_") && !chip.take_while(llvm::isDigit)
                                           .getAsInteger(10, sm) &&
         sm >= 90;
}

struct FfnGpuDependentLaunchPass
    : ffn::impl::FfnGpuDependentLaunchBase<FfnGpuDependentLaunchPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    ArrayAttr targets = module.getTargetsAttr();
    if (!targets || targets.size() != 1)
      return;
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(targets[0]);
    if (!target || !hasDependentLaunch(target.getChip()))
      return;
    for (auto func : module.getOps<gpu::GPUFuncOp>()) {
      if (!func.isKernel() || func.getBody().empty())
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      NVVM::GriddepcontrolOp::create(
          b, func.getLoc(), NVVM::GridDepActionKind::launch_dependents);
      NVVM::GriddepcontrolOp::create(b, func.getLoc(),
                                     NVVM::GridDepActionKind::wait);
    }
  }
};
} // namespace
