//===- InfoCommand.h - `ffnc info` ------------------------------*- C++ -*-===//

#ifndef FFNC_TOOLS_INFOCOMMAND_H
#define FFNC_TOOLS_INFOCOMMAND_H

#include "ffnc/Analysis/MachineProfile.h"
#include "ffnc/Frontend/Spec.h"

#include "ffn/Target/GPU/CostModel.h"

#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <string>

namespace ffnc {

/// What `info --target` adds: the schedule the compiler picks and the
/// machine the cost model predicts for.
struct InfoSchedule {
  std::string target; ///< "x86-64-avx512"
  int64_t vectorBits = 512;
  /// --strategy overrides (unset knobs: the compiler's choice, made per FFN).
  mlir::ffn::CpuStrategy overrides;
  unsigned threads = 1;
  /// For the choice and the predictions, taken for `threads`.
  MachineProfile machine;
  /// Who builds the kernels, when not ffnc itself (--backend): a line of
  /// the report.
  std::string backend;
  /// An NVIDIA target: its chip ("sm_90a"; empty for a CPU) and the
  /// --strategy knobs of its #ffn.gpu_strategy.
  std::string gpuChip;
  mlir::ffn::GpuStrategy gpuOverrides;
};

/// `spec` as the CPU cost model sees it, and the strategy the compiler picks
/// for it on `target` (as ffn-select-strategy does: the block's shape, the
/// overrides, the machine), for `info` and `report` to describe and price.
struct SpecChoice {
  mlir::ffn::FfnShape shape;
  mlir::ffn::CpuStrategy strategy;
};
SpecChoice chosenStrategy(const FfnSpec &spec, llvm::StringRef target,
                          int64_t vectorBits, mlir::ffn::CpuStrategy overrides,
                          const mlir::ffn::MachineAssumptions &assumed);

/// Renders the `info` report of every spec: dims, parameter counts, weight
/// bytes, FLOPs per token and arithmetic intensity at each token count, and
/// with a schedule, the chosen strategy and the predicted time at each.
std::string renderInfo(llvm::ArrayRef<FfnSpec> specs,
                       llvm::ArrayRef<uint64_t> tokenCounts,
                       const llvm::SourceMgr &sourceMgr,
                       const InfoSchedule *schedule = nullptr);

} // namespace ffnc

#endif // FFNC_TOOLS_INFOCOMMAND_H
