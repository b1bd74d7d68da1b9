//===- Pipelines.h - the NVIDIA back end's pass pipelines -------*- C++ -*-===//
//
// Stage `gpu` (ffn-gpu-lower) and the device code's way to a gpu.binary,
// beside their passes, then the host side (pack functions, the CPU's LLVM
// lowering; descriptors, ffn-gpu-kernel-glue); all as `ffn-gpu-pipeline`
// for ffn-opt.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_GPU_PIPELINES_H
#define FFN_TARGET_GPU_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mlir::ffn {

/// Stage `gpu`: the module's #ffn.target (nvptx-<chip>), each FFN's
/// #ffn.gpu_strategy (`overrides`: the text of one without buckets, or
/// empty), then every ffn.ffn becomes a gpu.module of kernels, host pack
/// functions and a launch plan.
void buildGpuLoweringPipeline(OpPassManager &pm, StringRef chip,
                              StringRef overrides);

/// The gpu.modules -> gpu.binary: NVVM, then PTX (`format` "isa") or a
/// cubin ("bin", through the CUDA toolkit's ptxas at `toolkit`).
void buildGpuBinaryPipeline(OpPassManager &pm, StringRef format,
                            StringRef toolkit);

/// The host code after the gpu.binary (cubins): pack functions to the LLVM
/// dialect (the CPU's host lowering), then ffn-gpu-kernel-glue embeds the
/// cubins and builds the descriptors.
void buildGpuHostPipeline(OpPassManager &pm, StringRef chip);

/// Registers `ffn-gpu-pipeline{chip=... overrides=... format=... toolkit=...}`.
void registerGpuPipelines();

} // namespace mlir::ffn

#endif // FFN_TARGET_GPU_PIPELINES_H
