//===- GroupedPhases.cpp - the phase schedules of a grouped FFN -----------===//
//
// A grouped (block-diagonal) FFN runs the dense two-pass schedule on each
// of its blocks, with the block's slice of the stacked parameters:
//
//   A_g = f32(pre-norm(x))[:, block g's columns]  (phase 0, rows)
//   H_g = act(A_g W_up[g] + b_up[g]) [* gate]      (phase 1, up panels x
//                                                   blocks)
//   H_g quantized to int8 (integer dot products)  (phase 2, rows)
//   y[:, block g] = T(H_g W_down[g] + b_down[g] [+ x]), or O_g = H_g
//   W_down[g] with a post-norm                     (phase 3, down panels x
//                                                   blocks)
//   y = T(post-norm(O + b_down [+ x]))             (phase 5, rows; post-norm
//                                                   only)
//
// The outlined GEMMs take identity-layout views, which a column slice of x
// or of a shared section is not, so phase 0 gathers each block's columns
// into its own section (Layout.h), and GEMM 2 writes y at a column base.
// With block_units (the cost model's choice where whole blocks split evenly
// over the threads) phases 1-3 become one phase 4 over blocks: a thread runs
// each of its blocks' GEMM 1 and GEMM 2 back to back, H in one section it
// reuses, so H stays in its cache (LLaMA-7B's 16 blocks at m = 256 write 11
// MB of H otherwise) and no barrier separates the GEMMs. Otherwise the GEMM
// phases' units are block-major (unit = block * panels + panel): a thread's
// contiguous range covers consecutive panels of as few blocks as possible,
// so each block's A stays in its cache; every block has all m rows, so the
// split is balanced. Both run the same tiles: the results are the same bits.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::cpu;

void KernelBuilder::buildGrouped(Value x, const llvm::StringMap<Value> &params,
                                 const llvm::StringMap<ExpertParam> &stacked,
                                 Value y, Value ws, Value phase, Value begin,
                                 Value end) {
  auto add = [&](Value a, Value c) {
    return arith::AddIOp::create(b, loc, a, c).getResult();
  };
  auto mul = [&](Value a, Value c) {
    return arith::MulIOp::create(b, loc, a, c).getResult();
  };
  Value m = memref::DimOp::create(b, loc, x, 0);
  normScale = params.lookup("norm_scale");
  normShift = params.lookup("norm_shift");
  Type opType = operandType();

  // Block g's [m, width] section of `element`s: section base + g * the
  // block's bytes per row (Layout.h).
  auto blockView = [&](Value g, int64_t base, int64_t blockBytes, int64_t width,
                       Type element) {
    return view(ws, m, add(idx(base), mul(g, idx(blockBytes))), width, element);
  };
  auto aOf = [&](Value g) {
    return blockView(g, 0, 4 * l.aWidth, l.aWidth, opType);
  };
  auto hOf = [&](Value g) {
    return blockView(g, l.blockHBase(), 4 * l.hWidth, l.hWidth, opType);
  };
  auto oOf = [&](Value g) {
    return blockView(g, l.blockOBase(), l.blockOBytes(), l.oWidth, f32);
  };
  // Integer dot products: a block's int8 copy of A (or, `hidden`, of H),
  // as values, f32 scales and i32 sums per group.
  struct Quantized {
    Value q, scales, sums;
  };
  auto quantizedOf = [&](Value g, bool hidden) {
    int64_t k = hidden ? l.f : l.d;
    int64_t at = l.blockQuantBase() + (hidden ? l.actQuantRowBytes(l.d) : 0);
    int64_t groups = l.actQuantGroups(k), stride = l.blockQuantBytes();
    Quantized out;
    out.q = blockView(g, at, stride, l.actQuantBytes(k), b.getI8Type());
    at += l.actQuantBytes(k);
    out.scales = blockView(g, at, stride, groups, f32);
    at += 4 * groups;
    out.sums = blockView(g, at, stride, groups, b.getI32Type());
    return out;
  };
  // for (g = 0; g < blocks; ++g) body(g)
  auto overBlocks = [&](function_ref<void(Value)> body) {
    loop(idx(0), idx(l.blocks), idx(1), body);
  };

  // x's columns [col0, col0 + d) of row r into row r of `dst`, in the
  // operand type (the storage type itself for pair tiles, else f32).
  auto copyColumns = [&](Value r, Value col0, Value dst) {
    columns(l.d, [&](Value c, int64_t w) {
      Value v = loadColumns(x, ValueRange{r, add(col0, c)}, w, opType);
      vector::StoreOp::create(b, loc, v, dst, ValueRange{r, c});
    });
  };

  // Phase 0, over rows: each block's columns of the matmul input into its
  // A section. Without a pre-norm, a vector copy of each block's columns;
  // with one, the normalized row element by element (j / d and j % d by a
  // constant: a multiply and a shift).
  std::optional<NormAttr> norm = op.getNorm();
  bool preNorm = norm && norm->getPosition() == NormPosition::pre;
  inPhase(phase, 0, [&] {
    loop(begin, end, idx(1), [&](Value r) {
      if (preNorm)
        inputRow(x, r, [&](Value j, Value v) {
          Value g = arith::DivUIOp::create(b, loc, j, idx(l.d));
          Value col = arith::RemUIOp::create(b, loc, j, idx(l.d));
          if (l.dot)
            v = arith::TruncFOp::create(b, loc, b.getBF16Type(), v);
          memref::StoreOp::create(b, loc, v, aOf(g), ValueRange{r, col});
        });
      else
        overBlocks([&](Value g) { copyColumns(r, mul(g, idx(l.d)), aOf(g)); });
      if (l.intDot)
        overBlocks([&](Value g) {
          Quantized aq = quantizedOf(g, /*hidden=*/false);
          quantizeRow(aOf(g), r, l.d, aq.q, aq.scales, aq.sums);
        });
    });
  });

  // The GEMM phases: units [begin, end) of blocks x `panels`, block-major;
  // body(block, first panel, end panel) once per block in the range.
  auto overPanels = [&](int64_t panels,
                        function_ref<void(Value, Value, Value)> body) {
    Value first = arith::DivUIOp::create(b, loc, begin, idx(panels));
    Value last =
        arith::DivUIOp::create(b, loc, add(end, idx(panels - 1)), idx(panels));
    loop(first, last, idx(1), [&](Value g) {
      Value base = mul(g, idx(panels));
      Value p0 = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, begin, base), idx(0));
      Value p1 = arith::MinSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, end, base), idx(panels));
      body(g, p0, p1);
    });
  };

  // GEMM 1 of block g over up panels [p0, p1): H = act(A_g W_up[g] ...)
  // into `hBlock`'s H section (integer dot products: from A_g's int8 copy).
  Value bDownFlat = params.lookup("b_down");
  auto upGemm = [&](Value g, Value p0, Value p1, Value hBlock) {
    UpGemmArgs args{dynamic(aOf(g)),
                    dynamic(hOf(hBlock)),
                    idx(0),
                    m,
                    p0,
                    p1,
                    {},
                    {},
                    stackedSlice(params, stacked, "w_up", g),
                    stackedSlice(params, stacked, "w_gate", g),
                    stackedSlice(params, stacked, "b_up", g),
                    stackedSlice(params, stacked, "b_gate", g)};
    if (l.intDot) {
      Quantized aq = quantizedOf(g, /*hidden=*/false);
      args.a = dynamic(aq.q);
      args.aScales = dynamic(aq.scales);
      args.aSums = dynamic(aq.sums);
    }
    callUpGemm(args);
  };
  // Row r of the H in `hBlock`'s section quantized (integer dot products).
  auto quantizeHidden = [&](Value r, Value hBlock) {
    Quantized hq = quantizedOf(hBlock, /*hidden=*/true);
    quantizeRow(hOf(hBlock), r, l.f, hq.q, hq.scales, hq.sums);
  };
  // GEMM 2 of block g over down panels [p0, p1), reading the H in
  // `hBlock`'s section: it finishes the block's columns of y itself, or
  // (post-norm) writes O_g.
  auto downGemm = [&](Value g, Value p0, Value p1, Value hBlock) {
    DownGemmArgs args;
    args.a = dynamic(hOf(hBlock));
    if (l.intDot) {
      Quantized hq = quantizedOf(hBlock, /*hidden=*/true);
      args.a = dynamic(hq.q);
      args.aScales = dynamic(hq.scales);
      args.aSums = dynamic(hq.sums);
    }
    // Finishing never stores to c: an empty view stands for it.
    args.c = l.finishInGemm ? dynamic(view(ws, idx(0), 0, l.oWidth))
                            : dynamic(oOf(g));
    args.m = m;
    args.p0 = p0;
    args.p1 = p1;
    args.wDown = stackedSlice(params, stacked, "w_down", g);
    if (l.finishInGemm) {
      args.mode = idx(2);
      args.y = y;
      if (op.getResidual())
        args.x = x;
      if (bDownFlat)
        args.bDown = stackedSlice(params, stacked, "b_down", g);
      args.yColBase = mul(g, idx(l.d));
    }
    callDownGemm(args);
  };

  if (l.blockUnits) {
    // Phase 4, over blocks: each of the thread's blocks through GEMM 1 and
    // GEMM 2 back to back, its H in the section of the thread's first
    // block (ranges are disjoint), so H stays in the thread's cache and
    // no barrier separates the GEMMs.
    inPhase(phase, 4, [&] {
      loop(begin, end, idx(1), [&](Value g) {
        upGemm(g, idx(0), idx(l.npUp), begin);
        if (l.intDot)
          loop(idx(0), m, idx(1), [&](Value r) { quantizeHidden(r, begin); });
        downGemm(g, idx(0), idx(l.npDown), begin);
      });
    });
  } else {
    // Phase 1, over up panels x blocks: H_g.
    inPhase(phase, 1, [&] {
      overPanels(l.npUp,
                 [&](Value g, Value p0, Value p1) { upGemm(g, p0, p1, g); });
    });
    // Phase 2, over rows (integer dot products): each block's H quantized,
    // its first d_ff / blocks columns.
    if (l.intDot)
      inPhase(phase, 2, [&] {
        loop(begin, end, idx(1), [&](Value r) {
          overBlocks([&](Value g) { quantizeHidden(r, g); });
        });
      });
    // Phase 3, over down panels x blocks.
    inPhase(phase, 3, [&] {
      overPanels(l.npDown,
                 [&](Value g, Value p0, Value p1) { downGemm(g, p0, p1, g); });
    });
  }

  // Phase 5, over rows (post-norm only): the blocks' outputs plus their
  // down biases as one row, then the residual and the norm over the whole
  // row, through the pre-norm row P.
  if (l.finishInGemm)
    return;
  Value pre = view(ws, m, l.blockPBase(), l.pWidth());
  inPhase(phase, 5, [&] {
    loop(begin, end, idx(1), [&](Value r) {
      auto value = [&](Value j) -> Value {
        Value g = arith::DivUIOp::create(b, loc, j, idx(l.d));
        Value col = arith::RemUIOp::create(b, loc, j, idx(l.d));
        Value v = memref::LoadOp::create(b, loc, oOf(g), ValueRange{r, col});
        if (bDownFlat)
          v = arith::AddFOp::create(
              b, loc, v,
              toF32(memref::LoadOp::create(
                  b, loc, stackedSlice(params, stacked, "b_down", g),
                  ValueRange{col})));
        return v;
      };
      outputRow(x, y, r, value, pre, r);
    });
  });
}
