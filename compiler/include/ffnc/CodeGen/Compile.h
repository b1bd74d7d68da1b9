//===- Compile.h - one call from specs to any stage's output ----*- C++ -*-===//

#ifndef FFNC_CODEGEN_COMPILE_H
#define FFNC_CODEGEN_COMPILE_H

#include "ffnc/CodeGen/KernelContract.h"
#include "ffnc/CodeGen/Pipeline.h"
#include "ffnc/CodeGen/Target.h"
#include "ffnc/Frontend/Spec.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

namespace ffnc {

enum class EmitStage {
  Ffn,
  Linalg,
  Tiled,
  Gpu,   ///< NVIDIA targets: the gpu-dialect kernels and launch plan
  Ptx,   ///< NVIDIA targets: each FFN's PTX
  Cubin, ///< NVIDIA targets: one FFN's cubin
  LLVMIR,
  Assembly,
  Object
};

/// Compiles `specs` to `stage` and returns the output (text, or the bytes of
/// an object file). `printLocations` keeps spec locations in MLIR output.
/// `kernels`, if given, receives each kernel's contract in spec order
/// (stages llvm, asm and obj).
llvm::Expected<std::string>
compileSpecs(llvm::ArrayRef<FfnSpec> specs, const llvm::SourceMgr &sourceMgr,
             const TargetInfo &target, const ScheduleOptions &schedule,
             EmitStage stage, bool printLocations = false,
             std::vector<KernelSignature> *kernels = nullptr);

/// Compiles `specs` into a shared library at `outputPath`, atomically: the
/// file appears complete or not at all.
llvm::Error buildSharedLibrary(llvm::ArrayRef<FfnSpec> specs,
                               const llvm::SourceMgr &sourceMgr,
                               const TargetInfo &target,
                               const ScheduleOptions &schedule,
                               llvm::StringRef outputPath,
                               std::vector<KernelSignature> *kernels = nullptr);

} // namespace ffnc

#endif // FFNC_CODEGEN_COMPILE_H
