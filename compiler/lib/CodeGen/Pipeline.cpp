//===- Pipeline.cpp - ffn dialect to LLVM ---------------------------------===//

#include "ffnc/CodeGen/Pipeline.h"

#include "ffn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <thread>

using namespace mlir;

int64_t ffnc::tunedThreads(const ScheduleOptions &options) {
  return options.threads > 0
             ? options.threads
             : std::max(1u, std::thread::hardware_concurrency());
}

void ffnc::buildStrategyPipeline(OpPassManager &pm,
                                 const ScheduleOptions &options) {
  if (options.baseline)
    return;
  ffn::FfnSelectStrategyOptions select;
  select.vectorBits = options.vectorBits;
  select.mr = options.mr;
  select.nr = options.nr;
  select.mc = options.mc;
  select.prefetch = options.prefetch;
  select.fusedMaxM = options.fusedMaxM;
  select.chunk = options.chunk;
  select.groups = options.groups;
  select.threads = tunedThreads(options);
  if (options.machine) {
    select.peakGflops = options.machine->peakGflops;
    select.dramGBs = options.machine->dramGBs;
    select.cacheGBs = options.machine->cacheGBs;
    select.syncMicros = options.machine->syncSeconds * 1e6;
  }
  pm.addNestedPass<func::FuncOp>(ffn::createFfnSelectStrategy(select));
}

void ffnc::buildFfnLoweringPipeline(OpPassManager &pm) {
  pm.addPass(ffn::createFfnLowerPacked());
  pm.addNestedPass<func::FuncOp>(ffn::createFfnVectorizeRegisterTiles());
  pm.addNestedPass<func::FuncOp>(ffn::createConvertFfnToLinalg());
  pm.addPass(createCanonicalizerPass());
}

void ffnc::buildKernelABIPipeline(OpPassManager &pm) {
  pm.addPass(ffn::createFfnKernelInterface());
  // The baseline's linalg on tensors becomes loops on memrefs, its scratch
  // served from a workspace argument: the final calling convention.
  pm.addNestedPass<func::FuncOp>(ffn::createFfnMatmulLoopOrder());
  pm.addPass(createCanonicalizerPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(ffn::createFfnWorkspaceAllocs());
}

void ffnc::buildKernelToLLVMPipeline(OpPassManager &pm) {
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(ffn::createFfnApproximateMath());
  // bf16 has no native conversions below AVX512-BF16: expand extf/truncf
  // to integer ops (round to nearest even) instead of calling compiler-rt.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));

  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToLLVMPass());
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
}

void ffnc::buildCPUPipeline(OpPassManager &pm, const ScheduleOptions &options) {
  buildStrategyPipeline(pm, options);
  buildFfnLoweringPipeline(pm);
  buildKernelABIPipeline(pm);
  buildKernelToLLVMPipeline(pm);
}

void ffnc::registerCPUPipeline() {
  PassPipelineRegistration<>(
      "ffn-cpu-pipeline",
      "Lower ffn.ffn all the way to the LLVM dialect (the CPU back end)",
      [](OpPassManager &pm) { buildCPUPipeline(pm, ScheduleOptions()); });
}
