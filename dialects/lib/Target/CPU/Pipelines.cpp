//===- Pipelines.cpp - the CPU back end's pass pipelines ------------------===//

#include "ffn/Target/CPU/Pipelines.h"

#include "ffn/Conversion/Passes.h"
#include "ffn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void ffn::buildCpuStrategyPipeline(OpPassManager &pm,
                                   const FfnAttachTargetOptions &target,
                                   bool baseline,
                                   const FfnSelectStrategyOptions &select) {
  pm.addPass(createFfnAttachTarget(target));
  if (baseline)
    return;
  pm.addNestedPass<func::FuncOp>(createFfnSelectStrategy(select));
}

void ffn::buildCpuLoweringPipeline(OpPassManager &pm) {
  pm.addPass(createFfnLowerPacked());
  pm.addNestedPass<func::FuncOp>(createFfnVectorizeRegisterTiles());
  pm.addNestedPass<func::FuncOp>(createConvertFfnToLinalg());
  pm.addPass(createCanonicalizerPass());
}

void ffn::buildCpuKernelABIPipeline(OpPassManager &pm) {
  pm.addPass(createFfnKernelInterface());
  // The baseline's linalg on tensors becomes loops on memrefs, its scratch
  // served from a workspace argument: the final calling convention.
  pm.addNestedPass<func::FuncOp>(createFfnMatmulLoopOrder());
  pm.addPass(createCanonicalizerPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(createFfnWorkspaceAllocs());
}

void ffn::buildHostToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createFfnDropAnnotations());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createFfnApproximateMath());
  pm.addPass(arith::createArithExpandOpsPass());
  // bf16 has no native conversions below AVX512-BF16: there, extf/truncf
  // become integer ops (round to nearest even) instead of compiler-rt calls.
  pm.addPass(createFfnExpandBf16());

  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // x86vector: the bf16 pair tiles' vdpbf16ps.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));

  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // The vectorizer's transfer padding values (never read: the transfers
  // are in bounds).
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFfnLoopAnnotationsToBranches());
}

void ffn::buildCpuToLLVMPipeline(OpPassManager &pm) {
  buildHostToLLVMPipeline(pm);
  pm.addPass(createFfnCpuKernelGlue());
}

void ffn::buildCpuPipeline(OpPassManager &pm,
                           const FfnAttachTargetOptions &target, bool baseline,
                           const FfnSelectStrategyOptions &select) {
  buildCpuStrategyPipeline(pm, target, baseline, select);
  buildCpuLoweringPipeline(pm);
  buildCpuKernelABIPipeline(pm);
  buildCpuToLLVMPipeline(pm);
}

void ffn::registerCpuPipelines() {
  // Each stage on its own, as `ffnc --emit=<stage>` prints after it.
  PassPipelineRegistration<>(
      "ffn-cpu-lowering",
      "Stage linalg: scheduled FFNs to packed kernels, others to linalg",
      buildCpuLoweringPipeline);
  PassPipelineRegistration<>(
      "ffn-cpu-kernel-abi",
      "Stage tiled: every kernel in its final memref calling convention",
      buildCpuKernelABIPipeline);
  PassPipelineRegistration<>(
      "ffn-cpu-to-llvm",
      "Kernel functions to the LLVM dialect, with the kernel ABI's entry "
      "points and descriptors (what ffnc translates to LLVM IR)",
      buildCpuToLLVMPipeline);
  PassPipelineRegistration<CpuPipelineOptions>(
      "ffn-cpu-pipeline",
      "Lower ffn.ffn all the way to the LLVM dialect (the CPU back end, the "
      "passes ffnc runs before its LLVM IR translation)",
      [](OpPassManager &pm, const CpuPipelineOptions &options) {
        FfnAttachTargetOptions target;
        target.isa = options.isa;
        target.threads = options.threads;
        FfnSelectStrategyOptions select;
        select.overrides = options.overrides;
        buildCpuPipeline(pm, target, options.baseline, select);
      });
}
