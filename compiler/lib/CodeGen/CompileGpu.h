//===- CompileGpu.h - the NVIDIA targets' stages ----------------*- C++ -*-===//

#ifndef FFNC_CODEGEN_COMPILEGPU_H
#define FFNC_CODEGEN_COMPILEGPU_H

#include "ffnc/CodeGen/Compile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/IR/Module.h"

#include <functional>

namespace ffnc {

/// Runs one stage's passes on the module being compiled; a failure is an
/// error carrying MLIR's diagnostics.
using StageRunner = std::function<llvm::Error(
    llvm::function_ref<void(mlir::OpPassManager &)>, llvm::StringRef)>;

// Shared by both targets' stages (defined in Compile.cpp).

/// The module printed as MLIR (with spec locations if asked).
std::string printModule(mlir::ModuleOp module, bool locations);

/// The last stages of the host module: its LLVM IR as text (stage LLVMIR),
/// or assembly or an object for `target`.
llvm::Expected<std::string> emitLLVMStage(llvm::Module &module,
                                          const TargetInfo &target,
                                          EmitStage stage);

/// The CPU kernels' signatures (copied to `kernels` when asked), then their
/// module lowered to the LLVM dialect, ready for translateToLLVMIR (ffnc's
/// packed schedules and the Halide back end's glue alike).
llvm::Expected<std::vector<KernelSignature>>
lowerCpuKernelsToLLVM(mlir::ModuleOp module, const StageRunner &run,
                      std::vector<KernelSignature> *kernels);

/// From the ffn dialect to `stage` for an NVIDIA target: ffn-gpu-lower,
/// NVVM and ptxas for the kernels, the CPU's LLVM lowering for the host
/// side (pack functions, descriptor with the cubin and launch plan).
llvm::Expected<std::string>
compileGpuModule(mlir::ModuleOp module, llvm::ArrayRef<FfnSpec> specs,
                 const TargetInfo &target,
                 const mlir::ffn::GpuStrategy &overrides, EmitStage stage,
                 bool printLocations, const StageRunner &run,
                 std::vector<KernelSignature> *kernels);

} // namespace ffnc

#endif // FFNC_CODEGEN_COMPILEGPU_H
