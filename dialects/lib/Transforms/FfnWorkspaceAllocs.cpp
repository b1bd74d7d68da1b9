//===- FfnWorkspaceAllocs.cpp - kernel scratch from the workspace ---------===//
//
// Bufferization gives the baseline kernel one heap buffer per intermediate
// ([m, d_ff] hidden activations, [m, d_model] outputs, [m] norm statistics),
// allocated and freed on every run. The scheduled kernels take a
// caller-provided workspace instead; this pass gives the baseline the same
// contract, so no kernel allocates in the hot path:
//
//   %a = memref.alloc(%m) : memref<?x256xf32>      // %m = memref.dim %x, 0
// becomes
//   %off = arith.muli %m, <bytes per row of the sections before>
//   %a = memref.view %ws[%off][%m] : memref<?xi8> to memref<?x256xf32>
//
//===----------------------------------------------------------------------===//

#include "ffn/IR/FfnAttrs.h"
#include "ffn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNWORKSPACEALLOCS
#include "ffn/Transforms/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;

namespace {

/// Why `alloc` cannot become a workspace section, or "" if it can: its row
/// count must be the input's (dim 0 of argument 0) and the rest static.
std::string unsupportedReason(memref::AllocOp alloc, Value input) {
  MemRefType type = alloc.getType();
  if (!type.getLayout().isIdentity())
    return "it has a non-identity layout";
  if (!alloc.getSymbolOperands().empty())
    return "it has symbol operands";
  if (type.getRank() == 0 || !type.isDynamicDim(0) ||
      type.getNumDynamicDims() != 1)
    return "only its leading dimension may be dynamic";
  auto dim = alloc.getDynamicSizes()[0].getDefiningOp<memref::DimOp>();
  APInt index;
  if (!dim || dim.getSource() != input ||
      !matchPattern(dim.getIndex(), m_ConstantInt(&index)) || index != 0)
    return "its row count is not the input's";
  if (!type.getElementType().isIntOrFloat())
    return "its element type has no fixed size";
  return "";
}

struct FfnWorkspaceAllocsPass
    : ffn::impl::FfnWorkspaceAllocsBase<FfnWorkspaceAllocsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto abi = ffn::KernelAbiAttr::of(func);
    if (!abi || abi.getWorkspacePerRow() || func.getNumArguments() == 0)
      return;
    Value input = func.getArgument(0);
    SmallVector<memref::AllocOp> allocs;
    func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs) {
      std::string reason = unsupportedReason(alloc, input);
      if (!reason.empty()) {
        // The kernel still runs, but allocates: say so.
        alloc.emitWarning("kernel '")
            << func.getName() << "' keeps this heap allocation: " << reason;
        return;
      }
    }

    MLIRContext *ctx = &getContext();
    auto wsType =
        MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8));
    unsigned wsIndex = func.getNumArguments();
    if (failed(func.insertArgument(
            wsIndex, wsType,
            DictionaryAttr::get(
                ctx, {NamedAttribute(StringAttr::get(ctx, "ffn.param"),
                                     StringAttr::get(ctx, "workspace"))}),
            func.getLoc())))
      return signalPassFailure();
    Value ws = func.getArgument(wsIndex);

    int64_t perRow = 0;
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      int64_t rowBytes = type.getElementTypeBitWidth() / 8;
      for (int64_t size : type.getShape().drop_front())
        rowBytes *= size;
      OpBuilder b(alloc);
      Location loc = alloc.getLoc();
      Value rows = alloc.getDynamicSizes()[0];
      // The section starts m * (bytes per row of the sections before it);
      // rows of 64-byte multiples keep every section 64-byte aligned.
      Value offset = arith::MulIOp::create(
          b, loc, rows, arith::ConstantIndexOp::create(b, loc, perRow));
      auto view =
          memref::ViewOp::create(b, loc, type, ws, offset, ValueRange{rows});
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      alloc.replaceAllUsesWith(view.getResult());
      alloc.erase();
      perRow += (rowBytes + 63) / 64 * 64;
    }
    func->setAttr(
        ffn::KernelAbiAttr::kAttrName,
        ffn::KernelAbiAttr::get(
            ctx, abi.getDModel(), abi.getDFf(), abi.getStorage(),
            abi.getActivation(), abi.getGated(), abi.getResidual(),
            abi.getNorm(), abi.getWeightQuant(), abi.getMoe(), abi.getGroups(),
            abi.getPackLayout(), abi.getOperandType(), abi.getParams(), perRow,
            abi.getPhaseUnits(), abi.getBucketMaxM(), abi.getStrategy(),
            abi.getDeviceModule(), abi.getLaunches()));
  }
};

} // namespace
