//===- PanelGemm.cpp - a GEMM over packed weight panels -------------------===//
//
// The block, panel and tile loops of a panel GEMM and what follows a tile:
// its epilogue row by row, or the FFN output's finish. The tile's K loop is
// in RegisterTile.cpp.
//
//===----------------------------------------------------------------------===//

#include "PanelGemm.h"

#include "ffn/Target/CPU/CostModel.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ffn::cpu;

void PanelGemmBuilder::allocTileBuffers(int64_t matrices, int64_t nr) {
  gemmEntry = b.getInsertionBlock();
  registerTiles.clear();
  tileBuffers.clear();
  kBlockBuffers.clear();
  for (int64_t mat = 0; mat < matrices; ++mat) {
    tileBuffers.push_back(stackBuffer(l.mr, nr));
    // checkStrategy bounds mc x nc (all matrices), so this stays a small
    // stack frame.
    if (l.kc > 0 || l.kcTall > 0)
      kBlockBuffers.push_back(stackBuffer(l.mc, nr * l.groupPanels));
  }
}

std::pair<Value, Value> PanelGemmBuilder::tileColumns(const PanelGemm &g,
                                                      Value panel) {
  Value col = arith::MulIOp::create(b, loc, panel, idx(g.nr));
  Value storeCol =
      g.colBase ? arith::SubIOp::create(b, loc, col, g.colBase) : col;
  return {col, storeCol};
}

void PanelGemmBuilder::epilogueRows(const PanelGemm &g, Value row0, Value rows,
                                    Value panel, ArrayRef<Value> from) {
  int64_t nv = g.nr / l.lanes;
  int64_t nmat = g.panels.size();
  auto [col, storeCol] = tileColumns(g, panel);
  auto rowLoop = scf::ForOp::create(b, loc, idx(0), rows, idx(1));
  rowLoop->setAttr("llvm.loop_annotation", noUnroll());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(rowLoop.getBody());
  Value r = rowLoop.getInductionVar();
  SmallVector<SmallVector<Value>> rowAcc(nmat);
  for (int64_t mat = 0; mat < nmat; ++mat)
    for (int64_t v = 0; v < nv; ++v)
      rowAcc[mat].push_back(vector::LoadOp::create(
          b, loc, vecF32, from[mat], ValueRange{r, idx(v * l.lanes)}));
  // Without an epilogue (a plain GEMM 2 into O) the sums go as they are.
  SmallVector<Value> out = g.epilogue ? g.epilogue(rowAcc, col) : rowAcc[0];
  Value row = arith::AddIOp::create(b, loc, row0, r);
  // H in bf16 for pair tiles: the next GEMM's operand.
  Type cType = cast<MemRefType>(g.c.getType()).getElementType();
  for (int64_t v = 0; v < nv; ++v) {
    Value c = arith::AddIOp::create(b, loc, storeCol, idx(v * l.lanes));
    Value vec = out[v];
    if (cType != f32)
      vec = arith::TruncFOp::create(b, loc, VectorType::get({l.lanes}, cType),
                                    vec);
    vector::StoreOp::create(b, loc, vec, g.c, ValueRange{row, c});
  }

}

void PanelGemmBuilder::finishRows(const PanelGemm &g, Value row0, Value rows,
                                  Value panel, Value from) {
  int64_t nv = g.nr / l.lanes;
  Value col = arith::MulIOp::create(b, loc, panel, idx(g.nr));
  auto rowLoop = scf::ForOp::create(b, loc, idx(0), rows, idx(1));
  rowLoop->setAttr("llvm.loop_annotation", noUnroll());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(rowLoop.getBody());
  Value r = rowLoop.getInductionVar();
  Value row = arith::AddIOp::create(b, loc, row0, r);
  // Panels are padded to nr columns; y, x and b_down have d. A vector that
  // would cross d finishes its real elements one by one (masked bf16/f16
  // vector memory ops become libcalls on x86).
  bool ragged = l.d % g.nr != 0;
  auto yColumn = [&](Value c) -> Value {
    if (!g.yColBase)
      return c;
    return arith::AddIOp::create(b, loc, c, g.yColBase);
  };
  for (int64_t v = 0; v < nv; ++v) {
    Value c = arith::AddIOp::create(b, loc, col, idx(v * l.lanes));
    auto vectorPath = [&] {
      Value yc = yColumn(c);
      Value acc = vector::LoadOp::create(b, loc, vecF32, from,
                                         ValueRange{r, idx(v * l.lanes)});
      if (g.bias)
        acc = arith::AddFOp::create(
            b, loc, acc,
            toF32(vector::LoadOp::create(b, loc, vecStorage, g.bias,
                                         ValueRange{c})));
      if (g.residual)
        acc = arith::AddFOp::create(
            b, loc, acc,
            toF32(vector::LoadOp::create(b, loc, vecStorage, g.residual,
                                         ValueRange{row, yc})));
      Value out =
          storage.isF32()
              ? acc
              : arith::TruncFOp::create(b, loc, vecStorage, acc).getResult();
      vector::StoreOp::create(b, loc, out, g.y, ValueRange{row, yc});
    };
    if (!ragged) {
      vectorPath();
      continue;
    }
    Value fits = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sle,
        arith::AddIOp::create(b, loc, c, idx(l.lanes)), idx(l.d));
    auto ifOp = scf::IfOp::create(b, loc, fits, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard branchGuard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    vectorPath();
    b.setInsertionPointToStart(ifOp.elseBlock());
    loop(c, idx(l.d), idx(1), [&](Value j) {
      Value lane = arith::AddIOp::create(b, loc, idx(v * l.lanes),
                                         arith::SubIOp::create(b, loc, j, c));
      Value acc = memref::LoadOp::create(b, loc, from, ValueRange{r, lane});
      if (g.bias)
        acc = arith::AddFOp::create(
            b, loc, acc,
            toF32(memref::LoadOp::create(b, loc, g.bias, ValueRange{j})));
      Value yj = yColumn(j);
      if (g.residual)
        acc = arith::AddFOp::create(
            b, loc, acc,
            toF32(memref::LoadOp::create(b, loc, g.residual,
                                         ValueRange{row, yj})));
      memref::StoreOp::create(b, loc, toStorage(acc), g.y, ValueRange{row, yj});
    });
  }
}

void PanelGemmBuilder::forEachTile(
    Value i0, Value end, function_ref<void(Value row, int64_t h)> tileOf,
    function_ref<void(Value row, Value rows)> after, int64_t tallest) {
  // Tile heights, tallest first: mr, then mr/2, mr/4, ... down to 2, then
  // 1. Each step takes the tallest that fits what is left of the block:
  // M = 12 with 8-row tiles is 8 + 4, not 8 + 1 + 1 + 1 + 1 (measured 1.6
  // -> 1.0 ms for BERT-base), and M = 2 one 2-row tile that reads the
  // weight panel once, not two one-row tiles that read it twice.
  if (tallest == 0)
    tallest = l.mr;
  SmallVector<int64_t> heights = {tallest};
  for (int64_t h = tallest / 2; h >= 2; h /= 2)
    heights.push_back(h);
  if (heights.back() != 1)
    heights.push_back(1);
  Type index = b.getIndexType();
  auto tiles = scf::WhileOp::create(b, loc, TypeRange{index}, ValueRange{i0});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&tiles.getBefore(), {}, {index}, {loc});
  Value row = before->getArgument(0);
  Value more =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, end);
  scf::ConditionOp::create(b, loc, more, ValueRange{row});
  Block *afterBlock = b.createBlock(&tiles.getAfter(), {}, {index}, {loc});
  row = afterBlock->getArgument(0);
  Value left = arith::SubIOp::create(b, loc, end, row);
  Value rows = idx(1);
  for (int64_t h : llvm::reverse(ArrayRef(heights).drop_back())) {
    Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       left, idx(h));
    rows = arith::SelectOp::create(b, loc, fits, idx(h), rows);
  }
  SmallVector<int64_t> cases(ArrayRef(heights).drop_back());
  auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange{}, rows, cases,
                                             cases.size());
  for (auto [region, h] : llvm::zip(dispatch.getCaseRegions(), cases)) {
    OpBuilder::InsertionGuard caseGuard(b);
    b.createBlock(&region);
    tileOf(row, h);
    scf::YieldOp::create(b, loc);
  }
  {
    OpBuilder::InsertionGuard caseGuard(b);
    b.createBlock(&dispatch.getDefaultRegion());
    tileOf(row, 1);
    scf::YieldOp::create(b, loc);
  }
  if (after)
    after(row, rows);
  scf::YieldOp::create(b, loc,
                       ValueRange{arith::AddIOp::create(b, loc, row, rows)});
}

void PanelGemmBuilder::gemm(const PanelGemm &g, Value m, Value panelBegin,
                            Value panelEnd) {
  Value mc = idx(l.mc), one = idx(1);
  loop(idx(0), m, mc, [&](Value i0) {
    Value end = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, i0, mc), m);
    // The weight panel outside the row tiles: it stays in cache while the
    // block's rows stream past it.
    auto wholeK = [&](Value panel) {
      forEachTile(
          i0, end,
          [&](Value row, int64_t h) {
            // The block's first tile streams the panel from memory and
            // prefetches ahead of itself; the later ones find it in cache.
            Value streams = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq, row, i0);
            if (!l.prefetch || h != l.mr || h == 1) {
              tile(g, row, h, panel, streams);
              return;
            }
            // Two versions of the full-height tile, the common one: the
            // block's first tile prefetches ahead, the later ones have no
            // prefetch at all. Prefetching their own (cached) row cost
            // about 3% in a compute-bound GEMM (Transformer-base M =
            // 2048, two threads; docs/bench-cpu-2026-11-29-prefetch-all.txt).
            auto first =
                scf::IfOp::create(b, loc, streams, /*withElseRegion=*/true);
            OpBuilder::InsertionGuard ifGuard(b);
            b.setInsertionPointToStart(first.thenBlock());
            tile(g, row, h, panel,
                 arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
            b.setInsertionPointToStart(first.elseBlock());
            tile(g, row, h, panel, /*streams=*/Value());
          },
          [&](Value row, Value rows) {
            if (g.epilogue)
              epilogueRows(g, row, rows, panel, tileBuffers);
            if (g.finish) {
              auto ifOp = scf::IfOp::create(b, loc, g.finish,
                                            /*withElseRegion=*/false);
              OpBuilder::InsertionGuard finishGuard(b);
              b.setInsertionPointToStart(ifOp.thenBlock());
              finishRows(g, row, rows, panel, tileBuffers[0]);
            }
          });
    };
    if (!blocksK(g)) {
      loop(panelBegin, panelEnd, one, wholeK);
      return;
    }
    // K blocks pay off where a panel is read by a few tiles (the weights
    // then stream while all of them compute), and, with longer blocks,
    // where a tall block's whole-K panel would not stay in L2 beside its A
    // rows. A block of at most mr rows (decode) keeps its one K loop.
    Value np = idx(l.groupPanels);
    loop(panelBegin, panelEnd, np, [&](Value p0) {
      Value p1 = arith::MinSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, p0, np), panelEnd);
      // Blocks of 2 to kKBlockMaxTiles tiles take kc, taller ones kc_tall
      // (0: whole K).
      Value rows = arith::SubIOp::create(b, loc, end, i0);
      Value tall = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                         rows, idx(kKBlockMaxTiles * l.mr));
      Value kc = arith::SelectOp::create(b, loc, tall, idx(l.kcTall),
                                         idx(l.kc));
      Value blocked = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, rows,
                                idx(l.mr)),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, kc,
                                idx(0)));
      auto ifOp = scf::IfOp::create(b, loc, blocked, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      kBlockedGroup(g, i0, end, p0, p1, kc);
      b.setInsertionPointToStart(ifOp.elseBlock());
      loop(p0, p1, one, wholeK);
    });
  });
}
