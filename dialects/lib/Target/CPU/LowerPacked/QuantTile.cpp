//===- QuantTile.cpp - the K loop of a weight-quantized register tile -----===//
//
// Weights stored as int8 (or int4, two k per byte) with one scale per
// `group` rows of a column (Layout.h). Per group, the scales of the tile's
// weight vectors are loaded once; per k, each weight vector is loaded as
// bytes, sign-extended to i32 (vpmovsxbd; int4: the low nibble by shifting
// it to the top and back, the high one by one arithmetic shift of the
// sign-extended byte), converted (vcvtdq2ps) and multiplied by its scale,
// then one FMA per row as in the f32 tile. q s is exact in f32 (q has at
// most 8 significant bits, s at most 11), so the tile computes with exactly
// the dequantized weights the reference uses, in the f32 tile's order.
// With zero points (int4), the nibbles are unsigned (zero-extended, masked
// and shifted) and each weight is fma(q, s, -z s), z s once per group:
// exact too, as |q - z| <= 15.
//
//===----------------------------------------------------------------------===//

#include "PanelGemm.h"

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::cpu;

PanelGemmBuilder::QuantViews
PanelGemmBuilder::quantViews(Value bytes, int64_t np, int64_t k, int64_t nr) {
  Value panels = memref::ViewOp::create(
      b, loc,
      MemRefType::get({np, l.quantRows(k), l.quantRowWidth(nr)},
                      b.getI8Type()),
      bytes, idx(0), ValueRange{});
  Value scales = memref::ViewOp::create(
      b, loc, MemRefType::get({np, (k + l.group - 1) / l.group, nr}, storage),
      bytes, idx(l.scaleOffset(np, k, nr)), ValueRange{});
  Value zeros;
  if (l.zeroPoints)
    zeros = memref::ViewOp::create(
        b, loc,
        MemRefType::get({np, (k + l.group - 1) / l.group, nr}, b.getI8Type()),
        bytes,
        idx(l.zeroOffset(np, k, nr, storage.getIntOrFloatBitWidth() / 8)),
        ValueRange{});
  return {panels, scales, zeros};
}

void PanelGemmBuilder::quantContract(const PanelGemm &g, ArrayRef<Value> acc,
                                     Value row0, int64_t rows, Value panel,
                                     Value streams, Value aCol,
                                     Value kLen) {
  int64_t nv = g.nr / l.lanes;
  int64_t nmat = g.panels.size();
  Type i32 = b.getI32Type();
  auto bytes = VectorType::get({l.lanes}, b.getI8Type());
  auto ints = VectorType::get({l.lanes}, i32);
  auto slot = [&](int64_t mat, int64_t r, int64_t v) {
    return (mat * rows + r) * nv + v;
  };
  auto splat = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(ints, b.getI32IntegerAttr(v)));
  };
  // A's element (row, k) broadcast to every lane.
  auto aVector = [&](int64_t r, Value k) -> Value {
    Value row = arith::AddIOp::create(b, loc, row0, idx(r));
    Value col = arith::AddIOp::create(b, loc, aCol, k);
    Value e = memref::LoadOp::create(b, loc, g.a, ValueRange{row, col});
    return vector::BroadcastOp::create(b, loc, vecF32, e);
  };
  // out[slot] += a[r] * w(mat, v) for every row, mat and vector.
  auto accumulate = [&](SmallVectorImpl<Value> &out, ArrayRef<Value> a,
                        function_ref<Value(int64_t mat, int64_t v)> w) {
    for (int64_t mat = 0; mat < nmat; ++mat)
      for (int64_t v = 0; v < nv; ++v) {
        Value wv = w(mat, v);
        for (int64_t r = 0; r < rows; ++r) {
          Value &sum = out[slot(mat, r, v)];
          sum = vector::FMAOp::create(b, loc, a[r], wv, sum);
        }
      }
  };
  // s q, or with zero points s (q - z) as fma(q, s, -z s): both products
  // are exact and so is their difference (|q - z| <= 15), so the FMA
  // rounds nothing.
  SmallVector<SmallVector<Value>> scale(nmat), negZs(nmat);
  //
  // Small tiles (decode: few accumulators) of FFNs that are not
  // batch-invariant sum each group in accumulators of their own, in units
  // of the integers, and scale the sums once per group: no multiply per
  // weight vector. int4 on 512-bit vectors then converts a nibble with one
  // vpermps from a table of the 16 values (only the index's low 4 bits
  // count, so neither nibble needs masking).
  bool perGroup = !l.zeroPoints && !l.batchInvariant && rows * nv * nmat <= 8;
  bool table = perGroup && l.quantBits == 4 && l.lanes == 16;
  Value nibbleValues;
  func::FuncOp vpermps;
  if (table) {
    SmallVector<float> values;
    for (int i = 0; i < 16; ++i)
      values.push_back(static_cast<float>(i < 8 ? i : i - 16));
    nibbleValues = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vecF32, ArrayRef<float>(values)));
    vpermps = intrinsic("llvm.x86.avx512.permvar.sf.512",
                        b.getFunctionType({vecF32, ints}, {vecF32}));
  }
  auto dequant = [&](Value q, int64_t mat, int64_t v) -> Value {
    if (isa<FloatType>(getElementTypeOrSelf(q.getType())))
      return q; // from the table
    Value qf = arith::SIToFPOp::create(b, loc, vecF32, q);
    if (perGroup)
      return qf;
    if (l.zeroPoints)
      return vector::FMAOp::create(b, loc, qf, scale[mat][v], negZs[mat][v]);
    return arith::MulFOp::create(b, loc, qf, scale[mat][v]);
  };
  SmallVector<Value> init = loadAccumulators(acc, rows, nv);

  Value groups = arith::CeilDivUIOp::create(b, loc, kLen, idx(l.group));
  auto groupLoop = scf::ForOp::create(b, loc, idx(0), groups, idx(1), init);
  groupLoop->setAttr("llvm.loop_annotation", noUnroll());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(groupLoop.getBody());
    Value gi = groupLoop.getInductionVar();
    for (int64_t mat = 0; mat < nmat; ++mat) {
      scale[mat].clear();
      negZs[mat].clear();
      for (int64_t v = 0; v < nv; ++v) {
        SmallVector<Value, 3> at = {panel, gi, idx(v * l.lanes)};
        scale[mat].push_back(Emitter::toF32(
            vector::LoadOp::create(b, loc, vecStorage, g.scales[mat], at)));
        if (!l.zeroPoints)
          continue;
        Value z = arith::UIToFPOp::create(
            b, loc, vecF32,
            arith::ExtUIOp::create(
                b, loc, ints,
                vector::LoadOp::create(b, loc, bytes, g.zeros[mat], at)));
        negZs[mat].push_back(arith::NegFOp::create(
            b, loc, arith::MulFOp::create(b, loc, z, scale[mat].back())));
      }
    }
    Value k0 = arith::MulIOp::create(b, loc, gi, idx(l.group));
    Value k1 = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, k0, idx(l.group)), kLen);
    SmallVector<Value> carried(groupLoop.getRegionIterArgs());
    // The K loop's accumulators: the tile's, or the group's own sums.
    SmallVector<Value> kInit = carried;
    if (perGroup)
      kInit.assign(carried.size(), f32Constant(b, loc, vecF32, 0.0));
    // After the group: its sums times the scales into the tile's.
    auto finishGroup = [&](ValueRange sums) {
      if (!perGroup) {
        carried.assign(sums.begin(), sums.end());
        return;
      }
      for (int64_t mat = 0; mat < nmat; ++mat)
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t v = 0; v < nv; ++v) {
            Value &sum = carried[slot(mat, r, v)];
            sum = vector::FMAOp::create(b, loc, sums[slot(mat, r, v)],
                                        scale[mat][v], sum);
          }
    };

    if (l.quantBits == 8) {
      auto kLoop = scf::ForOp::create(b, loc, k0, k1, idx(1), kInit);
      kLoop->setAttr("llvm.loop_annotation", noUnroll());
      OpBuilder::InsertionGuard kGuard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value k = kLoop.getInductionVar();
      SmallVector<Value> a, out(kLoop.getRegionIterArgs());
      for (int64_t r = 0; r < rows; ++r)
        a.push_back(aVector(r, k));
      accumulate(out, a, [&](int64_t mat, int64_t v) {
        Value q =
            vector::LoadOp::create(b, loc, bytes, g.panels[mat],
                                   ValueRange{panel, k, idx(v * l.lanes)});
        return dequant(arith::ExtSIOp::create(b, loc, ints, q), mat, v);
      });
      prefetchPanelRow(g, rows, /*chunk=*/nullptr, panel, streams, k);
      scf::YieldOp::create(b, loc, out);
      b.setInsertionPointAfter(kLoop);
      finishGroup(kLoop.getResults());
    } else {
      // Pairs of k (a group starts on an even k); an odd K's last k is the
      // low nibble of a byte whose high one is padding.
      Value kk0 = arith::DivUIOp::create(b, loc, k0, idx(2));
      Value kk1 = arith::DivUIOp::create(b, loc, k1, idx(2));
      auto kLoop = scf::ForOp::create(b, loc, kk0, kk1, idx(1), kInit);
      kLoop->setAttr("llvm.loop_annotation", noUnroll());
      auto nibbles = [&](Value kk, int64_t mat, int64_t v) {
        Value q =
            vector::LoadOp::create(b, loc, bytes, g.panels[mat],
                                   ValueRange{panel, kk, idx(v * l.lanes)});
        if (table) {
          Value wide = arith::ExtUIOp::create(b, loc, ints, q);
          auto lookUp = [&](Value index) -> Value {
            return func::CallOp::create(b, loc, vpermps,
                                        ValueRange{nibbleValues, index})
                .getResult(0);
          };
          return std::make_pair(lookUp(wide), lookUp(arith::ShRUIOp::create(
                                                  b, loc, wide, splat(4))));
        }
        if (l.zeroPoints) {
          // Unsigned nibbles.
          Value wide = arith::ExtUIOp::create(b, loc, ints, q);
          return std::make_pair(
              Value(arith::AndIOp::create(b, loc, wide, splat(15))),
              Value(arith::ShRUIOp::create(b, loc, wide, splat(4))));
        }
        Value wide = arith::ExtSIOp::create(b, loc, ints, q);
        Value lo = arith::ShRSIOp::create(
            b, loc, arith::ShLIOp::create(b, loc, wide, splat(28)), splat(28));
        Value hi = arith::ShRSIOp::create(b, loc, wide, splat(4));
        return std::make_pair(lo, hi);
      };
      {
        OpBuilder::InsertionGuard kGuard(b);
        b.setInsertionPointToStart(kLoop.getBody());
        Value kk = kLoop.getInductionVar();
        Value k = arith::MulIOp::create(b, loc, kk, idx(2));
        Value k1n = arith::AddIOp::create(b, loc, k, idx(1));
        SmallVector<Value> aLo, aHi, out(kLoop.getRegionIterArgs());
        for (int64_t r = 0; r < rows; ++r) {
          aLo.push_back(aVector(r, k));
          aHi.push_back(aVector(r, k1n));
        }
        SmallVector<SmallVector<std::pair<Value, Value>>> q(nmat);
        for (int64_t mat = 0; mat < nmat; ++mat)
          for (int64_t v = 0; v < nv; ++v)
            q[mat].push_back(nibbles(kk, mat, v));
        accumulate(out, aLo, [&](int64_t mat, int64_t v) {
          return dequant(q[mat][v].first, mat, v);
        });
        accumulate(out, aHi, [&](int64_t mat, int64_t v) {
          return dequant(q[mat][v].second, mat, v);
        });
        prefetchPanelRow(g, rows, /*chunk=*/nullptr, panel, streams, kk);
        scf::YieldOp::create(b, loc, out);
      }
      b.setInsertionPointAfter(kLoop);
      Value odd = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, k1, idx(1)), idx(0));
      auto tail = scf::IfOp::create(
          b, loc, odd,
          [&](OpBuilder &, Location) {
            Value k = arith::SubIOp::create(b, loc, k1, idx(1));
            SmallVector<Value> a, out(kLoop.getResults());
            for (int64_t r = 0; r < rows; ++r)
              a.push_back(aVector(r, k));
            accumulate(out, a, [&](int64_t mat, int64_t v) {
              return dequant(nibbles(kk1, mat, v).first, mat, v);
            });
            scf::YieldOp::create(b, loc, out);
          },
          [&](OpBuilder &, Location) {
            scf::YieldOp::create(b, loc, kLoop.getResults());
          });
      finishGroup(tail.getResults());
    }
    scf::YieldOp::create(b, loc, carried);
  }

  storeAccumulators(acc, rows, nv, groupLoop.getResults());
}
