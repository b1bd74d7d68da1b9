//===- MoeKernels.cpp - a mixture of experts' route, group, combine -------===//
//
// The kernels around a mixture's expert GEMMs (docs/gpu.md, "Mixtures of
// experts"). Row r's j-th choice is slot r (k + S) + j and its shared
// expert s slot r (k + S) + k + s: the GEMMs write each slot's own row, so
// the result never depends on the order in which blocks finish.
//
//   route    logits, top k and weights, one block per row
//   group    each routed expert's slots in row order (a stable
//            compaction: warp ballots, then the warps' counts in order)
//   combine  the weighted sum of a row's slots, in selection order
//
//===----------------------------------------------------------------------===//

#include "KernelIR.h"
#include "Kernels.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::gpu_target;

static constexpr int64_t kThreads = 256;

/// Shared memory: rowNormStats' 32 bytes of scratch, then the route
/// kernel's partial logits [parts][E] and the logits [E].
static int64_t routeParts(int64_t experts) {
  return experts >= kThreads ? 1 : kThreads / experts;
}

int64_t mlir::ffn::gpu_target::routeSharedBytes(const MoeConfig &c) {
  return 32 + (routeParts(c.experts) + 1) * c.experts * 4;
}

static Value exp32(KernelIR &ir, Value v) {
  return math::ExpOp::create(ir.b, v);
}

void mlir::ffn::gpu_target::buildRouteKernel(OpBuilder &builder,
                                             gpu::GPUModuleOp module,
                                             const MoeConfig &c,
                                             ArrayRef<KernelArg> args) {
  KernelBody body(builder, module, c.name, args, kThreads);
  ImplicitLocOpBuilder &b = body.b;
  KernelIR &ir = body.ir;
  auto a = body.func.getArguments();
  unsigned i = 0;
  Value x = a[i++], w = a[i++], scale, shift;
  if (c.preNorm) {
    scale = a[i++];
    if (c.shift)
      shift = a[i++];
  }
  Value sel = a[i++], g = a[i++];
  const int64_t E = c.experts, k = c.topK, dm = c.dModel;
  Value row = ir.blockId(gpu::Dimension::x), tid = ir.threadId();
  Value base = ir.mul(row, dm);
  // The router's input in f32: x (exact), or its pre-norm, not rounded to
  // the dtype (the CPU kernels' and the reference's router input).
  auto raw = [&](Value col) {
    return ir.toF32(ir.load(x, {ir.add(base, col)}));
  };
  std::function<Value(Value)> input = raw;
  if (c.preNorm) {
    RowNorm stats = rowNormStats(ir, raw, dm, *c.preNorm, c.eps);
    input = [&, stats](Value col) {
      Value v = ir.mulf(ir.mulf(ir.subf(raw(col), stats.mean), stats.rstd),
                        ir.toF32(ir.load(scale, {col})));
      return c.shift ? ir.addf(v, ir.toF32(ir.load(shift, {col}))) : v;
    };
  }

  // Logits. With E < 256 the threads split d_model into `parts` interleaved
  // pieces (thread t: expert t % E, piece t / E), so that a few experts
  // still keep the block busy; the pieces add in piece order.
  int64_t parts = routeParts(E);
  Value partial = ir.sharedArray(ir.b.getF32Type(), parts * E, 32);
  Value logits = ir.sharedArray(ir.b.getF32Type(), E, 32 + parts * E * 4);
  if (parts == 1) {
    ir.loop(tid, ir.idx(E), kThreads, [&](Value e) {
      Value s = ir.loop(ir.idx(0), ir.idx(dm), 1, {ir.f32(0)},
                        [&](Value col, ValueRange acc) -> SmallVector<Value> {
                          Value wv =
                              ir.toF32(ir.load(w, {ir.add(ir.mul(col, E), e)}));
                          return {ir.fma(input(col), wv, acc[0])};
                        })[0];
      ir.store(s, partial, {e});
    });
  } else {
    ir.guard(ir.lt(tid, parts * E), [&] {
      Value e = ir.rem(tid, E), piece = ir.div(tid, E);
      Value s = ir.loop(piece, ir.idx(dm), parts, {ir.f32(0)},
                        [&](Value col, ValueRange acc) -> SmallVector<Value> {
                          Value wv =
                              ir.toF32(ir.load(w, {ir.add(ir.mul(col, E), e)}));
                          return {ir.fma(input(col), wv, acc[0])};
                        })[0];
      ir.store(s, partial, {tid});
    });
  }
  ir.barrier();
  ir.loop(tid, ir.idx(E), kThreads, [&](Value e) {
    Value s = ir.load(partial, {e});
    for (int64_t p = 1; p < parts; ++p)
      s = ir.addf(s, ir.load(partial, {ir.add(e, p * E)}));
    ir.store(s, logits, {e});
  });
  ir.barrier();

  // Warp 0 chooses. The order is descending logit, ties to the lower
  // expert, NaN ranked as -inf (so k distinct experts are always chosen);
  // round j takes the best expert after round j - 1's pick in that order,
  // which needs no record of the picks.
  Value lane = ir.rem(tid, 32);
  Value width = ir.i32(32);
  Value negInf = ir.f32(-std::numeric_limits<double>::infinity());
  auto cmpf = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
    return arith::CmpFOp::create(b, p, x, y);
  };
  auto key = [&](Value v) {
    return ir.select(cmpf(arith::CmpFPredicate::UNO, v, v), negInf, v);
  };
  // Whether (v1, e1) ranks before (v2, e2).
  auto before = [&](Value v1, Value e1, Value v2, Value e2) {
    return ir.orI(
        cmpf(arith::CmpFPredicate::OGT, v1, v2),
        ir.andI(cmpf(arith::CmpFPredicate::OEQ, v1, v2), ir.lt(e1, e2)));
  };
  auto shuffle = [&](Value v, int64_t offset) {
    return gpu::ShuffleOp::create(b, v, ir.i32(offset), width,
                                  gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  ir.guard(ir.lt(tid, 32), [&] {
    // softmax_topk's denominator: every expert's exp(l - max).
    Value lmax, den;
    if (c.router == Router::softmax_topk) {
      lmax = ir.loop(
          lane, ir.idx(E), 32, {negInf},
          [&](Value e, ValueRange acc) -> SmallVector<Value> {
            return {arith::MaximumFOp::create(b, acc[0], ir.load(logits, {e}))};
          })[0];
      for (int64_t offset : {16, 8, 4, 2, 1})
        lmax = arith::MaximumFOp::create(b, lmax, shuffle(lmax, offset));
      Value s = ir.loop(lane, ir.idx(E), 32, {ir.f32(0)},
                        [&](Value e, ValueRange acc) -> SmallVector<Value> {
                          Value p =
                              exp32(ir, ir.subf(ir.load(logits, {e}), lmax));
                          return {ir.addf(acc[0], p)};
                        })[0];
      den = ir.warpSum(s);
    }
    Value first = ir.idx(0);
    Value isLane0 = ir.eq(lane, first);
    Value selBase = ir.mul(row, k);
    Value posInf = ir.f32(std::numeric_limits<double>::infinity());
    ir.loop(ir.idx(0), ir.idx(k), 1, {posInf, ir.idx(-1)},
            [&](Value j, ValueRange prev) -> SmallVector<Value> {
              auto picked =
                  ir.loop(lane, ir.idx(E), 32, {negInf, ir.idx(E)},
                          [&](Value e, ValueRange best) -> SmallVector<Value> {
                            Value v = key(ir.load(logits, {e}));
                            Value after = before(prev[0], prev[1], v, e);
                            Value better =
                                ir.andI(after, before(v, e, best[0], best[1]));
                            return {ir.select(better, v, best[0]),
                                    ir.select(better, e, best[1])};
                          });
              Value bv = picked[0], bi = ir.toI32(picked[1]);
              for (int64_t offset : {16, 8, 4, 2, 1}) {
                Value ov = shuffle(bv, offset), oi = shuffle(bi, offset);
                Value take = before(ov, ir.toIndex(oi), bv, ir.toIndex(bi));
                bv = ir.select(take, ov, bv);
                bi = ir.select(take, oi, bi);
              }
              Value e = ir.toIndex(bi);
              ir.guard(isLane0, [&] {
                Value at = ir.add(selBase, j);
                ir.store(bi, sel, {at});
                // The logit for now; the weights follow once all k are
                // known.
                ir.store(ir.load(logits, {e}), g, {at});
              });
              return {bv, e};
            });
    // Lane 0 turns the chosen logits (its own stores) into weights.
    ir.guard(isLane0, [&] {
      auto gAt = [&](int64_t j) { return ir.add(selBase, j); };
      SmallVector<Value> p;
      if (c.router == Router::topk_softmax) {
        // The softmax over the chosen logits; the first is their largest.
        Value top = ir.load(g, {gAt(0)});
        Value sum = ir.f32(0);
        for (int64_t j = 0; j < k; ++j) {
          p.push_back(exp32(ir, ir.subf(ir.load(g, {gAt(j)}), top)));
          sum = ir.addf(sum, p.back());
        }
        for (int64_t j = 0; j < k; ++j)
          ir.store(ir.divf(p[j], sum), g, {gAt(j)});
        return;
      }
      Value sum = ir.f32(0);
      for (int64_t j = 0; j < k; ++j) {
        p.push_back(
            ir.divf(exp32(ir, ir.subf(ir.load(g, {gAt(j)}), lmax)), den));
        sum = ir.addf(sum, p.back());
      }
      for (int64_t j = 0; j < k; ++j)
        ir.store(c.normalize ? ir.divf(p[j], sum) : p[j], g, {gAt(j)});
    });
  });
}

void mlir::ffn::gpu_target::buildGroupKernel(OpBuilder &builder,
                                             gpu::GPUModuleOp module,
                                             const MoeConfig &c,
                                             ArrayRef<KernelArg> args) {
  KernelBody body(builder, module, c.name, args, kThreads);
  ImplicitLocOpBuilder &b = body.b;
  KernelIR &ir = body.ir;
  auto a = body.func.getArguments();
  Value sel = a[0], perm = a[1], count = a[2];
  Value m = ir.toIndex(a[3]);
  const int64_t k = c.topK, warps = kThreads / 32;
  Value e = ir.blockId(gpu::Dimension::y);
  Value e32 = ir.toI32(e);
  Value tid = ir.threadId(), lane = ir.rem(tid, 32), warp = ir.div(tid, 32);
  Type i32 = b.getI32Type();
  Value warpCounts = ir.sharedArray(i32, warps, 0);
  Value entries = ir.mul(m, k), listBase = ir.mul(e, m);
  Value lanesBelow = arith::SubIOp::create(
      b, arith::ShLIOp::create(b, ir.i32(1), ir.toI32(lane)), ir.i32(1));
  // Chunks of 256 table entries in order; within one, warps in order, and
  // lanes in order within a warp: the slots come out sorted by row, then
  // by selection index.
  Value total = ir.loop(
      ir.idx(0), entries, kThreads, {ir.i32(0)},
      [&](Value chunk, ValueRange acc) -> SmallVector<Value> {
        Value at = ir.add(chunk, tid);
        Value inside = ir.lt(at, entries);
        Value chosen = ir.select(
            inside, ir.load(sel, {ir.min(at, ir.sub(entries, ir.idx(1)))}),
            ir.i32(-1));
        Value mine = ir.eq(chosen, e32);
        Value ballot = NVVM::VoteSyncOp::create(b, i32, ir.i32(-1), mine,
                                                NVVM::VoteSyncKind::ballot);
        Value below = LLVM::CtPopOp::create(
            b, arith::AndIOp::create(b, ballot, lanesBelow));
        ir.guard(ir.eq(lane, ir.idx(0)), [&] {
          ir.store(LLVM::CtPopOp::create(b, ballot), warpCounts, {warp});
        });
        ir.barrier();
        Value offset = acc[0], chunkTotal = acc[0];
        for (int64_t w = 0; w < warps; ++w) {
          Value n = ir.load(warpCounts, {ir.idx(w)});
          offset = ir.select(ir.lt(ir.idx(w), warp),
                             arith::AddIOp::create(b, offset, n), offset);
          chunkTotal = arith::AddIOp::create(b, chunkTotal, n);
        }
        ir.guard(mine, [&] {
          Value position = ir.toIndex(arith::AddIOp::create(b, offset, below));
          Value r = ir.div(at, k), j = ir.rem(at, k);
          Value slot = ir.add(ir.mul(r, c.slots()), j);
          ir.store(ir.toI32(slot), perm, {ir.add(listBase, position)});
        });
        // The counts are read again by the next chunk's stores.
        ir.barrier();
        return {chunkTotal};
      })[0];
  ir.guard(ir.eq(tid, ir.idx(0)), [&] { ir.store(total, count, {e}); });
}

void mlir::ffn::gpu_target::buildCombineKernel(OpBuilder &builder,
                                               gpu::GPUModuleOp module,
                                               const MoeConfig &c,
                                               ArrayRef<KernelArg> args) {
  KernelBody body(builder, module, c.name, args, kThreads);
  KernelIR &ir = body.ir;
  auto a = body.func.getArguments();
  unsigned i = 0;
  Value y = a[i++], g = a[i++], sel, bias, x;
  bool split = c.splitK > 1;
  if (split) {
    sel = a[i++];
    if (c.hasBias)
      bias = a[i++];
  }
  if (c.residual)
    x = a[i++];
  Value z, scale, shift;
  if (c.postNorm)
    z = a[i++];
  Value out = a[i++];
  if (c.postNorm) {
    scale = a[i++];
    if (c.shift)
      shift = a[i++];
  }
  Value m = ir.toIndex(a[i++]);
  const int64_t k = c.topK, dm = c.dModel, slots = c.slots();
  Value row = ir.blockId(gpu::Dimension::x), tid = ir.threadId();
  SmallVector<Value> weights, biasBase;
  for (int64_t j = 0; j < k; ++j)
    weights.push_back(ir.load(g, {ir.add(ir.mul(row, k), j)}));
  if (bias) {
    // Each slot's expert: the choice, or the shared expert's index.
    for (int64_t s = 0; s < slots; ++s) {
      Value e = s < k ? ir.toIndex(ir.load(sel, {ir.add(ir.mul(row, k), s)}))
                      : ir.idx(c.experts + s - k);
      biasBase.push_back(ir.mul(e, c.biasStride));
    }
  }
  Value slotRow0 = ir.mul(row, slots), sliceRows = ir.mul(m, slots);
  ir.loop(tid, ir.idx(dm), kThreads, [&](Value col) {
    auto slotValue = [&](int64_t s) -> Value {
      Value slotRow = ir.add(slotRow0, s);
      if (!split)
        return ir.load(y, {ir.add(ir.mul(slotRow, dm), col)});
      // The K slices in slice order, then the bias: the split-K
      // reduction's order.
      Value v = ir.f32(0);
      for (int64_t z = 0; z < c.splitK; ++z) {
        Value at = ir.add(ir.mul(ir.add(ir.mul(ir.idx(z), sliceRows), slotRow),
                                 c.partialStride),
                          col);
        v = z == 0 ? ir.load(y, {at}) : ir.addf(v, ir.load(y, {at}));
      }
      if (bias)
        v = ir.addf(v, ir.toF32(ir.load(bias, {ir.add(biasBase[s], col)})));
      return v;
    };
    Value f = ir.mulf(weights[0], slotValue(0));
    for (int64_t j = 1; j < k; ++j)
      f = ir.fma(weights[j], slotValue(j), f);
    for (int64_t s = 0; s < c.shared; ++s)
      f = ir.addf(f, slotValue(k + s));
    Value at = ir.add(ir.mul(row, dm), col);
    if (c.residual)
      f = ir.addf(f, ir.toF32(ir.load(x, {at})));
    if (c.postNorm)
      ir.store(f, z, {at});
    else
      ir.store(ir.fromF32(f, c.storage), out, {at});
  });
  if (!c.postNorm)
    return;
  // The post-norm in the same block, which owns the row: the barrier makes
  // the block's z stores visible to all its threads (the norm kernel's
  // launch did that before, at the cost of a launch and its gap).
  ir.barrier();
  Value rowBase = ir.mul(row, dm);
  auto zAt = [&](Value col) { return ir.load(z, {ir.add(rowBase, col)}); };
  RowNorm stats = rowNormStats(ir, zAt, dm, *c.postNorm, c.eps);
  ir.loop(tid, ir.idx(dm), kThreads, [&](Value col) {
    Value v = ir.mulf(ir.mulf(ir.subf(zAt(col), stats.mean), stats.rstd),
                      ir.toF32(ir.load(scale, {col})));
    if (c.shift)
      v = ir.addf(v, ir.toF32(ir.load(shift, {col})));
    ir.store(ir.fromF32(v, c.storage), out, {ir.add(rowBase, col)});
  });
}
