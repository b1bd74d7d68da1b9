//===- Compile.cpp - one call from specs to any stage's output ------------===//

#include "ffnc/CodeGen/Compile.h"

#include "CompileGpu.h"
#include "CompileHalide.h"
#include "ffnc/CodeGen/Backend.h"
#include "ffnc/CodeGen/Pipeline.h"
#include "ffnc/MLIRGen/MLIRGen.h"

#include "ffn/Target/CPU/Pipelines.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Pass.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <thread>
#include <tuple>

using namespace ffnc;

char RenderedDiagnosticError::ID = 0;

std::string ffnc::printModule(mlir::ModuleOp module, bool locations) {
  std::string out;
  llvm::raw_string_ostream os(out);
  mlir::OpPrintingFlags flags;
  if (locations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module.print(os, flags);
  os << "\n";
  return out;
}

llvm::Expected<std::string> ffnc::emitLLVMStage(llvm::Module &module,
                                                const TargetInfo &target,
                                                EmitStage stage) {
  if (stage == EmitStage::LLVMIR) {
    std::string out;
    llvm::raw_string_ostream os(out);
    module.print(os, nullptr);
    return out;
  }
  return emitMachineCode(module, target,
                         stage == EmitStage::Object ? OutputKind::Object
                                                    : OutputKind::Assembly);
}

/// One module, one thread: every stage of compileSpecs. With the Halide
/// back end, stage Object leaves out the Halide runtime, whose path goes to
/// `halideRuntime` (finishHalideObject adds it once per final object).
static llvm::Expected<std::string>
compileModule(llvm::ArrayRef<FfnSpec> specs, const llvm::SourceMgr &sm,
              const TargetInfo &target, const ScheduleOptions &schedule,
              EmitStage stage, bool printLocations,
              std::vector<KernelSignature> *kernels,
              std::string *halideRuntime = nullptr) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // The NVIDIA targets serialize gpu.modules through LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  loadDialects(context);

  // Collect MLIR diagnostics (pass failures) to return them as an error.
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });

  mlir::OwningOpRef<mlir::ModuleOp> module = buildModule(context, specs, sm);
  if (mlir::failed(mlir::verify(*module)))
    return llvm::createStringError(
        "internal error: the generated ffn dialect does not verify:\n" +
        diagnostics);
  // Runs one stage's passes; a failure is an internal error with the
  // diagnostics MLIR gave.
  StageRunner run = [&](llvm::function_ref<void(mlir::OpPassManager &)> build,
                        llvm::StringRef what) -> llvm::Error {
    mlir::PassManager pm(&context);
    // --time-passes (LLVM's option) times the MLIR passes too.
    if (llvm::TimePassesIsEnabled)
      pm.enableTiming();
    build(pm);
    if (mlir::failed(pm.run(*module)))
      return llvm::createStringError("internal error: " + what.str() +
                                     " failed:\n" + diagnostics);
    return llvm::Error::success();
  };
  if (schedule.backend == Backend::Halide)
    return compileHalideModule(*module, specs, sm, target, schedule, stage,
                               printLocations, run, kernels, halideRuntime);
  if (stage == EmitStage::Halide)
    return llvm::createStringError("--emit=halide needs --backend=halide");
  if (target.isGpu())
    return compileGpuModule(*module, specs, target, schedule.gpuOverrides,
                            stage, printLocations, run, kernels);
  if (stage == EmitStage::Gpu || stage == EmitStage::Ptx ||
      stage == EmitStage::Cubin)
    return llvm::createStringError(
        "--emit=gpu, ptx and cubin need an NVIDIA target (--target=nvptx-sm80, "
        "nvptx-sm90 or nvptx-sm90a); '" +
        target.name + "' is a CPU target");
  if (llvm::Error err = run(
          [&](mlir::OpPassManager &pm) { buildStrategyPipeline(pm, schedule); },
          "strategy selection"))
    return std::move(err);
  if (stage == EmitStage::Ffn)
    return printModule(*module, printLocations);
  if (llvm::Error err =
          run(mlir::ffn::buildCpuLoweringPipeline, "lowering the ffn dialect"))
    return std::move(err);
  if (stage == EmitStage::Linalg)
    return printModule(*module, printLocations);
  if (llvm::Error err = run(mlir::ffn::buildCpuKernelABIPipeline,
                            "building the kernel interface"))
    return std::move(err);
  if (stage == EmitStage::Tiled)
    return printModule(*module, printLocations);
  auto signatures = lowerCpuKernelsToLLVM(*module, run, kernels);
  if (!signatures)
    return signatures.takeError();

  llvm::LLVMContext llvmContext;
  auto llvmModule =
      translateToLLVMIR(*module, *signatures, target, llvmContext);
  if (!llvmModule)
    return llvm::createStringError(llvm::toString(llvmModule.takeError()) +
                                   "\n" + diagnostics);
  return emitLLVMStage(**llvmModule, target, stage);
}

llvm::Expected<std::vector<KernelSignature>>
ffnc::lowerCpuKernelsToLLVM(mlir::ModuleOp module, const StageRunner &run,
                            std::vector<KernelSignature> *kernels) {
  auto signatures = collectKernelSignatures(module);
  if (!signatures)
    return signatures.takeError();
  if (kernels)
    *kernels = *signatures;
  if (llvm::Error err = run(mlir::ffn::buildCpuToLLVMPipeline,
                            "lowering to the LLVM dialect"))
    return std::move(err);
  return signatures;
}

llvm::Expected<std::string>
ffnc::compileSpecs(llvm::ArrayRef<FfnSpec> specs, const llvm::SourceMgr &sm,
                   const TargetInfo &target, const ScheduleOptions &schedule,
                   EmitStage stage, bool printLocations,
                   std::vector<KernelSignature> *kernels) {
  // Objects of several FFNs compile in parallel, a group per core, each in
  // its own MLIR and LLVM context; the group objects are then joined into
  // one relocatable object. Text stages stay one module, so their output
  // reads as one.
  unsigned groups = std::min<unsigned>(
      specs.size(), std::max(1u, std::thread::hardware_concurrency()));
  bool halideObject =
      schedule.backend == Backend::Halide && stage == EmitStage::Object;
  if ((stage != EmitStage::Object || groups < 2) && !halideObject)
    return compileModule(specs, sm, target, schedule, stage, printLocations,
                         kernels);
  if (groups < 2) {
    // A Halide object is finished once it is whole: the runtime added,
    // every symbol but the entry points local.
    std::vector<KernelSignature> signatures;
    std::string runtime;
    auto object = compileModule(specs, sm, target, schedule, stage,
                                printLocations, &signatures, &runtime);
    if (!object)
      return object.takeError();
    auto finished = finishHalideObject(llvm::ArrayRef<std::string>(*object),
                                       runtime, signatures);
    if (kernels)
      *kernels = std::move(signatures);
    return finished;
  }

  // FFNs of one shape share their GEMM functions within a module
  // (ffn-lower-packed), so each shape goes to one group whole; shapes are
  // dealt, largest first, to the group with the least work so far (a
  // shape's cost: one unit per FFN and one for its shared GEMM 2).
  std::map<std::tuple<int64_t, int64_t, bool, int>, std::vector<size_t>>
      byShape;
  for (size_t i = 0; i < specs.size(); ++i)
    byShape[{specs[i].dModel, specs[i].dFF, specs[i].isGated(),
             static_cast<int>(specs[i].dtype)}]
        .push_back(i);
  std::vector<std::vector<size_t>> shapes;
  for (auto &entry : byShape)
    shapes.push_back(std::move(entry.second));
  // Largest first; ties in spec order (std::stable_sort's buffer API is
  // deprecated in this libstdc++).
  llvm::sort(shapes, [](const auto &a, const auto &b) {
    return a.size() != b.size() ? a.size() > b.size() : a.front() < b.front();
  });
  std::vector<std::vector<size_t>> members(groups);
  std::vector<size_t> load(groups, 0);
  for (const auto &shape : shapes) {
    size_t g = std::min_element(load.begin(), load.end()) - load.begin();
    members[g].insert(members[g].end(), shape.begin(), shape.end());
    load[g] += shape.size() + 1;
  }
  // Keep the spec order within each group (and drop empty groups).
  std::vector<std::vector<FfnSpec>> parts;
  for (auto &indices : members) {
    if (indices.empty())
      continue;
    llvm::sort(indices);
    parts.emplace_back();
    for (size_t i : indices)
      parts.back().push_back(specs[i]);
  }
  groups = parts.size();
  std::vector<llvm::Expected<std::string>> objects;
  for (unsigned g = 0; g < groups; ++g)
    objects.emplace_back(std::string());
  std::vector<std::vector<KernelSignature>> groupKernels(groups);
  // Halide: each group's generator names the same runtime object.
  std::vector<std::string> halideRuntimes(groups);
  std::vector<std::thread> workers;
  for (unsigned g = 0; g < groups; ++g)
    workers.emplace_back([&, g] {
      objects[g] =
          compileModule(parts[g], sm, target, schedule, EmitStage::Object,
                        printLocations, &groupKernels[g], &halideRuntimes[g]);
    });
  for (std::thread &t : workers)
    t.join();
  std::vector<std::string> bytes;
  llvm::Error errors = llvm::Error::success();
  for (auto &object : objects) {
    if (!object)
      errors = llvm::joinErrors(std::move(errors), object.takeError());
    else
      bytes.push_back(std::move(*object));
  }
  if (errors)
    return std::move(errors);
  // Back into spec order (names are unique).
  std::map<std::string, KernelSignature> byName;
  for (auto &group : groupKernels)
    for (KernelSignature &sig : group)
      byName.emplace(sig.name, std::move(sig));
  std::vector<KernelSignature> ordered;
  for (const FfnSpec &spec : specs)
    ordered.push_back(std::move(byName.at(spec.name)));
  auto join = [&]() -> llvm::Expected<std::string> {
    if (!halideObject)
      return joinObjects(bytes);
    std::string runtime;
    for (const std::string &r : halideRuntimes)
      if (!r.empty())
        runtime = r;
    return finishHalideObject(bytes, runtime, ordered);
  };
  llvm::Expected<std::string> joined = join();
  if (kernels)
    *kernels = std::move(ordered);
  return joined;
}

llvm::Error ffnc::buildSharedLibrary(llvm::ArrayRef<FfnSpec> specs,
                                     const llvm::SourceMgr &sm,
                                     const TargetInfo &target,
                                     const ScheduleOptions &schedule,
                                     llvm::StringRef outputPath,
                                     std::vector<KernelSignature> *kernels) {
  auto object = compileSpecs(specs, sm, target, schedule, EmitStage::Object,
                             /*printLocations=*/false, kernels);
  if (!object)
    return object.takeError();

  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("ffnc", dir))
    return llvm::createStringError("cannot create a temporary directory: " +
                                   ec.message());
  llvm::SmallString<128> objPath(dir), soPath(dir);
  llvm::sys::path::append(objPath, "kernels.o");
  llvm::sys::path::append(soPath, "kernels.so");
  auto cleanup = [&] {
    llvm::sys::fs::remove(objPath);
    llvm::sys::fs::remove(soPath);
    llvm::sys::fs::remove(dir);
  };

  std::error_code ec;
  {
    llvm::raw_fd_ostream os(objPath, ec);
    if (!ec)
      os << *object;
  }
  if (ec) {
    cleanup();
    return llvm::createStringError("cannot write '" + objPath.str().str() +
                                   "': " + ec.message());
  }
  if (llvm::Error err = linkSharedLibrary(objPath, soPath)) {
    cleanup();
    return err;
  }
  // rename() is atomic within a file system; across file systems, copy.
  ec = llvm::sys::fs::rename(soPath, outputPath);
  if (ec)
    ec = llvm::sys::fs::copy_file(soPath, outputPath);
  cleanup();
  if (ec)
    return llvm::createStringError("cannot write '" + outputPath.str() +
                                   "': " + ec.message());
  return llvm::Error::success();
}
