//===- FfnKernelInterface.cpp - memref calling convention for kernels -----===//
//
//   func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32>
// becomes
//   func.func @f(%x: memref<?x8xf32>, %w: memref<8x8xf32>,
//                %y: memref<?x8xf32>) {
//     %xt = bufferization.to_tensor %x restrict ...
//     ...
//     bufferization.materialize_in_destination %r in restrict writable %y
//   }
// The caller owns every buffer; the kernel never returns memory.
//
//===----------------------------------------------------------------------===//

#include "ffn/IR/FfnAttrs.h"
#include "ffn/Target/CPU/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNKERNELINTERFACE
#include "ffn/Target/CPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;

namespace {

/// An unscheduled kernel still in tensor form (convert-ffn-to-linalg gave
/// it its contract).
bool isFfnFunction(func::FuncOp func) {
  return !func.isExternal() && func.getNumResults() == 1 &&
         func.getNumArguments() > 0 && ffn::KernelAbiAttr::of(func);
}

MemRefType toMemRef(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

LogicalResult rewrite(func::FuncOp func) {
  auto resultType = dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
  if (!resultType)
    return func.emitError("an ffn kernel must return a ranked tensor");
  for (Type t : func.getArgumentTypes())
    if (!isa<RankedTensorType>(t))
      return func.emitError("an ffn kernel takes ranked tensors only");

  Block &entry = func.front();
  OpBuilder b(func.getContext());
  SmallVector<Type> newInputs;
  for (Type t : func.getArgumentTypes())
    newInputs.push_back(toMemRef(t));
  newInputs.push_back(toMemRef(resultType));

  // Memref arguments replace the tensor ones in place, so the body and the
  // argument attributes stay where they are.
  b.setInsertionPointToStart(&entry);
  unsigned numArgs = entry.getNumArguments();
  for (unsigned i = 0; i < numArgs; ++i) {
    BlockArgument arg = entry.getArgument(i);
    Type tensorType = arg.getType();
    arg.setType(newInputs[i]);
    auto toTensor = bufferization::ToTensorOp::create(
        b, func.getLoc(), tensorType, arg, /*restrict=*/true,
        /*writable=*/false);
    arg.replaceAllUsesExcept(toTensor.getResult(), toTensor);
  }
  BlockArgument out = entry.addArgument(newInputs.back(), func.getLoc());

  func.walk([&](func::ReturnOp ret) {
    b.setInsertionPoint(ret);
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, ret.getLoc(), TypeRange{}, ret.getOperand(0), out);
    store.setRestrict(true);
    store.setWritable(true);
    ret->setOperands({});
  });

  func.setType(b.getFunctionType(newInputs, {}));
  func.setArgAttr(numArgs, "ffn.param", b.getStringAttr("output"));
  return success();
}

struct FfnKernelInterfacePass
    : ffn::impl::FfnKernelInterfaceBase<FfnKernelInterfacePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (isFfnFunction(func) && failed(rewrite(func)))
        return signalPassFailure();
  }
};

} // namespace
