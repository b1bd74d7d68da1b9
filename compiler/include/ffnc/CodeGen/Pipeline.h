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
#include "ffn/Target/GPU/CostModel.h"

#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ffnc {

/// Who generates the CPU kernels' code: ffnc's own MLIR lowering, or Halide
/// 14 through the separate ffnc-halide-gen process (docs/halide.md). Both
/// produce the same kernel ABI.
enum class Backend { Ffnc, Halide };

/// How the CPU back end schedules the FFNs it compiles.
struct ScheduleOptions {
  /// The unscheduled path: unpacked weights, (m, k, n) loops vectorized by
  /// LLVM. For comparison and debugging; never chosen automatically.
  bool baseline = false;
  std::string isa = "x86-64-avx512"; ///< the target's name
  int64_t vectorBits = 512;         ///< from the target
  /// The knobs --strategy fixes; the unset ones are the cost model's.
  mlir::ffn::CpuStrategy overrides;
  /// The same for an NVIDIA target (#ffn.gpu_strategy's knobs).
  mlir::ffn::GpuStrategy gpuOverrides;
  /// Threads the kernels will run on, for the schedule cost model (0: this
  /// machine's hardware threads, the runtime's default).
  int64_t threads = 0;
  /// The machine the cost model prices for (its `threads` is ignored:
  /// the field above decides); none: the nominal machine.
  std::optional<mlir::ffn::MachineAssumptions> machine;

  /// The code generator (--backend).
  Backend backend = Backend::Ffnc;
  /// --backend=halide: "strategy" (the schedule derived from the cost
  /// model's strategy) or an autoscheduler ("mullapudi2016", "li2018",
  /// "adams2019"), which schedules one pipeline for the whole FFN.
  std::string halideSchedule = "strategy";
  /// The M the autoscheduler's estimates assume.
  int64_t halideMEstimate = 64;
  /// Hidden, for the oracle's own tests: a deliberate bug in the Halide
  /// kernels ("drop-last-k-after-row-0", "bias-shift").
  std::string testHalideBug;
};

/// The threads the cost model tunes the kernels for: options.threads, or
/// this machine's hardware threads.
int64_t tunedThreads(const ScheduleOptions &options);

/// Stage `ffn` of the CPU back end with the driver's options: the module's
/// #ffn.target, then the strategies (the other stages take no options:
/// ffn/Target/CPU/Pipelines.h).
void buildStrategyPipeline(mlir::OpPassManager &pm,
                           const ScheduleOptions &options);

/// `knobs` as #ffn.cpu_strategy's text (what the selection pass's
/// `overrides` option parses).
std::string strategyText(const mlir::ffn::CpuStrategy &knobs);

} // namespace ffnc

#endif // FFNC_CODEGEN_PIPELINE_H
