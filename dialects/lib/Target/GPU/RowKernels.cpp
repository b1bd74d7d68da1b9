//===- RowKernels.cpp - norm and split-K reduction kernels ----------------===//
//
// One block of 256 threads per token row; threads stride over the row's
// columns, so reads and writes are coalesced. These kernels move O(m *
// d_model) or O(m * d_ff) bytes against the GEMMs' O(weights): a separate
// launch costs a few microseconds, never the weight stream.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "KernelIR.h"

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::gpu_target;

static constexpr int64_t kRowThreads = 256;

int64_t mlir::ffn::gpu_target::splitKReduceColumns(const GemmConfig &c) {
  if (c.epilogue == Epilogue::Output)
    return c.outStride;
  return c.gated ? c.partialStride / 2 : c.partialStride;
}

static Value scratchBuffer(KernelIR &ir) {
  return ir.sharedArray(ir.b.getF32Type(), kRowThreads / 32, 0);
}

RowNorm mlir::ffn::gpu_target::rowNormStats(KernelIR &ir,
                                            function_ref<Value(Value)> x,
                                            int64_t width, NormKind kind,
                                            double eps) {
  Value scratch = scratchBuffer(ir);
  Value tid = ir.threadId(), end = ir.idx(width);
  Value n = ir.f32(static_cast<double>(width));
  Value mean = ir.f32(0);
  if (kind == NormKind::layernorm) {
    Value s = ir.loop(tid, end, kRowThreads, {ir.f32(0)},
                      [&](Value col, ValueRange acc) -> SmallVector<Value> {
                        return {ir.addf(acc[0], x(col))};
                      })[0];
    mean = ir.divf(ir.blockSum(s, scratch, kRowThreads), n);
  }
  // Two passes for LayerNorm (the variance of deviations, no
  // cancellation); RMSNorm's mean of squares needs one.
  Value sq = ir.loop(tid, end, kRowThreads, {ir.f32(0)},
                     [&](Value col, ValueRange acc) -> SmallVector<Value> {
                       Value d = ir.subf(x(col), mean);
                       return {ir.fma(d, d, acc[0])};
                     })[0];
  Value var = ir.divf(ir.blockSum(sq, scratch, kRowThreads), n);
  return {mean, math::RsqrtOp::create(ir.b, ir.addf(var, ir.f32(eps)))};
}

/// int8 activations: the row's values `value(col)` quantized per group of
/// each piece, handed to `store(col, q)`, and the groups' scales into the
/// f32 table `scales`. One thread per group finds its max |v| (groups are
/// few: a row of 4096 in groups of 128 has 32), the block quantizes the
/// columns, then the groups' entries turn from a into a / 127.
static void quantizeRow(KernelIR &ir, const NormConfig &c,
                        function_ref<Value(Value)> value, Value scales,
                        Value row, function_ref<void(Value, Value)> store) {
  int64_t pieceWidth = c.groupWidth ? c.groupWidth : c.width;
  int64_t pieces = c.width / pieceWidth;
  int64_t perPiece = (pieceWidth + c.quantGroup - 1) / c.quantGroup;
  Value tid = ir.threadId();
  Value tableBase = ir.mul(row, pieces * perPiece);
  // Column col's table entry: piece p, group j of the piece.
  auto entry = [&](Value col) {
    Value p = ir.div(col, pieceWidth), in = ir.rem(col, pieceWidth);
    return ir.add(tableBase,
                  ir.add(ir.mul(p, perPiece), ir.div(in, c.quantGroup)));
  };
  ir.loop(tid, ir.idx(pieces * perPiece), kRowThreads, [&](Value j) {
    Value p = ir.div(j, perPiece), g = ir.rem(j, perPiece);
    Value first = ir.add(ir.mul(p, pieceWidth), ir.mul(g, c.quantGroup));
    Value last =
        ir.min(ir.add(first, c.quantGroup), ir.mul(ir.add(p, 1), pieceWidth));
    Value amax = ir.loop(first, last, 1, {ir.f32(0)},
                         [&](Value col, ValueRange acc) -> SmallVector<Value> {
                           Value v = math::AbsFOp::create(ir.b, value(col));
                           return {arith::MaximumFOp::create(ir.b, acc[0], v)};
                         })[0];
    ir.store(amax, scales, {ir.add(tableBase, j)});
  });
  ir.barrier();
  ir.loop(tid, ir.idx(c.width), kRowThreads, [&](Value col) {
    // The CPU's formula (InputQuant.cpp): an all-zero group (a = 0)
    // quantizes to zeros with scale 0; maxnum/minnum clamp a NaN to -127
    // (its group's scale is then NaN, and so are the row's outputs).
    Value a = ir.load(scales, {entry(col)});
    Value zero =
        arith::CmpFOp::create(ir.b, arith::CmpFPredicate::OEQ, a, ir.f32(0));
    Value inv = ir.select(zero, ir.f32(0), ir.divf(ir.f32(127), a));
    Value q = math::RoundEvenOp::create(ir.b, ir.mulf(value(col), inv));
    q = arith::MinNumFOp::create(
        ir.b, arith::MaxNumFOp::create(ir.b, q, ir.f32(-127)), ir.f32(127));
    if (c.dequantize)
      q = ir.mulf(q, ir.divf(a, ir.f32(127)));
    store(col, q);
  });
  ir.barrier();
  ir.loop(tid, ir.idx(pieces * perPiece), kRowThreads, [&](Value j) {
    Value at = ir.add(tableBase, j);
    ir.store(ir.divf(ir.load(scales, {at}), ir.f32(127)), scales, {at});
  });
}

void mlir::ffn::gpu_target::buildNormKernel(OpBuilder &builder,
                                            gpu::GPUModuleOp module,
                                            const NormConfig &c,
                                            ArrayRef<KernelArg> args) {
  KernelBody body(builder, module, c.name, args, kRowThreads);
  KernelIR &ir = body.ir;
  auto a = body.func.getArguments();
  unsigned i = 0;
  Value in = a[i++], out = a[i++], scale, shift, scales;
  if (c.apply) {
    scale = a[i++];
    if (c.shift)
      shift = a[i++];
  }
  if (c.quantGroup)
    scales = a[i++];
  Value row = ir.blockId(gpu::Dimension::x);
  Value tid = ir.threadId();
  Value inBase = ir.mul(row, c.inPadded ? c.outStride : c.width),
        outBase = ir.mul(row, c.outStride);
  // The output row is `pieces` pieces of pieceWidth columns, each padded to
  // pieceStride (one piece unless grouped).
  int64_t pieceWidth = c.groupWidth ? c.groupWidth : c.width;
  int64_t pieceStride = c.groupWidth ? c.groupStride : c.outStride;
  int64_t pieces = c.width / pieceWidth;
  int64_t padPerPiece = pieceStride - pieceWidth;
  auto place = [&](Value col) -> Value {
    if (!c.groupWidth)
      return col;
    return ir.add(ir.mul(ir.div(col, pieceWidth), pieceStride),
                  ir.rem(col, pieceWidth));
  };
  Value width = ir.idx(c.width);
  auto x = [&](Value col) {
    Value at = c.inPadded ? place(col) : col;
    return ir.toF32(ir.load(in, {ir.add(inBase, at)}));
  };
  Value mean = ir.f32(0), rstd = ir.f32(1);
  if (c.apply) {
    RowNorm stats = rowNormStats(ir, x, c.width, c.kind, c.eps);
    mean = stats.mean;
    rstd = stats.rstd;
  }
  auto value = [&](Value col) {
    Value v = x(col);
    if (c.apply) {
      v = ir.mulf(ir.mulf(ir.subf(v, mean), rstd),
                  ir.toF32(ir.load(scale, {col})));
      if (c.shift)
        v = ir.addf(v, ir.toF32(ir.load(shift, {col})));
    }
    return v;
  };
  if (!c.quantGroup) {
    ir.loop(tid, width, kRowThreads, [&](Value col) {
      ir.store(ir.fromF32(value(col), c.outType), out,
               {ir.add(outBase, place(col))});
    });
  } else {
    quantizeRow(ir, c, value, scales, row, [&](Value col, Value q) {
      ir.store(ir.fromF32(q, c.outType), out, {ir.add(outBase, place(col))});
    });
  }
  // Padding columns read as zeros by the GEMM that follows: after the row,
  // or after each block's columns.
  if (padPerPiece == 0)
    return;
  Value zero = ir.fromF32(ir.f32(0), c.outType);
  ir.loop(tid, ir.idx(pieces * padPerPiece), kRowThreads, [&](Value j) {
    Value at = ir.add(j, pieceWidth);
    if (pieces > 1)
      at = ir.add(ir.mul(ir.div(j, padPerPiece), pieceStride),
                  ir.add(ir.rem(j, padPerPiece), pieceWidth));
    ir.store(zero, out, {ir.add(outBase, at)});
  });
}

Value mlir::ffn::gpu_target::maskPaddedHidden(KernelIR &ir,
                                              const GemmConfig &c,
                                              Value inBlockColumn, Value v) {
  if (!c.hValid)
    return v;
  return ir.select(ir.lt(inBlockColumn, ir.idx(c.hValid)), v, ir.f32(0));
}

SplitKColumn mlir::ffn::gpu_target::splitKColumn(KernelIR &ir,
                                                 const GemmConfig &c,
                                                 const SplitKBuffers &buf,
                                                 Value m, Value row,
                                                 Value col) {
  ImplicitLocOpBuilder &b = ir.b;
  // Sum of the K slices of packed column n, in slice order (deterministic).
  auto sum = [&](Value n) {
    Value s = ir.f32(0);
    for (int64_t z = 0; z < c.splitK; ++z) {
      Value idx =
          ir.add(ir.mul(ir.add(ir.mul(ir.idx(z), m), row), c.partialStride), n);
      s = ir.addf(s, ir.load(buf.partial, {idx}));
    }
    return s;
  };
  if (c.epilogue == Epilogue::Output) {
    Value outIdx = ir.add(ir.mul(row, c.outStride), col);
    // A grouped FFN's output column is column n of block g, whose
    // partials follow the earlier blocks' padded columns.
    Value partialCol = col, biasIdx = col;
    if (c.groups > 1) {
      Value g = ir.div(col, c.nOut), n = ir.rem(col, c.nOut);
      partialCol = ir.add(ir.mul(g, c.colBlocks * c.bn), n);
      biasIdx = ir.add(ir.mul(g, c.biasGroupStride), n);
    }
    Value y = sum(partialCol);
    if (c.hasBias)
      y = ir.addf(y, ir.toF32(ir.load(buf.bias, {biasIdx})));
    if (c.residual)
      y = ir.addf(y, ir.toF32(ir.load(buf.resid, {outIdx})));
    return {ir.fromF32(y, c.outType), outIdx};
  }
  // Hidden: a grouped FFN's blocks are padded to whole tiles in h, its
  // packed biases and the partials alike (outGroupStride ==
  // biasGroupStride == the block's padded width), so column col is the
  // same place in each.
  Value outIdx = ir.add(ir.mul(row, c.nOut), col);
  // Padded hidden columns store 0 (GemmConfig::hValid).
  auto real = [&](Value v) {
    Value inBlock =
        c.hValid && c.outGroupStride ? ir.rem(col, c.outGroupStride) : col;
    return maskPaddedHidden(ir, c, inBlock, v);
  };
  if (!c.gated) {
    Value v = sum(col);
    if (c.hasBias)
      v = ir.addf(v, ir.toF32(ir.load(buf.bias, {col})));
    v = real(buildGpuActivation(b, c.activation, v));
    return {ir.fromF32(v, c.outType), outIdx};
  }
  // Column col's gate and up sit in packed rows 16j + i and 16j + 8 + i.
  Value gRow = ir.add(ir.mul(ir.div(col, 8), 16), ir.rem(col, 8));
  Value g = sum(gRow), u = sum(ir.add(gRow, 8));
  if (c.hasBiasGate)
    g = ir.addf(g, ir.toF32(ir.load(buf.biasGate, {col})));
  if (c.hasBias)
    u = ir.addf(u, ir.toF32(ir.load(buf.bias, {col})));
  Value v = real(ir.mulf(buildGpuActivation(b, c.activation, g), u));
  return {ir.fromF32(v, c.outType), outIdx};
}

void mlir::ffn::gpu_target::buildSplitKReduceKernel(OpBuilder &builder,
                                                    gpu::GPUModuleOp module,
                                                    const GemmConfig &c,
                                                    ArrayRef<KernelArg> args) {
  KernelBody body(builder, module, c.name + "_reduce", args, kRowThreads);
  KernelIR &ir = body.ir;
  auto a = body.func.getArguments();
  unsigned i = 0;
  SplitKBuffers buf;
  buf.partial = a[i++];
  buf.out = a[i++];
  if (c.hasBias)
    buf.bias = a[i++];
  if (c.hasBiasGate)
    buf.biasGate = a[i++];
  if (c.residual)
    buf.resid = a[i++];
  Value m = ir.toIndex(a[i++]);
  Value row = ir.blockId(gpu::Dimension::x);
  Value tid = ir.threadId();
  int64_t columns = splitKReduceColumns(c);
  // Block (row, y) covers columns [y * kReduceColumns, (y + 1) *
  // kReduceColumns): at decode a single row still spreads over many SMs.
  Value first = ir.add(ir.mul(ir.blockId(gpu::Dimension::y), kReduceColumns),
                       tid);
  Value last = ir.min(ir.idx(columns),
                      ir.mul(ir.add(ir.blockId(gpu::Dimension::y), 1),
                             kReduceColumns));
  ir.loop(first, last, kRowThreads, [&](Value col) {
    SplitKColumn r = splitKColumn(ir, c, buf, m, row, col);
    ir.store(r.value, buf.out, {r.index});
  });
}
