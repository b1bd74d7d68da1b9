//===- InputQuant.cpp - int8 quantization of a matmul input row -----------===//
//
// For the integer-dot tiles: one row of a matmul input (x, the pre-normed
// x, or the hidden activations H), per group of `group` columns, to int8
// with an f32 scale, as the kernel ABI states it (ffn_weight_quant): a =
// max |x|, q = clamp(roundeven(x * (127 / a)), -127, 127) (0 where a = 0),
// scale a / 127, and the group's sum of q for the weights' offset. The
// values are padded with zeros to a multiple of 16, so a tile reading a
// whole lane quad (or, int4, two) past K multiplies by zero.
//
// A non-finite input has no int8 value: its group's scale is then inf or
// NaN and the row's outputs are not finite (q stays in range: maxnumf and
// minnumf clamp a NaN to -127).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::cpu;

void KernelBuilder::quantizeRow(Value src, Value r, int64_t k, Value q,
                                Value scales, Value sums) {
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  auto srcType = cast<MemRefType>(src.getType());
  auto srcVec = VectorType::get({16}, srcType.getElementType());
  auto f32s = VectorType::get({16}, f32);
  auto ints = VectorType::get({16}, i32);
  auto maskType = VectorType::get({16}, b.getI1Type());
  int64_t padded = (k + 15) / 16 * 16;
  // 16 columns from j as f32, zero past column k.
  auto load16 = [&](Value j) -> Value {
    Value mask = vector::CreateMaskOp::create(
        b, loc, maskType,
        ValueRange{arith::SubIOp::create(b, loc, idx(k), j).getResult()});
    Value zeros = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(srcVec, b.getZeroAttr(srcVec.getElementType())));
    Value v = vector::MaskedLoadOp::create(b, loc, srcVec, src,
                                           ValueRange{r, j}, mask, zeros);
    return srcVec.getElementType().isF32()
               ? v
               : arith::ExtFOp::create(b, loc, f32s, v).getResult();
  };
  auto fconst = [&](Type t, double v) { return f32Constant(b, loc, t, v); };

  int64_t groups = (k + l.group - 1) / l.group;
  loop(idx(0), idx(groups), idx(1), [&](Value g) {
    Value k0 = arith::MulIOp::create(b, loc, g, idx(l.group));
    // The group's columns within the zero-padded row.
    Value k1 = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, k0, idx(l.group)), idx(padded));
    auto amaxLoop = scf::ForOp::create(b, loc, k0, k1, idx(16),
                                       ValueRange{fconst(f32s, 0.0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(amaxLoop.getBody());
      Value v =
          math::AbsFOp::create(b, loc, load16(amaxLoop.getInductionVar()));
      scf::YieldOp::create(b, loc,
                           ValueRange{arith::MaximumFOp::create(
                               b, loc, amaxLoop.getRegionIterArgs()[0], v)});
    }
    Value amax = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::MAXIMUMF, amaxLoop.getResult(0));
    Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         amax, fconst(f32, 0.0));
    Value inv = arith::SelectOp::create(
        b, loc, isZero, fconst(f32, 0.0),
        arith::DivFOp::create(b, loc, fconst(f32, 127.0), amax));
    memref::StoreOp::create(
        b, loc, arith::DivFOp::create(b, loc, amax, fconst(f32, 127.0)), scales,
        ValueRange{r, g});
    Value invV = vector::BroadcastOp::create(b, loc, f32s, inv);

    auto qLoop = scf::ForOp::create(
        b, loc, k0, k1, idx(16),
        ValueRange{arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(ints, b.getI32IntegerAttr(0)))});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(qLoop.getBody());
      Value j = qLoop.getInductionVar();
      Value t = math::RoundEvenOp::create(
          b, loc, arith::MulFOp::create(b, loc, load16(j), invV));
      t = arith::MinNumFOp::create(
          b, loc, arith::MaxNumFOp::create(b, loc, t, fconst(f32s, -127.0)),
          fconst(f32s, 127.0));
      Value qi = arith::FPToSIOp::create(b, loc, ints, t);
      vector::StoreOp::create(
          b, loc,
          arith::TruncIOp::create(b, loc, VectorType::get({16}, i8), qi), q,
          ValueRange{r, j});
      scf::YieldOp::create(b, loc,
                           ValueRange{arith::AddIOp::create(
                               b, loc, qLoop.getRegionIterArgs()[0], qi)});
    }
    memref::StoreOp::create(
        b, loc,
        vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                    qLoop.getResult(0)),
        sums, ValueRange{r, g});
  });
}
