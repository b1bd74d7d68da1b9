//===- CompileHalide.cpp - the Halide back end's stages -------------------===//
//
// Stages of --backend=halide: ast, ffn (the strategy, chosen for the
// two-pass kernel Halide's schedules are written for), halide (the request),
// tiled (the stub kernels ffn-halide-lower writes), llvm and asm (the glue
// only: the pipelines are Halide's), obj and so. The object joins the glue,
// the generator's pipeline objects and, once per final object, Halide's
// runtime, with every symbol but the kernels' entry points made local.
//
//===----------------------------------------------------------------------===//

#include "CompileHalide.h"

#include "ffnc/CodeGen/Backend.h"
#include "ffnc/CodeGen/HalideBackend.h"
#include "ffnc/CodeGen/Pipeline.h"

#include "ffn/Target/CPU/Pipelines.h"
#include "ffn/Target/Halide/HalideBufferLayout.h"
#include "ffn/Target/Halide/Passes.h"

#include "HalideProtocol.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>

#include <signal.h>

using namespace ffnc;

namespace {

constexpr llvm::StringLiteral kGeneratorName = "ffnc-halide-gen";
/// What --emit offers with this back end (the driver's names).
constexpr llvm::StringLiteral kStages =
    "(stages: ast, ffn, halide, tiled, llvm, asm, obj, so)";
/// The generator's time limit. Adams2019's beam search on a large spec
/// takes minutes; a generator that hangs must not hang ffnc.
constexpr unsigned kGeneratorSeconds = 900;
/// `--version` only prints a line; a minute means it is stuck.
constexpr unsigned kVersionSeconds = 60;
/// Lines of the generator's stderr shown after its first one on failure.
constexpr size_t kStderrLines = 20;

/// A temporary directory removed, with everything in it, when it goes out
/// of scope: on every path out of the caller.
class TempDir {
public:
  TempDir() = default;
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  ~TempDir() {
    if (!root.empty())
      llvm::sys::fs::remove_directories(root);
  }

  llvm::Error create(llvm::StringRef prefix) {
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory(prefix, root)) {
      root.clear();
      return llvm::createStringError("cannot create a temporary directory: " +
                                     ec.message());
    }
    return llvm::Error::success();
  }
  std::string path(llvm::StringRef name) const {
    llvm::SmallString<128> p(root);
    llvm::sys::path::append(p, name);
    return p.str().str();
  }

private:
  llvm::SmallString<128> root;
};

} // namespace

/// The file's text ("" if it cannot be read: the callers show what there
/// is).
static std::string readText(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

static llvm::Error writeText(llvm::StringRef path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (!ec)
    os << text;
  if (ec)
    return llvm::createStringError("cannot write '" + path.str() +
                                   "': " + ec.message());
  return llvm::Error::success();
}

/// The text's lines, without line ends and trailing blanks.
static std::vector<llvm::StringRef> linesOf(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  std::vector<llvm::StringRef> lines;
  for (llvm::StringRef line : parts)
    lines.push_back(line.rtrim());
  while (!lines.empty() && lines.back().empty())
    lines.pop_back();
  return lines;
}

/// How a child process ended, for messages: "exit 2", or why it has no
/// exit status (ExecuteAndWait's -1: not started, -2: a signal or the time
/// limit, with LLVM's explanation).
static std::string exitText(int rc, llvm::StringRef errorMessage) {
  if (rc >= 0)
    return "exit " + std::to_string(rc);
  std::string why = errorMessage.empty() ? std::string("no reason given")
                                         : errorMessage.str();
  return rc == -1 ? "could not be run: " + why : "killed: " + why;
}

/// ExecuteAndWait with a time limit, kept by polling: LLVM's own limit is
/// alarm(2), one per process, which the compile groups' threads (each
/// running a generator) would cancel or take from each other, and whose
/// clean-up may reap another thread's child. Returns as ExecuteAndWait
/// does.
static int
runWithTimeLimit(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
                 llvm::ArrayRef<std::optional<llvm::StringRef>> redirects,
                 unsigned seconds, std::string &errorMessage) {
  bool failed = false;
  llvm::sys::ProcessInfo child =
      llvm::sys::ExecuteNoWait(program, args, std::nullopt, redirects,
                               /*MemoryLimit=*/0, &errorMessage, &failed);
  if (failed || child.Pid == llvm::sys::ProcessInfo::InvalidPid)
    return -1;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  // Short at first (--version takes milliseconds), then at most 50 ms.
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    // SecondsToWait 0: a non-blocking wait; Polling: never kill.
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(child, /*SecondsToWait=*/0u, &errorMessage,
                        /*ProcStat=*/nullptr, /*Polling=*/true);
    if (done.Pid == child.Pid)
      return done.ReturnCode;
    if (done.Pid != 0 && done.ReturnCode == -1)
      return -1; // waiting failed (EINTR alone is retried)
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(child.Pid, SIGKILL);
      llvm::sys::Wait(child, /*SecondsToWait=*/std::nullopt);
      errorMessage = "no result after " + std::to_string(seconds) + " s";
      return -2;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

static bool isExecutableFile(llvm::StringRef path) {
  return llvm::sys::fs::is_regular_file(path) &&
         llvm::sys::fs::can_execute(path);
}

//===----------------------------------------------------------------------===//
// Finding the generator
//===----------------------------------------------------------------------===//

/// Where the generator is looked for when $FFNC_HALIDE_GEN is unset: beside
/// the running executable (an installed or relocated ffnc), then the build
/// tree's bin/ (a library such as libffnc_jit, whose executable is the
/// embedding program).
static std::vector<std::string> generatorCandidates() {
  std::vector<std::string> candidates;
  // The address only identifies this binary where /proc is missing.
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable("ffnc", &anchor);
  if (!self.empty()) {
    llvm::SmallString<256> beside(llvm::sys::path::parent_path(self));
    llvm::sys::path::append(beside, kGeneratorName);
    candidates.push_back(beside.str().str());
  }
#ifdef FFNC_HALIDE_GEN_PATH
  if (llvm::find(candidates, FFNC_HALIDE_GEN_PATH) == candidates.end())
    candidates.push_back(FFNC_HALIDE_GEN_PATH);
#endif
  return candidates;
}

/// Reads `ffnc-halide-gen protocol 1, Halide 14.0.0 (LLVM 14);
/// autoschedulers: adams2019 li2018 mullapudi2016` into `status`; a line of
/// another protocol or program makes the back end unavailable.
static void parseVersion(llvm::StringRef line, HalideBackendStatus &status) {
  llvm::StringRef rest = line;
  if (!rest.consume_front("ffnc-halide-gen protocol ")) {
    status.whyNot = "'" + status.generator + " --version' printed '" +
                    line.str() + "', which is not ffnc-halide-gen's version";
    return;
  }
  int protocol = 0;
  llvm::StringRef digits = rest.take_while(llvm::isDigit);
  if (digits.getAsInteger(10, protocol) ||
      protocol != ffnc::halide::kProtocolVersion) {
    status.whyNot = status.generator + " speaks protocol " + digits.str() +
                    " and this ffnc protocol " +
                    std::to_string(ffnc::halide::kProtocolVersion) +
                    " (they come from different builds: rebuild both)";
    return;
  }
  size_t at = line.find("autoschedulers:");
  if (at != llvm::StringRef::npos) {
    llvm::SmallVector<llvm::StringRef> names;
    line.drop_front(at + llvm::StringRef("autoschedulers:").size())
        .split(names, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    for (llvm::StringRef name : names) {
      name = name.trim(" ,;");
      if (!name.empty() && name != "none")
        status.autoschedulers.push_back(name.str());
    }
  }
  status.version = line.str();
  status.available = true;
}

/// Runs `<generator> --version` and fills in the rest of `status`.
static void queryGenerator(HalideBackendStatus &status) {
  TempDir dir;
  if (llvm::Error err = dir.create("ffnc-halide-version")) {
    status.whyNot = llvm::toString(std::move(err));
    return;
  }
  std::string outPath = dir.path("stdout"), errPath = dir.path("stderr");
  llvm::StringRef args[] = {status.generator, "--version"};
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(outPath), llvm::StringRef(errPath)};
  std::string errorMessage;
  int rc = runWithTimeLimit(status.generator, args, redirects, kVersionSeconds,
                            errorMessage);
  if (rc != 0) {
    std::string errText = readText(errPath);
    std::vector<llvm::StringRef> errLines = linesOf(errText);
    status.whyNot = "'" + status.generator + " --version' failed (" +
                    exitText(rc, errorMessage) + ")" +
                    (errLines.empty() ? "" : ": " + errLines.front().str());
    return;
  }
  std::string outText = readText(outPath);
  std::vector<llvm::StringRef> lines = linesOf(outText);
  parseVersion(lines.empty() ? llvm::StringRef() : lines.front(), status);
}

static HalideBackendStatus probeGenerator() {
  HalideBackendStatus status;
  if (const char *env = std::getenv("FFNC_HALIDE_GEN"); env && *env) {
    // An explicit choice is never replaced by another place's generator.
    status.generator = env;
    if (!isExecutableFile(status.generator)) {
      status.whyNot = "FFNC_HALIDE_GEN='" + status.generator +
                      "' is not an executable file";
      return status;
    }
  } else {
    std::vector<std::string> candidates = generatorCandidates();
    for (const std::string &path : candidates)
      if (isExecutableFile(path)) {
        status.generator = path;
        break;
      }
    if (status.generator.empty()) {
      status.generator =
          candidates.empty() ? std::string(kGeneratorName) : candidates.front();
      status.whyNot = "ffnc-halide-gen not found";
      for (auto [i, path] : llvm::enumerate(candidates))
        status.whyNot += (i ? " nor at " : " at ") + path;
      return status;
    }
  }
  queryGenerator(status);
  return status;
}

const HalideBackendStatus &ffnc::halideBackendStatus() {
  // Once per process; C++ makes the initialization thread-safe (compile
  // groups ask from several threads).
  static const HalideBackendStatus status = probeGenerator();
  return status;
}

//===----------------------------------------------------------------------===//
// Running the generator
//===----------------------------------------------------------------------===//

namespace {
/// What the generator wrote for one request: its pipeline objects' bytes
/// and the path of the Halide runtime object that goes with them.
struct GeneratedPipelines {
  std::vector<std::string> objects;
  std::string runtime;
};
} // namespace

/// The generator's failure as an error: located at the FFN its first line
/// names (`ffnc-halide-gen: kernel '<name>': <message>`), else plain. Its
/// next lines follow, up to kStderrLines, since Halide's own message often
/// spans several.
static llvm::Error generatorFailure(int rc, llvm::StringRef errorMessage,
                                    llvm::StringRef stderrText,
                                    llvm::ArrayRef<FfnSpec> specs,
                                    const llvm::SourceMgr &sourceMgr) {
  std::vector<llvm::StringRef> lines = linesOf(stderrText);
  llvm::StringRef first = lines.empty() ? llvm::StringRef() : lines.front();
  std::string tail;
  for (size_t i = 1; i < lines.size() && i <= kStderrLines; ++i)
    tail += "\n" + lines[i].str();
  if (lines.size() > kStderrLines + 1)
    tail += "\n... (" + std::to_string(lines.size() - kStderrLines - 1) +
            " more lines)";
  std::string how = exitText(rc, errorMessage);

  llvm::StringRef rest = first, name, message;
  if (rest.consume_front("ffnc-halide-gen: kernel '")) {
    name = rest.take_until([](char c) { return c == '\''; });
    rest = rest.drop_front(name.size());
    if (rest.consume_front("': "))
      message = rest;
  }
  const FfnSpec *spec = nullptr;
  if (!message.empty())
    for (const FfnSpec &s : specs)
      if (s.name == name)
        spec = &s;
  if (spec && spec->loc.isValid()) {
    std::string rendered;
    llvm::raw_string_ostream os(rendered);
    sourceMgr.PrintMessage(os, spec->loc, llvm::SourceMgr::DK_Error,
                           "ffn '" + name + "': the Halide generator failed (" +
                               how + "): " + message,
                           {}, {}, /*ShowColors=*/false);
    llvm::StringRef text = llvm::StringRef(rendered).rtrim("\n");
    return llvm::make_error<RenderedDiagnosticError>(text.str() + tail);
  }
  // Exit 1 is a request the generator refuses: ffnc wrote it wrong.
  return llvm::createStringError(
      std::string(rc == 1 ? "internal error: " : "") +
      "the Halide generator failed (" + how + ")" +
      (first.empty() ? std::string() : ": " + first.str()) + tail);
}

/// Reads `<outDir>/manifest.txt`: `object <path>` lines, then one
/// `runtime <path>`.
static llvm::Expected<GeneratedPipelines> readManifest(llvm::StringRef outDir) {
  llvm::SmallString<128> manifest(outDir);
  llvm::sys::path::append(manifest, "manifest.txt");
  auto noManifest = [&] {
    return llvm::createStringError(
        "internal error: ffnc-halide-gen wrote no manifest in " + outDir);
  };
  auto buffer = llvm::MemoryBuffer::getFile(manifest, /*IsText=*/true);
  if (!buffer)
    return noManifest();
  GeneratedPipelines result;
  for (llvm::StringRef line : linesOf((*buffer)->getBuffer())) {
    if (line.empty())
      continue;
    std::pair<llvm::StringRef, llvm::StringRef> fields = line.split(' ');
    llvm::StringRef kind = fields.first, path = fields.second;
    auto listed = [&](llvm::StringRef why) {
      return llvm::createStringError(
          "internal error: ffnc-halide-gen's manifest in " + outDir +
          " lists '" + path + "', " + why);
    };
    if (kind == "object") {
      auto object = llvm::MemoryBuffer::getFile(path);
      if (!object)
        return listed("which cannot be read: " + object.getError().message());
      result.objects.push_back((*object)->getBuffer().str());
    } else if (kind == "runtime" && result.runtime.empty()) {
      if (!llvm::sys::fs::is_regular_file(path))
        return listed("which does not exist");
      result.runtime = path.str();
    } else {
      return llvm::createStringError(
          "internal error: ffnc-halide-gen's manifest in " + outDir +
          " has an unexpected line '" + line + "'");
    }
  }
  if (result.objects.empty() || result.runtime.empty())
    return noManifest();
  return result;
}

/// Runs ffnc-halide-gen on `request` in a temporary directory (removed on
/// every path, after the objects are read into memory).
static llvm::Expected<GeneratedPipelines>
runGenerator(llvm::StringRef request, llvm::ArrayRef<FfnSpec> specs,
             const llvm::SourceMgr &sourceMgr) {
  const HalideBackendStatus &status = halideBackendStatus();
  if (!status.available)
    return llvm::createStringError(
        "--backend=halide: this ffnc has no Halide back end (" + status.whyNot +
        ")");
  TempDir dir;
  if (llvm::Error err = dir.create("ffnc-halide"))
    return std::move(err);
  std::string requestPath = dir.path("request.txt");
  std::string outDir = dir.path("out");
  std::string stderrPath = dir.path("stderr.txt");
  if (llvm::Error err = writeText(requestPath, request))
    return std::move(err);
  if (std::error_code ec = llvm::sys::fs::create_directory(outDir))
    return llvm::createStringError("cannot create '" + outDir +
                                   "': " + ec.message());

  std::string requestArg = "--request=" + requestPath;
  std::string outArg = "--out-dir=" + outDir;
  llvm::StringRef args[] = {status.generator, requestArg, outArg};
  // Its stderr is shown only on failure (Adams2019 reports its passes
  // there); stdout has nothing ffnc needs.
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(""), llvm::StringRef(stderrPath)};
  std::string errorMessage;
  int rc = runWithTimeLimit(status.generator, args, redirects,
                            kGeneratorSeconds, errorMessage);
  if (rc != 0)
    return generatorFailure(rc, errorMessage, readText(stderrPath), specs,
                            sourceMgr);
  return readManifest(outDir);
}

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

static bool isAutoscheduled(const ScheduleOptions &schedule) {
  return schedule.halideSchedule != "strategy";
}

/// The options of the strategy stage. Strategy mode: the cost model picks
/// mr, nr and mc for the two-pass kernel Halide's schedules are written for
/// (the fused, bf16-pair, sparse and K-blocked kernels are ffnc's own), so
/// those knobs
/// are fixed off (checkSpecsFit refuses them when asked for), and prefetch
/// is off unless asked for.
/// An autoscheduler decides everything itself: the target alone.
static ScheduleOptions strategyStageOptions(const ScheduleOptions &schedule) {
  ScheduleOptions options = schedule;
  if (isAutoscheduled(schedule)) {
    options.baseline = true;
    return options;
  }
  options.overrides.fusedMaxM = 0;
  options.overrides.bf16Dot = false;
  options.overrides.sparseMaxM = 0;
  options.overrides.kc = 0;
  options.overrides.kcTall = 0;
  options.overrides.nc.reset();
  // Halide's prefetch is the whole next panel's weights at once, not ffnc's
  // 2 KiB look-ahead: on an Emerald Rapids VM it made LLaMA-7B bf16 decode
  // 5x slower (one thread, M = 1: 24-27 ms without, 120-136 with; M = 16
  // 57-71 vs 146-152), so it is off unless asked for (--strategy=prefetch=1).
  if (!options.overrides.prefetch)
    options.overrides.prefetch = false;
  return options;
}

static mlir::ffn::FfnHalideLowerOptions
lowerOptions(const ScheduleOptions &schedule) {
  mlir::ffn::FfnHalideLowerOptions options;
  options.schedule = schedule.halideSchedule;
  options.mEstimate = schedule.halideMEstimate;
  // Autoscheduled kernels size Halide's own thread pool with it.
  options.threads = tunedThreads(schedule);
  options.testBug = schedule.testHalideBug;
  return options;
}

/// Stage errors: the stages this back end does not have.
static std::optional<std::string> stageError(const TargetInfo &target,
                                             const ScheduleOptions &schedule,
                                             EmitStage stage) {
  if (target.isGpu())
    return "--backend=halide builds CPU kernels; '" + target.name +
           "' is an NVIDIA target";
  if (stage == EmitStage::Gpu || stage == EmitStage::Ptx ||
      stage == EmitStage::Cubin)
    return "--emit=gpu, ptx and cubin are NVIDIA stages; the Halide back "
           "end builds CPU kernels " +
           kStages.str();
  if (stage == EmitStage::Linalg)
    return "--emit=linalg: the Halide back end has no linalg stage " +
           kStages.str();
  // checkSpecsFit refuses it with a located error; a caller that skipped
  // the check must not get ffnc's kernels instead.
  if (schedule.baseline && !isAutoscheduled(schedule))
    return std::string("--strategy=baseline is ffnc's own unscheduled path; "
                       "--backend=halide takes the packed strategy or "
                       "--halide-schedule=<autoscheduler>");
  return std::nullopt;
}

llvm::Expected<std::string> ffnc::compileHalideModule(
    mlir::ModuleOp module, llvm::ArrayRef<FfnSpec> specs,
    const llvm::SourceMgr &sourceMgr, const TargetInfo &target,
    const ScheduleOptions &schedule, EmitStage stage, bool printLocations,
    const StageRunner &run, std::vector<KernelSignature> *kernels,
    std::string *runtimeObject) {
  if (std::optional<std::string> error = stageError(target, schedule, stage))
    return llvm::createStringError(*error);

  ScheduleOptions strategy = strategyStageOptions(schedule);
  if (llvm::Error err = run(
          [&](mlir::OpPassManager &pm) { buildStrategyPipeline(pm, strategy); },
          "strategy selection"))
    return std::move(err);
  if (stage == EmitStage::Ffn)
    return printModule(module, printLocations);

  mlir::ffn::FfnHalideLowerOptions lower = lowerOptions(schedule);
  if (llvm::Error err = run(
          [&](mlir::OpPassManager &pm) {
            pm.addPass(mlir::ffn::createFfnHalideLower(lower));
          },
          "lowering to Halide pipelines"))
    return std::move(err);
  // The module attribute in which ffn-halide-lower leaves the request.
  llvm::StringRef requestName = ffnc::halide::kHalideRequestAttrName;
  auto requestAttr = module->getAttrOfType<mlir::StringAttr>(requestName);
  if (!requestAttr)
    return llvm::createStringError(
        "internal error: ffn-halide-lower left no request (" + requestName +
        ")");
  if (stage == EmitStage::Halide)
    return requestAttr.str();
  if (stage == EmitStage::Tiled)
    return printModule(module, printLocations);
  // The request goes to the generator, not into the glue's LLVM IR.
  std::string request = requestAttr.str();
  module->removeAttr(requestName);

  auto signatures = lowerCpuKernelsToLLVM(module, run, kernels);
  if (!signatures)
    return signatures.takeError();
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateToLLVMIR(module, *signatures, target, llvmContext);
  if (!llvmModule)
    return llvmModule.takeError();
  // Stages llvm and asm: the glue; the pipelines are Halide's
  // (ffnc-halide-gen --stmt shows them).
  auto glue = emitLLVMStage(**llvmModule, target, stage);
  if (!glue || stage != EmitStage::Object || signatures->empty())
    return glue;

  auto pipelines = runGenerator(request, specs, sourceMgr);
  if (!pipelines)
    return pipelines.takeError();
  if (runtimeObject)
    *runtimeObject = pipelines->runtime;
  std::vector<std::string> parts;
  parts.push_back(std::move(*glue));
  for (std::string &object : pipelines->objects)
    parts.push_back(std::move(object));
  return joinObjects(parts);
}

std::vector<std::string>
ffnc::exportedKernelSymbols(llvm::ArrayRef<KernelSignature> kernels) {
  std::vector<std::string> names;
  for (const KernelSignature &kernel : kernels) {
    const std::string &n = kernel.name;
    names.push_back("ffn_kernel_" + n);
    for (const char *entry : {"_run", "_phase", "_phase_units", "_pack"})
      names.push_back("ffn_" + n + entry);
    if (kernel.packQuantized)
      names.push_back("ffn_" + n + "_pack_quantized");
  }
  return names;
}

llvm::Expected<std::string>
ffnc::finishHalideObject(llvm::ArrayRef<std::string> moduleObjects,
                         llvm::StringRef runtimeObject,
                         llvm::ArrayRef<KernelSignature> kernels) {
  std::vector<std::string> parts(moduleObjects.begin(), moduleObjects.end());
  // No kernels, no pipelines: nothing calls the runtime.
  if (!runtimeObject.empty()) {
    auto runtime = llvm::MemoryBuffer::getFile(runtimeObject);
    if (!runtime)
      return llvm::createStringError("cannot read the Halide runtime '" +
                                     runtimeObject +
                                     "': " + runtime.getError().message());
    parts.push_back((*runtime)->getBuffer().str());
  }
  auto joined = joinObjects(parts);
  if (!joined)
    return joined.takeError();
  // Each object carries its own runtime and pipelines: local, they cannot
  // clash with another Halide object's or bind to an app's symbols.
  return localizeSymbols(*joined, exportedKernelSymbols(kernels));
}
