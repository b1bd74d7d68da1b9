//===- CompileCommand.cpp - `ffnc [options] <spec.ffn>` -------------------===//
//
// Compiles the spec to the stage --emit names: a text stage to -o (stdout
// by default), an object or shared library to -o, and with --header the C
// header that declares the kernels.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "GpuInfo.h"
#include "Options.h"

#include "ffnc/CodeGen/Backend.h"
#include "ffnc/CodeGen/Compile.h"
#include "ffnc/Frontend/ASTPrinter.h"

#include "ffn/Target/GPU/PathNotes.h"

#include "llvm/Support/raw_ostream.h"

using namespace ffnc;
using opts::EmitKind;

/// The compiler's stage for an --emit value other than ast and so.
static EmitStage stageOf(EmitKind emit) {
  switch (emit) {
  case EmitKind::Ffn:
    return EmitStage::Ffn;
  case EmitKind::Linalg:
    return EmitStage::Linalg;
  case EmitKind::Tiled:
    return EmitStage::Tiled;
  case EmitKind::Gpu:
    return EmitStage::Gpu;
  case EmitKind::Ptx:
    return EmitStage::Ptx;
  case EmitKind::Cubin:
    return EmitStage::Cubin;
  case EmitKind::Halide:
    return EmitStage::Halide;
  case EmitKind::LLVM:
    return EmitStage::LLVMIR;
  case EmitKind::Asm:
    return EmitStage::Assembly;
  default:
    return EmitStage::Object;
  }
}

/// The NVIDIA back end says where a spec misses its tuned kernels, from the
/// strategy its cost model will choose (the same library the selection
/// pass asks), and where --strategy cannot hold for a spec.
static std::optional<int> gpuPathNotes(Session &s, const TargetInfo &target,
                                       const ScheduleOptions &schedule) {
  unsigned errors = 0;
  // resolveSchedule's checkSpecsFit has refused every spec the back end does
  // not build.
  for (const FfnSpec &spec : s.specs) {
    mlir::ffn::GpuFfnShape shape = gpuShapeOf(spec);
    mlir::ffn::GpuSelection chosen =
        mlir::ffn::selectGpuStrategy(shape, target.chip, schedule.gpuOverrides);
    if (chosen.error) {
      s.diags->error(spec.loc, "ffn '" + spec.name + "': --strategy " +
                                   chosen.error->key + " " +
                                   chosen.error->message);
      ++errors;
      continue;
    }
    for (const std::string &note : mlir::ffn::gpu_target::pathNotes(
             spec.dModel, shape.elementBytes, target.chip, spec.batchInvariant,
             mlir::ffn::gpuWgmmaFromM(chosen.strategy), shape.groups,
             shape.quantized() ? shape.quantGroup : 0, shape.moe(),
             spec.int8Activations,
             mlir::ffn::gpuWidensInRegisters(chosen.strategy)))
      s.diags->warning(spec.loc, "ffn '" + spec.name + "': " + note);
  }
  if (!errors)
    return std::nullopt;
  llvm::errs() << errors << (errors == 1 ? " error" : " errors")
               << " generated.\n";
  return 1;
}

int ffnc::compileMain(Session &s) {
  // Everything past the front end needs a valid target.
  TargetInfo target;
  if (std::optional<int> rc = openTarget(opts::targetName, target))
    return *rc;

  // ffnc's own back end sends no request to print.
  if (opts::emit == EmitKind::Halide &&
      opts::backendOption.getValue() != Backend::Halide)
    return fail("--emit=halide prints what ffnc asks the Halide back end "
                "for: give --backend=halide");
  ScheduleOptions schedule;
  if (std::optional<int> rc = resolveSchedule(s, target, opts::kernelThreads,
                                              "--kernel-threads", schedule))
    return *rc;
  if (target.isGpu() && opts::emit != EmitKind::AST)
    if (std::optional<int> rc = gpuPathNotes(s, target, schedule))
      return *rc;

  if (opts::emit == EmitKind::AST) {
    std::string rendered;
    llvm::raw_string_ostream os(rendered);
    printAST(s.ast, s.specs, s.sourceMgr, os);
    return writeOutput(opts::outputFile, rendered);
  }
  bool binary =
      opts::emit == EmitKind::Obj || opts::emit == EmitKind::SharedLib;
  if ((binary || opts::emit == EmitKind::Cubin) && opts::outputFile == "-")
    return fail("--emit=obj, --emit=so and --emit=cubin write binary files: "
                "give -o <file>");
  if (!opts::headerFile.empty() && !binary)
    return fail("--header goes with --emit=obj or --emit=so");

  // The header declares what the kernels' contracts say.
  std::vector<KernelSignature> kernels;
  if (opts::emit == EmitKind::SharedLib) {
    if (llvm::Error err = buildSharedLibrary(
            s.specs, s.sourceMgr, target, schedule, opts::outputFile, &kernels))
      return reportError(std::move(err));
  } else {
    llvm::Expected<std::string> output =
        compileSpecs(s.specs, s.sourceMgr, target, schedule,
                     stageOf(opts::emit), opts::printLocations, &kernels);
    if (!output)
      return reportError(output.takeError());
    if (int rc = writeOutput(opts::outputFile, *output))
      return rc;
  }
  if (!opts::headerFile.empty())
    return writeOutput(opts::headerFile,
                       emitKernelHeader(kernels, target, opts::inputFile));
  return 0;
}
