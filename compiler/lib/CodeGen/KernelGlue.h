//===- KernelGlue.h - kernel ABI entry points and descriptors ---*- C++ -*-===//

#ifndef FFNC_CODEGEN_KERNELGLUE_H
#define FFNC_CODEGEN_KERNELGLUE_H

#include "ffnc/CodeGen/Target.h"
#include "ffnc/Frontend/Spec.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ffnc {

/// The memref-level calling convention of one lowered kernel, read from the
/// IR before it is converted to LLVM (so the glue and the kernel can never
/// disagree): the shape of each argument (ShapedType::kDynamic = M rows),
/// and for each parameter its packed size and pack function, if any.
struct KernelSignature {
  struct Arg {
    std::vector<int64_t> shape;
    unsigned elementBytes = 4;
  };
  std::string name; ///< the spec's name, also the lowered func's
  Arg input, output;
  std::vector<Arg> params; ///< packed shapes, kernelParams() order
  std::vector<std::string> packFunctions; ///< "" = copy as is
  std::vector<Arg> packSources;           ///< logical [in, out] shapes
  bool hasWorkspace = false;
  int64_t workspacePerRow = 0; ///< bytes
  std::string strategy;        ///< human-readable schedule
  /// Units of each phase (-1 = m rows), per token-count bucket. Empty: the
  /// kernel is one indivisible call (the baseline path).
  std::vector<std::vector<int64_t>> phaseUnits;
  /// The largest m of each bucket but the last (ascending).
  std::vector<int64_t> bucketMaxM;

  /// Device kernels (NVIDIA targets): the launch plan and the cubin.
  struct DeviceLaunch {
    std::string kernel;
    int64_t minM = 1, maxM = INT64_MAX, rowsPerBlock = 1, gridY = 1,
            gridZ = 1, threads = 256, sharedBytes = 0;
    std::vector<std::pair<int64_t, int64_t>> args; ///< (kind, index)
  };
  std::vector<DeviceLaunch> launches;
  std::string deviceModule; ///< the gpu.module's name
  std::string deviceImage;  ///< its cubin
  bool isDevice() const { return !deviceModule.empty(); }
};

/// Reads the signature of every kernel function of `module` (after
/// ffn-kernel-interface or the packed lowering).
llvm::Expected<std::vector<KernelSignature>>
collectKernelSignatures(mlir::ModuleOp module, llvm::ArrayRef<FfnSpec> specs);

/// For every spec, hides the lowered function `<name>` behind
/// `ffn_<name>_run` and `ffn_<name>_pack` with the plain-pointer ABI of
/// ffn/kernel_abi.h and exports the `ffn_kernel_<name>` descriptor.
llvm::Error addKernelGlue(llvm::Module &module, llvm::ArrayRef<FfnSpec> specs,
                          llvm::ArrayRef<KernelSignature> signatures,
                          const TargetInfo &target);

} // namespace ffnc

#endif // FFNC_CODEGEN_KERNELGLUE_H
