//===- KBlocks.cpp - a panel GEMM with K in blocks -------------------------===//
//
// Without K blocks, a row block's tiles read a panel one after another: the
// first streams it from memory (compute idle behind the loads), the others
// find it in cache (memory idle behind the FMAs), so at small M the two
// add up instead of overlapping -- LLaMA-7B f32 on one core took 39 ms at
// M = 8 and 62 ms at M = 16, where the weights alone need 36 ms and the
// FMAs of 16 rows 29 ms.
//
// With kc, every tile of the block runs over one K block of the panel
// before any tile moves to the next, each tile's partial sums parked in an
// mc x nr stack buffer in between, and the first two tiles prefetch the
// next K block between them, a row every other step each: the weights then
// stream from memory while all of the block's tiles compute. A K block of
// the panel (kc rows) stays in L1 for the tiles after the first.
//
// The block runs a group of nc / nr panels side by side: each K block over
// every panel of the group before the next K block, so the block's A rows
// of one K block come from memory once per group and from cache for its
// other panels (partial sums mc x nc). Taller blocks (kc_tall) take longer
// K blocks: their many tiles hide the weight stream, and a whole-K panel
// longer than L2 holds beside A's rows would be read from L3 by each tile.
//
//===----------------------------------------------------------------------===//

#include "PanelGemm.h"

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::cpu;

bool PanelGemmBuilder::blocksK(const PanelGemm &g) const {
  return (l.kc > 0 || l.kcTall > 0) && !kBlockBuffers.empty() &&
         !g.chunkRows && !g.kList &&
         !l.quantBits && !l.intDot;
}

Value PanelGemmBuilder::groupColumn(const PanelGemm &g, Value p0,
                                   Value panel) {
  return arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, panel, p0),
                               idx(g.nr));
}

void PanelGemmBuilder::kBlockTile(const PanelGemm &g, Value i0, Value row0,
                                  int64_t rows, Value p0, Value p1,
                                  Value panel, Value k0, Value kLen,
                                  Value share) {
  int64_t nv = g.nr / l.lanes;
  int64_t nmat = g.panels.size();
  SmallVector<Value> acc;
  for (int64_t mat = 0; mat < nmat; ++mat)
    acc.push_back(registerTile(mat, rows, g.nr));
  Value blockRow = arith::SubIOp::create(b, loc, row0, i0);
  Value column = groupColumn(g, p0, panel);

  // The tile's partial sums: zero before the first K block, else where the
  // last K block left them. (Only the fused schedule's chunked GEMM 2
  // accumulates into C, and it reads K whole: blocksK.)
  assert(!g.accumulate && "accumulating GEMMs read chunks, not K blocks");
  auto copy = [&](bool toBlock) {
    for (int64_t mat = 0; mat < nmat; ++mat)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t v = 0; v < nv; ++v) {
          SmallVector<Value> inAcc{idx(r), idx(v * l.lanes)};
          SmallVector<Value> inBlock{
              arith::AddIOp::create(b, loc, blockRow, idx(r)),
              arith::AddIOp::create(b, loc, column, idx(v * l.lanes))};
          Value from = toBlock ? acc[mat] : kBlockBuffers[mat];
          Value to = toBlock ? kBlockBuffers[mat] : acc[mat];
          Value vec = vector::LoadOp::create(b, loc, vecF32, from,
                                             toBlock ? inAcc : inBlock);
          vector::StoreOp::create(b, loc, vec, to, toBlock ? inBlock : inAcc);
        }
  };
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k0, idx(0));
  {
    auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    storeAccumulators(acc, rows, nv,
                      SmallVector<Value>(nmat * rows * nv,
                                         f32Constant(b, loc, vecF32, 0.0)));
    b.setInsertionPointToStart(ifFirst.elseBlock());
    copy(/*toBlock=*/false);
  }

  // The K block in the panel's packed rows (pairs for pair tiles; kc is
  // even), and the rows this tile prefetches of what the group reads next:
  // the next panel's same K block, or after the group's last panel the
  // first one's next K block -- the first half for share 0, the second for
  // share 1. Panels are contiguous, kRows packed rows each, so both are
  // rows of one flat view counted from this panel's first (past the last
  // panel they are clamped, RegisterTile.cpp).
  auto packed = [&](Value k) -> Value {
    if (!l.dot)
      return k;
    return arith::DivUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, k, idx(1)), idx(2));
  };
  kBlockRow = packed(k0);
  if (share) {
    Value len = packed(kLen);
    Value half = arith::MulIOp::create(
        b, loc, share, arith::ShRUIOp::create(b, loc, len, idx(1)));
    auto type = cast<MemRefType>(g.panels.front().getType());
    Value kRows = idx(type.getDimSize(type.getRank() - 2));
    Value last = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::AddIOp::create(b, loc, panel, idx(1)), p1);
    // Back to the group's first panel, one K block down.
    Value wrap = arith::SubIOp::create(
        b, loc, len,
        arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, panel, p0),
                              kRows));
    Value next = arith::SelectOp::create(b, loc, last, wrap, kRows);
    kBlockAhead = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, kBlockRow, next), half);
  }
  contractTile(g, acc, row0, rows, panel, /*streams=*/Value(),
               /*chunk=*/Value(), /*aCol=*/k0, kLen);
  kBlockRow = kBlockAhead = Value();
  copy(/*toBlock=*/true);
}

void PanelGemmBuilder::kBlockedGroup(const PanelGemm &g, Value i0, Value end,
                                     Value p0, Value p1, Value kc) {
  assert(!(g.epilogue && g.finish) && "GEMM 1 has the epilogue, 2 finishes");
  loop(idx(0), g.k, kc, [&](Value k0) {
    Value kLen = arith::MinSIOp::create(
        b, loc, kc, arith::SubIOp::create(b, loc, g.k, k0));
    loop(p0, p1, idx(1), [&](Value panel) {
      forEachTile(
          i0, end,
          [&](Value row, int64_t h) {
            Value offset = arith::SubIOp::create(b, loc, row, i0);
            Value share = arith::SelectOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      offset, idx(0)),
                idx(0), idx(1));
            if (!l.prefetch) {
              kBlockTile(g, i0, row, h, p0, p1, panel, k0, kLen,
                         /*share=*/Value());
              return;
            }
            if (h != l.mr) {
              // A shorter tile is the block's last: the second tile, or one
              // whose prefetches find the next K block already on its way.
              kBlockTile(g, i0, row, h, p0, p1, panel, k0, kLen, share);
              return;
            }
            // Full-height tiles: the first two prefetch, the later ones get
            // a K loop without prefetches (as in the whole-K schedule).
            Value prefetching =
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                      offset, idx(2 * l.mr));
            auto ifOp = scf::IfOp::create(b, loc, prefetching,
                                          /*withElseRegion=*/true);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(ifOp.thenBlock());
            kBlockTile(g, i0, row, h, p0, p1, panel, k0, kLen, share);
            b.setInsertionPointToStart(ifOp.elseBlock());
            kBlockTile(g, i0, row, h, p0, p1, panel, k0, kLen,
                       /*share=*/Value());
          },
          /*after=*/nullptr);
    });
  });

  // The block's finished rows, panel by panel, as the whole-K tiles'
  // epilogue or finish would take them from the tile buffers: through the
  // epilogue (none for GEMM 2: as they are) into C, or finished into y.
  Value rows = arith::SubIOp::create(b, loc, end, i0);
  loop(p0, p1, idx(1), [&](Value panel) {
    SmallVector<OpFoldResult> offsets{b.getIndexAttr(0),
                                      groupColumn(g, p0, panel)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(l.mc),
                                    b.getIndexAttr(g.nr)};
    SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
    SmallVector<Value> sums;
    for (Value buffer : kBlockBuffers)
      sums.push_back(memref::SubViewOp::create(b, loc, buffer, offsets, sizes,
                                               strides));
    if (!g.finish)
      return epilogueRows(g, i0, rows, panel, sums);
    auto ifOp = scf::IfOp::create(b, loc, g.finish, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    finishRows(g, i0, rows, panel, sums[0]);
    b.setInsertionPointToStart(ifOp.elseBlock());
    epilogueRows(g, i0, rows, panel, sums);
  });
}
