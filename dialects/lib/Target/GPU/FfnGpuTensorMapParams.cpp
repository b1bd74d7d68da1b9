//===- FfnGpuTensorMapParams.cpp - tensor maps as by-value parameters -----===//
//
// TMA reads its tensor map from memory that the async proxy can see; a
// kernel parameter declared __grid_constant__ is such memory and costs no
// allocation or per-launch copy. The GEMM builder cannot say so on the
// gpu.func (convert-gpu-to-nvvm drops the argument attributes), so it lists
// the positions and this pass, after that lowering, marks them.
//
//===----------------------------------------------------------------------===//

#include "ffn/Target/GPU/Passes.h"

#include "Kernels.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNGPUTENSORMAPPARAMS
#include "ffn/Target/GPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;

namespace {
/// CUtensorMap: 128 bytes, 64-byte aligned (cuda.h).
constexpr int64_t kTensorMapBytes = 128;
constexpr int64_t kTensorMapAlign = 64;

struct FfnGpuTensorMapParamsPass
    : ffn::impl::FfnGpuTensorMapParamsBase<FfnGpuTensorMapParamsPass> {
  void runOnOperation() override {
    LLVM::LLVMFuncOp func = getOperation();
    auto positions = func->getAttrOfType<DenseI64ArrayAttr>(
        ffn::gpu_target::kTensorMapArgsAttr);
    if (!positions)
      return;
    MLIRContext *ctx = &getContext();
    auto byval =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), kTensorMapBytes);
    unsigned count = func.getNumArguments();
    for (int64_t p : positions.asArrayRef()) {
      if (p < 0 || p >= count ||
          !isa<LLVM::LLVMPointerType>(func.getArgument(p).getType())) {
        func.emitError("ffn-gpu-tensor-map-params: argument ")
            << p << " is not a pointer argument of this kernel";
        return signalPassFailure();
      }
      unsigned i = static_cast<unsigned>(p);
      func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                      TypeAttr::get(byval));
      func.setArgAttr(
          i, LLVM::LLVMDialect::getAlignAttrName(),
          IntegerAttr::get(IntegerType::get(ctx, 64), kTensorMapAlign));
      func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                      UnitAttr::get(ctx));
    }
    func->removeAttr(ffn::gpu_target::kTensorMapArgsAttr);
  }
};
} // namespace
