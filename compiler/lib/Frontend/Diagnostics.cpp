//===- Diagnostics.cpp - clang-style diagnostics --------------------------===//

#include "ffnc/Frontend/Diagnostics.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <string>

using namespace ffnc;

/// Source lines longer than this are shown as a window around the caret:
/// printing a whole line per diagnostic would make the output grow with
/// errors x line length (thousands of errors on one long line: gigabytes).
constexpr size_t kMaxShownColumns = 160;

/// Prints a diagnostic on a long line: the location and message as
/// SourceMgr does, then kMaxShownColumns of the line around the caret.
static void printWindowed(llvm::raw_ostream &os, const llvm::SourceMgr &sm,
                          llvm::SourceMgr::DiagKind kind, llvm::SMLoc loc,
                          const llvm::Twine &message, llvm::SMRange range,
                          llvm::StringRef line, size_t column) {
  // The message alone: SourceMgr prints no source line for a diagnostic
  // without a location, so give it the "file:line:col: " prefix ourselves.
  unsigned buffer = sm.FindBufferContainingLoc(loc);
  auto [lineNo, colNo] = sm.getLineAndColumn(loc, buffer);
  std::string where = (sm.getMemoryBuffer(buffer)->getBufferIdentifier() +
                       ":" + llvm::Twine(lineNo) + ":" + llvm::Twine(colNo))
                          .str();
  llvm::SMDiagnostic(where, kind, message.str()).print(nullptr, os);
  size_t begin = column > kMaxShownColumns / 2 ? column - kMaxShownColumns / 2
                                               : 0;
  begin = std::min(begin, line.size() - std::min(line.size(), kMaxShownColumns));
  llvm::StringRef shown = line.substr(begin, kMaxShownColumns);
  std::string lead = begin > 0 ? "..." : "";
  std::string tail = begin + shown.size() < line.size() ? "..." : "";
  os << lead << shown << tail << "\n";
  std::string caret(lead.size() + shown.size() + 1, ' ');
  size_t at = lead.size() + (column - begin);
  if (range.isValid()) {
    const char *lineStart = line.data();
    size_t from = range.Start.getPointer() - lineStart;
    size_t to = range.End.getPointer() - lineStart;
    for (size_t c = std::max(from, begin); c < std::min(to, begin + shown.size());
         ++c)
      caret[lead.size() + c - begin] = '~';
  }
  if (at < caret.size())
    caret[at] = '^';
  os << llvm::StringRef(caret).rtrim() << "\n";
}

void DiagnosticEngine::emit(llvm::SourceMgr::DiagKind kind, llvm::SMLoc loc,
                            const llvm::Twine &message, llvm::SMRange range,
                            std::optional<llvm::StringRef> replacement) {
  if (stopped)
    return;
  if (loc.isValid()) {
    unsigned buffer = sourceMgr.FindBufferContainingLoc(loc);
    if (buffer != 0) {
      llvm::StringRef text = sourceMgr.getMemoryBuffer(buffer)->getBuffer();
      size_t at = loc.getPointer() - text.data();
      size_t start = text.substr(0, at).rfind('\n');
      start = start == llvm::StringRef::npos ? 0 : start + 1;
      size_t end = text.find_first_of("\r\n", at);
      llvm::StringRef line = text.slice(start, end);
      if (line.size() > kMaxShownColumns) {
        printWindowed(os, sourceMgr, kind, loc, message, range, line,
                      at - start);
        return;
      }
    }
  }
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
