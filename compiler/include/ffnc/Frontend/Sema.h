//===- Sema.h - meaning and checks of a parsed spec -------------*- C++ -*-===//

#ifndef FFNC_FRONTEND_SEMA_H
#define FFNC_FRONTEND_SEMA_H

#include "ffnc/Frontend/AST.h"
#include "ffnc/Frontend/Diagnostics.h"
#include "ffnc/Frontend/Spec.h"

#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace ffnc {

/// Largest d_model or d_ff accepted. The biggest published FFNs are far
/// below it (LLaMA-3 405B: 16384/53248); beyond it a spec is a typo, and
/// weight counts stay well inside 64-bit byte arithmetic.
constexpr int64_t kMaxDimension = 262144;

/// Largest number of routed experts, and of shared experts, in a mixture
/// (DeepSeek-V3 routes over 256). It bounds the router's per-row workspace
/// and keeps every stacked parameter's size inside 64-bit arithmetic.
constexpr int64_t kMaxExperts = 256;
constexpr int64_t kMaxGroups = 1024;

/// Checks every block of `file`, reporting problems to `diags`, and returns
/// the resolved specs of the blocks without errors, in source order.
std::vector<FfnSpec> analyzeSpec(const SpecFile &file, DiagnosticEngine &diags);

/// The blocks that use another block's parameters (`share`): the owner
/// exists, is another block, shares no one's itself, and has the same
/// parameters stored the same way; errors located at the `share` value.
void checkSharing(const std::vector<FfnSpec> &specs,
                  const llvm::StringMap<const FfnDecl *> &decls,
                  DiagnosticEngine &diags);

/// The spec's fields as the rows of docs/dsl.md's field table (Markdown),
/// rendered from the table Sema checks fields with.
std::string specFieldTable();

/// Lexes, parses and checks one buffer: the whole front end in one call.
std::vector<FfnSpec> compileSpecBuffer(llvm::StringRef buffer,
                                       DiagnosticEngine &diags,
                                       SpecFile *astOut = nullptr);

} // namespace ffnc

#endif // FFNC_FRONTEND_SEMA_H
