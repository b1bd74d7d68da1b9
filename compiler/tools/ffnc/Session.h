//===- Session.h - what ffnc's commands share -------------------*- C++ -*-===//
//
// Every command that reads a spec resolves the same things the same way:
// the machine profile (--machine), the spec file and its FFNs (--ffn,
// --batch-invariant), the target, and the CPU schedule (--strategy, the
// thread count). Each function returns the exit status when it fails, having
// reported why.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_TOOLS_SESSION_H
#define FFNC_TOOLS_SESSION_H

#include "ffnc/Analysis/MachineProfile.h"
#include "ffnc/CodeGen/Pipeline.h"
#include "ffnc/CodeGen/Target.h"
#include "ffnc/Frontend/AST.h"
#include "ffnc/Frontend/Diagnostics.h"
#include "ffnc/Frontend/Spec.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>
#include <vector>

namespace ffnc {

/// Reports `message` as ffnc's error; returns the exit status 1.
int fail(const llvm::Twine &message);

/// Reports an error of the back ends: one already rendered at the spec
/// (RenderedDiagnosticError, e.g. the Halide generator's) as it is, any
/// other as ffnc's error. Returns the exit status 1.
int reportError(llvm::Error error);

/// Writes `text` to `path` through a temporary file that is renamed into
/// place, so a failed run never leaves a half-written output behind.
int writeOutput(llvm::StringRef path, llvm::StringRef text);

struct Session {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<DiagnosticEngine> diags;
  SpecFile ast;
  std::vector<FfnSpec> specs;
  /// --machine's profile; none: the nominal machine.
  std::optional<MachineProfile> profile;
};

/// Reads --machine and the spec, checks it, and selects the FFNs.
std::optional<int> openSession(Session &session);

/// The target --target names.
std::optional<int> openTarget(llvm::StringRef name, TargetInfo &target);

/// The CPU schedule: the back end (--backend and the Halide options, the
/// Halide back end checked to be there), --strategy parsed and checked
/// against the FFNs, tuned for `threads` (at most 1024; `threadsFlag` names
/// the option in the error), priced for --machine's profile if given.
std::optional<int> resolveSchedule(Session &session, const TargetInfo &target,
                                   unsigned threads,
                                   llvm::StringRef threadsFlag,
                                   ScheduleOptions &schedule);

/// `ffnc run --oracle=halide`: the oracle kernels' schedule, `underTest`'s
/// with the Halide back end and its strategy-derived schedule, checked
/// against the FFNs as `underTest` was (an FFN the oracle cannot build is
/// an error at the spec, never a skipped comparison).
std::optional<int> resolveOracleSchedule(Session &session,
                                         const TargetInfo &target,
                                         const ScheduleOptions &underTest,
                                         ScheduleOptions &oracle);

} // namespace ffnc

#endif // FFNC_TOOLS_SESSION_H
