//===- Pipeline.h - the driver's schedule options ---------------*- C++ -*-===//
//
// What ffnc's options decide about the CPU schedule, and the strategy stage
// built from them. The pipelines themselves are declared beside their
// passes (ffn/Target/CPU/Pipelines.h, ffn/Target/GPU/Pipelines.h).
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_CODEGEN_PIPELINE_H
#define FFNC_CODEGEN_PIPELINE_H

#include "ffn/Target/CPU/CostModel.h"

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

/// Stage `ffn` of the CPU back end with the driver's options (the other
/// stages take none: ffn/Target/CPU/Pipelines.h).
void buildStrategyPipeline(mlir::OpPassManager &pm,
                           const ScheduleOptions &options);

} // namespace ffnc

#endif // FFNC_CODEGEN_PIPELINE_H
