//===- Pipelines.cpp - the NVIDIA back end's pass pipelines ---------------===//

#include "ffn/Target/GPU/Pipelines.h"

#include "ffn/Target/CPU/Pipelines.h"
#include "ffn/Target/GPU/Passes.h"
#include "ffn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void ffn::buildGpuLoweringPipeline(OpPassManager &pm, StringRef chip,
                                   StringRef overrides) {
  FfnAttachTargetOptions target;
  // sm_90a -> nvptx-sm90a
  target.isa = "nvptx-sm" + chip.drop_front(3).str();
  pm.addPass(createFfnAttachTarget(target));
  FfnGpuSelectStrategyOptions select;
  select.overrides = overrides.str();
  pm.addNestedPass<func::FuncOp>(createFfnGpuSelectStrategy(select));
  FfnGpuLowerOptions options;
  options.chip = chip.str();
  pm.addPass(createFfnGpuLower(options));
  pm.addPass(createCanonicalizerPass());
}

void ffn::buildGpuBinaryPipeline(OpPassManager &pm, StringRef format,
                                 StringRef toolkit) {
  // Upstream's gpu-lower-to-nvvm-pipeline, restricted to the gpu.modules:
  // the host side (pack functions, descriptor) is x86 code and takes the
  // CPU's LLVM lowering.
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createFfnGpuDependentLaunch());
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
  device.addNestedPass<LLVM::LLVMFuncOp>(createFfnGpuTensorMapParams());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  // PTX first: ffn-gpu-ptxas-feedback assembles it, reading ptxas's report.
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = toolkit.str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
  FfnGpuPtxasFeedbackOptions feedback;
  feedback.toolkit = toolkit.str();
  feedback.format = format.str();
  pm.addPass(createFfnGpuPtxasFeedback(feedback));
}

void ffn::buildGpuHostPipeline(OpPassManager &pm, StringRef chip) {
  buildHostToLLVMPipeline(pm);
  FfnGpuKernelGlueOptions glue;
  glue.chip = chip.str();
  pm.addPass(createFfnGpuKernelGlue(glue));
}

namespace {
struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("sm_80, sm_90, sm_90a"),
                           llvm::cl::init("sm_90")};
  Option<std::string> overrides{
      *this, "overrides",
      llvm::cl::desc("an #ffn.gpu_strategy whose knobs the cost model keeps "
                     "(`#ffn.gpu_strategy<sms = 114>`)"),
      llvm::cl::init("")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("isa (PTX) or bin (cubin; then the host code too, "
                     "descriptors included, as ffnc translates it)"),
      llvm::cl::init("isa")};
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("the CUDA toolkit's folder"),
                              llvm::cl::init("")};
};
} // namespace

void ffn::registerGpuPipelines() {
  PassPipelineRegistration<GpuPipelineOptions>(
      "ffn-gpu-pipeline",
      "Lower ffn.ffn to NVIDIA GPU kernels in a gpu.binary (the GPU back "
      "end, as ffnc runs it before the host code's LLVM lowering)",
      [](OpPassManager &pm, const GpuPipelineOptions &options) {
        buildGpuLoweringPipeline(pm, options.chip, options.overrides);
        buildGpuBinaryPipeline(pm, options.format, options.toolkit);
        if (options.format == "bin")
          buildGpuHostPipeline(pm, options.chip);
      });
}
