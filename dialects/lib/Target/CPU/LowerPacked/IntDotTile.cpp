//===- IntDotTile.cpp - the K loop of an integer-dot register tile --------===//
//
// Quantized weights times int8-quantized inputs (#ffn.weight_quant with
// int8_activations). VNNI's vpdpbusd multiplies 64 unsigned bytes by 64
// signed ones and adds each lane's four products into an i32 lane, so the
// panels hold four k of a column per lane, offset to unsigned (Layout.h),
// and the input's four k are one broadcast 32-bit lane. Per group of k the
// tile sums in int32, exactly; then, once per group, it removes the
// offset (offset times the input's group sum, which the quantizing phase
// computed), converts, and accumulates in f32 times the weight scale and
// the input's scale. int4 lanes are unpacked by one mask (low nibbles: k
// 0..3 of the 8) and one shift and mask (high nibbles: k 4..7). Per 64
// weight bytes and row that is one vpdpbusd (int8) or two (int4), against
// the four to five vector operations per 16 weights of the dequantizing
// tile: the loop that makes int4 decode memory-bound.
//
//===----------------------------------------------------------------------===//

#include "PanelGemm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::ffn::cpu;

void PanelGemmBuilder::intDotContract(const PanelGemm &g, ArrayRef<Value> acc,
                                      Value row0, int64_t rows, Value panel,
                                      Value streams, Value kLen) {
  assert(l.lanes == 16 && "vpdpbusd on 512-bit vectors");
  int64_t nv = g.nr / l.lanes;
  int64_t nmat = g.panels.size();
  int64_t kPerRow = l.kPerQuantRow();
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  auto bytes = VectorType::get({64}, i8);
  auto ints = VectorType::get({16}, i32);
  auto splat = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(ints, b.getI32IntegerAttr(v)));
  };
  auto slot = [&](int64_t mat, int64_t r, int64_t v) {
    return (mat * rows + r) * nv + v;
  };
  auto rowOf = [&](int64_t r) -> Value {
    return arith::AddIOp::create(b, loc, row0, idx(r));
  };
  // The input's four int8 values at (row r, k .. k + 3) in every lane.
  auto quad = [&](int64_t r, Value k) -> Value {
    Value four = vector::LoadOp::create(b, loc, VectorType::get({4}, i8), g.a,
                                        ValueRange{rowOf(r), k});
    Value word = vector::ExtractOp::create(
        b, loc,
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), four),
        ArrayRef<int64_t>{0});
    return vector::BitCastOp::create(
        b, loc, bytes, vector::BroadcastOp::create(b, loc, ints, word));
  };
  func::FuncOp vpdpbusd =
      intrinsic("llvm.x86.avx512.vpdpbusd.512",
                b.getFunctionType({ints, bytes, bytes}, {ints}));
  auto dot = [&](Value sum, Value weights, Value inputs) -> Value {
    return func::CallOp::create(b, loc, vpdpbusd,
                                ValueRange{sum, weights, inputs})
        .getResult(0);
  };

  SmallVector<Value> init = loadAccumulators(acc, rows, nv);
  Value groups = arith::CeilDivUIOp::create(b, loc, kLen, idx(l.group));
  auto groupLoop = scf::ForOp::create(b, loc, idx(0), groups, idx(1), init);
  groupLoop->setAttr("llvm.loop_annotation", noUnroll());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(groupLoop.getBody());
  Value gi = groupLoop.getInductionVar();
  Value k0 = arith::MulIOp::create(b, loc, gi, idx(l.group));
  Value k1 = arith::MinSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, k0, idx(l.group)), kLen);
  // Panel rows of the group; past K the inputs are zero.
  Value kq0 = arith::DivUIOp::create(b, loc, k0, idx(kPerRow));
  Value kq1 = arith::CeilDivUIOp::create(b, loc, k1, idx(kPerRow));
  Value zero = splat(0);
  SmallVector<Value> sums0(nmat * rows * nv, zero);
  auto kLoop = scf::ForOp::create(b, loc, kq0, kq1, idx(1), sums0);
  kLoop->setAttr("llvm.loop_annotation", noUnroll());
  {
    OpBuilder::InsertionGuard kGuard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kq = kLoop.getInductionVar();
    Value k = arith::MulIOp::create(b, loc, kq, idx(kPerRow));
    SmallVector<Value> lo, hi, out(kLoop.getRegionIterArgs());
    for (int64_t r = 0; r < rows; ++r) {
      lo.push_back(quad(r, k));
      if (l.quantBits == 4)
        hi.push_back(
            quad(r, arith::AddIOp::create(b, loc, k, idx(4)).getResult()));
    }
    for (int64_t mat = 0; mat < nmat; ++mat)
      for (int64_t v = 0; v < nv; ++v) {
        Value w = vector::LoadOp::create(b, loc, bytes, g.panels[mat],
                                         ValueRange{panel, kq, idx(v * 64)});
        Value wLo = w, wHi;
        if (l.quantBits == 4) {
          Value lanes = vector::BitCastOp::create(b, loc, ints, w);
          Value mask = splat(0x0F0F0F0F);
          wLo = vector::BitCastOp::create(
              b, loc, bytes, arith::AndIOp::create(b, loc, lanes, mask));
          wHi = vector::BitCastOp::create(
              b, loc, bytes,
              arith::AndIOp::create(
                  b, loc, arith::ShRUIOp::create(b, loc, lanes, splat(4)),
                  mask));
        }
        for (int64_t r = 0; r < rows; ++r) {
          Value &sum = out[slot(mat, r, v)];
          sum = dot(sum, wLo, lo[r]);
          if (wHi)
            sum = dot(sum, wHi, hi[r]);
        }
      }
    prefetchPanelRow(g, rows, /*chunk=*/nullptr, panel, streams, kq);
    scf::YieldOp::create(b, loc, out);
  }

  // sum q_x (q_w + offset) - offset sum q_x, in f32 times both scales;
  // with zero points the stored q_w is unsigned already and the offset is
  // each column's zero point z: sum q_x (q_w - z).
  int64_t offset = l.quantBits == 8 ? 128 : 8;
  SmallVector<SmallVector<Value>> zeroPoint(nmat);
  if (l.zeroPoints)
    for (int64_t mat = 0; mat < nmat; ++mat)
      for (int64_t v = 0; v < nv; ++v)
        zeroPoint[mat].push_back(arith::ExtUIOp::create(
            b, loc, ints,
            vector::LoadOp::create(b, loc, VectorType::get({16}, i8),
                                   g.zeros[mat],
                                   ValueRange{panel, gi, idx(v * l.lanes)})));
  SmallVector<Value> next(groupLoop.getRegionIterArgs());
  for (int64_t r = 0; r < rows; ++r) {
    Value xSum =
        memref::LoadOp::create(b, loc, g.aSums, ValueRange{rowOf(r), gi});
    Value sumV = vector::BroadcastOp::create(b, loc, ints, xSum);
    Value corr = arith::MulIOp::create(b, loc, sumV, splat(offset));
    Value xScale = vector::BroadcastOp::create(
        b, loc, vecF32,
        memref::LoadOp::create(b, loc, g.aScales, ValueRange{rowOf(r), gi}));
    for (int64_t mat = 0; mat < nmat; ++mat)
      for (int64_t v = 0; v < nv; ++v) {
        Value wScale = toF32(
            vector::LoadOp::create(b, loc, vecStorage, g.scales[mat],
                                   ValueRange{panel, gi, idx(v * l.lanes)}));
        Value exact = arith::SubIOp::create(
            b, loc, kLoop.getResult(slot(mat, r, v)),
            l.zeroPoints
                ? arith::MulIOp::create(b, loc, sumV, zeroPoint[mat][v])
                      .getResult()
                : corr);
        Value &sum = next[slot(mat, r, v)];
        sum = vector::FMAOp::create(
            b, loc, arith::SIToFPOp::create(b, loc, vecF32, exact),
            arith::MulFOp::create(b, loc, wScale, xScale), sum);
      }
  }
  scf::YieldOp::create(b, loc, next);
  b.setInsertionPointAfter(groupLoop);
  storeAccumulators(acc, rows, nv, groupLoop.getResults());
}
