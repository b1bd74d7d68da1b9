//===- Session.cpp - what ffnc's commands share ---------------------------===//

#include "Session.h"

#include "Options.h"

#include "ffnc/CodeGen/SpecFit.h"
#include "ffnc/CodeGen/StrategyOptions.h"
#include "ffnc/Frontend/Sema.h"

#include "ffn/Target/CPU/CostModel.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>

#include <unistd.h>

using namespace ffnc;

/// Spec files larger than this are refused outright: a real spec is a few
/// hundred bytes, and the limit bounds the work done on hostile input.
static constexpr uint64_t kMaxSpecBytes = 16u << 20;

/// Reads the spec from a file, a device or a pipe ('-': stdin), never more
/// than kMaxSpecBytes: a size check after reading would come too late for
/// /dev/zero or an endless pipe, which would first exhaust memory.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readSpecInput(llvm::StringRef path) {
  int fd = 0;
  if (path != "-") {
    if (std::error_code ec = llvm::sys::fs::openFileForRead(path, fd))
      return llvm::createStringError("cannot open '" + path +
                                     "': " + ec.message());
  }
  std::string text;
  char chunk[65536];
  std::string error;
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = "cannot read '" + path.str() + "': " + std::strerror(errno);
      break;
    }
    if (n == 0)
      break;
    if (text.size() + static_cast<size_t>(n) > kMaxSpecBytes) {
      error = "'" + path.str() +
              "' is larger than 16 MiB; specs that large are not accepted";
      break;
    }
    text.append(chunk, static_cast<size_t>(n));
  }
  if (fd != 0)
    ::close(fd);
  if (!error.empty())
    return llvm::createStringError(error);
  return llvm::MemoryBuffer::getMemBufferCopy(text,
                                              path == "-" ? "<stdin>" : path);
}

int ffnc::fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "ffnc") << message << "\n";
  return 1;
}

int ffnc::writeOutput(llvm::StringRef path, llvm::StringRef text) {
  llvm::Error err =
      llvm::writeToOutput(path, [&](llvm::raw_ostream &os) -> llvm::Error {
        os << text;
        return llvm::Error::success();
      });
  if (err)
    return fail("cannot write '" + path +
                "': " + llvm::toString(std::move(err)));
  return 0;
}

/// Parses --strategy into `options`; on a mistake reports it at the item it
/// concerns (the option as typed, a caret under the item) and returns false.
static bool parseStrategy(llvm::StringRef text, ScheduleOptions &options) {
  std::optional<StrategyError> error = parseStrategyOptions(text, options);
  if (!error)
    return true;
  fail("--strategy: " + error->message);
  const llvm::StringRef prefix = "--strategy=";
  llvm::errs() << "  " << prefix << text << "\n  "
               << std::string(prefix.size() + error->offset, ' ') << '^'
               << std::string(error->length ? error->length - 1 : 0, '~')
               << "\n";
  return false;
}

/// checkSpecsFit (ffnc/CodeGen/SpecFit.h), with the error count printed.
static bool specsFit(llvm::ArrayRef<FfnSpec> specs, const TargetInfo &target,
                     const ScheduleOptions &schedule, DiagnosticEngine &diags) {
  if (checkSpecsFit(specs, target, schedule, diags))
    return true;
  unsigned n = diags.errorCount();
  llvm::errs() << n << (n == 1 ? " error" : " errors") << " generated.\n";
  return false;
}

std::optional<int> ffnc::openSession(Session &s) {
  // The machine the cost models price for: a profile file, or nominal.
  if (!opts::machineFile.empty()) {
    llvm::Expected<MachineProfile> read = readMachineProfile(opts::machineFile);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    s.profile = std::move(*read);
  }

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> input =
      readSpecInput(opts::inputFile);
  if (!input)
    return fail(llvm::toString(input.takeError()));
  s.sourceMgr.AddNewSourceBuffer(std::move(*input), llvm::SMLoc());
  llvm::StringRef text =
      s.sourceMgr.getMemoryBuffer(s.sourceMgr.getMainFileID())->getBuffer();

  s.diags = std::make_unique<DiagnosticEngine>(s.sourceMgr, llvm::errs(),
                                               opts::maxErrors);
  s.specs = compileSpecBuffer(text, *s.diags, &s.ast);
  if (s.diags->hadError()) {
    unsigned n = s.diags->errorCount();
    llvm::errs() << n << (n == 1 ? " error" : " errors") << " generated.\n";
    return 1;
  }
  if (s.ast.decls.empty())
    s.diags->warning(llvm::SMLoc::getFromPointer(text.begin()),
                     "no 'ffn' blocks in '" + opts::inputFile + "'");

  if (!opts::onlyFfn.empty()) {
    std::vector<FfnSpec> selected;
    for (FfnSpec &spec : s.specs)
      if (spec.name == opts::onlyFfn)
        selected.push_back(std::move(spec));
    if (selected.empty()) {
      llvm::SmallVector<llvm::StringRef> names;
      for (const FfnSpec &spec : s.specs)
        names.push_back(spec.name);
      std::string hint;
      if (auto best = closestMatch(opts::onlyFfn, names))
        hint = ("; did you mean '" + *best + "'?").str();
      return fail("no ffn block named '" + opts::onlyFfn + "' in '" +
                  opts::inputFile + "'" + hint);
    }
    s.specs = std::move(selected);
  }
  if (opts::batchInvariantOption)
    for (FfnSpec &spec : s.specs)
      spec.batchInvariant = true;
  return std::nullopt;
}

std::optional<int> ffnc::openTarget(llvm::StringRef name, TargetInfo &target) {
  llvm::Expected<TargetInfo> resolved = resolveTarget(name);
  if (!resolved)
    return fail(llvm::toString(resolved.takeError()));
  target = std::move(*resolved);
  return std::nullopt;
}

std::optional<int> ffnc::resolveSchedule(Session &s, const TargetInfo &target,
                                         unsigned threads,
                                         llvm::StringRef threadsFlag,
                                         ScheduleOptions &schedule) {
  schedule.isa = target.name;
  schedule.vectorBits = target.vectorBits;
  if (!parseStrategy(opts::strategyOption, schedule) ||
      !specsFit(s.specs, target, schedule, *s.diags))

    return 1;
  if (threads > 1024)
    return fail(threadsFlag + " must be at most 1024");
  schedule.threads = threads;
  if (s.profile)
    schedule.machine =
        s.profile->assumptions(static_cast<unsigned>(tunedThreads(schedule)));
  return std::nullopt;
}

std::optional<int> ffnc::rejectCpuStrategy(const TargetInfo &target) {
  // The CPU's --strategy knobs have no meaning for an NVIDIA target, and
  // silently ignoring them would mislead.
  if (target.isGpu() && !opts::strategyOption.empty())
    return fail("--strategy sets the CPU back end's schedule; '" + target.name +
                "' is an NVIDIA target, whose tile buckets are not "
                "overridable yet (docs/gpu.md)");
  return std::nullopt;
}
