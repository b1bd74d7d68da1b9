//===- InfoCommand.h - `ffnc info` ------------------------------*- C++ -*-===//

#ifndef FFNC_TOOLS_INFOCOMMAND_H
#define FFNC_TOOLS_INFOCOMMAND_H

#include "ffnc/Frontend/Spec.h"

#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <string>

namespace ffnc {

/// Renders the `info` report of every spec: dims, parameter counts, weight
/// bytes, FLOPs per token and arithmetic intensity at each token count.
std::string renderInfo(llvm::ArrayRef<FfnSpec> specs,
                       llvm::ArrayRef<uint64_t> tokenCounts,
                       const llvm::SourceMgr &sourceMgr);

} // namespace ffnc

#endif // FFNC_TOOLS_INFOCOMMAND_H
