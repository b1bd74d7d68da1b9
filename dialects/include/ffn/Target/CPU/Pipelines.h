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

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::ffn {

/// Stage `ffn`: attach a #ffn.strategy to every ffn.ffn (`baseline`: none,
/// the unscheduled path).
void buildCpuStrategyPipeline(OpPassManager &pm, bool baseline,
                              const FfnSelectStrategyOptions &select);

/// Stage `linalg`: scheduled FFNs become packed kernels on memrefs; the
/// others become linalg on tensors.
void buildCpuLoweringPipeline(OpPassManager &pm);

/// Stage `tiled`: every kernel has its final memref calling convention (the
/// signature the ABI glue reads): the baseline bufferized, its scratch in a
/// workspace argument.
void buildCpuKernelABIPipeline(OpPassManager &pm);

/// Kernel functions -> LLVM dialect: the ffn.* annotations dropped (the
/// glue has read them), deallocation, loops, polynomial math, LLVM
/// conversion, loop annotations on the back edges.
void buildCpuToLLVMPipeline(OpPassManager &pm);

/// `ffn-cpu-pipeline`'s options: the schedule knobs are
/// ffn-select-strategy's own (run the stages one by one to set them).
struct CpuPipelineOptions : PassPipelineOptions<CpuPipelineOptions> {
  Option<bool> baseline{*this, "baseline",
                        llvm::cl::desc("The unscheduled path (no strategy)"),
                        llvm::cl::init(false)};
  Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("SIMD width: 512 (AVX-512) or 256 (AVX2)"),
      llvm::cl::init(512)};
  Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Threads the kernels will run on, for the cost model"),
      llvm::cl::init(1)};
};

/// All four stages.
void buildCpuPipeline(OpPassManager &pm, bool baseline,
                      const FfnSelectStrategyOptions &select);
void registerCpuPipelines();

} // namespace mlir::ffn

#endif // FFN_TARGET_CPU_PIPELINES_H
