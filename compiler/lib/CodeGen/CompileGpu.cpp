//===- CompileGpu.cpp - the NVIDIA targets' stages ------------------------===//

#include "CompileGpu.h"

#include "KernelGlue.h"
#include "ffnc/CodeGen/Backend.h"
#include "ffnc/CodeGen/Pipeline.h"

#include "ffn/Target/CPU/Pipelines.h"
#include "ffn/Target/GPU/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <map>

using namespace ffnc;

/// The CUDA toolkit: $CUDA_HOME (or CUDA_PATH, CUDA_ROOT), else
/// /usr/local/cuda. ptxas assembles the cubins and libdevice provides
/// exp/erf/tanh; without them there is no NVIDIA output, and the error
/// says where ffnc looked.
static llvm::Expected<std::string> cudaToolkit() {
  std::string root = "/usr/local/cuda";
  for (const char *name : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *v = std::getenv(name); v && *v) {
      root = v;
      break;
    }
  llvm::SmallString<256> ptxas(root), libdevice(root);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  if (!llvm::sys::fs::can_execute(ptxas) || !llvm::sys::fs::exists(libdevice))
    return llvm::createStringError(
        "NVIDIA targets need the CUDA toolkit (ptxas and libdevice), not "
        "found at '" +
        root + "': install it or set CUDA_HOME");
  return root;
}

/// Reads each kernel's launch plan from its stub function and drops the
/// stubs (the glue builds the descriptor from the signature instead).
static llvm::Error collectLaunches(mlir::ModuleOp module,
                                   std::vector<KernelSignature> &signatures) {
  for (KernelSignature &sig : signatures) {
    auto stub = module.lookupSymbol<mlir::func::FuncOp>(sig.name);
    auto plan = stub->getAttrOfType<mlir::ArrayAttr>("ffn.device_launches");
    auto device = stub->getAttrOfType<mlir::StringAttr>("ffn.device_module");
    if (!plan || !device)
      return llvm::createStringError("internal error: kernel '" + sig.name +
                                     "' has no launch plan");
    sig.deviceModule = device.str();
    for (mlir::Attribute entry : plan) {
      auto d = mlir::cast<mlir::DictionaryAttr>(entry);
      auto i64 = [&](llvm::StringRef key) {
        return mlir::cast<mlir::IntegerAttr>(d.get(key)).getInt();
      };
      KernelSignature::DeviceLaunch l;
      l.kernel = mlir::cast<mlir::StringAttr>(d.get("kernel")).str();
      l.minM = i64("min_m");
      l.maxM = i64("max_m");
      l.rowsPerBlock = i64("rows_per_block");
      l.gridY = i64("grid_y");
      l.gridZ = i64("grid_z");
      l.threads = i64("threads");
      l.sharedBytes = i64("shared_bytes");
      auto args = mlir::cast<mlir::ArrayAttr>(d.get("args"));
      for (size_t i = 0; i + 1 < args.size(); i += 2)
        l.args.push_back({mlir::cast<mlir::IntegerAttr>(args[i]).getInt(),
                          mlir::cast<mlir::IntegerAttr>(args[i + 1]).getInt()});
      sig.launches.push_back(std::move(l));
    }
    stub.erase();
  }
  return llvm::Error::success();
}

llvm::Expected<std::string>
ffnc::compileGpuModule(mlir::ModuleOp module, llvm::ArrayRef<FfnSpec> specs,
                       const TargetInfo &target, EmitStage stage,
                       bool printLocations, const StageRunner &run) {
  if (stage == EmitStage::Ffn)
    return printModule(module, printLocations);
  if (stage == EmitStage::Linalg || stage == EmitStage::Tiled)
    return llvm::createStringError(
        "--emit=linalg and --emit=tiled are CPU stages; an NVIDIA target "
        "prints --emit=gpu, ptx or cubin");
  if (stage == EmitStage::Cubin && specs.size() != 1)
    return llvm::createStringError(
        "--emit=cubin writes one FFN's cubin, and the spec has " +
        std::to_string(specs.size()) +
        " FFNs: pick one with --ffn=<name>, or use --emit=so or --emit=obj, "
        "which embed them all");
  // The GPU path's figures: H100/H200 have 132 SMs (A100: 108); the split-K
  // factors are sized for the larger, which costs the smaller nothing.
  if (llvm::Error err = run(
          [&](mlir::OpPassManager &pm) {
            mlir::ffn::buildGpuLoweringPipeline(pm, target.chip,
                                                /*smCount=*/132);
          },
          "lowering to GPU kernels"))
    return std::move(err);
  if (stage == EmitStage::Gpu)
    return printModule(module, printLocations);

  llvm::Expected<std::string> toolkit = cudaToolkit();
  if (!toolkit)
    return toolkit.takeError();
  auto signatures = collectKernelSignatures(module, specs);
  if (!signatures)
    return signatures.takeError();
  if (llvm::Error err = collectLaunches(module, *signatures))
    return std::move(err);
  std::string format = stage == EmitStage::Ptx ? "isa" : "bin";
  if (llvm::Error err = run(
          [&](mlir::OpPassManager &pm) {
            mlir::ffn::buildGpuBinaryPipeline(pm, format, *toolkit);
          },
          "building the device code"))
    return std::move(err);

  std::map<std::string, std::string> images;
  for (auto binary :
       llvm::make_early_inc_range(module.getOps<mlir::gpu::BinaryOp>())) {
    auto object =
        mlir::cast<mlir::gpu::ObjectAttr>(binary.getObjects().getValue()[0]);
    images[binary.getSymName().str()] = object.getObject().str();
    binary.erase();
  }
  module->removeAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName());
  if (stage == EmitStage::Ptx) {
    std::string out;
    for (const KernelSignature &sig : *signatures)
      out += "// ffn " + sig.name + " (" + target.chip + ")\n" +
             images[sig.deviceModule];
    return out;
  }
  if (stage == EmitStage::Cubin)
    return images[(*signatures)[0].deviceModule];
  for (KernelSignature &sig : *signatures)
    sig.deviceImage = images[sig.deviceModule];

  if (llvm::Error err = run(mlir::ffn::buildCpuToLLVMPipeline,
                            "lowering the pack functions to LLVM"))
    return std::move(err);
  llvm::LLVMContext llvmContext;
  auto llvmModule =
      translateToLLVMIR(module, specs, *signatures, target, llvmContext);
  if (!llvmModule)
    return llvmModule.takeError();
  return emitLLVMStage(**llvmModule, target, stage);
}
