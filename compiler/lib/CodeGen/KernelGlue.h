//===- KernelGlue.h - kernel ABI entry points and descriptors ---*- C++ -*-===//

#ifndef FFNC_CODEGEN_KERNELGLUE_H
#define FFNC_CODEGEN_KERNELGLUE_H

#include "ffnc/CodeGen/Target.h"
#include "ffnc/CodeGen/KernelContract.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ffnc {

/// Reads the contract of every kernel function of `module` (those with an
/// #ffn.kernel_abi), in module order, which is spec order.
llvm::Expected<std::vector<KernelSignature>>
collectKernelSignatures(mlir::ModuleOp module);

/// For every kernel, hides the lowered function `<name>` behind
/// `ffn_<name>_run` and `ffn_<name>_pack` with the plain-pointer ABI of
/// ffn/kernel_abi.h and exports the `ffn_kernel_<name>` descriptor.
llvm::Error addKernelGlue(llvm::Module &module,
                          llvm::ArrayRef<KernelSignature> signatures,
                          const TargetInfo &target);

} // namespace ffnc

#endif // FFNC_CODEGEN_KERNELGLUE_H
