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
// The block's last rows, fewer than mr, take short tiles, whose few
// accumulators (a dependency chain each) leave the dot product waiting on
// its latency: a one-row bf16 tile of one panel cost half a full tile. So
// a short tile spans several panels of the group (tailSpan: up to a full
// tile's accumulators), taken after the last of them in the panel loop,
// where the full tiles' prefetches keep the weight stream going. Each
// output element still sums its k in ascending order in one accumulator:
// the bits are those of whole K.
//
//===----------------------------------------------------------------------===//

#include "PanelGemm.h"

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>

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

int64_t PanelGemmBuilder::tailSpan(int64_t h, int64_t np) const {
  // A tile's accumulators are h rows x the span's panels: one dependency
  // chain each. A full tile has enough to keep the dot product's pipes
  // busy; a 1-row tile of one panel (2 chains) waits on the latency for
  // every k -- LLaMA-shaped bf16 (d_model 4096, d_ff 14336) on Zen 5, one
  // thread: M = 65 cost 3.1 ms more than M = 64, half a full tile's 5.8.
  int64_t span = 1;
  while (2 * span <= std::min(l.groupPanels, np) && 2 * span * h <= l.mr)
    span *= 2;
  return span;
}

void PanelGemmBuilder::kBlockTile(const PanelGemm &g, Value i0, Value row0,
                                  int64_t rows, Value p0, Value p1,
                                  Value panel, Value k0, Value kLen,
                                  Value share, int64_t span) {
  int64_t nv = g.nr / l.lanes;
  int64_t nmat = g.panels.size();
  // A tile over `span` panels contracts each matrix's panels panel, panel
  // + 1, ... as matrices of their own: views of the panels from panel + j,
  // matrix q = j nmat + mat.
  PanelGemm wide = g;
  if (span > 1) {
    wide.panels.clear();
    for (int64_t j = 0; j < span; ++j)
      for (Value panels : g.panels) {
        if (j == 0) {
          wide.panels.push_back(panels);
          continue;
        }
        auto type = cast<MemRefType>(panels.getType());
        SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
            sizes, strides(type.getRank(), b.getIndexAttr(1));
        offsets[0] = b.getIndexAttr(j);
        for (int64_t d = 0; d < type.getRank(); ++d)
          sizes.push_back(b.getIndexAttr(type.getDimSize(d) - (d ? 0 : j)));
        wide.panels.push_back(memref::SubViewOp::create(
            b, loc, panels, offsets, sizes, strides));
      }
  }
  SmallVector<Value> acc;
  for (int64_t q = 0; q < nmat * span; ++q)
    acc.push_back(registerTile(q, rows, g.nr));
  Value blockRow = arith::SubIOp::create(b, loc, row0, i0);
  SmallVector<Value> columns;
  for (int64_t j = 0; j < span; ++j)
    columns.push_back(groupColumn(
        g, p0, j ? arith::AddIOp::create(b, loc, panel, idx(j)) : panel));

  // The tile's partial sums: zero before the first K block, else where the
  // last K block left them. (Only the fused schedule's chunked GEMM 2
  // accumulates into C, and it reads K whole: blocksK.)
  assert(!g.accumulate && "accumulating GEMMs read chunks, not K blocks");
  auto copy = [&](bool toBlock) {
    for (int64_t q = 0; q < nmat * span; ++q)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t v = 0; v < nv; ++v) {
          SmallVector<Value> inAcc{idx(r), idx(v * l.lanes)};
          SmallVector<Value> inBlock{
              arith::AddIOp::create(b, loc, blockRow, idx(r)),
              arith::AddIOp::create(b, loc, columns[q / nmat],
                                    idx(v * l.lanes))};
          Value buffer = kBlockBuffers[q % nmat];
          Value from = toBlock ? acc[q] : buffer;
          Value to = toBlock ? buffer : acc[q];
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
                      SmallVector<Value>(nmat * span * rows * nv,
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
    assert(span == 1 && "spanning tiles prefetch nothing");
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
  contractTile(wide, acc, row0, rows, panel, /*streams=*/Value(),
               /*chunk=*/Value(), /*aCol=*/k0, kLen);
  kBlockRow = kBlockAhead = Value();
  copy(/*toBlock=*/true);
}

void PanelGemmBuilder::tailTiles(const PanelGemm &g, Value i0, Value row0,
                                 Value end, Value p0, Value p1, Value panel,
                                 Value k0, Value kLen, Value oneFull) {
  // Between the full tiles of the panels, not after all of them: the
  // span's K blocks were just read (in L1 or L2), and the full tiles'
  // prefetches go on streaming the weights around the short tiles, which
  // prefetch nothing themselves.
  Value at = arith::SubIOp::create(b, loc, panel, p0);
  forEachTile(
      row0, end,
      [&](Value row, int64_t h) {
        auto type = cast<MemRefType>(g.panels.front().getType());
        int64_t span = tailSpan(h, type.getDimSize(type.getRank() - 3));
        auto alone = [&](Value share) {
          kBlockTile(g, i0, row, h, p0, p1, panel, k0, kLen, share);
        };
        // Without a one-full-tile block's prefetch: this panel alone, or
        // the group in spans of `span` panels, each taken after its last
        // panel's full tiles, the panels past the last whole span one by
        // one.
        std::function<void()> rest = [&] { alone(Value()); };
        if (span > 1) {
          Value spans = arith::DivUIOp::create(
              b, loc, arith::SubIOp::create(b, loc, p1, p0), idx(span));
          Value wideEnd = arith::AddIOp::create(
              b, loc, p0, arith::MulIOp::create(b, loc, spans, idx(span)));
          Value inSpans = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, panel, wideEnd);
          Value ends = arith::AndIOp::create(
              b, loc, inSpans,
              arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::eq,
                  arith::RemUIOp::create(
                      b, loc, arith::AddIOp::create(b, loc, at, idx(1)),
                      idx(span)),
                  idx(0)));
          rest = [&, inSpans, ends] {
            auto wide =
                scf::IfOp::create(b, loc, ends, /*withElseRegion=*/true);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(wide.thenBlock());
            kBlockTile(g, i0, row, h, p0, p1,
                       arith::SubIOp::create(b, loc, panel, idx(span - 1)),
                       k0, kLen, /*share=*/Value(), span);
            b.setInsertionPointToStart(wide.elseBlock());
            auto single = scf::IfOp::create(b, loc, inSpans,
                                            /*withElseRegion=*/true);
            b.setInsertionPointToStart(single.elseBlock());
            alone(Value());
          };
        }
        if (!l.prefetch)
          return rest();
        auto ifOne = scf::IfOp::create(b, loc, oneFull,
                                       /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOne.thenBlock());
        alone(idx(1));
        b.setInsertionPointToStart(ifOne.elseBlock());
        rest();
      },
      /*after=*/nullptr, /*tallest=*/l.mr / 2);
}

void PanelGemmBuilder::kBlockedGroup(const PanelGemm &g, Value i0, Value end,
                                     Value p0, Value p1, Value kc) {
  assert(!(g.epilogue && g.finish) && "GEMM 1 has the epilogue, 2 finishes");
  // The block's full-height tiles [i0, fullEnd) run panel by panel; its
  // last rows (fewer than mr) in short tiles that span several panels
  // each (tailSpan, tailTiles).
  Value mr = idx(l.mr);
  Value rows = arith::SubIOp::create(b, loc, end, i0);
  Value fullEnd = arith::AddIOp::create(
      b, loc, i0,
      arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, rows, mr),
                            mr));
  // A block of one full tile (mr < rows < 2 mr) runs its tail tiles as
  // before, one panel each, the second prefetching half of the group's
  // next reads: a 2-panel tail and the full tile prefetching all of them
  // took 15.1 ms instead of 12.7 (LLaMA-shaped bf16, M = 12, Zen 5).
  Value oneFull = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                        rows, idx(2 * l.mr));
  loop(idx(0), g.k, kc, [&](Value k0) {
    Value kLen = arith::MinSIOp::create(
        b, loc, kc, arith::SubIOp::create(b, loc, g.k, k0));
    loop(p0, p1, idx(1), [&](Value panel) {
      loop(i0, fullEnd, mr, [&](Value row) {
        if (!l.prefetch) {
          kBlockTile(g, i0, row, l.mr, p0, p1, panel, k0, kLen,
                     /*share=*/Value());
          return;
        }
        // The first two tiles prefetch, the later ones get a K loop
        // without prefetches (as in the whole-K schedule).
        Value offset = arith::SubIOp::create(b, loc, row, i0);
        Value share = arith::SelectOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, offset,
                                  idx(0)),
            idx(0), idx(1));
        Value prefetching = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, offset, idx(2 * l.mr));
        auto ifOp =
            scf::IfOp::create(b, loc, prefetching, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        kBlockTile(g, i0, row, l.mr, p0, p1, panel, k0, kLen, share);
        b.setInsertionPointToStart(ifOp.elseBlock());
        kBlockTile(g, i0, row, l.mr, p0, p1, panel, k0, kLen,
                   /*share=*/Value());
      });
      if (l.mr > 1)
        tailTiles(g, i0, fullEnd, end, p0, p1, panel, k0, kLen, oneFull);
    });
  });

  // The block's finished rows, panel by panel, as the whole-K tiles'
  // epilogue or finish would take them from the tile buffers: through the
  // epilogue (none for GEMM 2: as they are) into C, or finished into y.
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
