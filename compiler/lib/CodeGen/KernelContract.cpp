//===- KernelContract.cpp - reading #ffn.kernel_abi -----------------------===//

#include "ffnc/CodeGen/KernelContract.h"

#include "ffn/IR/FfnAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace ffnc;

static DType dtypeOf(mlir::Type t) {
  if (t.isBF16())
    return DType::BF16;
  if (t.isF16())
    return DType::F16;
  return DType::F32;
}

llvm::Expected<std::vector<KernelSignature>>
ffnc::collectKernelSignatures(mlir::ModuleOp module) {
  std::vector<KernelSignature> result;
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    auto abi = mlir::ffn::KernelAbiAttr::of(func);
    if (!abi)
      continue;
    KernelSignature sig;
    sig.name = func.getName().str();
    sig.dModel = abi.getDModel();
    sig.dFF = abi.getDFf();
    sig.groups = abi.getGroups();
    sig.dtype = dtypeOf(abi.getStorage());
    // The dialect verifies each parameter (a vector or a matrix).
    for (mlir::Attribute attr : abi.getParams()) {
      auto p = mlir::cast<mlir::ffn::KernelParamAttr>(attr);
      llvm::ArrayRef<int64_t> shape = p.getShape().asArrayRef();
      sig.paramInfo.push_back({p.getName().str(), shape[0],
                               shape.size() == 2 ? shape[1] : 0,
                               p.getExperts()});
      sig.packQuantized |= !p.getPackQuantized().empty();
    }
    sig.phased = bool(abi.getPhaseUnits());
    if (mlir::StringAttr device = abi.getDeviceModule())
      sig.deviceModule = device.str();
    result.push_back(std::move(sig));
  }
  return result;
}
