//===- RegisterTile.cpp - one register tile of a panel GEMM ---------------===//
//
// The K loop of one tile: its accumulators zeroed (or loaded from C), the
// contraction over the panel, and the accumulators stored where they go
// next. The contraction is a linalg.generic that TilingInterface tiles along
// k into the loop that carries the accumulators; ffn-vectorize-register-tiles
// turns it into one broadcast of A per row and one FMA per accumulator
// vector per k.
//
//===----------------------------------------------------------------------===//

#include "PanelGemm.h"

#include "ffn/Target/CPU/Passes.h"
#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::cpu;

Value PanelGemmBuilder::registerTile(int64_t mat, int64_t rows, int64_t nr) {
  if (rows == l.mr)
    return tileBuffers[mat];
  Value &buffer = registerTiles[{mat, rows}];
  if (!buffer) {
    // In the entry block: an alloca inside the loops would grow the
    // stack on every iteration.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(gemmEntry);
    buffer = stackBuffer(rows, nr);
  }
  return buffer;
}

SmallVector<Value> PanelGemmBuilder::loadAccumulators(ArrayRef<Value> acc,
                                                      int64_t rows,
                                                      int64_t nv) {
  SmallVector<Value> values;
  for (Value buffer : acc)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < nv; ++v)
        values.push_back(vector::LoadOp::create(
            b, loc, vecF32, buffer, ValueRange{idx(r), idx(v * l.lanes)}));
  return values;
}

void PanelGemmBuilder::storeAccumulators(ArrayRef<Value> acc, int64_t rows,
                                         int64_t nv, ValueRange values) {
  auto value = values.begin();
  for (Value buffer : acc)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < nv; ++v)
        vector::StoreOp::create(b, loc, *value++, buffer,
                                ValueRange{idx(r), idx(v * l.lanes)});
}

void PanelGemmBuilder::prefetchPanelRow(const PanelGemm &g, int64_t rows,
                                        Value chunk, Value panel,
                                        Value streams, Value row) {
  // Software prefetch kPrefetchBytesAhead down the weight stream, into L1:
  // a panel is contiguous and the next one follows it, so a row past this
  // panel's end is the next panel's. Only the tile that streams the panel
  // from memory (the first of its row block) looks ahead. A later tile of
  // full height gets its own K loop without prefetches (`streams` null,
  // PanelGemmBuilder::gemm); shorter ones touch their own row, in cache. A
  // one-row tile (decode) always prefetches: 2 FMAs per 128 bytes of
  // weights cannot hide the latency even from L3. Emerald Rapids VM,
  // LLaMA-7B f32, one thread, ffnc / oneDNN: prefetching the next panel's
  // row (a whole panel, 256 KiB - 1.4 MiB, ahead into L2) M = 1
  // 0.77-0.90x, M = 16 0.54-0.74x; 2 KiB ahead 0.98-1.03x and 0.99-1.01x
  // (docs/bench-cpu-2026-11-29-prefetch.txt).
  // A K-blocked tile (kBlockTile) prefetches its half of the next K block,
  // a row every other step, whatever it streams; one with no share
  // prefetches nothing (the block's full tiles have just read its K block).
  if (kBlockRow && !kBlockAhead)
    return;
  if ((!l.prefetch || !streams) && rows != 1 && !kBlockAhead)
    return;
  for (Value panels : g.panels) {
    // Panels (and chunks) are contiguous, so the rows of one flat
    // [(chunks x) panels x K, width] view run down the whole stream: the
    // look-ahead costs an add and a clamp (to the last row) per k. (The
    // fused schedule's chunk-major W_down is read chunk after chunk of one
    // panel, not in memory order, so there each chunk's first 2 KiB are
    // not prefetched and 2 KiB of the next panel's chunk are, early.)
    auto type = cast<MemRefType>(panels.getType());
    int64_t rank = type.getRank();
    int64_t width = type.getDimSize(rank - 1);
    int64_t rowBytes = width * type.getElementTypeBitWidth() / 8;
    int64_t ahead = std::max<int64_t>(1, kPrefetchBytesAhead / rowBytes);
    int64_t kRows = type.getDimSize(rank - 2), np = type.getDimSize(rank - 3);
    ReassociationIndices rowDims;
    for (int64_t d = 0; d < rank - 1; ++d)
      rowDims.push_back(d);
    Value flat = memref::CollapseShapeOp::create(
        b, loc, panels,
        ArrayRef<ReassociationIndices>{rowDims, {rank - 1}});
    Value panelRow = arith::MulIOp::create(
        b, loc,
        chunk ? arith::AddIOp::create(
                    b, loc, arith::MulIOp::create(b, loc, chunk, idx(np)),
                    panel)
              : panel,
        idx(kRows));
    Value at;
    if (kBlockAhead) {
      Value half = arith::ShRUIOp::create(b, loc, row, idx(1));
      at = arith::AddIOp::create(
          b, loc, arith::AddIOp::create(b, loc, panelRow, kBlockAhead), half);
    } else {
      // A constant `streams` (the full-height tile's two versions) needs no
      // select.
      Value distance =
          !streams                         ? idx(0)
          : matchPattern(streams, m_One()) ? idx(ahead)
                                           : arith::SelectOp::create(
                                                 b, loc, streams, idx(ahead),
                                                 idx(0))
                                                 .getResult();
      at = arith::AddIOp::create(
          b, loc, arith::AddIOp::create(b, loc, panelRow, row), distance);
    }
    at = arith::MinSIOp::create(
        b, loc, at, idx(cast<MemRefType>(flat.getType()).getDimSize(0) - 1));
    // One prefetch per cache line of the row (an f32 row of 32 columns,
    // an int8-dot row of 4 nr bytes span two or more).
    for (int64_t byte = 0; byte < rowBytes; byte += 64)
      memref::PrefetchOp::create(b, loc, flat,
                                 ValueRange{at, idx(byte * width / rowBytes)},
                                 /*isWrite=*/false, /*localityHint=*/3,
                                 /*isDataCache=*/true);
  }
}

void PanelGemmBuilder::tile(const PanelGemm &g, Value row0, int64_t rows,
                            Value panel, Value streams) {
  int64_t nv = g.nr / l.lanes;
  int64_t nmat = g.panels.size();
  Value storeCol = tileColumns(g, panel).second;
  SmallVector<Value> acc;
  for (int64_t mat = 0; mat < nmat; ++mat)
    acc.push_back(registerTile(mat, rows, g.nr));

  // Copies the accumulators from C's tile (`fromC`) or to where they go
  // next: C, or for the epilogue or finishRows the tile buffer.
  auto copyTile = [&](bool fromC, bool toC) {
    for (int64_t mat = 0; mat < nmat; ++mat) {
      Value from = fromC ? g.c : acc[mat];
      Value to = fromC ? acc[mat] : toC ? g.c : tileBuffers[mat];
      if (from == to)
        continue; // A full-height tile computes in the tile buffer.
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t v = 0; v < nv; ++v) {
          SmallVector<Value> inAcc{idx(r), idx(v * l.lanes)}, inC = inAcc;
          if (fromC || toC)
            inC = {arith::AddIOp::create(b, loc, row0, idx(r)),
                   arith::AddIOp::create(b, loc, storeCol, idx(v * l.lanes))};
          Value vec =
              vector::LoadOp::create(b, loc, vecF32, from, fromC ? inC : inAcc);
          vector::StoreOp::create(b, loc, vec, to, toC ? inC : inAcc);
        }
      }
    }
  };
  auto zeroTile = [&] {
    Value zero = f32Constant(b, loc, vecF32, 0.0);
    for (int64_t mat = 0; mat < nmat; ++mat)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t v = 0; v < nv; ++v)
          vector::StoreOp::create(b, loc, zero, acc[mat],
                                  ValueRange{idx(r), idx(v * l.lanes)});
  };
  if (g.accumulate) {
    assert(nmat == 1 && !g.epilogue && "accumulating GEMMs are plain");
    auto ifOp =
        scf::IfOp::create(b, loc, g.accumulate, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    copyTile(/*fromC=*/true, /*toC=*/false);
    b.setInsertionPointToStart(ifOp.elseBlock());
    zeroTile();
  } else {
    zeroTile();
  }

  if (!g.chunkRows) {
    if (g.kList)
      sparseContract(g, acc, row0, rows, panel, streams, nullptr, idx(0),
                     g.k);
    else
      contractTile(g, acc, row0, rows, panel, streams, nullptr, idx(0), g.k);
  } else {
    // K through chunks of a chunk-major panel: the vectorizer hoists the
    // accumulators out of this loop too, so they stay in registers across
    // the chunks.
    auto outer = scf::ForOp::create(b, loc, g.chunkBegin, g.chunkEnd, idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(outer.getBody());
    Value c = outer.getInductionVar();
    Value k0 = arith::MulIOp::create(b, loc, c, idx(g.chunkRows));
    Value aBase =
        g.aColBase ? arith::SubIOp::create(b, loc, k0, g.aColBase) : k0;
    Value len = arith::MinSIOp::create(
        b, loc, idx(g.chunkRows), arith::SubIOp::create(b, loc, idx(l.f), k0));
    if (g.kList)
      sparseContract(g, acc, row0, rows, panel, streams, c, aBase, len);
    else
      contractTile(g, acc, row0, rows, panel, streams, c, aBase, len);
  }

  // With an epilogue, gemm() runs it from the tile buffer once for every
  // tile shape (one copy of the activation's code per GEMM, not one per
  // tile row: half the code and compile time; the L1 round trip costs a few
  // cycles per row against a K loop of d_model FMAs). Without one the
  // tile goes to C, unless finishRows is to take it from the tile buffer.
  if (!g.finish) {
    copyTile(/*fromC=*/false, /*toC=*/!g.epilogue);
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, g.finish, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  copyTile(/*fromC=*/false, /*toC=*/false);
  b.setInsertionPointToStart(ifOp.elseBlock());
  copyTile(/*fromC=*/false, /*toC=*/true);
}

void PanelGemmBuilder::contractTile(const PanelGemm &g, ArrayRef<Value> acc,
                                    Value row0, int64_t rows, Value panel,
                                    Value streams, Value chunk, Value aCol,
                                    Value kLen) {
  // acc[mat] += A[rows, k] * panel[mat][k, nr], as a linalg contraction
  // over (row, k, column) that TilingInterface tiles into the K loop (k
  // in steps of 1) and ffn-vectorize-register-tiles turns into one
  // broadcast of A per row and one FMA per accumulator vector per k, the
  // accumulators hoisted into registers across the loop. `chunk` (or
  // null): the panel's chunk in a chunk-major layout.
  int64_t nmat = g.panels.size();
  if (l.dot)
    return dotContract(g, acc, row0, rows, panel, streams, chunk, aCol,
                       kLen);
  if (l.intDot) {
    assert(!chunk && "quantized weights take the two-pass schedule");
    return intDotContract(g, acc, row0, rows, panel, streams, kLen);
  }
  if (l.quantBits) {
    assert(!chunk && "quantized weights take the two-pass schedule");
    return quantContract(g, acc, row0, rows, panel, streams, aCol,
                         kLen);
  }
  auto sub = [&](Value src, ArrayRef<OpFoldResult> offsets,
                 ArrayRef<OpFoldResult> sizes, ArrayRef<int64_t> shape) {
    SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
    auto srcType = cast<MemRefType>(src.getType());
    auto type = memref::SubViewOp::inferRankReducedResultType(
        shape, srcType, offsets, sizes, strides);
    return memref::SubViewOp::create(b, loc, cast<MemRefType>(type), src,
                                     offsets, sizes, strides)
        .getResult();
  };
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  Value aView = sub(g.a, {row0, aCol}, {b.getIndexAttr(rows), kLen},
                    {rows, ShapedType::kDynamic});
  SmallVector<Value> inputs{aView};
  for (int64_t mat = 0; mat < nmat; ++mat) {
    SmallVector<OpFoldResult> offsets, sizes;
    if (chunk) {
      offsets.push_back(chunk);
      sizes.push_back(one);
    }
    offsets.append({panel, kBlockRow ? OpFoldResult(kBlockRow) : zero, zero});
    sizes.append({one, kLen, b.getIndexAttr(g.nr)});
    inputs.push_back(
        sub(g.panels[mat], offsets, sizes, {ShapedType::kDynamic, g.nr}));
  }
  MLIRContext *ctx = b.getContext();
  AffineExpr r = getAffineDimExpr(0, ctx), k = getAffineDimExpr(1, ctx),
             n = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> maps{AffineMap::get(3, 0, {r, k}, ctx)};
  maps.append(nmat, AffineMap::get(3, 0, {k, n}, ctx));
  maps.append(nmat, AffineMap::get(3, 0, {r, n}, ctx));
  auto contraction = linalg::GenericOp::create(
      b, loc, TypeRange{}, inputs, acc, maps,
      {utils::IteratorType::parallel, utils::IteratorType::reduction,
       utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> sums;
        for (int64_t mat = 0; mat < nmat; ++mat) {
          Value w = args[1 + mat];
          if (w.getType() != f32)
            w = arith::ExtFOp::create(nb, nl, f32, w);
          Value prod = arith::MulFOp::create(nb, nl, args[0], w);
          sums.push_back(
              arith::AddFOp::create(nb, nl, args[1 + nmat + mat], prod));
        }
        linalg::YieldOp::create(nb, nl, sums);
      });
  // Tile k by 1: the loop that carries the accumulators.
  IRRewriter rewriter(b);
  rewriter.setInsertionPoint(contraction);
  scf::SCFTilingOptions options;
  options.setTileSizes({zero, one, zero});
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(contraction.getOperation()), options);
  assert(succeeded(tiled) && tiled->loops.size() == 1 &&
         "a static-shaped contraction tiles along k");
  rewriter.eraseOp(contraction);
  tiled->tiledOps.front()->setAttr(kRegisterTileAttr, b.getUnitAttr());
  auto loop = cast<scf::ForOp>(tiled->loops.front());
  // The body is already a full register tile of FMAs; unrolling or
  // re-vectorizing the K loop only multiplies code (and compile time).
  loop->setAttr("llvm.loop_annotation", noUnroll());
  b.setInsertionPointToStart(loop.getBody());
  prefetchPanelRow(g, rows, chunk, panel, streams, loop.getInductionVar());
  b.setInsertionPointAfter(loop);
}
