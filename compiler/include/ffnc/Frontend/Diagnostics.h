//===- Diagnostics.h - clang-style diagnostics for .ffn specs ---*- C++ -*-===//
//
// Every problem found in a spec is reported as `file:line:col: error: ...`
// with the source line and a caret (llvm::SourceMgr does the rendering), and
// counted, so the driver can stop after a limit and exit non-zero.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_FRONTEND_DIAGNOSTICS_H
#define FFNC_FRONTEND_DIAGNOSTICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace ffnc {

class DiagnosticEngine {
public:
  /// Diagnostics go to `os`; after `maxErrors` errors (0: no limit) a final
  /// "too many errors" error is printed and `shouldStop()` turns true.
  DiagnosticEngine(llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os,
                   unsigned maxErrors = 20)
      : sourceMgr(sourceMgr), os(os), maxErrors(maxErrors) {}

  /// Reports an error at `loc`, underlining `range` if it is valid.
  /// `replacement`, if given, is shown under the caret as a fix-it.
  void error(llvm::SMLoc loc, const llvm::Twine &message,
             llvm::SMRange range = {},
             std::optional<llvm::StringRef> replacement = std::nullopt);
  void warning(llvm::SMLoc loc, const llvm::Twine &message,
               llvm::SMRange range = {});
  void note(llvm::SMLoc loc, const llvm::Twine &message,
            llvm::SMRange range = {});

  unsigned errorCount() const { return numErrors; }
  bool hadError() const { return numErrors > 0; }
  /// True once the error limit was reached: callers stop analysing.
  bool shouldStop() const { return stopped; }

private:
  void emit(llvm::SourceMgr::DiagKind kind, llvm::SMLoc loc,
            const llvm::Twine &message, llvm::SMRange range,
            std::optional<llvm::StringRef> replacement);

  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned maxErrors;
  unsigned numErrors = 0;
  bool stopped = false;
};

/// Returns the candidate closest to `word` by edit distance, if it is close
/// enough to be a plausible typo ("did you mean 'swiglu'?").
std::optional<llvm::StringRef>
closestMatch(llvm::StringRef word, llvm::ArrayRef<llvm::StringRef> candidates);

} // namespace ffnc

#endif // FFNC_FRONTEND_DIAGNOSTICS_H
