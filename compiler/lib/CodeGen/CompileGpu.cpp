//===- CompileGpu.cpp - the NVIDIA targets' stages ------------------------===//

#include "CompileGpu.h"

#include "ffnc/CodeGen/Backend.h"
#include "ffnc/CodeGen/Pipeline.h"

#include "ffn/Target/GPU/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <map>
#include <vector>

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

llvm::Expected<std::string>
ffnc::compileGpuModule(mlir::ModuleOp module, llvm::ArrayRef<FfnSpec> specs,
                       const TargetInfo &target,
                       const mlir::ffn::GpuStrategy &overrides, EmitStage stage,
                       bool printLocations, const StageRunner &run,
                       std::vector<KernelSignature> *kernels) {
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
  // The strategy's device is the chip's nominal board (CostModel.h);
  // --strategy=sms=N resizes it.
  std::string overridesText =
      overrides.hasOverrides() || overrides.sms
          ? "#ffn.gpu_strategy<" + mlir::ffn::gpuKnobsText(overrides) + ">"
          : std::string();
  if (llvm::Error err = run(
          [&](mlir::OpPassManager &pm) {
            mlir::ffn::buildGpuLoweringPipeline(pm, target.chip, overridesText);
          },
          "lowering to GPU kernels"))
    return std::move(err);
  if (stage == EmitStage::Gpu)
    return printModule(module, printLocations);

  llvm::Expected<std::string> toolkit = cudaToolkit();
  if (!toolkit)
    return toolkit.takeError();
  auto signatures = collectKernelSignatures(module);
  if (!signatures)
    return signatures.takeError();
  if (kernels)
    *kernels = *signatures;
  std::string format = stage == EmitStage::Ptx ? "isa" : "bin";
  if (llvm::Error err = run(
          [&](mlir::OpPassManager &pm) {
            mlir::ffn::buildGpuBinaryPipeline(pm, format, *toolkit);
          },
          "building the device code"))
    return std::move(err);

  // Kernels that ptxas spilled and that were assembled again with an
  // occupancy hint (ffn-gpu-ptxas-feedback): said on stderr, and in the
  // PTX printed.
  std::map<std::string, std::vector<std::string>> feedback;
  for (auto binary : module.getOps<mlir::gpu::BinaryOp>())
    if (auto notes =
            binary->getAttrOfType<mlir::ArrayAttr>("ffn.ptxas_feedback"))
      for (auto note : notes.getAsValueRange<mlir::StringAttr>())
        feedback[binary.getSymName().str()].push_back(note.str());
  for (const KernelSignature &sig : *signatures)
    for (const std::string &note : feedback[sig.deviceModule])
      llvm::errs() << "note: ffn '" << sig.name << "' (" << target.chip
                   << "): " << note << "\n";
  if (stage == EmitStage::Ptx || stage == EmitStage::Cubin) {
    // The device code itself, as gpu-module-to-binary left it.
    std::map<std::string, std::string> images;
    for (auto binary : module.getOps<mlir::gpu::BinaryOp>()) {
      auto object =
          mlir::cast<mlir::gpu::ObjectAttr>(binary.getObjects().getValue()[0]);
      images[binary.getSymName().str()] = object.getObject().str();
    }
    if (stage == EmitStage::Cubin)
      return images[(*signatures)[0].deviceModule];
    std::string out;
    for (const KernelSignature &sig : *signatures) {
      out += "// ffn " + sig.name + " (" + target.chip + ")\n";
      for (const std::string &note : feedback[sig.deviceModule])
        out += "// ptxas feedback: " + note + "\n";
      out += images[sig.deviceModule];
    }
    return out;
  }
  if (llvm::Error err = run(
          [&](mlir::OpPassManager &pm) {
            mlir::ffn::buildGpuHostPipeline(pm, target.chip);
          },
          "building the host code"))
    return std::move(err);
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateToLLVMIR(module, *signatures, target, llvmContext);
  if (!llvmModule)
    return llvmModule.takeError();
  return emitLLVMStage(**llvmModule, target, stage);
}
