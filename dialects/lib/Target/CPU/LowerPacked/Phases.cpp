//===- Phases.cpp - the phase schedules of a packed FFN kernel ------------===//
//
//   A  = x, or f32(pre-norm(x)) in ws            (phase 0, rows)
//   H  = act(A W_up + b_up) [* act(A W_gate + b_gate)]   (phase 1, GEMM 1)
//   O  = H W_down                                 (phase 3, GEMM 2)
//   y  = T(post-norm(O + b_down [+ x]))          (phase 5, rows)
//
// With integer dot products, phase 0 also quantizes A to int8 and phase 2
// (rows) quantizes H, once per row, for the GEMMs to read.
//
// Runs with m <= fused_max_m take phase 4 instead of 1 and 3: d_ff in
// chunks, Hc = act(A W_up[:, c]) into an L1-sized buffer immediately
// multiplied into a partial output Og += Hc W_down[c, :] per chunk group;
// phase 5 sums the groups' Og in a fixed order, so results depend on the
// strategy, never on the thread count. Runs with m <= sparse_max_m list
// each chunk's rows of W_down that some row's activation needs and
// multiply over those only (SparseTile.cpp), with the same sums.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::cpu;

Value KernelBuilder::groupSection(Value ws, Value rows, Value g, int64_t column,
                                  int64_t width, Type element) {
  Value offset = arith::MulIOp::create(b, loc, g, idx(4 * l.groupWidth()));
  offset = arith::AddIOp::create(b, loc, offset, idx(4 * (l.aWidth + column)));
  return view(ws, rows, offset, width, element);
}

Value KernelBuilder::groupView(Value ws, Value rows, Value g, bool output) {
  if (output)
    return groupSection(ws, rows, g, l.chunk, l.oWidth, f32);
  return groupSection(ws, rows, g, 0, l.chunk, operandType());
}

Value KernelBuilder::listView(Value ws, Value rows, Value g) {
  return groupSection(ws, rows, g, l.chunk + l.oWidth, l.chunk, b.getI32Type());
}

Value KernelBuilder::listNeededRows(Value hc, Value m, Value len, Value list) {
  // Pair tiles list whole pairs only; their odd last k is always taken.
  Value units =
      l.dot ? arith::DivUIOp::create(b, loc, len, idx(2)).getResult() : len;
  Value zero =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(operandType(), 0.0));
  Type i1 = b.getI1Type();
  auto scan =
      scf::ForOp::create(b, loc, idx(0), units, idx(1), ValueRange{idx(0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(scan.getBody());
  Value u = scan.getInductionVar();
  Value count = scan.getRegionIterArgs()[0];
  Value k = l.dot ? arith::MulIOp::create(b, loc, u, idx(2)).getResult() : u;
  // Nonzero (NaN included: it must reach the output) in any row.
  auto rowsLoop = scf::ForOp::create(
      b, loc, idx(0), m, idx(1),
      ValueRange{arith::ConstantIntOp::create(b, loc, i1, 0)});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(rowsLoop.getBody());
    Value r = rowsLoop.getInductionVar();
    Value any = rowsLoop.getRegionIterArgs()[0];
    for (int64_t j = 0; j < (l.dot ? 2 : 1); ++j) {
      Value col = arith::AddIOp::create(b, loc, k, idx(j));
      Value h = memref::LoadOp::create(b, loc, hc, ValueRange{r, col});
      Value nz =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, h, zero);
      any = arith::OrIOp::create(b, loc, any, nz);
    }
    scf::YieldOp::create(b, loc, any);
  }
  // Branch-free: the entry is always written, and kept when needed (count
  // <= u, so the write stays inside the list).
  Value entry = arith::IndexCastOp::create(b, loc, b.getI32Type(), u);
  memref::StoreOp::create(b, loc, entry, list, ValueRange{idx(0), count});
  Value step = arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                            rowsLoop.getResult(0));
  scf::YieldOp::create(b, loc,
                       ValueRange{arith::AddIOp::create(b, loc, count, step)});
  return scan.getResult(0);
}

void KernelBuilder::normRow(function_ref<Value(Value)> load,
                            function_ref<void(Value, Value)> store, Value scale,
                            Value shift) {
  NormAttr norm = *op.getNorm();
  bool layer = norm.getKind() == NormKind::layernorm;
  Value invD = f32Constant(b, loc, f32, 1.0 / static_cast<double>(l.dModel));
  Value mean;
  if (layer)
    mean = arith::MulFOp::create(b, loc, sumOver(l.dModel, load), invD);
  Value sq = sumOver(l.dModel, [&](Value j) {
    Value v = load(j);
    if (mean)
      v = arith::SubFOp::create(b, loc, v, mean);
    return arith::MulFOp::create(b, loc, v, v).getResult();
  });
  Value var = arith::MulFOp::create(b, loc, sq, invD);
  Value eps = f32Constant(b, loc, f32, norm.getEps().convertToDouble());
  Value rstd = arith::DivFOp::create(
      b, loc, f32Constant(b, loc, f32, 1.0),
      math::SqrtOp::create(b, loc, arith::AddFOp::create(b, loc, var, eps)));
  loop(idx(0), idx(l.dModel), idx(1), [&](Value j) {
    Value v = load(j);
    if (mean)
      v = arith::SubFOp::create(b, loc, v, mean);
    v = arith::MulFOp::create(b, loc, v, rstd);
    v = arith::MulFOp::create(
        b, loc, v, toF32(memref::LoadOp::create(b, loc, scale, ValueRange{j})));
    if (shift)
      v = arith::AddFOp::create(
          b, loc, v,
          toF32(memref::LoadOp::create(b, loc, shift, ValueRange{j})));
    store(j, v);
  });
}

void KernelBuilder::columns(int64_t n,
                            function_ref<void(Value, int64_t)> body) {
  int64_t full = n / l.lanes * l.lanes;
  if (full > 0)
    loop(idx(0), idx(full), idx(l.lanes), [&](Value j) { body(j, l.lanes); });
  if (full < n)
    loop(idx(full), idx(n), idx(1), [&](Value j) { body(j, 1); });
}

Value KernelBuilder::loadColumns(Value from, ValueRange at, int64_t w,
                                 Type element) {
  Type stored = cast<MemRefType>(from.getType()).getElementType();
  Value v = vector::LoadOp::create(b, loc, VectorType::get({w}, stored), from,
                                   at);
  if (stored == element)
    return v;
  return arith::ExtFOp::create(b, loc, VectorType::get({w}, element), v);
}

void KernelBuilder::inputRow(Value x, Value r,
                             function_ref<void(Value, Value)> sink) {
  auto load = [&](Value j) {
    return toF32(memref::LoadOp::create(b, loc, x, ValueRange{r, j}));
  };
  std::optional<NormAttr> norm = op.getNorm();
  if (norm && norm->getPosition() == NormPosition::pre)
    normRow(load, sink, normScale, normShift);
  else
    loop(idx(0), idx(l.dModel), idx(1), [&](Value j) { sink(j, load(j)); });
}

void KernelBuilder::outputRow(Value x, Value y, Value r,
                              function_ref<Value(Value)> value, Value pre,
                              Value preRow) {
  auto withResidual = [&](Value j) {
    Value v = value(j);
    if (op.getResidual())
      v = arith::AddFOp::create(
          b, loc, v,
          toF32(memref::LoadOp::create(b, loc, x, ValueRange{r, j})));
    return v;
  };
  auto storeY = [&](Value j, Value v) {
    memref::StoreOp::create(b, loc, toStorage(v), y, ValueRange{r, j});
  };
  std::optional<NormAttr> norm = op.getNorm();
  if (!norm || norm->getPosition() != NormPosition::post) {
    loop(idx(0), idx(l.dModel), idx(1),
         [&](Value j) { storeY(j, withResidual(j)); });
    return;
  }
  loop(idx(0), idx(l.dModel), idx(1), [&](Value j) {
    memref::StoreOp::create(b, loc, withResidual(j), pre,
                            ValueRange{preRow, j});
  });
  normRow(
      [&](Value j) {
        return memref::LoadOp::create(b, loc, pre, ValueRange{preRow, j})
            .getResult();
      },
      storeY, normScale, normShift);
}

void KernelBuilder::build(Value x, const llvm::StringMap<Value> &params,
                          Value y, Value ws, Value phase, Value begin,
                          Value end) {
  Value m = memref::DimOp::create(b, loc, x, 0);
  normScale = params.lookup("norm_scale");
  normShift = params.lookup("norm_shift");

  // Workspace sections, each [m, width] with room for f32: A, H, O (A and
  // H in the matmuls' operand type).
  Value a = x;
  if (l.needA)
    a = view(ws, m, 0, l.aWidth, operandType());
  Value h = view(ws, m, 4 * l.aWidth, l.hWidth, operandType());
  Value o = view(ws, m, 4 * (l.aWidth + l.hWidth), l.oWidth);
  // Integer dot products: A and H quantized, each as int8 values, f32
  // scales and i32 sums per group (Layout.h).
  struct Quantized {
    Value q, scales, sums;
  } aq, hq;
  if (l.intDot) {
    int64_t at = l.actQuantOffset();
    auto sections = [&](int64_t k) {
      Quantized out;
      int64_t groups = l.actQuantGroups(k);
      out.q = view(ws, m, at, l.actQuantBytes(k), b.getI8Type());
      at += l.actQuantBytes(k);
      out.scales = view(ws, m, at, groups);
      at += 4 * groups;
      out.sums = view(ws, m, at, groups, b.getI32Type());
      at += 4 * groups;
      return out;
    };
    aq = sections(l.d);
    hq = sections(l.f);
  }

  // Phase 0, over rows: A = f32(pre-norm(x)) (bf16 for pair tiles; int8
  // for integer dot products).
  if (l.intDot && !l.needA)
    inPhase(phase, 0, [&] {
      loop(begin, end, idx(1), [&](Value r) {
        quantizeRow(x, r, l.d, aq.q, aq.scales, aq.sums);
      });
    });
  if (l.needA)
    inPhase(phase, 0, [&] {
      loop(begin, end, idx(1), [&](Value r) {
        inputRow(x, r, [&](Value j, Value v) {
          if (l.dot)
            v = arith::TruncFOp::create(b, loc, b.getBF16Type(), v);
          memref::StoreOp::create(b, loc, v, a, ValueRange{r, j});
        });
        if (l.intDot)
          quantizeRow(a, r, l.d, aq.q, aq.scales, aq.sums);
      });
    });

  // The two GEMMs, each one private function that both schedules call (the
  // fused schedule on one chunk at a time), so each tile's code exists once.
  Value wUp = params.lookup("w_up"), wGate = params.lookup("w_gate"),
        bUp = params.lookup("b_up"), bGate = params.lookup("b_gate");
  auto callUp = [&](Value c, Value colBase, Value p0, Value p1) {
    UpGemmArgs args{dynamic(a), dynamic(c), colBase, m,   p0,   p1,
                    {},         {},         wUp,     wGate, bUp, bGate};
    if (l.intDot) {
      args.a = dynamic(aq.q);
      args.aScales = dynamic(aq.scales);
      args.aSums = dynamic(aq.sums);
    }
    callUpGemm(args);
  };
  Value wDown = params.lookup("w_down");
  Value bDown = params.lookup("b_down");
  auto callDown = [&](Value a2, Value c, Value p0, Value p1, Value q0, Value q1,
                      Value aColBase, Value mode, Value kList = {},
                      Value kCount = {}) {
    DownGemmArgs args;
    args.kList = kList;
    args.kCount = kCount;
    args.a = dynamic(a2);
    if (l.intDot) {
      args.a = dynamic(hq.q);
      args.aScales = dynamic(hq.scales);
      args.aSums = dynamic(hq.sums);
    }
    args.c = dynamic(c);
    args.m = m;
    args.p0 = p0;
    args.p1 = p1;
    if (l.fusedMaxM > 0) {
      args.q0 = q0;
      args.q1 = q1;
      args.aColBase = aColBase;
    }
    if (l.fusedMaxM > 0 || l.finishInGemm)
      args.mode = mode;
    args.wDown = wDown;
    if (l.finishInGemm) {
      args.y = y;
      if (op.getResidual())
        args.x = x;
      args.bDown = bDown;
    }
    callDownGemm(args);
  };

  inPhase(phase, 1, [&] { callUp(h, idx(0), begin, end); }); // up panels
  if (l.intDot) // over rows: only the first d_ff columns of H are real
    inPhase(phase, 2, [&] {
      loop(begin, end, idx(1), [&](Value r) {
        quantizeRow(h, r, l.f, hq.q, hq.scales, hq.sums);
      });
    });
  // The two-pass sparse bucket, phase 2 (one unit): the rows of W_down
  // some row's activation needs, over the real d_ff columns of H, and
  // their count after them.
  Value list;
  if (l.sparseTwoPass()) {
    list = view(ws, m, l.listOffset(), l.listWidth(), b.getI32Type());
    inPhase(phase, 2, [&] {
      Value count = listNeededRows(h, m, idx(l.f), list);
      memref::StoreOp::create(
          b, loc, arith::IndexCastOp::create(b, loc, b.getI32Type(), count),
          list, ValueRange{idx(0), idx(l.hWidth)});
    });
  }
  // Into O; only the first d_ff columns of H are real.
  inPhase(phase, 3, [&] { // over down panels
    auto dense = [&] {
      callDown(h, o, begin, end, idx(0), idx(l.chunks), idx(0),
               idx(l.finishInGemm ? 2 : 0));
    };
    if (!list)
      return dense();
    Value sparse = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, m,
                                         idx(l.sparseMaxM));
    auto ifOp = scf::IfOp::create(b, loc, sparse, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value count = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, list,
                               ValueRange{idx(0), idx(l.hWidth)}));
    callDown(h, o, begin, end, idx(0), idx(l.chunks), idx(0),
             idx(l.finishInGemm ? 2 : 0), dynamic(list), count);
    b.setInsertionPointToStart(ifOp.elseBlock());
    dense();
  });

  // Phase 4 (small m), over chunk groups: the fused schedule.
  // The sparse bucket: m <= sparse_max_m lists each chunk's needed rows.
  Value sparseRun;
  if (l.sparseMaxM > 0)
    sparseRun = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, m,
                                      idx(l.sparseMaxM));
  if (l.fusedMaxM > 0)
    inPhase(phase, 4, [&] {
      loop(begin, end, idx(1), [&](Value g) {
        // This group's chunk buffer Hc [m, chunk] and partial output Og.
        Value hc = groupView(ws, m, g, /*output=*/false);
        Value og = groupView(ws, m, g, /*output=*/true);
        Value first = arith::MulIOp::create(b, loc, g, idx(l.chunksPerGroup));
        Value last = arith::MinSIOp::create(
            b, loc, arith::AddIOp::create(b, loc, first, idx(l.chunksPerGroup)),
            idx(l.chunks));
        loop(first, last, idx(1), [&](Value c) {
          // Hc = act(A W_up[:, chunk c]) over the chunk's up panels ...
          Value p0 = arith::MulIOp::create(b, loc, c, idx(l.panelsPerChunk));
          Value p1 = arith::MinSIOp::create(
              b, loc, arith::AddIOp::create(b, loc, p0, idx(l.panelsPerChunk)),
              idx(l.npUp));
          callUp(hc, arith::MulIOp::create(b, loc, p0, idx(l.nrUp)), p0, p1);
          // ... then Og += Hc W_down[chunk c, :] (the first chunk starts
          // Og), over the chunk's real rows of W_down only: padding
          // columns of Hc may hold act(0) != 0.
          Value c1 = arith::AddIOp::create(b, loc, c, idx(1));
          Value k0 = arith::MulIOp::create(b, loc, c, idx(l.chunk));
          Value notFirst =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, c, first);
          Value mode =
              arith::IndexCastUIOp::create(b, loc, b.getIndexType(), notFirst);
          auto dense = [&] {
            callDown(hc, og, idx(0), idx(l.npDown), c, c1, k0, mode);
          };
          if (!sparseRun)
            return dense();
          auto ifOp =
              scf::IfOp::create(b, loc, sparseRun, /*withElseRegion=*/true);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          // The chunk's real rows of W_down only (padding columns of Hc
          // may hold act(0) != 0).
          Value list = listView(ws, m, g);
          Value len = arith::MinSIOp::create(
              b, loc, idx(l.chunk),
              arith::SubIOp::create(b, loc, idx(l.f), k0));
          Value count = listNeededRows(hc, m, len, list);
          callDown(hc, og, idx(0), idx(l.npDown), c, c1, k0, mode,
                   dynamic(list), count);
          b.setInsertionPointToStart(ifOp.elseBlock());
          dense();
        });
      });
    });

  // Phase 5, over rows: down bias, residual, post-norm, storage conversion.
  // O is the two-pass output, or the sum of the groups' partial outputs;
  // when GEMM 2 finishes the output itself, only the fused bucket has it.
  if (l.finishInGemm && l.fusedMaxM == 0)
    return;
  Value fused;
  SmallVector<Value> partials;
  if (l.fusedMaxM > 0) {
    fused = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, m,
                                  idx(l.fusedMaxM));
    for (int64_t g = 0; g < l.groups; ++g)
      partials.push_back(groupView(ws, m, idx(g), /*output=*/true));
  }
  inPhase(phase, 5, [&] {
    loop(begin, end, idx(1), [&](Value r) {
      auto finish = [&](Value j) -> Value {
        Value v = memref::LoadOp::create(b, loc, o, ValueRange{r, j});
        if (fused) {
          // Always in group order: the sum does not depend on which thread
          // ran which group.
          Value sum =
              memref::LoadOp::create(b, loc, partials[0], ValueRange{r, j});
          for (Value partial : ArrayRef(partials).drop_front())
            sum = arith::AddFOp::create(
                b, loc, sum,
                memref::LoadOp::create(b, loc, partial, ValueRange{r, j}));
          v = l.finishInGemm
                  ? sum
                  : arith::SelectOp::create(b, loc, fused, sum, v).getResult();
        }
        if (bDown)
          v = arith::AddFOp::create(
              b, loc, v,
              toF32(memref::LoadOp::create(b, loc, bDown, ValueRange{j})));
        return v;
      };
      // A post-norm's pre-norm row goes back where it was read from: O, or
      // (fused) group 0's partial output, the only section of that bucket
      // known not to overlap another group's.
      Value pre = o;
      if (fused && !l.finishInGemm)
        pre = arith::SelectOp::create(b, loc, fused, partials[0], o);
      outputRow(x, y, r, finish, pre, r);
    });
  });
}
