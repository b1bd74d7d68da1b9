//===- Pipeline.h - ffn dialect to LLVM -------------------------*- C++ -*-===//

#ifndef FFNC_CODEGEN_PIPELINE_H
#define FFNC_CODEGEN_PIPELINE_H

#include "ffn/Transforms/ScheduleCost.h"

#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <optional>

namespace ffnc {

/// How the CPU back end schedules the FFNs it compiles.
struct ScheduleOptions {
  /// The unscheduled path: unpacked weights, (m, k, n) loops vectorized by
  /// LLVM. For comparison and debugging; never chosen automatically.
  bool baseline = false;
  int64_t vectorBits = 512;       ///< from the target
  int64_t mr = 0, nr = 0, mc = 0; ///< overrides; 0 = let the pass choose
  int64_t prefetch = -1;          ///< 1/0 override; -1 = let the pass choose
  int64_t fusedMaxM = -1;         ///< fused bucket bound; -1 = let it choose
  int64_t chunk = 0, groups = 0;  ///< fused schedule; 0 = let it choose
  /// Threads the kernels will run on, for the schedule cost model (0: this
  /// machine's hardware threads, the runtime's default).
  int64_t threads = 0;
  /// The machine the cost model prices for (its `threads` is ignored:
  /// the field above decides); none: the nominal machine.
  std::optional<mlir::ffn::MachineAssumptions> machine;
};

/// The threads the cost model tunes the kernels for: options.threads, or
/// this machine's hardware threads.
int64_t tunedThreads(const ScheduleOptions &options);

/// Stage `ffn`: attach a #ffn.strategy to every ffn.ffn (unless baseline).
void buildStrategyPipeline(mlir::OpPassManager &pm,
                           const ScheduleOptions &options);

/// Stage `linalg`: scheduled FFNs become packed kernels on memrefs; the
/// others become linalg on tensors.
void buildFfnLoweringPipeline(mlir::OpPassManager &pm);

/// Stage `tiled`: every kernel has its final memref calling convention (the
/// signature the ABI glue reads): the baseline bufferized, its scratch in a
/// workspace argument.
void buildKernelABIPipeline(mlir::OpPassManager &pm);

/// Kernel functions -> LLVM dialect: deallocation, loops, polynomial math,
/// LLVM conversion.
void buildKernelToLLVMPipeline(mlir::OpPassManager &pm);

/// NVIDIA targets. Stage `gpu`: every ffn.ffn becomes a gpu.module of
/// kernels, host pack functions and a launch plan (ffn-gpu-lower).
void buildGpuLoweringPipeline(mlir::OpPassManager &pm, llvm::StringRef chip,
                              int64_t smCount);

/// The gpu.modules -> gpu.binary: NVVM, then PTX (`format` "isa") or a
/// cubin ("bin", through the CUDA toolkit's ptxas at `toolkit`).
void buildGpuBinaryPipeline(mlir::OpPassManager &pm, llvm::StringRef format,
                            llvm::StringRef toolkit);

/// All of the above, and its registration as `ffn-cpu-pipeline` for ffn-opt.
void buildCPUPipeline(mlir::OpPassManager &pm, const ScheduleOptions &options);
void registerCPUPipeline();

/// ffn-gpu-lower then the binary pipeline, registered as
/// `ffn-gpu-pipeline{chip=... format=...}` for ffn-opt.
void registerGpuPipeline();

} // namespace ffnc

#endif // FFNC_CODEGEN_PIPELINE_H
