//===- Pipelines.h - the CPU back end's pass pipelines ----------*- C++ -*-===//
//
// The stages `ffnc` prints with --emit (ffn, linalg, tiled, llvm), each a
// pipeline built here beside its passes, and all of them as
// `ffn-cpu-pipeline` for ffn-opt: the two drivers run the same passes.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_CPU_PIPELINES_H
#define FFN_TARGET_CPU_PIPELINES_H

#include "ffn/Target/CPU/Passes.h"
#include "ffn/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::ffn {

/// Stage `ffn`: the module's #ffn.target, then a #ffn.cpu_strategy on
/// every ffn.ffn (`baseline`: none, the unscheduled path).
void buildCpuStrategyPipeline(OpPassManager &pm,
                              const FfnAttachTargetOptions &target,
                              bool baseline,
                              const FfnSelectStrategyOptions &select);

/// Stage `linalg`: scheduled FFNs become packed kernels on memrefs; the
/// others become linalg on tensors.
void buildCpuLoweringPipeline(OpPassManager &pm);

/// Stage `tiled`: every kernel has its final memref calling convention (the
/// one its #ffn.kernel_abi declares): the baseline bufferized, its scratch
/// in a workspace argument.
void buildCpuKernelABIPipeline(OpPassManager &pm);

/// Host functions -> LLVM dialect: the passes' markers dropped (the kernel
/// contract stays), deallocation, loops, polynomial math, LLVM conversion,
/// loop annotations on the back edges. The NVIDIA targets' host code (pack
/// functions) takes it too.
void buildHostToLLVMPipeline(OpPassManager &pm);

/// The host lowering, then ffn-cpu-kernel-glue: the module ffnc translates
/// to LLVM IR, entry points and descriptors included.
void buildCpuToLLVMPipeline(OpPassManager &pm);

/// `ffn-cpu-pipeline`'s options: the target (the machine figures are
/// ffn-attach-target's own: run the stages one by one to set them) and the
/// strategy's overrides.
struct CpuPipelineOptions : PassPipelineOptions<CpuPipelineOptions> {
  Option<bool> baseline{*this, "baseline",
                        llvm::cl::desc("The unscheduled path (no strategy)"),
                        llvm::cl::init(false)};
  Option<std::string> isa{
      *this, "isa",
      llvm::cl::desc("The target: x86-64-avx512 or x86-64-avx2 (default: the "
                     "module's #ffn.target, else x86-64-avx512)")};
  Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Threads the kernels will run on, for the cost model"),
      llvm::cl::init(1)};
  Option<std::string> overrides{
      *this, "overrides",
      llvm::cl::desc("Knobs to keep, as a #ffn.cpu_strategy with the others "
                     "left out")};
};

/// All four stages.
void buildCpuPipeline(OpPassManager &pm, const FfnAttachTargetOptions &target,
                      bool baseline, const FfnSelectStrategyOptions &select);
void registerCpuPipelines();

} // namespace mlir::ffn

#endif // FFN_TARGET_CPU_PIPELINES_H
