//===- CompileHalide.h - the Halide back end's stages -----------*- C++ -*-===//
//
// --backend=halide: ffnc chooses the strategy and writes the glue (the
// kernel descriptor, run, phases, pack) in LLVM 22 as for its own kernels;
// the pipelines themselves are compiled by Halide 14 in a separate process,
// ffnc-halide-gen (docs/plans/halide-backend.md §0), from the request that
// ffn-halide-lower writes.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_CODEGEN_COMPILEHALIDE_H
#define FFNC_CODEGEN_COMPILEHALIDE_H

#include "CompileGpu.h"

#include "ffnc/CodeGen/Compile.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/SourceMgr.h"

#include <string>
#include <vector>

namespace ffnc {

/// From the ffn dialect to `stage` with the Halide back end. Stage Object
/// returns the glue and this module's pipelines joined, without the Halide
/// runtime: `runtimeObject` receives the path of the runtime object the
/// generator named, which finishHalideObject adds once per final object.
/// Errors of the generator that name a kernel are located at its spec
/// (rendered with `sourceMgr`, as RenderedDiagnosticError).
llvm::Expected<std::string>
compileHalideModule(mlir::ModuleOp module, llvm::ArrayRef<FfnSpec> specs,
                    const llvm::SourceMgr &sourceMgr, const TargetInfo &target,
                    const ScheduleOptions &schedule, EmitStage stage,
                    bool printLocations, const StageRunner &run,
                    std::vector<KernelSignature> *kernels,
                    std::string *runtimeObject);

/// The final object of a Halide build: the objects of every module
/// compiled (compileHalideModule's stage Object), the runtime object once,
/// joined, then every symbol but the kernels' entry points made local, so
/// that two such objects (each with its own runtime) link into one program.
llvm::Expected<std::string>
finishHalideObject(llvm::ArrayRef<std::string> moduleObjects,
                   llvm::StringRef runtimeObject,
                   llvm::ArrayRef<KernelSignature> kernels);

/// The symbols a CPU kernel's object exports, as the kernel glue writes and
/// the header declares them: ffn_kernel_<n>, ffn_<n>_run, _phase,
/// _phase_units, _pack, and _pack_quantized where the kernel has one.
std::vector<std::string>
exportedKernelSymbols(llvm::ArrayRef<KernelSignature> kernels);

} // namespace ffnc

#endif // FFNC_CODEGEN_COMPILEHALIDE_H
