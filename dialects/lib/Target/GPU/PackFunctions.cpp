//===- PackFunctions.cpp - host functions packing weights for the GPU -----===//
//
// The GPU kernels read each weight matrix K-major (row n of the packed
// matrix is output column n, its K inputs contiguous: what ldmatrix and
// mma's "col" B operand want) and zero-padded to whole tiles, so the kernels
// have no tail code. These run once, on the host, when a parameter is set.
//
//===----------------------------------------------------------------------===//

#include "PackFunctions.h"
#include "KernelIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::ffn::gpu_target;

func::FuncOp mlir::ffn::gpu_target::buildPackFunction(OpBuilder &builder,
                                                      ModuleOp module,
                                                      StringRef name,
                                                      MemRefType source,
                                                      MemRefType packed) {
  OpBuilder::InsertionGuard g(builder);
  builder.setInsertionPointToEnd(module.getBody());
  ImplicitLocOpBuilder b(module.getLoc(), builder);
  auto func = func::FuncOp::create(
      b, name, b.getFunctionType({source, packed}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  KernelIR ir(b);
  Value src = func.getArgument(0), dst = func.getArgument(1);
  Value zero = arith::ConstantOp::create(
      b, cast<TypedAttr>(b.getZeroAttr(packed.getElementType())));
  Value c0 = ir.idx(0);
  if (packed.getRank() == 1) {
    ir.loop(c0, ir.idx(packed.getDimSize(0)), 1,
            [&](Value i) { ir.store(zero, dst, {i}); });
    ir.loop(c0, ir.idx(source.getDimSize(0)), 1,
            [&](Value i) { ir.store(ir.load(src, {i}), dst, {i}); });
  } else {
    // dst[n][k] = src[k][n]: logical [in, out] to K-major, zero elsewhere.
    ir.loop(c0, ir.idx(packed.getDimSize(0)), 1, [&](Value n) {
      ir.loop(c0, ir.idx(packed.getDimSize(1)), 1,
              [&](Value k) { ir.store(zero, dst, {n, k}); });
    });
    ir.loop(c0, ir.idx(source.getDimSize(1)), 1, [&](Value n) {
      ir.loop(c0, ir.idx(source.getDimSize(0)), 1, [&](Value k) {
        ir.store(ir.load(src, {k, n}), dst, {n, k});
      });
    });
  }
  func::ReturnOp::create(b);
  return func;
}
