//===- Pipelines.h - the NVIDIA back end's pass pipelines -------*- C++ -*-===//
//
// Stage `gpu` (ffn-gpu-lower) and the device code's way to a gpu.binary,
// beside their passes; both as `ffn-gpu-pipeline` for ffn-opt. The host
// side (pack functions, descriptor) then takes the CPU's LLVM lowering.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_GPU_PIPELINES_H
#define FFN_TARGET_GPU_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mlir::ffn {

/// Stage `gpu`: every ffn.ffn becomes a gpu.module of kernels, host pack
/// functions and a launch plan.
void buildGpuLoweringPipeline(OpPassManager &pm, StringRef chip,
                              int64_t smCount);

/// The gpu.modules -> gpu.binary: NVVM, then PTX (`format` "isa") or a
/// cubin ("bin", through the CUDA toolkit's ptxas at `toolkit`).
void buildGpuBinaryPipeline(OpPassManager &pm, StringRef format,
                            StringRef toolkit);

/// Registers `ffn-gpu-pipeline{chip=... sm-count=... format=... toolkit=...}`.
void registerGpuPipelines();

} // namespace mlir::ffn

#endif // FFN_TARGET_GPU_PIPELINES_H
