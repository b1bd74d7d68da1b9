//===- SparseTile.cpp - the sparse GEMM 2's K loop ------------------------===//
//
// At decode a ReLU FFN's hidden activations are mostly exact zeros, and a
// zero activation's row of W_down adds nothing. The kernel lists the rows
// some token needs (Phases.cpp: the fused schedule per chunk, the two-pass
// one over all of d_ff); this K loop runs over that list instead of the
// whole K, so the skipped rows' weights are never read. It issues the dense
// tile's operations for the listed k, in the same ascending order: the skipped
// terms are exact zeros (0 * w, w finite), so the sums equal the dense GEMM
// 2's.
//
//===----------------------------------------------------------------------===//

#include "PanelGemm.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ffn::cpu;

void PanelGemmBuilder::sparseContract(const PanelGemm &g, ArrayRef<Value> acc,
                                      Value row0, int64_t rows, Value panel,
                                      Value streams, Value chunk,
                                      Value aCol, Value kLen) {
  assert(g.panels.size() == 1 && "the sparse GEMM is GEMM 2's");
  int64_t nv = g.nr / l.lanes;
  SmallVector<Value> init = loadAccumulators(acc, rows, nv);

  auto loop = scf::ForOp::create(b, loc, idx(0), g.kCount, idx(1), init);
  // A full register tile per listed k already, as the dense K loop.
  loop->setAttr("llvm.loop_annotation", noUnroll());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value entry = memref::LoadOp::create(
        b, loc, g.kList, ValueRange{idx(0), loop.getInductionVar()});
    // The panel row: k, or for pair tiles the pair (2 kk, 2 kk + 1).
    Value kk = arith::IndexCastOp::create(b, loc, b.getIndexType(), entry);
    SmallVector<Value> out;
    if (l.dot) {
      Value k = arith::AddIOp::create(
          b, loc, aCol, arith::MulIOp::create(b, loc, kk, idx(2)));
      out = pairStep(g, rows, row0, panel, chunk, loop.getRegionIterArgs(), kk,
                     [&](Value row) { return pairWord(g, row, k, false); });
    } else {
      Value k = arith::AddIOp::create(b, loc, aCol, kk);
      SmallVector<Value> a;
      for (int64_t r = 0; r < rows; ++r) {
        Value row = arith::AddIOp::create(b, loc, row0, idx(r));
        Value e = memref::LoadOp::create(b, loc, g.a, ValueRange{row, k});
        a.push_back(vector::BroadcastOp::create(b, loc, vecF32, e));
      }
      ValueRange in = loop.getRegionIterArgs();
      out.assign(in.begin(), in.end());
      for (int64_t v = 0; v < nv; ++v) {
        SmallVector<Value> at;
        if (chunk)
          at.push_back(chunk);
        at.append({panel, kk, idx(v * l.lanes)});
        Value w = vector::LoadOp::create(b, loc, vecStorage, g.panels[0], at);
        if (storage != f32)
          w = arith::ExtFOp::create(b, loc, vecF32, w);
        for (int64_t r = 0; r < rows; ++r) {
          Value &sum = out[r * nv + v];
          sum = vector::FMAOp::create(b, loc, a[r], w, sum);
        }
      }
    }
    prefetchPanelRow(g, rows, chunk, panel, streams, kk);
    scf::YieldOp::create(b, loc, out);
  }
  ValueRange results = loop.getResults();

  // Pair tiles: an odd chunk's last k, paired with zero, is never listed;
  // it is taken whatever its value, as dotContract does.
  storeAccumulators(
      acc, rows, nv,
      l.dot ? pairTail(g, rows, row0, panel, chunk, results, aCol, kLen)
            : SmallVector<Value>(results.begin(), results.end()));
}
