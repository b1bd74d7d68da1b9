//===- PairTile.cpp - the K loop of a bf16 pair register tile -------------===//
//
// With bf16_dot, a register tile's k-step is AVX-512 BF16's dot product of
// pairs: vdpbf16ps adds a[2i] w[2i] + a[2i+1] w[2i+1] into f32 lane i, so one
// instruction does the work of two f32 FMAs and no weight is ever widened.
// The panels hold W's rows in pairs (Packing.h), so one zmm load brings 16
// columns x 2 rows; A's two elements (a[k], a[k+1]) are one 32-bit word,
// broadcast to every lane. Written with vector and x86vector ops rather than
// as a linalg contraction: the upstream vector.contract -> x86vector.dot
// rewrite wants its operands in a VNNI-shaped contraction that the tile
// would have to be re-modelled into, while the k-step here is three ops.
//
// Products of bf16 values are exact in f32; vdpbf16ps rounds each addition
// to nearest even, and (unlike the FMAs) treats denormal inputs and results
// as zero, which docs/numerics.md states.
//
//===----------------------------------------------------------------------===//

#include "PanelGemm.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::ffn::cpu;

SmallVector<Value>
PanelGemmBuilder::pairStep(const PanelGemm &g, int64_t rows, Value row0,
                           Value panel, Value chunk, ValueRange in, Value kk,
                           function_ref<Value(Value row)> aWord) {
  int64_t nv = g.nr / l.lanes;
  int64_t nmat = g.panels.size();
  auto pairs = VectorType::get({2 * l.lanes}, b.getBF16Type());
  auto words = VectorType::get({l.lanes}, b.getI32Type());
  SmallVector<Value> a;
  for (int64_t r = 0; r < rows; ++r) {
    Value row = arith::AddIOp::create(b, loc, row0, idx(r));
    Value all = vector::BroadcastOp::create(b, loc, words, aWord(row));
    a.push_back(vector::BitCastOp::create(b, loc, pairs, all));
  }
  SmallVector<Value> out(in.begin(), in.end());
  for (int64_t mat = 0; mat < nmat; ++mat) {
    for (int64_t v = 0; v < nv; ++v) {
      SmallVector<Value> at;
      if (chunk)
        at.push_back(chunk);
      at.append({panel, kk, idx(v * 2 * l.lanes)});
      Value w = vector::LoadOp::create(b, loc, pairs, g.panels[mat], at);
      for (int64_t r = 0; r < rows; ++r) {
        Value &sum = out[(mat * rows + r) * nv + v];
        sum = x86vector::DotBF16Op::create(b, loc, vecF32, sum, a[r], w);
      }
    }
  }
  return out;
}

Value PanelGemmBuilder::pairWord(const PanelGemm &g, Value row, Value k,
                                 bool single) {
  Type bf16 = b.getBF16Type(), i32 = b.getI32Type();
  if (single) {
    Value e = memref::LoadOp::create(b, loc, g.a, ValueRange{row, k});
    Value bits = arith::BitcastOp::create(b, loc, b.getI16Type(), e);
    return arith::ExtUIOp::create(b, loc, i32, bits);
  }
  Value two = vector::LoadOp::create(b, loc, VectorType::get({2}, bf16), g.a,
                                     ValueRange{row, k});
  Value word =
      vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), two);
  return vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
}

void PanelGemmBuilder::dotContract(const PanelGemm &g, ArrayRef<Value> acc,
                                   Value row0, int64_t rows, Value panel,
                                   Value streams, Value chunk, Value aCol,
                                   Value kLen) {
  int64_t nv = g.nr / l.lanes;
  SmallVector<Value> init = loadAccumulators(acc, rows, nv);

  Value fullPairs = arith::DivUIOp::create(b, loc, kLen, idx(2));
  auto loop = scf::ForOp::create(b, loc, idx(0), fullPairs, idx(1), init);
  // As the widening tiles' K loop: already a full register tile.
  loop->setAttr("llvm.loop_annotation", noUnroll());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kk = loop.getInductionVar();
    Value k = arith::AddIOp::create(b, loc, aCol,
                                    arith::MulIOp::create(b, loc, kk, idx(2)));
    // The panel's pair row: kk, from the K block's first (kBlockRow).
    Value pairRow = kBlockRow ? arith::AddIOp::create(b, loc, kBlockRow, kk)
                              : kk;
    SmallVector<Value> out =
        pairStep(g, rows, row0, panel, chunk, loop.getRegionIterArgs(),
                 pairRow,
                 [&](Value row) { return pairWord(g, row, k, false); });
    prefetchPanelRow(g, rows, chunk, panel, streams, kk);
    scf::YieldOp::create(b, loc, out);
  }

  storeAccumulators(
      acc, rows, nv,
      pairTail(g, rows, row0, panel, chunk, loop.getResults(), aCol, kLen));
}

SmallVector<Value> PanelGemmBuilder::pairTail(const PanelGemm &g, int64_t rows,
                                              Value row0, Value panel,
                                              Value chunk, ValueRange in,
                                              Value aCol, Value kLen) {
  // An odd K's last element pairs with zero (never with the next element
  // of A's row, which may be past the row, or Inf against a zero weight).
  Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                    arith::AndIOp::create(b, loc, kLen, idx(1)),
                                    idx(0));
  auto tail = scf::IfOp::create(
      b, loc, odd,
      [&](OpBuilder &, Location) {
        Value k = arith::SubIOp::create(
            b, loc, arith::AddIOp::create(b, loc, aCol, kLen), idx(1));
        Value kk = arith::DivUIOp::create(b, loc, kLen, idx(2));
        if (kBlockRow)
          kk = arith::AddIOp::create(b, loc, kBlockRow, kk);
        SmallVector<Value> out =
            pairStep(g, rows, row0, panel, chunk, in, kk,
                     [&](Value row) { return pairWord(g, row, k, true); });
        scf::YieldOp::create(b, loc, out);
      },
      [&](OpBuilder &, Location) { scf::YieldOp::create(b, loc, in); });
  ValueRange out = tail.getResults();
  return SmallVector<Value>(out.begin(), out.end());
}
