//===- Compile.h - one call from specs to any stage's output ----*- C++ -*-===//

#ifndef FFNC_CODEGEN_COMPILE_H
#define FFNC_CODEGEN_COMPILE_H

#include "ffnc/CodeGen/KernelContract.h"
#include "ffnc/CodeGen/Pipeline.h"
#include "ffnc/CodeGen/Target.h"
#include "ffnc/Frontend/Spec.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace ffnc {

enum class EmitStage {
  Ffn,
  Linalg,
  Tiled,
  Gpu,    ///< NVIDIA targets: the gpu-dialect kernels and launch plan
  Ptx,    ///< NVIDIA targets: each FFN's PTX
  Cubin,  ///< NVIDIA targets: one FFN's cubin
  Halide, ///< --backend=halide: the request sent to ffnc-halide-gen
  LLVMIR,
  Assembly,
  Object
};

/// An error already rendered as a located diagnostic, `spec.ffn:3:5: error:
/// ...` with the source line and caret (a failure that belongs to one FFN,
/// found after the spec checks: the Halide generator's). Drivers print it
/// as it is, without an "error:" prefix of their own; its message() is the
/// same text, so a driver that does not look for it still shows it whole.
class RenderedDiagnosticError
    : public llvm::ErrorInfo<RenderedDiagnosticError> {
public:
  static char ID;
  explicit RenderedDiagnosticError(std::string text) : text(std::move(text)) {}
  /// The diagnostic's lines, without a final newline.
  const std::string &rendered() const { return text; }
  void log(llvm::raw_ostream &os) const override { os << text; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string text;
};

/// Compiles `specs` to `stage` and returns the output (text, or the bytes of
/// an object file). `printLocations` keeps spec locations in MLIR output.
/// `kernels`, if given, receives each kernel's contract in spec order
/// (stages llvm, asm and obj). With --backend=halide (schedule.backend),
/// the kernels' pipelines come from ffnc-halide-gen (docs/halide.md).
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
