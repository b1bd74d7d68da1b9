//===- GemmPostNorm.cpp - a post-norm fused into GEMM 2 ------------------===//
//
// A post-norm needs the whole output row, which no GEMM 2 tile holds: the
// row band's tiles finish at different times on different SMs. Where the
// band is small (the decode tiles of a narrow model, GemmConfig::postNorm),
// the block that finishes the band's last tile normalizes it in the same
// launch instead of a norm kernel after it: each block, once its tile's
// final f32 z is stored, counts itself on its band's counter (after the
// tiles' counters), and the block that brings the count to the band's tile
// count (grid.y) normalizes the band's rows from z into the output, a warp
// a row.
//
// The counting is the split-K fix-up's (ifLastToArrive, GemmFixup.cpp):
// every thread fences at GPU scope after its z stores, the barrier orders
// them before thread 0's atomic, and the last block fences again before it
// reads z. The norm is
// the norm kernel's formula; its sums run over a warp's lanes instead of a
// block's threads (another rounding of the mean and variance, within the
// reference's bound like the kernel's).
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::ffn::gpu_target;
using mlir::ffn::gpu_target::detail::GemmBuilder;

void GemmBuilder::finishBand(Value z, Value counts) {
  assert(c.postNorm && !c.tma && "every warp of the block normalizes rows");
  Value gridX = gpu::GridDimOp::create(b, gpu::Dimension::x);
  Value gridY = gpu::GridDimOp::create(b, gpu::Dimension::y);
  // The band counters follow the tiles'; a band has grid.y tiles. The flag
  // sits past the fix-up's (apart is simpler to reason about).
  Value band = ir.add(ir.mul(gridX, gridY), ir.blockId(gpu::Dimension::x));
  Value tilesPerBand = arith::IndexCastOp::create(b, b.getI32Type(), gridY);
  ifLastToArrive(band, tilesPerBand, /*flagOffset=*/16, counts, [&] {
    // A warp a row (rows of at most kFusedNormBandElements / bm columns):
    // no block barriers inside the loop, and no shared scratch.
    int64_t dm = c.outStride, warps = c.threads() / 32;
    Value n = ir.f32(static_cast<double>(dm));
    Value rowEnd = ir.min(ir.add(row0, c.bm), m);
    ir.loop(ir.add(row0, warp), rowEnd, warps, [&](Value row) {
      Value base = ir.mul(row, dm);
      auto zAt = [&](Value col) { return ir.load(z, {ir.add(base, col)}); };
      auto rowSum = [&](function_ref<Value(Value)> term) {
        Value s = ir.loop(lane, ir.idx(dm), 32, {ir.f32(0)},
                          [&](Value col, ValueRange acc) -> SmallVector<Value> {
                            return {ir.addf(acc[0], term(col))};
                          })[0];
        return ir.warpSum(s);
      };
      // LayerNorm: the variance of the deviations (two passes, no
      // cancellation); RMSNorm: the mean of squares.
      Value mean = ir.f32(0);
      if (*c.postNorm == NormKind::layernorm)
        mean = ir.divf(rowSum(zAt), n);
      Value var = ir.divf(rowSum([&](Value col) {
                            Value d = ir.subf(zAt(col), mean);
                            return ir.mulf(d, d);
                          }),
                          n);
      Value rstd = math::RsqrtOp::create(b, ir.addf(var, ir.f32(c.normEps)));
      ir.loop(lane, ir.idx(dm), 32, [&](Value col) {
        Value v = ir.mulf(ir.mulf(ir.subf(zAt(col), mean), rstd),
                          ir.toF32(ir.load(normScale, {col})));
        if (normShift)
          v = ir.addf(v, ir.toF32(ir.load(normShift, {col})));
        ir.store(ir.fromF32(v, c.storage), normOut, {ir.add(base, col)});
      });
    });
  });
}
