//===- Backend.h - from the ffn dialect to machine code ---------*- C++ -*-===//

#ifndef FFNC_CODEGEN_BACKEND_H
#define FFNC_CODEGEN_BACKEND_H

#include "ffnc/CodeGen/KernelContract.h"
#include "ffnc/CodeGen/Target.h"
#include "ffnc/Frontend/Spec.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace ffnc {

llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module,
                  llvm::ArrayRef<KernelSignature> signatures,
                  const TargetInfo &target, llvm::LLVMContext &context);

enum class OutputKind { Assembly, Object };

/// Generates assembly or a relocatable (PIC) object.
llvm::Expected<std::string> emitMachineCode(llvm::Module &module,
                                            const TargetInfo &target,
                                            OutputKind kind);

/// Joins relocatable objects into one (`clang-22 -r`).
llvm::Expected<std::string> joinObjects(llvm::ArrayRef<std::string> objects);

/// The relocatable `object` with every defined symbol made local except
/// those named in `keep` (llvm-objcopy-22 --keep-global-symbol): an object
/// that carries private copies of code another object may also carry (the
/// Halide runtime) exports only its entry points. Undefined references
/// stay global.
llvm::Expected<std::string> localizeSymbols(const std::string &object,
                                            llvm::ArrayRef<std::string> keep);

/// Links one object into a shared library with the system's clang-22.
llvm::Error linkSharedLibrary(llvm::StringRef objectPath,
                              llvm::StringRef outputPath);

/// The C header declaring each kernel's descriptor and entry point, from
/// the kernels' contracts (compileSpecs returns them).
std::string emitKernelHeader(llvm::ArrayRef<KernelSignature> kernels,
                             const TargetInfo &target,
                             llvm::StringRef specPath);

} // namespace ffnc

#endif // FFNC_CODEGEN_BACKEND_H
