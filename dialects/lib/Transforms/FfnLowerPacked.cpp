//===- FfnLowerPacked.cpp - packed, register-tiled FFN kernels ------------===//
//
// For an FFN function with a #ffn.strategy<vector_bits, mr, nr, mc>:
//
//   func @f(%x: memref<?xDxT>, <packed params>, %y: memref<?xDxT>,
//           %ws: memref<?xi8>)        // ws: m * workspace_per_row bytes
//     A  = x, or f32(pre-norm(x)) in ws            (row loops)
//     H  = act(A W_up + b_up) [* act(A W_gate + b_gate)]   (GEMM 1, fused)
//     O  = H W_down                                 (GEMM 2)
//     y  = T(post-norm(O + b_down [+ x]))          (row loops)
//
// Each GEMM: for each mc-row block, for each packed weight panel, for each
// mr-row tile (then 1-row tiles for the rest of the block), a K loop that
// carries mr x (nr / lanes) accumulator vectors and does one broadcast of A
// per row and one FMA per accumulator per k. The epilogue of GEMM 1 runs on
// the accumulators before they are stored.
//
//===----------------------------------------------------------------------===//

#include "ffn/IR/FfnOps.h"
#include "ffn/Transforms/Activation.h"
#include "ffn/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNLOWERPACKED
#include "ffn/Transforms/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;

namespace {

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// Sizes derived from the FFN and its strategy.
struct Layout {
  int64_t d, f, lanes, mr, mc;
  int64_t nrUp, npUp, fp;         // up/gate panels: width, count, padded d_ff
  int64_t nrDown, npDown, dp;     // down panels
  int64_t aWidth, hWidth, oWidth; // f32 row strides in the workspace
  bool needA;
  bool prefetch;
  int64_t workspacePerRow() const { return 4 * (aWidth + hWidth + oWidth); }
};

Layout layoutFor(FfnOp op, StrategyAttr s) {
  Layout l;
  l.d = op.getDModel();
  l.f = op.getDFf();
  l.lanes = s.getVectorBits() / 32;
  l.mr = s.getMr();
  l.mc = s.getMc();
  l.prefetch = s.getPrefetch();
  // A gated FFN splits the tile's columns between gate and up.
  l.nrUp = op.getGated() ? std::max(l.lanes, s.getNr() / 2) : s.getNr();
  l.nrUp = l.nrUp / l.lanes * l.lanes;
  l.npUp = (l.f + l.nrUp - 1) / l.nrUp;
  l.fp = l.npUp * l.nrUp;
  l.nrDown = s.getNr();
  l.npDown = (l.d + l.nrDown - 1) / l.nrDown;
  l.dp = l.npDown * l.nrDown;
  bool f32 = op.getStorageType().isF32();
  bool preNorm =
      op.getNorm() && op.getNorm()->getPosition() == NormPosition::pre;
  l.needA = !f32 || preNorm;
  // Row strides are multiples of 16 floats so every section and row of the
  // 64-byte aligned workspace stays 64-byte aligned.
  l.aWidth = l.needA ? roundUp(l.d, 16) : 0;
  l.hWidth = roundUp(l.fp, 16);
  l.oWidth = roundUp(l.dp, 16);
  return l;
}

/// Emits the kernel body. Holds the values every part of it uses.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, FfnOp op, const Layout &l)
      : b(b), loc(loc), op(op), l(l), f32(b.getF32Type()),
        storage(op.getStorageType()), vecF32(VectorType::get({l.lanes}, f32)),
        vecStorage(VectorType::get({l.lanes}, op.getStorageType())) {}

  /// `args`: x, params (kernelParams order, by name), y, workspace, and the
  /// phase to run over units [begin, end) (see kernelPhaseUnits).
  void build(Value x, const llvm::StringMap<Value> &params, Value y, Value ws,
             Value phase, Value begin, Value end);

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Attribute noUnroll() {
    MLIRContext *ctx = b.getContext();
    return LLVM::LoopAnnotationAttr::get(
        ctx, /*disableNonforced=*/nullptr,
        LLVM::LoopVectorizeAttr::get(ctx, /*disable=*/b.getBoolAttr(true),
                                     /*predicateEnable=*/nullptr,
                                     /*scalableEnable=*/nullptr,
                                     /*width=*/nullptr,
                                     /*followupVectorized=*/nullptr,
                                     /*followupEpilogue=*/nullptr,
                                     /*followupAll=*/nullptr),
        /*interleave=*/nullptr,
        LLVM::LoopUnrollAttr::get(ctx, /*disable=*/b.getBoolAttr(true),
                                  /*count=*/nullptr,
                                  /*runtimeDisable=*/nullptr,
                                  /*full=*/nullptr,
                                  /*followupUnrolled=*/nullptr,
                                  /*followupRemainder=*/nullptr,
                                  /*followupAll=*/nullptr),
        /*unrollAndJam=*/nullptr, /*licm=*/nullptr, /*distribute=*/nullptr,
        /*pipeline=*/nullptr, /*peeled=*/nullptr, /*unswitch=*/nullptr,
        /*mustProgress=*/nullptr, /*isVectorized=*/nullptr,
        /*startLoc=*/nullptr, /*endLoc=*/nullptr, /*parallelAccesses=*/{});
  }
  Value toF32(Value v) {
    Type t = v.getType();
    Type target = isa<VectorType>(t) ? Type(vecF32) : f32;
    if (getElementTypeOrSelf(t).isF32())
      return v;
    return arith::ExtFOp::create(b, loc, target, v);
  }
  Value toStorage(Value v) {
    if (storage.isF32())
      return v;
    return arith::TruncFOp::create(b, loc, storage, v);
  }
  Value view(Value ws, Value rows, int64_t byteRowOffset, int64_t width) {
    Value shift = arith::MulIOp::create(b, loc, rows, idx(byteRowOffset));
    auto type = MemRefType::get({ShapedType::kDynamic, width}, f32);
    return memref::ViewOp::create(b, loc, type, ws, shift, ValueRange{rows});
  }
  /// for (i = lb; i < ub; i += step) body(i)
  void loop(Value lb, Value ub, Value step, function_ref<void(Value)> body) {
    auto forOp = scf::ForOp::create(b, loc, lb, ub, step);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    body(forOp.getInductionVar());
  }
  /// sum over j < n of term(j), as a scalar f32.
  Value sumOver(int64_t n, function_ref<Value(Value)> term) {
    Value zero = f32Constant(b, loc, f32, 0.0);
    auto forOp =
        scf::ForOp::create(b, loc, idx(0), idx(n), idx(1), ValueRange{zero});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    Value t = term(forOp.getInductionVar());
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::AddFOp::create(
                             b, loc, forOp.getRegionIterArg(0), t)});
    return forOp.getResult(0);
  }

  void normRow(function_ref<Value(Value)> load,
               function_ref<void(Value, Value)> store, Value scale,
               Value shift);

  struct Gemm {
    Value a;                   // memref<?xK x f32>
    int64_t k;                 // reduction length
    SmallVector<Value> panels; // memref<NP x K' x NR x T>, K' >= k
    int64_t nr, np;
    Value c; // memref<?x W x f32>
    // Turns the accumulators of one row ([panel matrix][vector]) into the
    // vectors to store; `col` is the tile's first column.
    std::function<SmallVector<Value>(ArrayRef<SmallVector<Value>>, Value col)>
        epilogue;
  };
  void gemm(const Gemm &g, Value m, Value panelBegin, Value panelEnd);
  /// if (phase == index) body()
  void inPhase(Value phase, int64_t index, function_ref<void()> body) {
    Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, phase,
                                     idx(index));
    auto ifOp = scf::IfOp::create(b, loc, is, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }
  void tile(const Gemm &g, Value row0, int64_t rows, Value panel,
            Value prefetchPanel);

  OpBuilder &b;
  Location loc;
  FfnOp op;
  const Layout &l;
  Type f32, storage;
  VectorType vecF32, vecStorage;
};

void KernelBuilder::normRow(function_ref<Value(Value)> load,
                            function_ref<void(Value, Value)> store, Value scale,
                            Value shift) {
  NormAttr norm = *op.getNorm();
  bool layer = norm.getKind() == NormKind::layernorm;
  Value invD = f32Constant(b, loc, f32, 1.0 / static_cast<double>(l.d));
  Value mean;
  if (layer)
    mean = arith::MulFOp::create(b, loc, sumOver(l.d, load), invD);
  Value sq = sumOver(l.d, [&](Value j) {
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
  loop(idx(0), idx(l.d), idx(1), [&](Value j) {
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

void KernelBuilder::tile(const Gemm &g, Value row0, int64_t rows, Value panel,
                         Value prefetchPanel) {
  int64_t nv = g.nr / l.lanes;
  int64_t nmat = g.panels.size();
  Value zero = f32Constant(b, loc, vecF32, 0.0);
  SmallVector<Value> init(rows * nmat * nv, zero);
  auto accIndex = [&](int64_t r, int64_t mat, int64_t v) {
    return (r * nmat + mat) * nv + v;
  };

  auto kLoop = scf::ForOp::create(b, loc, idx(0), idx(g.k), idx(1), init);
  // The body is already a full register tile of FMAs; unrolling or
  // re-vectorizing the K loop only multiplies code (and compile time).
  kLoop->setAttr("llvm.loop_annotation", noUnroll());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k = kLoop.getInductionVar();
    SmallVector<Value> acc(kLoop.getRegionIterArgs());
    SmallVector<Value> weights;
    for (int64_t mat = 0; mat < nmat; ++mat)
      for (int64_t v = 0; v < nv; ++v)
        weights.push_back(toF32(
            vector::LoadOp::create(b, loc, vecStorage, g.panels[mat],
                                   ValueRange{panel, k, idx(v * l.lanes)})));
    // Pull the next panel's row k toward L2 while this one computes, so the
    // first tile of the next panel does not wait on DRAM.
    if (l.prefetch)
      for (int64_t mat = 0; mat < nmat; ++mat)
        memref::PrefetchOp::create(b, loc, g.panels[mat],
                                   ValueRange{prefetchPanel, k, idx(0)},
                                   /*isWrite=*/false, /*localityHint=*/2,
                                   /*isDataCache=*/true);
    for (int64_t r = 0; r < rows; ++r) {
      Value row = arith::AddIOp::create(b, loc, row0, idx(r));
      Value a = memref::LoadOp::create(b, loc, g.a, ValueRange{row, k});
      Value splat = vector::BroadcastOp::create(b, loc, vecF32, a);
      for (int64_t mat = 0; mat < nmat; ++mat)
        for (int64_t v = 0; v < nv; ++v) {
          Value &c = acc[accIndex(r, mat, v)];
          c = vector::FMAOp::create(b, loc, splat, weights[mat * nv + v], c);
        }
    }
    scf::YieldOp::create(b, loc, acc);
  }

  Value col = arith::MulIOp::create(b, loc, panel, idx(g.nr));
  for (int64_t r = 0; r < rows; ++r) {
    SmallVector<SmallVector<Value>> rowAcc(nmat);
    for (int64_t mat = 0; mat < nmat; ++mat)
      for (int64_t v = 0; v < nv; ++v)
        rowAcc[mat].push_back(kLoop.getResult(accIndex(r, mat, v)));
    SmallVector<Value> out = g.epilogue ? g.epilogue(rowAcc, col) : rowAcc[0];
    Value row = arith::AddIOp::create(b, loc, row0, idx(r));
    for (int64_t v = 0; v < nv; ++v) {
      Value c = arith::AddIOp::create(b, loc, col, idx(v * l.lanes));
      vector::StoreOp::create(b, loc, out[v], g.c, ValueRange{row, c});
    }
  }
}

void KernelBuilder::gemm(const Gemm &g, Value m, Value panelBegin,
                         Value panelEnd) {
  Value mr = idx(l.mr), mc = idx(l.mc), one = idx(1);
  loop(idx(0), m, mc, [&](Value i0) {
    Value end = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, i0, mc), m);
    Value count = arith::SubIOp::create(b, loc, end, i0);
    Value full = arith::AddIOp::create(
        b, loc, i0,
        arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, count, mr),
                              mr));
    // The weight panel outside the row tiles: it stays in cache while the
    // block's rows stream past it.
    loop(panelBegin, panelEnd, one, [&](Value panel) {
      Value next = arith::MinSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, panel, one), idx(g.np - 1));
      loop(i0, full, mr, [&](Value row) { tile(g, row, l.mr, panel, next); });
      // What is left of the block: at most one half-height tile, then
      // single rows (M = 12 with 8-row tiles: 8 + 4, not 8 + 1 + 1 + 1 + 1;
      // measured 1.6 -> 1.0 ms for BERT-base).
      Value rest = full;
      if (l.mr >= 4) {
        int64_t half = l.mr / 2;
        Value fits = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sge,
            arith::SubIOp::create(b, loc, end, full), idx(half));
        auto ifOp = scf::IfOp::create(b, loc, fits, /*withElseRegion=*/false);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          tile(g, full, half, panel, next);
        }
        rest = arith::SelectOp::create(
            b, loc, fits, arith::AddIOp::create(b, loc, full, idx(half)), full);
      }
      loop(rest, end, one, [&](Value row) { tile(g, row, 1, panel, next); });
    });
  });
}

void KernelBuilder::build(Value x, const llvm::StringMap<Value> &params,
                          Value y, Value ws, Value phase, Value begin,
                          Value end) {
  Value m = memref::DimOp::create(b, loc, x, 0);
  std::optional<NormAttr> norm = op.getNorm();
  bool preNorm = norm && norm->getPosition() == NormPosition::pre;
  bool postNorm = norm && norm->getPosition() == NormPosition::post;
  Value scale = params.lookup("norm_scale"),
        shift = params.lookup("norm_shift");

  // Workspace sections, each [m, width] f32: A, H, O.
  Value a = x;
  if (l.needA)
    a = view(ws, m, 0, l.aWidth);
  Value h = view(ws, m, 4 * l.aWidth, l.hWidth);
  Value o = view(ws, m, 4 * (l.aWidth + l.hWidth), l.oWidth);

  // Phase 0, over rows: A = f32(pre-norm(x)).
  if (l.needA)
    inPhase(phase, 0, [&] {
      loop(begin, end, idx(1), [&](Value r) {
        auto load = [&](Value j) {
          return toF32(memref::LoadOp::create(b, loc, x, ValueRange{r, j}));
        };
        auto store = [&](Value j, Value v) {
          memref::StoreOp::create(b, loc, v, a, ValueRange{r, j});
        };
        if (preNorm)
          normRow(load, store, scale, shift);
        else
          loop(idx(0), idx(l.d), idx(1), [&](Value j) { store(j, load(j)); });
      });
    });

  // GEMM 1 with the bias/activation/gate epilogue in registers.
  Gemm up;
  up.a = a;
  up.k = l.d;
  up.panels.push_back(params.lookup("w_up"));
  if (op.getGated())
    up.panels.push_back(params.lookup("w_gate"));
  up.nr = l.nrUp;
  up.np = l.npUp;
  up.c = h;
  Value bUp = params.lookup("b_up"), bGate = params.lookup("b_gate");
  up.epilogue = [&](ArrayRef<SmallVector<Value>> acc, Value col) {
    SmallVector<Value> out;
    for (int64_t v = 0; v < l.nrUp / l.lanes; ++v) {
      Value c = arith::AddIOp::create(b, loc, col, idx(v * l.lanes));
      auto biased = [&](Value accv, Value bias) -> Value {
        if (!bias)
          return accv;
        Value bv = toF32(
            vector::LoadOp::create(b, loc, vecStorage, bias, ValueRange{c}));
        return arith::AddFOp::create(b, loc, accv, bv);
      };
      Value u = biased(acc[0][v], bUp);
      if (op.getGated()) {
        Value g = biased(acc[1][v], bGate);
        out.push_back(arith::MulFOp::create(
            b, loc, buildActivation(b, loc, op.getActivation(), g), u));
      } else {
        out.push_back(buildActivation(b, loc, op.getActivation(), u));
      }
    }
    return out;
  };
  inPhase(phase, 1, [&] { gemm(up, m, begin, end); }); // over up panels

  // GEMM 2 into O; only the first d_ff columns of H are real.
  Gemm down;
  down.a = h;
  down.k = l.f;
  down.panels.push_back(params.lookup("w_down"));
  down.nr = l.nrDown;
  down.np = l.npDown;
  down.c = o;
  inPhase(phase, 2, [&] { gemm(down, m, begin, end); }); // over down panels

  // Phase 3, over rows: down bias, residual, post-norm, storage conversion.
  Value bDown = params.lookup("b_down");
  inPhase(phase, 3, [&] {
    loop(begin, end, idx(1), [&](Value r) {
      auto finish = [&](Value j) -> Value {
        Value v = memref::LoadOp::create(b, loc, o, ValueRange{r, j});
        if (bDown)
          v = arith::AddFOp::create(
              b, loc, v,
              toF32(memref::LoadOp::create(b, loc, bDown, ValueRange{j})));
        if (op.getResidual())
          v = arith::AddFOp::create(
              b, loc, v,
              toF32(memref::LoadOp::create(b, loc, x, ValueRange{r, j})));
        return v;
      };
      auto storeY = [&](Value j, Value v) {
        memref::StoreOp::create(b, loc, toStorage(v), y, ValueRange{r, j});
      };
      if (!postNorm) {
        loop(idx(0), idx(l.d), idx(1), [&](Value j) { storeY(j, finish(j)); });
        return;
      }
      loop(idx(0), idx(l.d), idx(1), [&](Value j) {
        memref::StoreOp::create(b, loc, finish(j), o, ValueRange{r, j});
      });
      normRow(
          [&](Value j) {
            return memref::LoadOp::create(b, loc, o, ValueRange{r, j})
                .getResult();
          },
          storeY, scale, shift);
    });
  });
}

/// A private `func @name(%src, %dst)` whose body copies src into dst as
/// `copy(iv)` says, reading zero where `col(iv)` is at or past `limit` (the
/// padding of the last panel).
func::FuncOp
buildPack(OpBuilder &b, Location loc, StringRef name, MemRefType src,
          MemRefType dst, int64_t limit,
          function_ref<Value(OpBuilder &, Location, ValueRange,
                             function_ref<Value(int64_t)>)>
              column,
          function_ref<SmallVector<Value>(ValueRange, Value)> sourceIndex) {
  auto func =
      func::FuncOp::create(b, loc, name, b.getFunctionType({src, dst}, {}));
  func.setPrivate();
  Block *body = func.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  Value s = body->getArgument(0), d = body->getArgument(1);
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(src.getElementType()));
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t size : dst.getShape()) {
    lbs.push_back(c(0));
    ubs.push_back(c(size));
    steps.push_back(c(1));
  }
  scf::buildLoopNest(
      b, loc, lbs, ubs, steps, [&](OpBuilder &nb, Location l, ValueRange iv) {
        Value col = column(nb, l, iv, c);
        Value inside = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                             col, c(limit));
        Value safe = arith::SelectOp::create(nb, l, inside, col, c(0));
        Value v = memref::LoadOp::create(nb, l, s, sourceIndex(iv, safe));
        v = arith::SelectOp::create(nb, l, inside, v, zero);
        memref::StoreOp::create(nb, l, v, d, iv);
      });
  func::ReturnOp::create(b, loc);
  return func;
}

/// dst[p][k][c] = src[k][p * nr + c], zero past the last column.
func::FuncOp buildMatrixPack(OpBuilder &b, Location loc, StringRef name,
                             MemRefType src, MemRefType dst) {
  int64_t nr = dst.getDimSize(2);
  return buildPack(
      b, loc, name, src, dst, src.getDimSize(1),
      [&](OpBuilder &nb, Location l, ValueRange iv,
          function_ref<Value(int64_t)> c) -> Value {
        return arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, iv[0], c(nr)), iv[2]);
      },
      [](ValueRange iv, Value col) {
        return SmallVector<Value>{iv[1], col};
      });
}

/// dst[i] = src[i], zero past the end.
func::FuncOp buildVectorPack(OpBuilder &b, Location loc, StringRef name,
                             MemRefType src, MemRefType dst) {
  return buildPack(
      b, loc, name, src, dst, src.getDimSize(0),
      [](OpBuilder &, Location, ValueRange iv,
         function_ref<Value(int64_t)>) -> Value { return iv[0]; },
      [](ValueRange, Value col) { return SmallVector<Value>{col}; });
}

LogicalResult lowerFunction(func::FuncOp func, FfnOp op) {
  StrategyAttr strategy = *op.getStrategy();
  Layout l = layoutFor(op, strategy);
  OpBuilder b(func);
  Location loc = func.getLoc();
  Type t = op.getStorageType();

  // The packed type of each parameter, and its pack function if any.
  SmallVector<Type> argTypes = {
      MemRefType::get({ShapedType::kDynamic, l.d}, t)};
  SmallVector<Attribute> argNames = {b.getStringAttr("input")};
  SmallVector<Attribute> packs;
  SmallVector<StringRef> paramNames;
  for (unsigned i = 1, e = func.getNumArguments(); i < e; ++i) {
    StringRef name =
        cast<StringAttr>(func.getArgAttr(i, "ffn.param")).getValue();
    auto logical = cast<RankedTensorType>(func.getArgument(i).getType());
    MemRefType source = MemRefType::get(logical.getShape(), t);
    MemRefType packed = source;
    std::string packName = (func.getName() + "_pack_" + name).str();
    if (name == "w_up" || name == "w_gate") {
      packed = MemRefType::get({l.npUp, l.d, l.nrUp}, t);
      buildMatrixPack(b, loc, packName, source, packed);
    } else if (name == "w_down") {
      packed = MemRefType::get({l.npDown, l.f, l.nrDown}, t);
      buildMatrixPack(b, loc, packName, source, packed);
    } else if (name == "b_up" || name == "b_gate") {
      packed = MemRefType::get({l.fp}, t);
      buildVectorPack(b, loc, packName, source, packed);
    } else {
      packName.clear(); // used as is
    }
    argTypes.push_back(packed);
    argNames.push_back(b.getStringAttr(name));
    packs.push_back(b.getStringAttr(packName));
    paramNames.push_back(name);
  }
  argTypes.push_back(MemRefType::get({ShapedType::kDynamic, l.d}, t));
  argNames.push_back(b.getStringAttr("output"));
  argTypes.push_back(MemRefType::get({ShapedType::kDynamic}, b.getI8Type()));
  argNames.push_back(b.getStringAttr("workspace"));
  for (StringRef name : {"phase", "begin", "end"}) {
    argTypes.push_back(b.getIndexType());
    argNames.push_back(b.getStringAttr(name));
  }

  auto kernel = func::FuncOp::create(b, loc, func.getName(),
                                     b.getFunctionType(argTypes, {}));
  for (auto [i, name] : llvm::enumerate(argNames))
    kernel.setArgAttr(i, "ffn.param", name);
  kernel->setAttr("ffn.kernel", b.getUnitAttr());
  kernel->setAttr("ffn.strategy", strategy);
  kernel->setAttr("ffn.pack", b.getArrayAttr(packs));
  kernel->setAttr("ffn.workspace_per_row",
                  b.getI64IntegerAttr(l.workspacePerRow()));
  // Work units of the phases: rows (-1 = m), panels, panels, rows.
  kernel->setAttr("ffn.phase_units",
                  b.getI64ArrayAttr({l.needA ? -1 : 0, l.npUp, l.npDown, -1}));
  std::string text = "packed: " + std::to_string(strategy.getVectorBits()) +
                     "-bit vectors, register tile " + std::to_string(l.mr) +
                     "x" + std::to_string(strategy.getNr()) +
                     (op.getGated() ? " (gate+up " + std::to_string(l.nrUp) +
                                          "+" + std::to_string(l.nrUp) + ")"
                                    : std::string()) +
                     ", cache block " + std::to_string(l.mc) + " rows" +
                     (l.prefetch ? ", next-panel prefetch" : "") +
                     ", fused bias+activation epilogue";
  kernel->setAttr("ffn.strategy_text", b.getStringAttr(text));

  Block *body = kernel.addEntryBlock();
  b.setInsertionPointToStart(body);
  llvm::StringMap<Value> params;
  for (auto [i, name] : llvm::enumerate(paramNames))
    params[name] = body->getArgument(1 + i);
  unsigned n = body->getNumArguments();
  KernelBuilder(b, loc, op, l)
      .build(body->getArgument(0), params, body->getArgument(n - 5),
             body->getArgument(n - 4), body->getArgument(n - 3),
             body->getArgument(n - 2), body->getArgument(n - 1));
  func::ReturnOp::create(b, loc);
  func.erase();
  return success();
}

struct FfnLowerPackedPass : ffn::impl::FfnLowerPackedBase<FfnLowerPackedPass> {
  void runOnOperation() override {
    SmallVector<std::pair<func::FuncOp, FfnOp>> work;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || func->hasAttr("ffn.kernel"))
        continue;
      FfnOp ffnOp;
      unsigned count = 0;
      func.walk([&](FfnOp op) {
        ffnOp = op;
        ++count;
      });
      if (count != 1 || !ffnOp.getStrategy())
        continue;
      // The function must be exactly what MLIRGen builds: the op applied
      // to the arguments and returned.
      auto ret = cast<func::ReturnOp>(func.front().getTerminator());
      if (ret.getNumOperands() != 1 || ret.getOperand(0) != ffnOp.getResult() ||
          ffnOp.getInput() != func.getArgument(0)) {
        ffnOp.emitError("ffn-lower-packed expects a function that applies one "
                        "ffn.ffn to its arguments and returns it");
        return signalPassFailure();
      }
      work.emplace_back(func, ffnOp);
    }
    for (auto [func, op] : work)
      if (failed(lowerFunction(func, op)))
        return signalPassFailure();
  }
};

} // namespace
