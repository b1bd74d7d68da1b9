//===- MoePhases.cpp - the phase schedules of a mixture of experts --------===//
//
//   A  = f32(pre-norm(x)) where needed; the row's router logits, its top k
//        experts and their weights                  (phase 0, rows)
//   per-expert row counts and offsets; each of a row's experts gets a
//        routed row, rows in token order within an expert (stable)
//                                                   (phase 1, one unit)
//   Ap = the matmul input of each routed row        (phase 2, routed rows)
//   Hp = act(Ap W_up[e] + b_up[e]) [* gate] over each expert's rows
//                                                   (phase 3, up panel groups
//                                                    x experts)
//   Hp quantized to int8 (integer dot products)     (phase 4, routed rows)
//   Op = Hp W_down[e]                               (phase 5, down panel
//                                                    groups x experts)
//   y  = T(post-norm(sum_j g_j (Op[pos_j] + b_down[e_j]) [+ x]))
//                                                   (phase 6, rows)
//
// Once the rows are grouped by expert, each expert's GEMMs are the dense
// two-pass GEMMs (the same outlined functions) on its contiguous block of
// routed rows, with its slice of the stacked weights. The GEMM phases'
// units are panel-major (unit = panel group * experts + expert, groups of
// the strategy's nc / nr panels), so the runtime's contiguous split gives
// every thread the same panels of every expert: the work stays balanced
// however skewed the routing, and at decode, where only the selected
// experts have rows, their panels are spread over all threads and the
// other experts' weights are never read. A group's panels run in one GEMM
// call, so an expert's K blocks read its rows once per group and its tail
// rows take the tiles that span panels (KBlocks.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::cpu;

namespace {
/// A workspace section of `rows` rows of `width` elements, starting at a
/// byte offset that depends on m; and views of a block of its rows.
struct Section {
  Value start; // byte offset in the workspace
  int64_t width;
  Type element;
  int64_t elementBytes;
};
} // namespace

Value KernelBuilder::stackedSlice(const llvm::StringMap<Value> &params,
                                  const llvm::StringMap<ExpertParam> &stacked,
                                  StringRef name, Value e) {
  Value flat = params.lookup(name);
  if (!flat)
    return Value();
  const ExpertParam &p = stacked.find(name)->second;
  Value shift = arith::MulIOp::create(b, loc, e, idx(p.stride));
  return memref::ViewOp::create(b, loc, p.packed, flat, shift, ValueRange{})
      .getResult();
}

void KernelBuilder::buildMoe(Value x, const llvm::StringMap<Value> &params,
                             const llvm::StringMap<ExpertParam> &stacked,
                             Value y, Value ws, Value phase, Value begin,
                             Value end) {
  auto add = [&](Value a, Value c) {
    return arith::AddIOp::create(b, loc, a, c).getResult();
  };
  auto mul = [&](Value a, Value c) {
    return arith::MulIOp::create(b, loc, a, c).getResult();
  };
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), i8 = b.getI8Type();
  auto toIndex = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v).getResult();
  };
  auto fromIndex = [&](Type t, Value v) {
    return arith::IndexCastOp::create(b, loc, t, v).getResult();
  };

  Value m = memref::DimOp::create(b, loc, x, 0);
  int64_t act = l.moeActive, total = l.moeTotal, routed = l.moeExperts;
  Value rRows = mul(m, idx(act));
  normScale = params.lookup("norm_scale");
  normShift = params.lookup("norm_shift");

  // The head: per expert, its routed rows' end (after phase 1) and start.
  Value table = memref::ViewOp::create(b, loc, MemRefType::get({2, total}, i64),
                                       ws, idx(0), ValueRange{});
  // The sections, in workspace order (Layout.h).
  Value at = idx(l.moeHeadBytes());
  auto section = [&](Value rows, int64_t width, Type element,
                     int64_t reserved) {
    Section s{at, width, element, int64_t(element.getIntOrFloatBitWidth() / 8)};
    at = add(at, mul(rows, idx(reserved)));
    return s;
  };
  // Rows [first, first + n) of section s, as [n, width].
  auto rowsOf = [&](const Section &s, Value first, Value n) {
    Value shift = add(s.start, mul(first, idx(s.width * s.elementBytes)));
    auto type = MemRefType::get({ShapedType::kDynamic, s.width}, s.element);
    return memref::ViewOp::create(b, loc, type, ws, shift, ValueRange{n})
        .getResult();
  };
  Section aSec = section(m, l.aWidth, operandType(), 4 * l.aWidth);
  Section apSec = section(rRows, l.apWidth(), operandType(), 4 * l.apWidth());
  Section hpSec = section(rRows, l.hWidth, operandType(), 4 * l.hWidth);
  Section opSec = section(rRows, l.oWidth, f32, 4 * l.oWidth);
  struct Quantized {
    Section q, scales, sums;
  } apq, hpq;
  if (l.intDot) {
    auto quantSections = [&](int64_t k) {
      int64_t groups = l.actQuantGroups(k);
      Quantized out;
      out.q = section(rRows, l.actQuantBytes(k), i8, l.actQuantBytes(k));
      out.scales = section(rRows, groups, f32, 4 * groups);
      out.sums = section(rRows, groups, i32, 4 * groups);
      return out;
    };
    apq = quantSections(l.d);
    hpq = quantSections(l.f);
  }
  Section idSec = section(m, act, i32, 4 * act);
  Section weightSec = section(m, act, f32, 4 * act);
  Section posSec = section(m, act, i32, 4 * act);
  Section tokenSec = section(rRows, 1, i32, 4);
  Value a = l.needA ? rowsOf(aSec, idx(0), m) : Value();
  Value ids = rowsOf(idSec, idx(0), m);
  Value weights = rowsOf(weightSec, idx(0), m);
  Value positions = rowsOf(posSec, idx(0), m);
  Value tokens = rowsOf(tokenSec, idx(0), rRows);
  Value ap = rowsOf(apSec, idx(0), rRows);
  Value hp = rowsOf(hpSec, idx(0), rRows);

  // The router's scratch, once per call in the entry block (an alloca in
  // the row loop would grow the stack with every row).
  Value logits, taken, routerIn;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&kernel.front());
    logits = memref::AllocaOp::create(b, loc, MemRefType::get({routed}, f32));
    taken = memref::AllocaOp::create(b, loc, MemRefType::get({routed}, i8));
    routerIn = memref::AllocaOp::create(
        b, loc, MemRefType::get({l.dModel}, f32), ValueRange{},
        b.getI64IntegerAttr(64));
  }

  // w elements of `from` at `at`, as f32.
  auto loadF32 = [&](Value from, ValueRange at, int64_t w) {
    return loadColumns(from, at, w, f32);
  };

  // Phase 0, over rows: A, then the router. The router reads the f32
  // input, kept as A is written (before pair tiles round it to bf16).
  Value router = params.lookup("w_router");
  inPhase(phase, 0, [&] {
    loop(begin, end, idx(1), [&](Value r) {
      startRoute(taken);
      inputRow(x, r, [&](Value j, Value v) {
        memref::StoreOp::create(b, loc, v, routerIn, ValueRange{j});
        if (!l.needA)
          return;
        if (l.dot)
          v = arith::TruncFOp::create(b, loc, b.getBF16Type(), v);
        memref::StoreOp::create(b, loc, v, a, ValueRange{r, j});
      });
      routerLogits(router, routerIn, logits);
      routeRow(r, logits, taken, ids, weights);
    });
  });

  // Phase 1, one unit: counts, offsets, and every (row, expert) pair's
  // routed row, token order within each expert.
  inPhase(phase, 1, [&] {
    loop(begin, end, idx(1), [&](Value) {
      Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
      Value one = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1));
      loop(idx(0), idx(total), idx(1), [&](Value e) {
        memref::StoreOp::create(b, loc, zero, table, ValueRange{idx(0), e});
      });
      auto forEachPair = [&](function_ref<void(Value, Value, Value)> body) {
        loop(idx(0), m, idx(1), [&](Value r) {
          loop(idx(0), idx(act), idx(1), [&](Value j) {
            Value e =
                toIndex(memref::LoadOp::create(b, loc, ids, ValueRange{r, j}));
            body(r, j, e);
          });
        });
      };
      forEachPair([&](Value, Value, Value e) {
        Value n = memref::LoadOp::create(b, loc, table, ValueRange{idx(0), e});
        memref::StoreOp::create(b, loc, arith::AddIOp::create(b, loc, n, one),
                                table, ValueRange{idx(0), e});
      });
      // Offsets; the counts become each expert's cursor.
      auto scan = scf::ForOp::create(b, loc, idx(0), idx(total), idx(1),
                                     ValueRange{zero});
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(scan.getBody());
        Value e = scan.getInductionVar(), running = scan.getRegionIterArg(0);
        Value n = memref::LoadOp::create(b, loc, table, ValueRange{idx(0), e});
        memref::StoreOp::create(b, loc, running, table, ValueRange{idx(1), e});
        memref::StoreOp::create(b, loc, running, table, ValueRange{idx(0), e});
        scf::YieldOp::create(
            b, loc, ValueRange{arith::AddIOp::create(b, loc, running, n)});
      }
      forEachPair([&](Value r, Value j, Value e) {
        Value p = memref::LoadOp::create(b, loc, table, ValueRange{idx(0), e});
        memref::StoreOp::create(b, loc, arith::AddIOp::create(b, loc, p, one),
                                table, ValueRange{idx(0), e});
        memref::StoreOp::create(b, loc, arith::TruncIOp::create(b, loc, i32, p),
                                positions, ValueRange{r, j});
        memref::StoreOp::create(b, loc, fromIndex(i32, r), tokens,
                                ValueRange{toIndex(p), idx(0)});
      });
    });
  });

  // Phase 2, over routed rows: each its token's matmul input.
  inPhase(phase, 2, [&] {
    loop(begin, end, idx(1), [&](Value p) {
      Value r = toIndex(
          memref::LoadOp::create(b, loc, tokens, ValueRange{p, idx(0)}));
      // A's row, or x's widened.
      columns(l.d, [&](Value j, int64_t w) {
        Value v = loadF32(a ? a : x, ValueRange{r, j}, w);
        if (l.dot)
          v = arith::TruncFOp::create(
              b, loc, VectorType::get({w}, b.getBF16Type()), v);
        vector::StoreOp::create(b, loc, v, ap, ValueRange{p, j});
      });
      if (l.intDot)
        quantizeRow(ap, p, l.d, rowsOf(apq.q, idx(0), rRows),
                    rowsOf(apq.scales, idx(0), rRows),
                    rowsOf(apq.sums, idx(0), rRows));
    });
  });

  auto expert = [&](StringRef name, Value e) {
    return stackedSlice(params, stacked, name, e);
  };
  // For units [begin, end) of panel groups x experts (np panels in groups
  // of the strategy's nc / nr): body(p0, p1, expert, first routed row,
  // rows) for each expert with rows, its panels [p0, p1).
  auto overExperts = [&](int64_t np,
                         function_ref<void(Value, Value, Value, Value, Value)>
                             body) {
    // The thread's units expert by expert: an expert's routed rows (A)
    // stay in L2 across its panel groups instead of coming from L3 for
    // each (all experts' rows are m k rows).
    Value groupBegin = arith::DivUIOp::create(b, loc, begin, idx(total));
    Value groupEnd = arith::DivUIOp::create(
        b, loc, add(end, idx(total - 1)), idx(total));
    loop(idx(0), idx(total), idx(1), [&](Value e) {
      // The expert's routed rows, once for all of its groups.
      Value first =
          toIndex(memref::LoadOp::create(b, loc, table, ValueRange{idx(1), e}));
      Value last =
          toIndex(memref::LoadOp::create(b, loc, table, ValueRange{idx(0), e}));
      Value n = arith::SubIOp::create(b, loc, last, first);
      Value any =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, n, idx(0));
      auto ifAny = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifAny.thenBlock());
      loop(groupBegin, groupEnd, idx(1), [&](Value group) {
        Value u = add(mul(group, idx(total)), e);
        Value mine = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, u, begin),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, u, end));
        auto inRange =
            scf::IfOp::create(b, loc, mine, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard rangeGuard(b);
        b.setInsertionPointToStart(inRange.thenBlock());
        Value p0 = mul(group, idx(l.groupPanels));
        Value p1 = arith::MinSIOp::create(
            b, loc, add(p0, idx(l.groupPanels)), idx(np));
        body(p0, p1, e, first, n);
      });
    });
  };

  // Phase 3, over up panel groups x experts.
  inPhase(phase, 3, [&] {
    overExperts(l.npUp, [&](Value p0, Value p1, Value e, Value first,
                            Value n) {
      UpGemmArgs args{dynamic(rowsOf(apSec, first, n)),
                      dynamic(rowsOf(hpSec, first, n)),
                      idx(0),
                      n,
                      p0,
                      p1,
                      {},
                      {},
                      expert("w_up", e),
                      expert("w_gate", e),
                      expert("b_up", e),
                      expert("b_gate", e)};
      if (l.intDot) {
        args.a = dynamic(rowsOf(apq.q, first, n));
        args.aScales = dynamic(rowsOf(apq.scales, first, n));
        args.aSums = dynamic(rowsOf(apq.sums, first, n));
      }
      callUpGemm(args);
    });
  });

  // Phase 4, over routed rows: H quantized (its first d_ff columns).
  if (l.intDot)
    inPhase(phase, 4, [&] {
      loop(begin, end, idx(1), [&](Value p) {
        quantizeRow(hp, p, l.f, rowsOf(hpq.q, idx(0), rRows),
                    rowsOf(hpq.scales, idx(0), rRows),
                    rowsOf(hpq.sums, idx(0), rRows));
      });
    });

  // Phase 5, over down panel groups x experts: Op = Hp W_down[e].
  inPhase(phase, 5, [&] {
    overExperts(l.npDown, [&](Value p0, Value p1, Value e, Value first,
                              Value n) {
      DownGemmArgs args;
      args.a = dynamic(rowsOf(hpSec, first, n));
      if (l.intDot) {
        args.a = dynamic(rowsOf(hpq.q, first, n));
        args.aScales = dynamic(rowsOf(hpq.scales, first, n));
        args.aSums = dynamic(rowsOf(hpq.sums, first, n));
      }
      args.c = dynamic(rowsOf(opSec, first, n));
      args.m = n;
      args.p0 = p0;
      args.p1 = p1;
      args.wDown = expert("w_down", e);
      callDownGemm(args);
    });
  });

  // Phase 6, over rows: the weighted sum of the row's experts, in routing
  // order (the top k, then the shared ones), accumulated in f32 in its
  // first expert's output row, then the residual, post-norm and storage
  // type. Every row sums in the same order: results depend on neither the
  // thread count nor the rows batched with it.
  Value o = rowsOf(opSec, idx(0), rRows);
  Value bDown = params.lookup("b_down");
  inPhase(phase, 6, [&] {
    loop(begin, end, idx(1), [&](Value r) {
      // Slot s of the row: its routed row, weight and expert's b_down.
      struct Slot {
        Value pos, gain, bias;
      };
      auto slot = [&](Value s) {
        Slot out;
        out.pos = toIndex(
            memref::LoadOp::create(b, loc, positions, ValueRange{r, s}));
        out.gain = memref::LoadOp::create(b, loc, weights, ValueRange{r, s});
        Value e =
            toIndex(memref::LoadOp::create(b, loc, ids, ValueRange{r, s}));
        if (bDown)
          out.bias = expert("b_down", e);
        return out;
      };
      // g (O[pos] + b_down[e]) at columns [j, j + w).
      auto term = [&](const Slot &s, Value j, int64_t w) -> Value {
        Value t = loadF32(o, ValueRange{s.pos, j}, w);
        if (s.bias)
          t = arith::AddFOp::create(b, loc, t,
                                    loadF32(s.bias, ValueRange{j}, w));
        Value g = vector::BroadcastOp::create(
            b, loc, VectorType::get({w}, f32), s.gain);
        return arith::MulFOp::create(b, loc, g, t);
      };
      Slot first = slot(idx(0));
      Value pos0 = first.pos;
      columns(l.d, [&](Value j, int64_t w) {
        vector::StoreOp::create(b, loc, term(first, j, w), o,
                                ValueRange{pos0, j});
      });
      loop(idx(1), idx(act), idx(1), [&](Value s) {
        Slot next = slot(s);
        columns(l.d, [&](Value j, int64_t w) {
          Value sum = arith::AddFOp::create(
              b, loc, loadF32(o, ValueRange{pos0, j}, w), term(next, j, w));
          vector::StoreOp::create(b, loc, sum, o, ValueRange{pos0, j});
        });
      });
      // The post-norm's pre-norm row stays in the accumulator row.
      outputRow(
          x, y, r,
          [&](Value j) {
            return memref::LoadOp::create(b, loc, o, ValueRange{pos0, j})
                .getResult();
          },
          o, pos0);
    });
  });
}

void KernelBuilder::startRoute(Value taken) {
  loop(idx(0), idx(l.moeExperts), idx(1), [&](Value e) {
    memref::StoreOp::create(
        b, loc,
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(b.getI8Type(), 0)),
        taken, ValueRange{e});
  });
}

void KernelBuilder::routerLogits(Value router, Value in, Value logits) {
  // logits[e] = sum_i in[i] W_router[i, e], over i in order for every e
  // (the same order whatever the row's neighbours), as vectors of the
  // target's f32 lanes of experts, a row of W_router being contiguous: up
  // to 8 of them in registers per pass over the row. Kept in memory (a
  // load, add and store per expert and i), the logits took most of phase
  // 0 -- more than the rest of the mixture's row phases together
  // (Mixtral-shaped bf16, M = 256, Zen 5).
  const int64_t lanes = l.lanes, perPass = 8 * lanes;
  const int64_t experts = l.moeExperts;
  Type element = cast<MemRefType>(router.getType()).getElementType();
  for (int64_t e0 = 0; e0 < experts; e0 += perPass) {
    SmallVector<int64_t> widths;
    for (int64_t c = e0; c < std::min(experts, e0 + perPass); c += lanes)
      widths.push_back(std::min(lanes, experts - c));
    SmallVector<Value> init;
    for (int64_t w : widths)
      init.push_back(arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(VectorType::get({w}, f32), 0.0f)));
    auto pass = scf::ForOp::create(b, loc, idx(0), idx(l.dModel), idx(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(pass.getBody());
      Value i = pass.getInductionVar();
      Value ai = memref::LoadOp::create(b, loc, in, ValueRange{i});
      SmallVector<Value> sums;
      for (auto [c, w] : llvm::enumerate(widths)) {
        Value wv = vector::LoadOp::create(
            b, loc, VectorType::get({w}, element), router,
            ValueRange{i, idx(e0 + int64_t(c) * lanes)});
        if (!element.isF32())
          wv = arith::ExtFOp::create(b, loc, VectorType::get({w}, f32), wv);
        Value av = vector::BroadcastOp::create(b, loc, wv.getType(), ai);
        sums.push_back(arith::AddFOp::create(
            b, loc, pass.getRegionIterArg(c),
            arith::MulFOp::create(b, loc, av, wv)));
      }
      scf::YieldOp::create(b, loc, sums);
    }
    for (auto [c, w] : llvm::enumerate(widths))
      vector::StoreOp::create(b, loc, pass.getResult(c), logits,
                              ValueRange{idx(e0 + int64_t(c) * lanes)});
  }
}

void KernelBuilder::routeRow(Value r, Value logits, Value taken, Value ids,
                             Value weights) {
  MoeAttr moe = *op.getMoe();
  int64_t routed = l.moeExperts, topK = l.moeTopK;
  Type i32 = b.getI32Type(), i8 = b.getI8Type();
  auto fconst = [&](double v) { return f32Constant(b, loc, f32, v); };
  auto i8const = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i8, v));
  };
  auto weight = [&](Value j) {
    return memref::LoadOp::create(b, loc, weights, ValueRange{r, j})
        .getResult();
  };
  auto setWeight = [&](Value j, Value v) {
    memref::StoreOp::create(b, loc, v, weights, ValueRange{r, j});
  };

  // The top k in descending order, ties to the lower index: each pick is
  // the first untaken expert that no other untaken one exceeds. A NaN
  // logit never compares greater, so a pick always exists.
  loop(idx(0), idx(topK), idx(1), [&](Value j) {
    auto scan = scf::ForOp::create(
        b, loc, idx(0), idx(routed), idx(1),
        ValueRange{fconst(-std::numeric_limits<double>::infinity()), idx(-1)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(scan.getBody());
      Value e = scan.getInductionVar();
      Value best = scan.getRegionIterArg(0), bestIdx = scan.getRegionIterArg(1);
      Value v = memref::LoadOp::create(b, loc, logits, ValueRange{e});
      Value free = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          memref::LoadOp::create(b, loc, taken, ValueRange{e}), i8const(0));
      Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         bestIdx, idx(0));
      Value greater =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, v, best);
      Value better = arith::AndIOp::create(
          b, loc, free, arith::OrIOp::create(b, loc, none, greater));
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::SelectOp::create(b, loc, better, v, best),
                     arith::SelectOp::create(b, loc, better, e, bestIdx)});
    }
    Value pick = scan.getResult(1);
    memref::StoreOp::create(b, loc, i8const(1), taken, ValueRange{pick});
    memref::StoreOp::create(b, loc,
                            arith::IndexCastOp::create(b, loc, i32, pick), ids,
                            ValueRange{r, j});
    // The logit for now; its weight below.
    setWeight(j, scan.getResult(0));
  });

  // The weights, relative to the largest logit (the first pick): the
  // selected ones' exponentials, over the softmax's sum.
  Value top = weight(idx(0));
  auto expOf = [&](Value v) {
    return math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, v, top))
        .getResult();
  };
  loop(idx(0), idx(topK), idx(1),
       [&](Value j) { setWeight(j, expOf(weight(j))); });
  Value denom = moe.getRouter() == Router::softmax_topk
                    ? sumOver(routed,
                              [&](Value e) {
                                return expOf(memref::LoadOp::create(
                                    b, loc, logits, ValueRange{e}));
                              })
                    : sumOver(topK, weight);
  auto divideBy = [&](Value s) {
    loop(idx(0), idx(topK), idx(1), [&](Value j) {
      setWeight(j, arith::DivFOp::create(b, loc, weight(j), s));
    });
  };
  divideBy(denom);
  if (moe.getRouter() == Router::softmax_topk && moe.getNormalize())
    divideBy(sumOver(topK, weight));
  // The shared experts, weight 1.
  loop(idx(topK), idx(l.moeActive), idx(1), [&](Value j) {
    Value e = arith::AddIOp::create(b, loc, j, idx(routed - topK));
    memref::StoreOp::create(b, loc, arith::IndexCastOp::create(b, loc, i32, e),
                            ids, ValueRange{r, j});
    setWeight(j, fconst(1.0));
  });
}
