//===- Session.cpp - what ffnc's commands share ---------------------------===//

#include "Session.h"

#include "Options.h"

#include "ffnc/CodeGen/Compile.h"
#include "ffnc/CodeGen/HalideBackend.h"
#include "ffnc/CodeGen/SpecFit.h"
#include "ffnc/CodeGen/StrategyOptions.h"
#include "ffnc/Frontend/Sema.h"

#include "ffn/Target/CPU/CostModel.h"

#include "llvm/ADT/STLExtras.h"
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

int ffnc::reportError(llvm::Error error) {
  llvm::handleAllErrors(
      std::move(error),
      [](const RenderedDiagnosticError &located) {
        // It carries its own "error:" after the location.
        llvm::errs() << located.rendered() << "\n";
      },
      [](const llvm::ErrorInfoBase &other) { fail(other.message()); });
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

/// Whether this ffnc can build `schedule`'s Halide kernels: the generator
/// is there, with the autoscheduler asked for. `flag` names the option that
/// asked for Halide. Checked before the specs, so that a missing back end
/// is one error, not one per FFN.
static std::optional<int> checkHalideBackend(llvm::StringRef flag,
                                             const ScheduleOptions &schedule) {
  const HalideBackendStatus &status = halideBackendStatus();
  if (!status.available)
    return fail(flag + ": this ffnc has no Halide back end (" + status.whyNot +
                ")");
  if (schedule.halideSchedule != "strategy" &&
      !llvm::is_contained(status.autoschedulers, schedule.halideSchedule)) {
    std::string available;
    for (const std::string &name : status.autoschedulers)
      available += (available.empty() ? "" : ", ") + name;
    return fail("--halide-schedule=" + schedule.halideSchedule +
                ": not shipped by this Halide (available: " +
                (available.empty() ? std::string("none") : available) + ")");
  }
  return std::nullopt;
}

/// --backend and the options of the Halide back end into `schedule`. An
/// option that does not apply to the back end chosen is an error, never
/// silently ignored.
static std::optional<int> resolveBackend(ScheduleOptions &schedule) {
  schedule.backend = opts::backendOption.getValue();
  const bool halide = schedule.backend == Backend::Halide;
  if (opts::halideScheduleOption.getNumOccurrences() && !halide)
    return fail("--halide-schedule sets how the Halide back end schedules "
                "its kernels: give --backend=halide");
  schedule.halideSchedule =
      opts::halideScheduleName(opts::halideScheduleOption);
  const bool autoscheduled = schedule.halideSchedule != "strategy";
  if (opts::halideMEstimate.getNumOccurrences()) {
    if (!halide || !autoscheduled)
      return fail("--halide-m-estimate is the token count an autoscheduler's "
                  "estimates assume: give --backend=halide and "
                  "--halide-schedule=mullapudi2016, li2018 or adams2019");
    if (opts::halideMEstimate < 1 || opts::halideMEstimate > (1u << 20))
      return fail("--halide-m-estimate must be in [1, 1048576]");
    schedule.halideMEstimate = opts::halideMEstimate;
  }
  if (opts::testHalideBug.getNumOccurrences()) {
    // `ffnc run --oracle=halide` builds Halide kernels too: there the bug
    // goes into the oracle's (resolveOracleSchedule).
    bool oracle = opts::runCommand && opts::oracleOption.getNumOccurrences();
    if (!halide && !oracle)
      return fail("--test-halide-bug changes the Halide back end's kernels: "
                  "give --backend=halide (or, with run, --oracle=halide)");
    if (halide)
      schedule.testHalideBug = opts::halideBugName(opts::testHalideBug);
  }
  if (halide)
    return checkHalideBackend("--backend=halide", schedule);
  return std::nullopt;
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
  if (std::optional<int> rc = resolveBackend(schedule))
    return rc;
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

std::optional<int> ffnc::resolveOracleSchedule(Session &s,
                                               const TargetInfo &target,
                                               const ScheduleOptions &underTest,
                                               ScheduleOptions &oracle) {
  // The same target, threads and machine; the schedule is the Halide back
  // end's own choice. --strategy tunes the kernel under test: the oracle
  // keeps none of its knobs (a fused or sparse ffnc schedule is just what
  // the oracle should be compared with, and a Halide kernel refuses those
  // knobs).
  oracle = underTest;
  oracle.backend = Backend::Halide;
  oracle.halideSchedule = "strategy";
  oracle.halideMEstimate = ScheduleOptions().halideMEstimate;
  oracle.testHalideBug = opts::halideBugName(opts::testHalideBug);
  oracle.baseline = false;
  oracle.overrides = mlir::ffn::CpuStrategy();
  if (std::optional<int> rc = checkHalideBackend("--oracle=halide", oracle))
    return rc;
  if (!specsFit(s.specs, target, oracle, *s.diags)) {
    llvm::WithColor::note(llvm::errs(), "ffnc")
        << "--oracle=halide builds every FFN selected with the Halide back "
           "end too (select others with --ffn)\n";
    return 1;
  }
  return std::nullopt;
}
