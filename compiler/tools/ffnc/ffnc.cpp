//===- ffnc.cpp - the ffnc compiler driver --------------------------------===//
//
//   ffnc [options] <spec.ffn>         compile; --emit picks the stage printed
//   ffnc info [options] <spec.ffn>    sizes, FLOPs and intensity of each FFN
//   ffnc run [options] <spec.ffn>     run, time and check on this machine
//   ffnc probe [-o file]              measure this machine for the cost models
//
//===----------------------------------------------------------------------===//

#include "InfoCommand.h"
#include "RunCommand.h"

#include "ffnc/Analysis/MachineProfile.h"
#include "ffnc/CodeGen/Backend.h"
#include "ffnc/CodeGen/Compile.h"
#include "ffn/Target/GPU/PathNotes.h"
#include "ffnc/CodeGen/StrategyOptions.h"

#include "ffnc/Frontend/ASTPrinter.h"
#include "ffnc/Frontend/Sema.h"
#include "ffnc/MLIRGen/MLIRGen.h"

#include "ffn/Target/CPU/CostModel.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstring>
#include <optional>

#include <unistd.h>

using namespace ffnc;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory ffncCategory("ffnc options");

cl::SubCommand
    infoCommand("info",
                "Print dimensions, parameter count, weight bytes, FLOPs per "
                "token and arithmetic intensity of each FFN");
cl::SubCommand
    runCommand("run",
               "Compile for this machine, run each FFN on seeded random data "
               "through the runtime, time it, and with --check compare it with "
               "the f64 reference");
cl::SubCommand
    probeCommand("probe",
                 "Measure this machine (FMA peak, read bandwidths, the thread "
                 "pool's hand-off) and print the machine profile that "
                 "--machine reads");

enum class EmitKind {
  AST,
  Ffn,
  Linalg,
  Tiled,
  Gpu,
  Ptx,
  Cubin,
  LLVM,
  Asm,
  Obj,
  SharedLib
};

// Options of the commands that read a spec.
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<spec.ffn>"),
                               cl::Required, cl::cat(ffncCategory),
                               cl::sub(cl::SubCommand::getTopLevel()),
                               cl::sub(infoCommand), cl::sub(runCommand));
cl::opt<std::string>
    onlyFfn("ffn", cl::desc("Process only the ffn block with this name"),
            cl::value_desc("name"), cl::cat(ffncCategory),
            cl::sub(cl::SubCommand::getAll()));
cl::opt<std::string>
    targetName("target",
               cl::desc("Code generation target: host (default), x86-64-avx2, "
                        "x86-64-avx512"),
               cl::value_desc("name"), cl::init("host"), cl::cat(ffncCategory),
               cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand),
               cl::sub(infoCommand));
cl::opt<std::string> strategyOption(
    "strategy",
    cl::desc("Override the CPU schedule: 'baseline' (unpacked loops), or "
             "any of mr=N,nr=N,mc=N,prefetch=0|1,fused_max_m=N,chunk=N,"
             "groups=N (register tile rows/columns, cache block rows, "
             "next-panel prefetch, largest m of the fused d_ff-chunked "
             "schedule (0: never), its chunk width and work units)"),
    cl::value_desc("spec"), cl::cat(ffncCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand),
    cl::sub(infoCommand));
cl::opt<bool> batchInvariantOption(
    "batch-invariant",
    cl::desc("Make every FFN batch-invariant, as `batch_invariant = true` in "
             "its spec does: a row's output bits do not depend on M or on "
             "the rows run with it"),
    cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()),
    cl::sub(runCommand), cl::sub(infoCommand));
cl::opt<std::string> machineFile(
    "machine",
    cl::desc("Price the schedules (and, in info, predict) for the machine "
             "described by this profile (`ffnc probe -o FILE`) instead of "
             "the nominal one"),
    cl::value_desc("file"), cl::cat(ffncCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand),
    cl::sub(infoCommand));
cl::opt<unsigned>
    maxErrors("max-errors",
              cl::desc("Stop after this many errors (default 20; 0: no limit)"),
              cl::init(20), cl::cat(ffncCategory),
              cl::sub(cl::SubCommand::getTopLevel()), cl::sub(infoCommand),
              cl::sub(runCommand));

// Compilation (no subcommand).
cl::opt<EmitKind> emit(
    "emit", cl::desc("Stage to print"), cl::init(EmitKind::Ffn),
    cl::values(
        clEnumValN(EmitKind::AST, "ast",
                   "the parsed spec, with evaluated dimensions"),
        clEnumValN(EmitKind::Ffn, "ffn",
                   "the ffn dialect (one func per ffn block) with the "
                   "chosen #ffn.strategy"),
        clEnumValN(EmitKind::Linalg, "linalg",
                   "after lowering the ffn dialect: packed vector loops "
                   "(scheduled) or linalg on tensors (baseline)"),
        clEnumValN(EmitKind::Tiled, "tiled",
                   "every kernel with its final memref calling convention"),
        clEnumValN(EmitKind::Gpu, "gpu",
                   "NVIDIA targets: the gpu-dialect kernels, host pack "
                   "functions and launch plan"),
        clEnumValN(EmitKind::Ptx, "ptx", "NVIDIA targets: the PTX"),
        clEnumValN(EmitKind::Cubin, "cubin",
                   "NVIDIA targets: one FFN's cubin (needs -o; ptxas from "
                   "the CUDA toolkit)"),
        clEnumValN(EmitKind::LLVM, "llvm",
                   "optimized LLVM IR with the kernel ABI glue"),
        clEnumValN(EmitKind::Asm, "asm", "x86-64 assembly"),
        clEnumValN(EmitKind::Obj, "obj",
                   "a relocatable object (needs -o); link it with the "
                   "--header into your app"),
        clEnumValN(EmitKind::SharedLib, "so",
                   "a shared library for ffn_kernel_load_library (needs "
                   "-o)")),
    cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<std::string> outputFile(
    "o", cl::desc("Output file ('-' for stdout); written only on success"),
    cl::value_desc("file"), cl::init("-"), cl::cat(ffncCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(probeCommand));

cl::opt<std::string>
    headerFile("header",
               cl::desc("Also write the C header declaring the kernels (with "
                        "--emit=obj or --emit=so)"),
               cl::value_desc("file"), cl::cat(ffncCategory),
               cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<bool> printLocations(
    "print-locations",
    cl::desc("Print source locations (spec file:line:col) in MLIR output"),
    cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()));

// info and run.
cl::list<uint64_t> tokenCounts(
    "tokens",
    cl::desc("Token counts M: info prints the arithmetic intensity at each "
             "(default 1,16,128,2048); run runs each (default 17)"),
    cl::value_desc("M,M,..."), cl::CommaSeparated, cl::cat(ffncCategory),
    cl::sub(infoCommand), cl::sub(runCommand));

cl::opt<bool> measureOption(
    "measure",
    cl::desc("With --target=host: measure this machine (as `ffnc probe` "
             "does, a few seconds) and use it for the choice and the "
             "predictions"),
    cl::cat(ffncCategory), cl::sub(infoCommand));

// run.
cl::opt<bool> checkResults(
    "check",
    cl::desc("Compare every output with the f64 reference; exit 1 if any "
             "is outside its error bound (docs/numerics.md)"),
    cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<ffn_ref::BoundModel> checkBound(
    "check-bound",
    cl::desc("How --check bounds each element's error from the magnitudes "
             "summed (docs/numerics.md)"),
    cl::init(ffn_ref::BoundModel::Probabilistic),
    cl::values(clEnumValN(ffn_ref::BoundModel::Probabilistic, "probabilistic",
                          "8 sqrt(n) u per sum of n terms (default)"),
               clEnumValN(ffn_ref::BoundModel::WorstCase, "worst-case",
                          "gamma_n = n u / (1 - n u), guaranteed for any "
                          "rounding")),
    cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<double> testActivationError(
    "test-activation-error",
    cl::desc("Testing the check: offset the reference's activation "
             "arguments by this relative amount"),
    cl::init(0.0), cl::Hidden, cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random data (default 1)"),
                       cl::init(1), cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("Timed runs after one warm-up (default 3)"),
                         cl::init(3), cl::cat(ffncCategory),
                         cl::sub(runCommand));
cl::opt<unsigned> threadCount(
    "threads",
    cl::desc("Threads the kernels run on (default 0: one per core, the "
             "runtime's default); the cost model picks each token count's "
             "schedule for it, and run uses it"),
    cl::init(0), cl::cat(ffncCategory), cl::sub(infoCommand),
    cl::sub(runCommand));
// The same for compiling (LLVM already has a top-level --threads).
cl::opt<unsigned> kernelThreads(
    "kernel-threads",
    cl::desc("Threads the kernels will run on (default 0: one per core of "
             "this machine); the cost model picks each token count's "
             "schedule for it"),
    cl::init(0), cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<bool> outInLayout(
    "out-in",
    cl::desc("Hand weights to the runtime in PyTorch's [out, in] layout"),
    cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<double> inputScale(
    "input-scale",
    cl::desc("Scale of the random input, uniform in [-s, s] (default 1)"),
    cl::init(1.0), cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<bool> injectNonFinite(
    "inject-nonfinite",
    cl::desc("Put NaN, +Inf and -Inf into the first three input rows"),
    cl::cat(ffncCategory), cl::sub(runCommand));

/// Spec files larger than this are refused outright: a real spec is a few
/// hundred bytes, and the limit bounds the work done on hostile input.
constexpr uint64_t kMaxSpecBytes = 16u << 20;

/// Reads the spec from a file, a device or a pipe ('-': stdin), never more
/// than kMaxSpecBytes: a size check after reading would come too late for
/// /dev/zero or an endless pipe, which would first exhaust memory.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
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
  return llvm::MemoryBuffer::getMemBufferCopy(
      text, path == "-" ? "<stdin>" : path);
}

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "ffnc") << message << "\n";
  return 1;
}

/// Writes `text` to the output file through a temporary file that is renamed
/// into place, so a failed run never leaves a half-written output behind.
int writeOutput(llvm::StringRef path, llvm::StringRef text) {
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
bool parseStrategy(llvm::StringRef text, ScheduleOptions &options) {
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

/// A batch-invariant FFN never takes the fused schedule: a --strategy that
/// asks for it is a contradiction, reported at the spec.
bool checkBatchInvariance(llvm::ArrayRef<FfnSpec> specs, int64_t fusedMaxM,
                          DiagnosticEngine &diags) {
  if (fusedMaxM <= 0)
    return true;
  for (const FfnSpec &spec : specs)
    if (spec.batchInvariant)
      diags.error(spec.loc,
                  "ffn '" + spec.name +
                      "' is batch_invariant, but --strategy=fused_max_m=" +
                      std::to_string(fusedMaxM) +
                      " asks for the fused schedule, whose reduction order "
                      "depends on M");
  if (!diags.hadError())
    return true;
  unsigned n = diags.errorCount();
  llvm::errs() << n << (n == 1 ? " error" : " errors") << " generated.\n";
  return false;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // A reader that goes away (`ffnc spec | head`) ends ffnc quietly with
  // status 74 (EX_IOERR) instead of a SIGPIPE death. _exit, not exit: exit
  // would flush stdout into the closed pipe again.
  std::signal(SIGPIPE, [](int) { _exit(74); });
  cl::HideUnrelatedOptions(ffncCategory);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "ffnc " << FFNC_VERSION << " (LLVM/MLIR " << LLVM_VERSION_STRING
       << ")\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "ffnc: a compiler for Transformer feed-forward networks\n\n"
      "  ffnc [options] <spec.ffn>        compile a spec; --emit picks the "
      "stage\n"
      "  ffnc info [options] <spec.ffn>   report sizes, FLOPs and "
      "intensity\n"
      "  ffnc run [options] <spec.ffn>    run on this machine, time, "
      "--check\n"
      "  ffnc probe [-o file]             measure this machine for "
      "--machine\n\n"
      "The spec language is described in docs/dsl.md.\n");

  if (probeCommand) {
    llvm::Expected<TargetInfo> host = resolveTarget("host");
    if (!host)
      return fail(llvm::toString(host.takeError()));
    MachineProfile measured = measureMachine(host->vectorBits == 512);
    return writeOutput(
        outputFile,
        printMachineProfile(measured, fmt::format("{} ({}), measured",
                                                  host->hostCpu, host->name)));
  }

  // The machine the cost models price for: a profile file, or nominal.
  std::optional<MachineProfile> profile;
  if (!machineFile.empty()) {
    llvm::Expected<MachineProfile> read = readMachineProfile(machineFile);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    profile = std::move(*read);
  }

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> input =
      readSpecInput(inputFile);
  if (!input)
    return fail(llvm::toString(input.takeError()));

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*input), llvm::SMLoc());
  llvm::StringRef text =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();

  DiagnosticEngine diags(sourceMgr, llvm::errs(), maxErrors);
  SpecFile ast;
  std::vector<FfnSpec> specs = compileSpecBuffer(text, diags, &ast);
  if (diags.hadError()) {
    unsigned n = diags.errorCount();
    llvm::errs() << n << (n == 1 ? " error" : " errors") << " generated.\n";
    return 1;
  }
  if (ast.decls.empty())
    diags.warning(llvm::SMLoc::getFromPointer(text.begin()),
                  "no 'ffn' blocks in '" + inputFile + "'");

  if (!onlyFfn.empty()) {
    std::vector<FfnSpec> selected;
    for (FfnSpec &spec : specs)
      if (spec.name == onlyFfn)
        selected.push_back(std::move(spec));
    if (selected.empty()) {
      llvm::SmallVector<llvm::StringRef> names;
      for (const FfnSpec &spec : specs)
        names.push_back(spec.name);
      std::string hint;
      if (auto best = closestMatch(onlyFfn, names))
        hint = ("; did you mean '" + *best + "'?").str();
      return fail("no ffn block named '" + onlyFfn + "' in '" + inputFile +
                  "'" + hint);
    }
    specs = std::move(selected);
  }
  if (batchInvariantOption)
    for (FfnSpec &spec : specs)
      spec.batchInvariant = true;

  if (infoCommand) {
    std::vector<uint64_t> tokens(tokenCounts.begin(), tokenCounts.end());
    if (tokens.empty())
      tokens = {1, 16, 128, 2048};
    for (uint64_t m : tokens)
      if (m == 0)
        return fail("--tokens: token counts must be at least 1");
    if (targetName.getNumOccurrences() == 0) {
      if (strategyOption.getNumOccurrences())
        return fail("info --strategy prices a schedule for a target: give "
                    "--target too (e.g. --target=host)");
      llvm::outs() << renderInfo(specs, tokens, sourceMgr);
      return 0;
    }
    // With a target: what the compiler picks and what it should cost.
    llvm::Expected<TargetInfo> target = resolveTarget(targetName);
    if (!target)
      return fail(llvm::toString(target.takeError()));
    ScheduleOptions options;
    options.vectorBits = target->vectorBits;
    if (!parseStrategy(strategyOption, options) ||
        !checkBatchInvariance(specs, options.fusedMaxM, diags))
      return 1;
    if (options.baseline)
      return fail("info --strategy: the baseline has no schedule to report");
    if (threadCount > 1024)
      return fail("--threads must be at most 1024");
    options.threads = threadCount;
    unsigned threads = static_cast<unsigned>(tunedThreads(options));
    InfoSchedule schedule;
    schedule.target = target->name;
    schedule.vectorBits = target->vectorBits;
    schedule.overrides = overridesOf(options);
    schedule.threads = threads;
    if (measureOption) {
      if (targetName != "host")
        return fail("--measure needs --target=host");
      if (profile)
        return fail("--measure and --machine both give the machine; use one");
      profile = measureMachine(target->vectorBits == 512);
    }
    // Nominal (ffn/Target/CPU/CostModel.h): per core one 512-bit (or two 256-bit) FMAs
    // per cycle at 3.5 GHz and 60 GB/s from cache; 20 GB/s of memory
    // bandwidth for the whole process.
    schedule.machine = profile ? *profile : nominalMachine(threads);
    llvm::outs() << renderInfo(specs, tokens, sourceMgr, &schedule);
    return 0;
  }

  // Everything past the front end needs a valid target.
  llvm::Expected<TargetInfo> target = resolveTarget(targetName);
  if (!target)
    return fail(llvm::toString(target.takeError()));

  // The NVIDIA back end's schedule is its launch plan (docs/gpu.md); the
  // CPU's --strategy knobs have no meaning there, and silently ignoring
  // them would mislead.
  if (target->isGpu() && !strategyOption.empty())
    return fail("--strategy sets the CPU back end's schedule; '" +
                target->name +
                "' is an NVIDIA target, whose tile buckets are not "
                "overridable yet (docs/gpu.md)");
  // The NVIDIA back end says where a spec misses its tuned kernels.
  if (target->isGpu() && emit != EmitKind::AST)
    for (const FfnSpec &spec : specs)
      for (const std::string &note : mlir::ffn::gpu_target::pathNotes(
               spec.dModel, spec.dtype == DType::F32 ? 4 : 2, target->chip,
               spec.batchInvariant))
        diags.warning(spec.loc, "ffn '" + spec.name + "': " + note);

  ScheduleOptions schedule;
  schedule.vectorBits = target->vectorBits;
  if (!parseStrategy(strategyOption, schedule) ||
      !checkBatchInvariance(specs, schedule.fusedMaxM, diags))
    return 1;
  unsigned tuneFor = runCommand ? threadCount : kernelThreads;
  if (tuneFor > 1024)
    return fail(runCommand ? "--threads must be at most 1024"
                           : "--kernel-threads must be at most 1024");
  schedule.threads = tuneFor;
  if (profile)
    schedule.machine =
        profile->assumptions(static_cast<unsigned>(tunedThreads(schedule)));

  if (runCommand) {
    RunOptions options;
    options.schedule = schedule;
    options.tokens.assign(tokenCounts.begin(), tokenCounts.end());
    if (options.tokens.empty())
      options.tokens = {17};
    for (uint64_t m : options.tokens)
      if (m == 0 || m > (1u << 20))
        return fail("--tokens: token counts must be in [1, 1048576]");
    if (!(inputScale > 0) || !std::isfinite(inputScale))
      return fail("--input-scale must be positive and finite");
    if (target->isGpu())
      return fail("ffnc run runs CPU kernels; '" + target->name +
                  "' is an NVIDIA target: build it with --emit=so and run it "
                  "with ffn-gpu-run on a machine with the GPU");
    if (!hostCanRun(*target))
      return fail("this machine cannot run code for target '" + target->name +
                  "'");
    options.target = *target;
    options.check = checkResults;
    options.seed = seed;
    if (repeat > 1000000)
      return fail("--repeat must be at most 1000000");
    options.repeat = repeat;
    options.outInLayout = outInLayout;
    options.threads = threadCount;
    options.inputScale = inputScale;
    options.injectNonFinite = injectNonFinite;
    options.boundModel = checkBound;
    if (!std::isfinite(testActivationError) ||
        std::fabs(testActivationError) >= 1)
      return fail("--test-activation-error must be in (-1, 1)");
    options.testActivationError = testActivationError;
    return runSpecs(specs, sourceMgr, options);
  }

  if (emit == EmitKind::AST) {
    std::string rendered;
    llvm::raw_string_ostream os(rendered);
    printAST(ast, specs, sourceMgr, os);
    return writeOutput(outputFile, rendered);
  }
  bool binary = emit == EmitKind::Obj || emit == EmitKind::SharedLib;
  if ((binary || emit == EmitKind::Cubin) && outputFile == "-")
    return fail("--emit=obj, --emit=so and --emit=cubin write binary files: "
                "give -o <file>");
  if (!headerFile.empty() && !binary)
    return fail("--header goes with --emit=obj or --emit=so");

  if (emit == EmitKind::SharedLib) {
    if (llvm::Error err =
            buildSharedLibrary(specs, sourceMgr, *target, schedule, outputFile))
      return fail(llvm::toString(std::move(err)));
  } else {
    EmitStage stage = emit == EmitKind::Ffn      ? EmitStage::Ffn
                      : emit == EmitKind::Linalg ? EmitStage::Linalg
                      : emit == EmitKind::Tiled  ? EmitStage::Tiled
                      : emit == EmitKind::Gpu    ? EmitStage::Gpu
                      : emit == EmitKind::Ptx    ? EmitStage::Ptx
                      : emit == EmitKind::Cubin  ? EmitStage::Cubin
                      : emit == EmitKind::LLVM   ? EmitStage::LLVMIR
                      : emit == EmitKind::Asm    ? EmitStage::Assembly
                                                 : EmitStage::Object;
    llvm::Expected<std::string> output = compileSpecs(
        specs, sourceMgr, *target, schedule, stage, printLocations);
    if (!output)
      return fail(llvm::toString(output.takeError()));
    if (int rc = writeOutput(outputFile, *output))
      return rc;
  }
  if (!headerFile.empty())
    return writeOutput(headerFile, emitKernelHeader(specs, *target, inputFile));
  return 0;
}
