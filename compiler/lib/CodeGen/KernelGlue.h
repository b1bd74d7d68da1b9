//===- KernelGlue.h - kernel ABI entry points and descriptors ---*- C++ -*-===//

#ifndef FFNC_CODEGEN_KERNELGLUE_H
#define FFNC_CODEGEN_KERNELGLUE_H

#include "ffnc/CodeGen/Target.h"
#include "ffnc/Frontend/Spec.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

namespace ffnc {

/// For every spec, hides the lowered function `<name>` (memref-expanded
/// arguments) behind `void ffn_<name>_run(i64 m, ptr x, ptr params, ptr y)`
/// and exports the `ffn_kernel_<name>` descriptor of ffn/kernel_abi.h.
llvm::Error addKernelGlue(llvm::Module &module, llvm::ArrayRef<FfnSpec> specs,
                          const TargetInfo &target);

} // namespace ffnc

#endif // FFNC_CODEGEN_KERNELGLUE_H
