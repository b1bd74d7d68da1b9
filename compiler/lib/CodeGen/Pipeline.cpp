//===- Pipeline.cpp - ffn dialect to LLVM ---------------------------------===//

#include "ffnc/CodeGen/Pipeline.h"

#include "ffn/Target/GPU/Passes.h"
#include "ffn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
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

void ffnc::buildGpuLoweringPipeline(OpPassManager &pm, llvm::StringRef chip,
                                    int64_t smCount) {
  ffn::FfnGpuLowerOptions options;
  options.chip = chip.str();
  options.smCount = smCount;
  pm.addPass(ffn::createFfnGpuLower(options));
  pm.addPass(createCanonicalizerPass());
}

void ffnc::buildGpuBinaryPipeline(OpPassManager &pm, llvm::StringRef format,
                                  llvm::StringRef toolkit) {
  // Upstream's gpu-lower-to-nvvm-pipeline, restricted to the gpu.modules:
  // the host side (pack functions, descriptor) is x86 code and takes the
  // CPU's LLVM lowering.
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createConvertNVGPUToNVVMPass());
  device.addPass(createConvertVectorToSCFPass());
  device.addPass(createSCFToControlFlowPass());
  device.addPass(createConvertNVVMToLLVMPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  device.addPass(createArithToLLVMConversionPass());
  device.addPass(createConvertIndexToLLVMPass());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = format.str();
  binary.toolkitPath = toolkit.str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

namespace {
struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("sm_80, sm_90, sm_90a"),
                           llvm::cl::init("sm_90")};
  Option<int64_t> smCount{*this, "sm-count",
                          llvm::cl::desc("multiprocessors to size grids for"),
                          llvm::cl::init(132)};
  Option<std::string> format{*this, "format",
                             llvm::cl::desc("isa (PTX) or bin (cubin)"),
                             llvm::cl::init("isa")};
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("the CUDA toolkit's folder"),
                              llvm::cl::init("")};
};
} // namespace

void ffnc::registerGpuPipeline() {
  PassPipelineRegistration<GpuPipelineOptions>(
      "ffn-gpu-pipeline",
      "Lower ffn.ffn to NVIDIA GPU kernels in a gpu.binary (the GPU back "
      "end, as ffnc runs it before the host code's LLVM lowering)",
      [](OpPassManager &pm, const GpuPipelineOptions &options) {
        buildGpuLoweringPipeline(pm, options.chip, options.smCount);
        buildGpuBinaryPipeline(pm, options.format, options.toolkit);
      });
}
