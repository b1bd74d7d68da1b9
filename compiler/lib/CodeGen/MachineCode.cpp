//===- MachineCode.cpp - LLVM IR, optimization, objects, shared libs ------===//

#include "ffnc/CodeGen/Backend.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include <mutex>

using namespace ffnc;

static void initializeX86() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
  });
}

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetInfo &target) {
  initializeX86();
  std::string error;
  llvm::Triple triple(target.triple);
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!t)
    return llvm::createStringError("cannot create target '" + target.triple +
                                   "': " + error);
  llvm::TargetOptions options;
  // Position-independent: the same object links into executables and
  // shared libraries.
  std::unique_ptr<llvm::TargetMachine> tm(
      t->createTargetMachine(triple, target.cpu, target.features, options,
                             llvm::Reloc::PIC_, std::nullopt,
                             // Aggressive measured no faster on the scheduled
                             // kernels, only slower to compile.
                             llvm::CodeGenOptLevel::Default));
  if (!tm)
    return llvm::createStringError("cannot create a target machine for " +
                                   target.name);
  return std::move(tm);
}

/// `scheduled`: every kernel is already vectorized and register-tiled by
/// ffnc, so LLVM's loop vectorizer, SLP vectorizer and unroller have nothing
/// to add but code size and compile time (measured: same speed, about half
/// the compile time). The baseline path relies on them.
static void optimize(llvm::Module &module, llvm::TargetMachine &tm,
                     bool scheduled) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = !scheduled;
  tuning.SLPVectorization = !scheduled;
  tuning.LoopUnrolling = !scheduled;
  llvm::PassInstrumentationCallbacks callbacks;
  llvm::StandardInstrumentations instrumentations(module.getContext(),
                                                  /*DebugLogging=*/false);
  instrumentations.registerCallbacks(callbacks, &mam);
  llvm::PassBuilder pb(&tm, tuning, std::nullopt, &callbacks);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(
      scheduled ? llvm::OptimizationLevel::O2 : llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

llvm::Expected<std::unique_ptr<llvm::Module>>
ffnc::translateToLLVMIR(mlir::ModuleOp module,
                        llvm::ArrayRef<KernelSignature> signatures,
                        const TargetInfo &target, llvm::LLVMContext &context) {
  mlir::DialectRegistry registry;
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context, "ffnc");
  if (!llvmModule)
    return llvm::createStringError(
        "internal error: translation to LLVM IR failed");
  auto tm = createTargetMachine(target);
  if (!tm)
    return tm.takeError();
  llvmModule->setTargetTriple((*tm)->getTargetTriple());
  llvmModule->setDataLayout((*tm)->createDataLayout());
  // Every function gets the target's CPU and features, so the optimizer's
  // cost model and the vectorizer see the real vector width.
  for (llvm::Function &f : *llvmModule)
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", target.cpu);
      f.addFnAttr("target-features", target.features);
      // LLVM tunes Skylake-class CPUs to 256-bit vectors; the AVX-512
      // target means 512-bit registers.
      if (target.vectorBits)
        f.addFnAttr("prefer-vector-width",
                    std::to_string(target.vectorBits));
    }
  std::string verifyErrors;
  llvm::raw_string_ostream os(verifyErrors);
  if (llvm::verifyModule(*llvmModule, &os))
    return llvm::createStringError("internal error: invalid LLVM IR: " +
                                   verifyErrors);
  bool scheduled = llvm::all_of(signatures, [](const KernelSignature &s) {
    return s.phased;
  });
  optimize(*llvmModule, **tm, scheduled);
  return std::move(llvmModule);
}

llvm::Expected<std::string> ffnc::emitMachineCode(llvm::Module &module,
                                                  const TargetInfo &target,
                                                  OutputKind kind) {
  auto tm = createTargetMachine(target);
  if (!tm)
    return tm.takeError();
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, stream, nullptr,
                                 kind == OutputKind::Object
                                     ? llvm::CodeGenFileType::ObjectFile
                                     : llvm::CodeGenFileType::AssemblyFile))
    return llvm::createStringError("the target cannot emit this file type");
  pm.run(module);
  return std::string(buffer.begin(), buffer.end());
}

/// The system's LLVM 22 tool `name` ("clang", "llvm-objcopy"): Debian's
/// versioned `<name>-22` on PATH, else LLVM 22's own bin directory.
static llvm::ErrorOr<std::string> findLlvmTool(llvm::StringRef name) {
  llvm::ErrorOr<std::string> tool =
      llvm::sys::findProgramByName((name + "-22").str());
  if (!tool)
    tool = llvm::sys::findProgramByName(name, {"/usr/lib/llvm-22/bin"});
  return tool;
}

/// Runs the LLVM 22 tool `name` with `arguments`; `package` is the Debian
/// package to name when it is missing.
static llvm::Error runLlvmTool(llvm::StringRef name, llvm::StringRef package,
                               llvm::ArrayRef<llvm::StringRef> arguments,
                               llvm::StringRef what) {
  llvm::ErrorOr<std::string> tool = findLlvmTool(name);
  if (!tool)
    return llvm::createStringError("cannot " + what.str() + ": " + name.str() +
                                   "-22 not found (install " + package.str() +
                                   ", see scripts/setup.sh)");
  llvm::SmallVector<llvm::StringRef> args = {*tool};
  args.append(arguments.begin(), arguments.end());
  std::string errorMessage;
  int rc = llvm::sys::ExecuteAndWait(*tool, args, std::nullopt, {}, 0, 0,
                                     &errorMessage);
  if (rc != 0)
    return llvm::createStringError(
        what.str() + " failed (" + std::to_string(rc) + ")" +
        (errorMessage.empty() ? "" : ": " + errorMessage));
  return llvm::Error::success();
}

/// Runs the system's clang-22 as a linker driver.
static llvm::Error runClang(llvm::ArrayRef<llvm::StringRef> arguments,
                            llvm::StringRef what) {
  return runLlvmTool("clang", "clang-22", arguments, what);
}

llvm::Error ffnc::linkSharedLibrary(llvm::StringRef objectPath,
                                    llvm::StringRef outputPath) {
  // -Bsymbolic: the descriptor's pointers bind to this library's own
  // functions, even where the app or another library defines a kernel of the
  // same name (whose ffn_<name>_run would otherwise interpose).
  return runClang({"-shared", "-Wl,-Bsymbolic", "-o", outputPath, objectPath,
                   "-lm"},
                  "linking the shared library");
}

llvm::Expected<std::string>
ffnc::joinObjects(llvm::ArrayRef<std::string> objects) {
  if (objects.size() == 1)
    return objects[0];
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("ffnc", dir))
    return llvm::createStringError("cannot create a temporary directory: " +
                                   ec.message());
  std::vector<std::string> paths;
  llvm::Error result = llvm::Error::success();
  for (size_t i = 0; i < objects.size() && !result; ++i) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, "part" + std::to_string(i) + ".o");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      result = llvm::createStringError("cannot write '" + path.str().str() +
                                       "': " + ec.message());
    else
      os << objects[i];
    paths.push_back(path.str().str());
  }
  llvm::SmallString<128> joined(dir);
  llvm::sys::path::append(joined, "joined.o");
  std::string out;
  if (!result) {
    llvm::SmallVector<llvm::StringRef> args = {"-r", "-nostdlib", "-o", joined};
    for (const std::string &p : paths)
      args.push_back(p);
    result = runClang(args, "joining objects");
  }
  if (!result) {
    auto buffer = llvm::MemoryBuffer::getFile(joined);
    if (buffer)
      out = (*buffer)->getBuffer().str();
    else
      result = llvm::createStringError("cannot read the joined object");
  }
  for (const std::string &p : paths)
    llvm::sys::fs::remove(p);
  llvm::sys::fs::remove(joined);
  llvm::sys::fs::remove(dir);
  if (result)
    return std::move(result);
  return out;
}

llvm::Expected<std::string>
ffnc::localizeSymbols(const std::string &object,
                      llvm::ArrayRef<std::string> keep) {
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("ffnc", dir))
    return llvm::createStringError("cannot create a temporary directory: " +
                                   ec.message());
  llvm::SmallString<128> in(dir), out(dir);
  llvm::sys::path::append(in, "in.o");
  llvm::sys::path::append(out, "out.o");
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(in);
    llvm::sys::fs::remove(out);
    llvm::sys::fs::remove(dir);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return llvm::createStringError("cannot write '" + in.str().str() +
                                     "': " + ec.message());
    os << object;
  }
  // Exact names, one option each (no --wildcard: a kernel name is an
  // identifier, and no pattern may keep more than asked). With nothing to
  // keep, objcopy's --keep-global-symbol would change nothing, so localize
  // every defined symbol by pattern instead.
  std::vector<std::string> options;
  for (const std::string &name : keep)
    options.push_back("--keep-global-symbol=" + name);
  if (keep.empty())
    options = {"--wildcard", "--localize-symbol=*"};
  llvm::SmallVector<llvm::StringRef> args(options.begin(), options.end());
  args.append({in, out});
  if (llvm::Error err =
          runLlvmTool("llvm-objcopy", "llvm-22", args, "localizing symbols"))
    return std::move(err);
  auto buffer = llvm::MemoryBuffer::getFile(out);
  if (!buffer)
    return llvm::createStringError("cannot read the localized object: " +
                                   buffer.getError().message());
  return (*buffer)->getBuffer().str();
}
