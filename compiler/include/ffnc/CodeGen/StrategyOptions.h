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

/// Parses `--strategy=` text into `options`: "baseline", or the knobs of a
/// #ffn.cpu_strategy (key=value items: vector_bits, mr, nr, mc, prefetch,
/// fused_max_m, chunk, groups), read by the attribute's parser, into
/// `options.overrides`; every value is checked against `options.vectorBits`
/// (mlir::ffn::checkStrategy), so that accepted overrides always yield a
/// strategy that verifies. For an NVIDIA target (`options.isa` nvptx-*),
/// the knobs of an #ffn.gpu_strategy override (sms, bounds, block_m,
/// block_n, stages, warp_stages, split_k, mma, widen) into
/// `options.gpuOverrides`.
std::optional<StrategyError> parseStrategyOptions(llvm::StringRef text,
                                                  ScheduleOptions &options);

} // namespace ffnc

#endif // FFNC_CODEGEN_STRATEGYOPTIONS_H
