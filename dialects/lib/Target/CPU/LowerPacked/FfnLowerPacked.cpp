//===- FfnLowerPacked.cpp - packed, register-tiled FFN kernels ------------===//
//
// For an FFN function with a #ffn.strategy<vector_bits, mr, nr, mc>:
//
//   func @f(%x: memref<?xDxT>, <packed params>, %y: memref<?xDxT>,
//           %ws: memref<?xi8>, %phase, %begin, %end)
//
// whose body runs one phase of the kernel (Phases.cpp) over work units
// [begin, end). The pass builds the kernel's signature from the layout
// (Layout.h), one pack function per packed parameter (Packing.h), and the
// annotations the kernel glue reads: pack functions, workspace per row,
// phase units per token-count bucket, and the strategy's description.
//
// Each GEMM is one private function (`<kernel>.gemm_up`, `.gemm_down`,
// GemmFunctions.cpp) that both schedules call, shared by every kernel of
// the module with the same shape (PanelGemm.h, RegisterTile.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "Layout.h"
#include "Packing.h"

#include "ffn/Target/CPU/CostModel.h"
#include "ffn/Target/CPU/Passes.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNLOWERPACKED
#include "ffn/Target/CPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::cpu;

namespace {

LogicalResult lowerFunction(func::FuncOp func, FfnOp op,
                            llvm::StringMap<func::FuncOp> &gemms) {
  auto strategy = cast<CpuStrategyAttr>(op.getStrategyAttr());
  Layout l = layoutFor(op, strategy);
  if (l.quantBits && (l.fusedMaxM > 0 || l.dot))
    return op.emitOpError("has quantized weights, which take the two-pass "
                          "schedule with widening tiles: fused_max_m = 0 and "
                          "no bf16_dot");
  if (l.intDot) {
    TargetAttr target = TargetAttr::lookup(func);
    if (!target ||
        !cpuTargetHasFeature(target.getIsa().str(), "avx512vnni") ||
        l.lanes != 16)
      return op.emitOpError("has int8_activations, whose integer dot products "
                            "need 512-bit vectors on a target with avx512vnni "
                            "(x86-64-avx512-bf16)");
  }
  if (l.dot) {
    // The strategy may come from an attribute written by hand: the
    // instruction must exist on the target and the weights must be bf16.
    TargetAttr target = TargetAttr::lookup(func);
    if (!op.getStorageType().isBF16() || !target ||
        !cpuTargetHasFeature(target.getIsa().str(), "avx512bf16"))
      return op.emitOpError("has bf16_dot = true, which needs a bf16 FFN on "
                            "a target with avx512bf16 (x86-64-avx512-bf16)");
  }

  OpBuilder b(func);
  Location loc = func.getLoc();
  Type t = op.getStorageType();

  // The packed type of each parameter, and its pack function if any.
  SmallVector<Type> paramTypes;
  SmallVector<Attribute> contractParams;
  SmallVector<StringRef> paramNames;
  llvm::StringMap<KernelBuilder::ExpertParam> stacked;
  std::optional<MoeAttr> moe = op.getMoe();
  for (unsigned i = 1, e = func.getNumArguments(); i < e; ++i) {
    StringRef name =
        cast<StringAttr>(func.getArgAttr(i, "ffn.param")).getValue();
    auto logical = cast<RankedTensorType>(func.getArgument(i).getType());
    // A mixture of experts' (a grouped FFN's) weights and biases: one
    // expert's (block's) tensor is packed at a time, into its slice of one
    // byte buffer.
    bool norm = name == "norm_scale" || name == "norm_shift";
    int64_t experts = (moe || l.grouped()) && !norm && name != "w_router"
                          ? logical.getDimSize(0)
                          : 0;
    ArrayRef<int64_t> shape = logical.getShape().drop_front(experts ? 1 : 0);
    MemRefType source = MemRefType::get(shape, t);
    MemRefType packed = source;
    std::string packName = (func.getName() + "_pack_" + name).str();
    std::string packQuantizedName;
    // Pair tiles read two rows per panel row (Layout.h).
    int64_t pair = l.dot ? 2 : 1;
    bool matrix = name == "w_up" || name == "w_gate" || name == "w_down";
    if (l.quantBits && matrix) {
      // One byte buffer: integer panels, then the scales (Layout.h).
      bool down = name == "w_down";
      int64_t k = down ? l.f : l.d, nr = down ? l.nrDown : l.nrUp,
              np = down ? l.npDown : l.npUp;
      packed = MemRefType::get(
          {l.quantBytes(np, k, nr, t.getIntOrFloatBitWidth() / 8)},
          b.getI8Type());
      int64_t zeroOffset =
          l.zeroOffset(np, k, nr, t.getIntOrFloatBitWidth() / 8);
      buildQuantPack(b, loc, packName, source, packed, nr, np, l.quantBits,
                     l.group, l.intDot, l.zeroPoints, l.scaleOffset(np, k, nr),
                     zeroOffset);
      // The same buffer from blocks quantized elsewhere.
      packQuantizedName = (func.getName() + "_pack_quantized_" + name).str();
      buildPrequantizedPack(b, loc, packQuantizedName, source, packed, nr, np,
                            l.quantBits, l.group, l.intDot, l.zeroPoints,
                            l.scaleOffset(np, k, nr), zeroOffset);
    } else if (name == "w_up" || name == "w_gate") {
      packed = MemRefType::get({l.npUp, l.packedRows(l.d), pair * l.nrUp}, t);
      (l.dot ? buildPairPack : buildMatrixPack)(b, loc, packName, source,
                                                packed);
    } else if (name == "w_down" && l.fusedMaxM > 0) {
      // Chunk-major, so the fused schedule reads one chunk of W_down as one
      // contiguous block.
      packed = MemRefType::get({l.chunks, l.npDown, l.packedRows(l.chunk),
                                pair * l.nrDown},
                               t);
      (l.dot ? buildChunkedPairPack : buildChunkedPack)(b, loc, packName,
                                                        source, packed);
    } else if (name == "w_down") {
      packed =
          MemRefType::get({l.npDown, l.packedRows(l.f), pair * l.nrDown}, t);
      (l.dot ? buildPairPack : buildMatrixPack)(b, loc, packName, source,
                                                packed);

    } else if (name == "b_up" || name == "b_gate") {
      packed = MemRefType::get({l.fp}, t);
      buildVectorPack(b, loc, packName, source, packed);
    } else {
      packName.clear(); // used as is
    }
    auto param = buildKernelParam(b.getContext(), name, shape, packed, packName,
                                  packQuantizedName, experts);
    if (experts)
      stacked[name] = {packed, param.expertStride()};
    paramTypes.push_back(param.kernelType());
    contractParams.push_back(param);
    paramNames.push_back(name);
  }
  func::FuncOp kernel = buildPhasedKernel(b, func, func.getName(), t, l.dModel,
                                          paramTypes, paramNames);
  // Work units of the phases per token-count bucket (KernelBuilder.h): rows
  // (-1 = m), up panels, rows, down panels, chunk groups, rows. Each bucket
  // runs only its own phases (0 units = skipped).
  int64_t rowsIfA = l.needA || l.intDot ? -1 : 0;
  int64_t rowsIfQuant = l.intDot ? -1 : 0;
  SmallVector<Attribute> units;
  SmallVector<int64_t> bucketMaxM;
  if (l.fusedMaxM > 0) {
    units.push_back(b.getDenseI64ArrayAttr({rowsIfA, 0, 0, 0, l.groups, -1}));
    bucketMaxM.push_back(l.fusedMaxM);
  }
  if (l.sparseTwoPass()) {
    // The two-pass sparse bucket: one unit lists the needed rows.
    units.push_back(b.getDenseI64ArrayAttr(
        {rowsIfA, l.npUp, 1, l.npDown, 0, l.finishInGemm ? 0 : -1}));
    bucketMaxM.push_back(l.sparseMaxM);
  }
  if (moe) {
    // Rows, one unit, routed rows (-n: n * m), up panel groups x experts,
    // routed rows, down panel groups x experts, rows (MoePhases.cpp).
    int64_t routedRows = -l.moeActive;
    auto groups = [&](int64_t np) {
      return (np + l.groupPanels - 1) / l.groupPanels;
    };
    units.push_back(b.getDenseI64ArrayAttr(
        {-1, 1, routedRows, l.moeTotal * groups(l.npUp),
         l.intDot ? routedRows : 0, l.moeTotal * groups(l.npDown), -1}));
  } else if (l.grouped()) {
    // The dense two-pass phases: one unit per block in phase 4 (its GEMM 1
    // and GEMM 2 back to back), or the GEMMs' units panels x blocks
    // (GroupedPhases.cpp).
    if (l.blockUnits)
      units.push_back(b.getDenseI64ArrayAttr(
          {-1, 0, 0, 0, l.blocks, l.finishInGemm ? 0 : -1}));
    else
      units.push_back(b.getDenseI64ArrayAttr(
          {-1, l.blocks * l.npUp, rowsIfQuant, l.blocks * l.npDown, 0,
           l.finishInGemm ? 0 : -1}));
  } else {
    units.push_back(b.getDenseI64ArrayAttr(
        {rowsIfA, l.npUp, rowsIfQuant, l.npDown, 0, l.finishInGemm ? 0 : -1}));
  }
  bucketMaxM.push_back(-1);
  std::string text =
      strategy.describe(op.getGated(), l.f, op.getBatchInvariant());
  if (l.quantBits && l.intDot)
    text += "; int" + std::to_string(l.quantBits) + " weights (scale per " +
            std::to_string(l.group) +
            " rows) times int8 activations (per row and group): integer dot "
            "products (vpdpbusd)";
  else if (l.quantBits)
    text += "; int" + std::to_string(l.quantBits) + " weights (scale per " +
            std::to_string(l.group) + " rows) dequantized in registers";
  if (moe)
    text +=
        "; mixture of " + std::to_string(moe->getExperts()) + " experts" +
        (moe->getShared() ? " + " + std::to_string(moe->getShared()) + " shared"
                          : std::string()) +
        ", top " + std::to_string(moe->getTopK()) +
        ": rows grouped by expert, each expert's GEMMs on its own rows "
        "(units: panels x experts), weighted sum per row";
  if (l.grouped())
    text += "; grouped: " + std::to_string(l.blocks) + " blocks of " +
            std::to_string(l.d) + " -> " + std::to_string(l.f) + " -> " +
            std::to_string(l.d) +
            " (block-diagonal weights), each block's GEMMs two-pass on its "
            "gathered columns " +
            (l.blockUnits ? "(units: blocks, each block's GEMM 1 and GEMM 2 "
                            "back to back in one thread)"
                          : "(units: panels x blocks)");
  // Widening tiles keep the matmuls' inputs in f32; pair tiles round the
  // pre-normed input and the hidden activations to bf16; integer dot
  // products quantize every matmul input to int8.
  Type operand = l.dot      ? Type(b.getBF16Type())
                 : l.intDot ? Type(b.getI8Type())
                            : Type(b.getF32Type());
  kernel->setAttr(KernelAbiAttr::kAttrName,
                  buildKernelAbi(op, operand, contractParams,
                                 moe           ? l.moeWorkspacePerRow()
                                 : l.grouped() ? l.groupedWorkspacePerRow()
                                               : l.workspacePerRow(),
                                 b.getArrayAttr(units),
                                 b.getDenseI64ArrayAttr(bucketMaxM), text));

  Block *body = kernel.addEntryBlock();
  b.setInsertionPointToStart(body);
  llvm::StringMap<Value> params;
  for (auto [i, name] : llvm::enumerate(paramNames))
    params[name] = body->getArgument(1 + i);
  unsigned n = body->getNumArguments();
  KernelBuilder builder(b, loc, op, kernel, l, gemms);
  if (moe)
    builder.buildMoe(body->getArgument(0), params, stacked,
                     body->getArgument(n - 5), body->getArgument(n - 4),
                     body->getArgument(n - 3), body->getArgument(n - 2),
                     body->getArgument(n - 1));
  else if (l.grouped())
    builder.buildGrouped(body->getArgument(0), params, stacked,
                         body->getArgument(n - 5), body->getArgument(n - 4),
                         body->getArgument(n - 3), body->getArgument(n - 2),
                         body->getArgument(n - 1));
  else
    builder.build(body->getArgument(0), params, body->getArgument(n - 5),
                  body->getArgument(n - 4), body->getArgument(n - 3),
                  body->getArgument(n - 2), body->getArgument(n - 1));
  func::ReturnOp::create(b, loc);
  func.erase();
  return success();
}

struct FfnLowerPackedPass : ffn::impl::FfnLowerPackedBase<FfnLowerPackedPass> {
  void runOnOperation() override {
    SmallVector<std::pair<func::FuncOp, FfnOp>> work;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || KernelAbiAttr::of(func))
        continue;
      FfnOp ffnOp;
      unsigned count = 0;
      func.walk([&](FfnOp op) {
        ffnOp = op;
        ++count;
      });
      // Other targets' strategies are their own back ends' to lower.
      if (count != 1 || !isa_and_present<CpuStrategyAttr>(ffnOp.getStrategyAttr()))
        continue;
      // The function must be exactly what MLIRGen builds: the op applied
      // to the arguments and returned.
      auto ret = cast<func::ReturnOp>(func.front().getTerminator());
      if (ret.getNumOperands() != 1 || ret.getOperand(0) != ffnOp.getResult() ||
          ffnOp.getInput() != func.getArgument(0)) {
        ffnOp.emitError("ffn-lower-packed expects a function that applies one "
                        "ffn.ffn to its arguments and returns it");
        return signalPassFailure();
      }
      work.emplace_back(func, ffnOp);
    }
    llvm::StringMap<func::FuncOp> gemms;
    for (auto [func, op] : work)
      if (failed(lowerFunction(func, op, gemms)))
        return signalPassFailure();
  }
};

} // namespace
