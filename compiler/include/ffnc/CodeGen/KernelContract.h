//===- KernelContract.h - what a lowered kernel promises --------*- C++ -*-===//
//
// The compiler's view of #ffn.kernel_abi, for what ffnc writes beside the
// object: the C header and the LLVM tuning. The entry points and the
// descriptor are the target's kernel glue pass's (ffn-cpu-kernel-glue,
// ffn-gpu-kernel-glue), built from the same attribute.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_CODEGEN_KERNELCONTRACT_H
#define FFNC_CODEGEN_KERNELCONTRACT_H

#include "ffnc/Frontend/Spec.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ffnc {

/// One lowered kernel's contract, read from its #ffn.kernel_abi.
struct KernelSignature {
  std::string name; ///< the spec's name, also the lowered func's
  /// The model: the whole row's widths.
  int64_t dModel = 0, dFF = 0;
  /// A grouped FFN's blocks (0: not grouped): its stacked parameters hold
  /// one tensor per block.
  int64_t groups = 0;
  DType dtype = DType::F32;
  /// Each parameter's name and logical shape, in argument order.
  std::vector<ParamInfo> paramInfo;
  /// The kernel is split into phases for the runtime's threads (false: one
  /// indivisible call, the baseline path).
  bool phased = false;
  /// Some parameter has a pack function from quantized blocks
  /// (`ffn_<name>_pack_quantized`).
  bool packQuantized = false;
  /// Device kernels (NVIDIA targets): the gpu.module with the kernels.
  std::string deviceModule;
};

/// Reads the contract of every kernel function of `module` (those with an
/// #ffn.kernel_abi), in module order, which is spec order.
llvm::Expected<std::vector<KernelSignature>>
collectKernelSignatures(mlir::ModuleOp module);

} // namespace ffnc

#endif // FFNC_CODEGEN_KERNELCONTRACT_H
