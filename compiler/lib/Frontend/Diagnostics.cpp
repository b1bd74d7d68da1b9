//===- Diagnostics.cpp - clang-style diagnostics --------------------------===//

#include "ffnc/Frontend/Diagnostics.h"

#include "llvm/ADT/SmallVector.h"

using namespace ffnc;

void DiagnosticEngine::emit(llvm::SourceMgr::DiagKind kind, llvm::SMLoc loc,
                            const llvm::Twine &message, llvm::SMRange range,
                            std::optional<llvm::StringRef> replacement) {
  if (stopped)
    return;
  llvm::SmallVector<llvm::SMRange, 1> ranges;
  if (range.isValid())
    ranges.push_back(range);
  llvm::SmallVector<llvm::SMFixIt, 1> fixIts;
  if (replacement && range.isValid())
    fixIts.emplace_back(range, *replacement);
  sourceMgr.PrintMessage(os, loc, kind, message, ranges, fixIts);
}

void DiagnosticEngine::error(llvm::SMLoc loc, const llvm::Twine &message,
                             llvm::SMRange range,
                             std::optional<llvm::StringRef> replacement) {
  if (stopped)
    return;
  emit(llvm::SourceMgr::DK_Error, loc, message, range, replacement);
  ++numErrors;
  if (maxErrors != 0 && numErrors >= maxErrors) {
    sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Error,
                           "too many errors emitted, stopping now "
                           "(raise the limit with --max-errors=N)",
                           {}, {}, /*ShowColors=*/false);
    stopped = true;
  }
}

void DiagnosticEngine::warning(llvm::SMLoc loc, const llvm::Twine &message,
                               llvm::SMRange range) {
  emit(llvm::SourceMgr::DK_Warning, loc, message, range, std::nullopt);
}

void DiagnosticEngine::note(llvm::SMLoc loc, const llvm::Twine &message,
                            llvm::SMRange range) {
  emit(llvm::SourceMgr::DK_Note, loc, message, range, std::nullopt);
}

std::optional<llvm::StringRef>
ffnc::closestMatch(llvm::StringRef word,
                   llvm::ArrayRef<llvm::StringRef> candidates) {
  // Allow roughly one typo per three characters, at least one and at most
  // three, so 'gleu' finds 'gelu' but 'x' does not find 'relu'.
  unsigned limit =
      std::max<unsigned>(1, std::min<unsigned>(3, (word.size() + 2) / 3));
  std::optional<llvm::StringRef> best;
  unsigned bestDistance = limit + 1;
  std::string lower = word.lower();
  for (llvm::StringRef candidate : candidates)
    if (candidate == lower) // 'GELU' or 'SwiGLU': only the case is off.
      return candidate;
  for (llvm::StringRef candidate : candidates) {
    unsigned distance =
        word.edit_distance(candidate, /*AllowReplacements=*/true,
                           /*MaxEditDistance=*/limit + 1);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  return best;
}
