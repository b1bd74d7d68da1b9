//===- FfnGpuKernelGlue.cpp - cubins and launch plans into descriptors ----===//
//
// A device kernel has no host entry point but its pack function: the
// runtime loads the embedded cubin and launches its kernels as the plan in
// the descriptor says. The plan and the parameters come from the stub's
// contract, the cubin from the gpu.binary the contract names.
//
//===----------------------------------------------------------------------===//

#include "ffn/IR/FfnAttrs.h"
#include "ffn/Target/GPU/Passes.h"
#include "ffn/Target/KernelGlue.h"

#include "ffn/kernel_abi.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNGPUKERNELGLUE
#include "ffn/Target/GPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;

static_assert(sizeof(ffn_cuda_code) == 4 * 8, "ffn_cuda_code layout");
static_assert(sizeof(ffn_device_launch) == 16 * 8, "ffn_device_launch layout");
static_assert(sizeof(ffn_device_arg) == 2 * 8, "ffn_device_arg layout");
static_assert(sizeof(ffn_tensor_map) == 12 * 8, "ffn_tensor_map layout");

/// The `ffn_cuda_code` of one kernel: its cubin and launch plan.
static LLVM::GlobalOp buildCudaCode(GlueBuilder &g, const GluedKernel &kernel,
                                    StringRef cubin) {
  ImplicitLocOpBuilder &b = g.builder();
  MLIRContext *ctx = b.getContext();
  Type i64 = g.i64Type(), ptr = g.ptrType();
  const std::string &name = kernel.name;
  LLVM::GlobalOp image = g.bytes("ffn_" + name + "_cubin", cubin, 16);

  // ffn_device_launch { kernel, min_m, max_m, rows_per_block, grid_y,
  // grid_z, block_threads, shared_bytes, workspace_per_row, num_args,
  // args, num_maps, maps, grid_m_scale, grid_rows_extra, max_blocks }, each
  // with its array of ffn_device_arg { kind, index } and of ffn_tensor_map
  // (twelve i64, flat as the attribute's).
  auto argType = LLVM::LLVMStructType::getLiteral(ctx, {i64, i64});
  auto launchType = LLVM::LLVMStructType::getLiteral(
      ctx, {ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, ptr, i64, ptr,
            i64, i64, i64});
  constexpr int64_t kMapFields = sizeof(ffn_tensor_map) / 8;
  auto mapType = LLVM::LLVMArrayType::get(i64, kMapFields);
  struct Pieces {
    DeviceLaunchAttr launch;
    LLVM::GlobalOp args, kernel, maps;
  };
  SmallVector<Pieces> pieces;
  for (auto [i, attr] : llvm::enumerate(kernel.abi.getLaunches())) {
    auto launch = cast<DeviceLaunchAttr>(attr);
    ArrayRef<int64_t> pairs = launch.getArgs().asArrayRef();
    auto arrayType = LLVM::LLVMArrayType::get(argType, pairs.size() / 2);
    LLVM::GlobalOp args = g.global(
        "ffn_" + name + "_launch_args_" + std::to_string(i), arrayType, [&] {
          SmallVector<Value> entries;
          for (size_t a = 0; a + 1 < pairs.size(); a += 2)
            entries.push_back(g.aggregate(
                argType, {g.constant(pairs[a]), g.constant(pairs[a + 1])}));
          return g.aggregate(arrayType, entries);
        });
    // A launch without tensor maps has a null table.
    LLVM::GlobalOp maps;
    if (DenseI64ArrayAttr flat = launch.getMaps()) {
      ArrayRef<int64_t> values = flat.asArrayRef();
      auto mapsType =
          LLVM::LLVMArrayType::get(mapType, values.size() / kMapFields);
      maps = g.global("ffn_" + name + "_launch_maps_" + std::to_string(i),
                      mapsType, [&] {
                        SmallVector<Value> entries;
                        for (size_t m = 0; m + kMapFields <= values.size();
                             m += kMapFields) {
                          SmallVector<Value> fields;
                          for (int64_t f = 0; f < kMapFields; ++f)
                            fields.push_back(g.constant(values[m + f]));
                          entries.push_back(g.aggregate(mapType, fields));
                        }
                        return g.aggregate(mapsType, entries);
                      });
    }
    pieces.push_back(
        {launch, args,
         g.string("ffn_" + name + "_launch_kernel", launch.getKernel()), maps});
  }
  auto launchesType = LLVM::LLVMArrayType::get(launchType, pieces.size());
  LLVM::GlobalOp launches =
      g.global("ffn_" + name + "_launches", launchesType, [&] {
        SmallVector<Value> entries;
        for (const Pieces &p : pieces) {
          DeviceLaunchAttr l = p.launch;
          entries.push_back(g.aggregate(
              launchType,
              {g.address(p.kernel), g.constant(l.getMinM()),
               g.constant(l.getMaxM()), g.constant(l.getRowsPerBlock()),
               g.constant(l.getGridY()), g.constant(l.getGridZ()),
               g.constant(l.getThreads()), g.constant(l.getSharedBytes()),
               g.constant(l.getWorkspacePerRow()),
               g.constant(l.getArgs().size() / 2), g.address(p.args),
               g.constant(l.getMaps() ? l.getMaps().size() / kMapFields : 0),
               p.maps ? g.address(p.maps) : g.null(),
               g.constant(l.getGridMScale()), g.constant(l.getGridRowsExtra()),
               g.constant(l.getMaxBlocks())}));
        }
        return g.aggregate(launchesType, entries);
      });
  // ffn_cuda_code { image, image_size, num_launches, launches }
  auto codeType = LLVM::LLVMStructType::getLiteral(ctx, {ptr, i64, i64, ptr});
  return g.global("ffn_" + name + "_cuda", codeType, [&] {
    return g.aggregate(codeType,
                       {g.address(image), g.constant(cubin.size()),
                        g.constant(pieces.size()), g.address(launches)});
  });
}

namespace {
struct FfnGpuKernelGluePass
    : ffn::impl::FfnGpuKernelGlueBase<FfnGpuKernelGluePass> {
  using FfnGpuKernelGlueBase::FfnGpuKernelGlueBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (chip != "sm_80" && chip != "sm_90" && chip != "sm_90a") {
      module.emitError("ffn-gpu-kernel-glue: unknown chip '")
          << chip << "' (sm_80, sm_90, sm_90a)";
      return signalPassFailure();
    }
    // The descriptor names the target as ffnc's --target does.
    std::string target = "nvptx-" + StringRef(chip).substr(0, 2).str() +
                         StringRef(chip).substr(3).str();
    // The bytes stay in the binaries' attributes (the context owns them).
    llvm::StringMap<StringRef> cubins;
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
      if (object.getFormat() != gpu::CompilationTarget::Binary) {
        binary.emitError("ffn-gpu-kernel-glue: the descriptor embeds a "
                         "cubin; this gpu.binary is not one (format=bin)");
        return signalPassFailure();
      }
      cubins[binary.getSymName()] = object.getObject().getValue();
    }
    SmallVector<GluedKernel> kernels = takeKernels(module);
    GlueBuilder g(module);
    for (const GluedKernel &kernel : kernels) {
      StringAttr deviceModule = kernel.abi.getDeviceModule();
      auto cubin =
          deviceModule ? cubins.find(deviceModule.getValue()) : cubins.end();
      if (cubin == cubins.end()) {
        module.emitError("ffn-gpu-kernel-glue: kernel '")
            << kernel.name << "' has "
            << (deviceModule ? "no gpu.binary '" + deviceModule.str() + "'"
                             : std::string("no device module"));
        return signalPassFailure();
      }
      LLVM::GlobalOp code = buildCudaCode(g, kernel, cubin->second);
      LLVM::LLVMFuncOp pack = g.buildPack(kernel);
      if (!pack || failed(g.buildDescriptor(kernel, target, FFN_DEVICE_CUDA,
                                            pack, nullptr, code)))
        return signalPassFailure();
    }
    // Host code only from here: the stubs declared the kernels' contracts,
    // the binaries are embedded.
    for (GluedKernel &kernel : kernels)
      if (kernel.func.isExternal())
        kernel.func.erase();
    for (auto binary :
         llvm::make_early_inc_range(module.getOps<gpu::BinaryOp>()))
      binary.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
    // What the strategies were chosen for is in the descriptors now.
    module->removeAttr(TargetAttr::kAttrName);
  }
};
} // namespace
