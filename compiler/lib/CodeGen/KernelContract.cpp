//===- KernelContract.cpp - reading #ffn.kernel_abi -----------------------===//

#include "KernelGlue.h"

#include "ffn/IR/FfnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace ffnc;

static llvm::Error contractError(llvm::StringRef kernel,
                                 const llvm::Twine &what) {
  return llvm::createStringError("internal error: kernel '" + kernel +
                                 "': " + what.str());
}

static DType dtypeOf(mlir::Type t) {
  if (t.isBF16())
    return DType::BF16;
  if (t.isF16())
    return DType::F16;
  return DType::F32;
}

static Activation activationOf(mlir::ffn::Activation a) {
  switch (a) {
  case mlir::ffn::Activation::relu:
    return Activation::Relu;
  case mlir::ffn::Activation::gelu:
    return Activation::Gelu;
  case mlir::ffn::Activation::gelu_tanh:
    return Activation::GeluTanh;
  case mlir::ffn::Activation::silu:
    return Activation::Silu;
  case mlir::ffn::Activation::sigmoid:
    return Activation::Sigmoid;
  case mlir::ffn::Activation::identity:
    return Activation::Identity;
  }
  return Activation::Identity;
}

static KernelSignature::Arg argOf(mlir::Type type) {
  KernelSignature::Arg arg;
  auto memref = mlir::cast<mlir::MemRefType>(type);
  arg.shape.assign(memref.getShape().begin(), memref.getShape().end());
  arg.elementBytes = memref.getElementTypeBitWidth() / 8;
  return arg;
}

/// The launch plan of a device kernel.
static void readLaunches(mlir::ffn::KernelAbiAttr abi, KernelSignature &sig) {
  sig.deviceModule = abi.getDeviceModule().str();
  for (mlir::Attribute entry : abi.getLaunches()) {
    auto launch = mlir::cast<mlir::ffn::DeviceLaunchAttr>(entry);
    KernelSignature::DeviceLaunch l;
    l.kernel = launch.getKernel().str();
    l.minM = launch.getMinM();
    l.maxM = launch.getMaxM();
    l.rowsPerBlock = launch.getRowsPerBlock();
    l.gridY = launch.getGridY();
    l.gridZ = launch.getGridZ();
    l.threads = launch.getThreads();
    l.sharedBytes = launch.getSharedBytes();
    llvm::ArrayRef<int64_t> args = launch.getArgs().asArrayRef();
    for (size_t i = 0; i + 1 < args.size(); i += 2)
      l.args.push_back({args[i], args[i + 1]});
    sig.launches.push_back(std::move(l));
  }
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
    sig.dtype = dtypeOf(abi.getStorage());
    sig.activation = activationOf(abi.getActivation());
    sig.gated = abi.getGated();
    sig.residual = abi.getResidual();
    if (mlir::ffn::NormAttr norm = abi.getNorm()) {
      sig.norm = norm.getKind() == mlir::ffn::NormKind::layernorm
                     ? NormKind::LayerNorm
                     : NormKind::RMSNorm;
      sig.normPosition = norm.getPosition() == mlir::ffn::NormPosition::post
                             ? NormPosition::Post
                             : NormPosition::Pre;
      sig.normEps = norm.getEps().convertToDouble();
    }
    sig.operandType = dtypeOf(abi.getOperandType());
    sig.strategy = abi.getStrategy().str();

    // The arguments the contract names (the dialect verifies the count):
    // input, params, output, [workspace], [phase, begin, end].
    llvm::ArrayRef<mlir::Type> types = func.getArgumentTypes();
    if (static_cast<int64_t>(types.size()) != abi.numArguments())
      return contractError(sig.name, "its signature does not match its "
                                     "contract");
    size_t numParams = abi.getParams().size();
    sig.input = argOf(types[0]);
    for (size_t i = 0; i < numParams; ++i) {
      auto p = mlir::cast<mlir::ffn::KernelParamAttr>(abi.getParams()[i]);
      llvm::ArrayRef<int64_t> shape = p.getShape().asArrayRef();
      if (shape.empty() || shape.size() > 2)
        return contractError(sig.name, "parameter '" + p.getName() +
                                           "' is neither a vector nor a "
                                           "matrix");
      sig.paramInfo.push_back(
          {p.getName().str(), shape[0], shape.size() == 2 ? shape[1] : 0});
      sig.params.push_back(argOf(types[1 + i]));
      sig.packFunctions.push_back(p.getPack().str());
      KernelSignature::Arg source;
      if (!p.getPack().empty()) {
        auto packFunc = module.lookupSymbol<mlir::func::FuncOp>(p.getPack());
        if (!packFunc)
          return contractError(sig.name,
                               "no pack function '" + p.getPack() + "'");
        source = argOf(packFunc.getArgumentTypes()[0]);
      }
      sig.packSources.push_back(source);
    }
    sig.output = argOf(types[1 + numParams]);
    if (std::optional<int64_t> ws = abi.getWorkspacePerRow()) {
      sig.hasWorkspace = true;
      sig.workspacePerRow = *ws;
    }
    if (mlir::ArrayAttr units = abi.getPhaseUnits()) {
      for (mlir::Attribute bucket : units) {
        llvm::ArrayRef<int64_t> row =
            mlir::cast<mlir::DenseI64ArrayAttr>(bucket).asArrayRef();
        sig.phaseUnits.emplace_back(row.begin(), row.end());
      }
      llvm::ArrayRef<int64_t> bounds = abi.getBucketMaxM().asArrayRef();
      sig.bucketMaxM.assign(bounds.begin(), bounds.end() - 1);
    }
    if (abi.getDeviceModule())
      readLaunches(abi, sig);
    result.push_back(std::move(sig));
  }
  return result;
}
