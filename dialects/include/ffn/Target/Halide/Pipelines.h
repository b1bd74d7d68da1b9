//===- Pipelines.h - the Halide back end's pass pipeline --------*- C++ -*-===//
//
// ffn-halide-lower, then the CPU back end's way to the LLVM dialect (host
// lowering, ffn-cpu-kernel-glue unchanged): the module ffnc translates to
// the glue object that the Halide pipelines are linked with. Registered
// as `ffn-halide-pipeline` for ffn-opt.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_HALIDE_PIPELINES_H
#define FFN_TARGET_HALIDE_PIPELINES_H

#include "ffn/Target/Halide/Passes.h"

#include "mlir/Pass/PassManager.h"

namespace mlir::ffn {

/// ffn-halide-lower with `options`, then buildCpuToLLVMPipeline. The module
/// needs a CPU #ffn.target (and, for schedule=strategy, strategies: run
/// ffn-attach-target and ffn-select-strategy first, as ffnc does).
void buildHalidePipeline(OpPassManager &pm,
                         const FfnHalideLowerOptions &options);

/// Registers `ffn-halide-pipeline{schedule=... m-estimate=... threads=...
/// test-bug=...}`.
void registerHalidePipelines();

} // namespace mlir::ffn

#endif // FFN_TARGET_HALIDE_PIPELINES_H
