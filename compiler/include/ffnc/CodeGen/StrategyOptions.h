//===- StrategyOptions.h - parsing `--strategy=` ----------------*- C++ -*-===//

#ifndef FFNC_CODEGEN_STRATEGYOPTIONS_H
#define FFNC_CODEGEN_STRATEGYOPTIONS_H

#include "ffnc/CodeGen/Pipeline.h"

#include "ffn/Target/CPU/CostModel.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace ffnc {

/// A mistake in the option text: the item [offset, offset + length) and why.
struct StrategyError {
  size_t offset = 0, length = 0;
  std::string message;
};

/// The knobs `options` fixes, as the strategy selection takes them.
mlir::ffn::StrategyOverrides overridesOf(const ScheduleOptions &options);

/// Parses `--strategy=` text ("baseline", or key=value items: mr, nr, mc,
/// prefetch, fused_max_m, chunk, groups) into `options` and checks every
/// value against `options.vectorBits` (mlir::ffn::checkOverrides), so that
/// accepted overrides always yield a strategy that verifies.
std::optional<StrategyError> parseStrategyOptions(llvm::StringRef text,
                                                  ScheduleOptions &options);

} // namespace ffnc

#endif // FFNC_CODEGEN_STRATEGYOPTIONS_H
