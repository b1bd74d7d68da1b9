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
// Runs with m <= fused_max_m take the whole-FFN fused schedule instead of
// GEMM 1 then GEMM 2: d_ff is cut into chunks of `chunk` columns and, per
// chunk, Hc = act(A W_up[:, c]) (into an L1-sized buffer) is immediately
// multiplied into a partial output Og += Hc W_down[c, :]. The chunks are
// grouped into `groups` work units with one Og each (the thread split), and
// the row phase sums the Og in a fixed order, so results depend on the
// strategy, never on the thread count.
//
// Each GEMM is one private function (`<kernel>.gemm_up`, `.gemm_down`)
// that both schedules call, shared by every kernel of the module with the
// same shape: for each mc-row block, for each packed weight panel, for each
// register tile (the tallest of mr, mr/2, ..., 1 rows that fits), the
// tile's contraction acc[rows, nr] += A[rows, K] * W[K, nr] as a
// linalg.generic over (row, k, column), tiled along k by TilingInterface
// into the K loop. ffn-vectorize-register-tiles then makes it one
// broadcast of A per row and one FMA per accumulator vector per k, the
// accumulators in registers. The epilogue of GEMM 1 runs on the
// accumulators from the stack tile buffer, once per GEMM for every tile
// shape.
//
//===----------------------------------------------------------------------===//

#include "ffn/IR/FfnOps.h"
#include "ffn/Transforms/Activation.h"
#include "ffn/Transforms/Passes.h"
#include "ffn/Transforms/StrategyChoice.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

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
  // Without a post-norm, the two-pass GEMM 2 finishes the output itself
  // (bias, residual, storage type) in its epilogue: no row phase after it.
  bool finishInGemm;
  // The fused small-m schedule (fusedMaxM = 0: not used).
  int64_t fusedMaxM = 0, chunk = 0, panelsPerChunk = 0, chunks = 0,
          chunksPerGroup = 0, groups = 0;
  // f32 columns per row of one group's section: its chunk buffer, then its
  // partial output.
  int64_t groupWidth() const { return chunk + oWidth; }
  int64_t workspacePerRow() const {
    return 4 * (aWidth + std::max(hWidth + oWidth, groups * groupWidth()));
  }
};

Layout layoutFor(FfnOp op, StrategyAttr s) {
  Layout l;
  l.d = op.getDModel();
  l.f = op.getDFf();
  l.lanes = s.getVectorBits() / 32;
  l.mr = s.getMr();
  l.mc = s.getMc();
  l.prefetch = s.getPrefetch();
  l.nrUp = upPanelWidth(s.getNr(), s.getVectorBits(), op.getGated());
  l.npUp = (l.f + l.nrUp - 1) / l.nrUp;
  l.fp = l.npUp * l.nrUp;
  l.nrDown = s.getNr();
  l.npDown = (l.d + l.nrDown - 1) / l.nrDown;
  l.dp = l.npDown * l.nrDown;
  bool f32 = op.getStorageType().isF32();
  bool preNorm =
      op.getNorm() && op.getNorm()->getPosition() == NormPosition::pre;
  l.needA = !f32 || preNorm;
  l.finishInGemm =
      !(op.getNorm() && op.getNorm()->getPosition() == NormPosition::post);
  // Row strides are multiples of 16 floats so every section and row of the
  // 64-byte aligned workspace stays 64-byte aligned.
  l.aWidth = l.needA ? roundUp(l.d, 16) : 0;
  l.hWidth = roundUp(l.fp, 16);
  l.oWidth = roundUp(l.dp, 16);
  if (s.getFusedMaxM() > 0) {
    l.fusedMaxM = s.getFusedMaxM();
    // The verifier makes the chunk a multiple of nr, hence of nrUp.
    FusedShape f = fusedShape(s.getChunk(), s.getGroups(), l.nrUp, l.f);
    l.panelsPerChunk = f.panelsPerChunk;
    l.chunk = f.chunk;
    l.chunks = f.chunks;
    l.chunksPerGroup = f.chunksPerGroup;
    l.groups = f.groups;
  }
  return l;
}

/// Emits the kernel body. Holds the values every part of it uses.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, FfnOp op, func::FuncOp kernel,
                const Layout &l, llvm::StringMap<func::FuncOp> &outlined)
      : b(b), loc(loc), op(op), kernel(kernel), l(l), outlined(outlined),
        f32(b.getF32Type()), storage(op.getStorageType()),
        vecF32(VectorType::get({l.lanes}, f32)),
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
    return view(ws, rows, idx(byteRowOffset), width);
  }
  /// The [rows, width] f32 section that starts at byte rows * byteRowOffset.
  Value view(Value ws, Value rows, Value byteRowOffset, int64_t width) {
    Value shift = arith::MulIOp::create(b, loc, rows, byteRowOffset);
    auto type = MemRefType::get({ShapedType::kDynamic, width}, f32);
    return memref::ViewOp::create(b, loc, type, ws, shift, ValueRange{rows});
  }
  /// Fused schedule, group g's section: its chunk buffer Hc [rows, chunk],
  /// or (`output`) its partial output Og [rows, oWidth] right after it.
  Value groupView(Value ws, Value rows, Value g, bool output) {
    Value offset = arith::MulIOp::create(b, loc, g, idx(4 * l.groupWidth()));
    offset = arith::AddIOp::create(
        b, loc, offset, idx(4 * (l.aWidth + (output ? l.chunk : 0))));
    return view(ws, rows, offset, output ? l.oWidth : l.chunk);
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

  /// An rows x nr f32 accumulator buffer on the stack, 64-byte aligned.
  Value stackBuffer(int64_t rows, int64_t nr) {
    return memref::AllocaOp::create(b, loc, MemRefType::get({rows, nr}, f32),
                                    ValueRange{}, b.getI64IntegerAttr(64));
  }
  /// Called at a GEMM function's entry: the tile buffers (mr x nr, one per
  /// weight matrix) that the epilogue and finishRows read.
  void allocTileBuffers(int64_t matrices, int64_t nr) {
    gemmEntry = b.getInsertionBlock();
    registerTiles.clear();
    tileBuffers.clear();
    for (int64_t mat = 0; mat < matrices; ++mat)
      tileBuffers.push_back(stackBuffer(l.mr, nr));
  }
  /// Matrix mat's accumulators of a `rows`-row tile: the tile buffer for
  /// full-height tiles, else a stack buffer of its own in the entry
  /// block. Upstream hoisting
  /// moves the accumulators of a buffer into registers only when no view
  /// of it is involved (so not a subview of tileBuffers), and LLVM promotes
  /// these small, constant-indexed allocas to registers entirely.
  Value registerTile(int64_t mat, int64_t rows, int64_t nr) {
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
  Block *gemmEntry = nullptr;
  llvm::DenseMap<std::pair<int64_t, int64_t>, Value> registerTiles;

  struct Gemm {
    Value a;                   // memref<?xK x f32>
    Value k;                   // reduction length
    SmallVector<Value> panels; // memref<NP x K' x NR x T>, K' >= k
    int64_t nr, np;
    Value c;       // memref<?x W x f32>
    Value colBase; // global column of c's column 0 (null: 0)
    // Chunk-major panels [chunks][NP][chunkRows][NR] (0: [NP][K][NR]):
    // K runs over chunks [chunkBegin, chunkEnd), chunk q's row k meeting
    // A's column q * chunkRows - aColBase + k.
    int64_t chunkRows = 0;
    Value chunkBegin, chunkEnd, aColBase;
    Value accumulate; // i1: c += A B instead of c = A B (null: false)
    // i1 (null: never): instead of c, y[:, :d] = T(A B + bias + residual),
    // the real d columns of y only (bias, residual: null when absent).
    Value finish, y, bias, residual;
    // Turns the accumulators of one row ([panel matrix][vector]) into the
    // vectors to store; `col` is the tile's first column.
    std::function<SmallVector<Value>(ArrayRef<SmallVector<Value>>, Value col)>
        epilogue;
  };
  /// A tile's first column in the panel layout and in C (whose column 0 is
  /// the global column colBase).
  std::pair<Value, Value> tileColumns(const Gemm &g, Value panel) {
    Value col = arith::MulIOp::create(b, loc, panel, idx(g.nr));
    Value storeCol =
        g.colBase ? arith::SubIOp::create(b, loc, col, g.colBase) : col;
    return {col, storeCol};
  }
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
  /// One register tile of `rows` rows at row0: its K loop, then its
  /// accumulators stored to C, or to the tile buffer for epilogueRows.
  void tile(const Gemm &g, Value row0, int64_t rows, Value panel,
            Value prefetchPanel);
  /// The epilogue of the tile of `rows` rows at row0 just parked in the
  /// tile buffer, row by row into C.
  void epilogueRows(const Gemm &g, Value row0, Value rows, Value panel);
  /// GEMM 2 finishing the output: the tile of `rows` rows at row0 from the
  /// tile buffer, plus bias and residual, converted and stored into y.
  void finishRows(const Gemm &g, Value row0, Value rows, Value panel);
  /// Calls the private GEMM function `<kernel>.<suffix>`(args), which
  /// `body` builds from its arguments on the first call with this suffix
  /// and `key`. The key names everything the body's code depends on, so
  /// kernels of the same shape in one module (the layers of a model, a
  /// gallery of activations sharing GEMM 2) share one function.
  void callOutlined(StringRef suffix, StringRef key, ValueRange args,
                    function_ref<void(ValueRange)> body);
  /// What GEMM 2's code depends on: the storage type and the layout.
  std::string layoutKey() {
    std::string key;
    llvm::raw_string_ostream os(key);
    os << storage;
    for (int64_t v :
         {l.d, l.f, l.lanes, l.mr, l.mc, l.nrUp, l.npUp, l.nrDown, l.npDown,
          int64_t(l.fusedMaxM > 0), l.chunk, l.chunks, int64_t(l.prefetch)})
      os << "," << v;
    return key;
  }
  /// GEMM 2's also on how it finishes the output.
  std::string downKey() {
    if (!l.finishInGemm)
      return layoutKey();
    return layoutKey() + ",finish" + (op.getResidual() ? ",residual" : "") +
           (op.getBDown() ? ",b_down" : "");
  }
  /// GEMM 1's code also depends on its epilogue.
  std::string upKey() {
    return layoutKey() + "," + stringifyActivation(op.getActivation()).str() +
           (op.getGated() ? ",gated" : "") + (op.getBUp() ? ",b_up" : "") +
           (op.getBGate() ? ",b_gate" : "");
  }
  /// The bodies of the two GEMM functions (arguments: see build()).
  void buildUpGemm(ValueRange in);
  void buildDownGemm(ValueRange in);
  /// `v` as memref<?x?xf32>, the one type the GEMM functions take for
  /// every A and C section.
  Value dynamic(Value v) {
    auto type =
        MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, f32);
    return memref::CastOp::create(b, loc, type, v);
  }

  OpBuilder &b;
  Location loc;
  FfnOp op;
  func::FuncOp kernel;
  const Layout &l;
  // The module's GEMM functions by what their code depends on (see
  // callOutlined).
  llvm::StringMap<func::FuncOp> &outlined;
  /// Per weight matrix: the current GEMM function's mr x nr accumulator
  /// buffer on the stack, which the epilogue and finishRows read.
  SmallVector<Value> tileBuffers;
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

  // acc[mat] += A[rows, k] * panel[mat][k, nr], as a linalg contraction
  // over (row, k, column) that TilingInterface tiles into the K loop (k
  // in steps of 1) and ffn-vectorize-register-tiles turns into one
  // broadcast of A per row and one FMA per accumulator vector per k, the
  // accumulators hoisted into registers across the loop. `chunk` (or
  // null): the panel's chunk in a chunk-major layout.
  auto contract = [&](Value chunk, Value aCol, Value kLen) {
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
      offsets.append({panel, zero, zero});
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
    // Pull the next panel's row k toward L2 while this one computes, so the
    // first tile of the next panel does not wait on DRAM. A one-row tile
    // (decode) always does: 2 FMAs per 128 bytes of weights cannot hide the
    // latency even from L3 (BERT-base, m = 1, one thread: 0.317 -> 0.258
    // ms), while multi-row tiles of cache-resident weights lose 2-20% to it.
    if (l.prefetch || rows == 1) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> at;
      if (chunk)
        at.push_back(chunk);
      at.append({prefetchPanel, loop.getInductionVar(), idx(0)});
      for (int64_t mat = 0; mat < nmat; ++mat)
        memref::PrefetchOp::create(b, loc, g.panels[mat], at,
                                   /*isWrite=*/false, /*localityHint=*/2,
                                   /*isDataCache=*/true);
    }
    b.setInsertionPointAfter(loop);
  };

  if (!g.chunkRows) {
    contract(nullptr, idx(0), g.k);
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
    contract(c, aBase, len);
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

void KernelBuilder::epilogueRows(const Gemm &g, Value row0, Value rows,
                                 Value panel) {
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
          b, loc, vecF32, tileBuffers[mat], ValueRange{r, idx(v * l.lanes)}));
  SmallVector<Value> out = g.epilogue(rowAcc, col);
  Value row = arith::AddIOp::create(b, loc, row0, r);
  for (int64_t v = 0; v < nv; ++v) {
    Value c = arith::AddIOp::create(b, loc, storeCol, idx(v * l.lanes));
    vector::StoreOp::create(b, loc, out[v], g.c, ValueRange{row, c});
  }
}

void KernelBuilder::finishRows(const Gemm &g, Value row0, Value rows,
                               Value panel) {
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
  for (int64_t v = 0; v < nv; ++v) {
    Value c = arith::AddIOp::create(b, loc, col, idx(v * l.lanes));
    auto vectorPath = [&] {
      Value acc = vector::LoadOp::create(b, loc, vecF32, tileBuffers[0],
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
                                         ValueRange{row, c})));
      Value out =
          storage.isF32()
              ? acc
              : arith::TruncFOp::create(b, loc, vecStorage, acc).getResult();
      vector::StoreOp::create(b, loc, out, g.y, ValueRange{row, c});
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
      Value acc =
          memref::LoadOp::create(b, loc, tileBuffers[0], ValueRange{r, lane});
      if (g.bias)
        acc = arith::AddFOp::create(
            b, loc, acc,
            toF32(memref::LoadOp::create(b, loc, g.bias, ValueRange{j})));
      if (g.residual)
        acc =
            arith::AddFOp::create(b, loc, acc,
                                  toF32(memref::LoadOp::create(
                                      b, loc, g.residual, ValueRange{row, j})));
      memref::StoreOp::create(b, loc, toStorage(acc), g.y, ValueRange{row, j});
    });
  }
}

void KernelBuilder::gemm(const Gemm &g, Value m, Value panelBegin,
                         Value panelEnd) {
  // Tile heights, tallest first: mr, then mr/2, mr/4, ... down to 2, then
  // 1. Each step takes the tallest that fits what is left of the block:
  // M = 12 with 8-row tiles is 8 + 4, not 8 + 1 + 1 + 1 + 1 (measured 1.6
  // -> 1.0 ms for BERT-base), and M = 2 one 2-row tile that reads the
  // weight panel once, not two one-row tiles that read it twice.
  SmallVector<int64_t> heights = {l.mr};
  for (int64_t h = l.mr / 2; h >= 2; h /= 2)
    heights.push_back(h);
  if (heights.back() != 1)
    heights.push_back(1);
  Value mc = idx(l.mc), one = idx(1);
  loop(idx(0), m, mc, [&](Value i0) {
    Value end = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, i0, mc), m);
    // The weight panel outside the row tiles: it stays in cache while the
    // block's rows stream past it.
    loop(panelBegin, panelEnd, one, [&](Value panel) {
      Value next = arith::MinSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, panel, one), idx(g.np - 1));
      Type index = b.getIndexType();
      auto tiles =
          scf::WhileOp::create(b, loc, TypeRange{index}, ValueRange{i0});
      OpBuilder::InsertionGuard guard(b);
      Block *before = b.createBlock(&tiles.getBefore(), {}, {index}, {loc});
      Value row = before->getArgument(0);
      Value more =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, end);
      scf::ConditionOp::create(b, loc, more, ValueRange{row});
      Block *after = b.createBlock(&tiles.getAfter(), {}, {index}, {loc});
      row = after->getArgument(0);
      Value left = arith::SubIOp::create(b, loc, end, row);
      Value rows = idx(1);
      for (int64_t h : llvm::reverse(ArrayRef(heights).drop_back())) {
        Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                           left, idx(h));
        rows = arith::SelectOp::create(b, loc, fits, idx(h), rows);
      }
      // Only the panel's last tile pulls in the next panel: earlier ones
      // would evict the panel their successors still read from L2 (a
      // gate+up panel of LLaMA-7B is 512 KiB). Others "prefetch" their own
      // panel, which is already in cache.
      Value last =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                arith::AddIOp::create(b, loc, row, rows), end);
      Value prefetch = arith::SelectOp::create(b, loc, last, next, panel);
      SmallVector<int64_t> cases(ArrayRef(heights).drop_back());
      auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange{}, rows,
                                                 cases, cases.size());
      for (auto [region, h] : llvm::zip(dispatch.getCaseRegions(), cases)) {
        OpBuilder::InsertionGuard caseGuard(b);
        b.createBlock(&region);
        tile(g, row, h, panel, prefetch);
        scf::YieldOp::create(b, loc);
      }
      {
        OpBuilder::InsertionGuard caseGuard(b);
        b.createBlock(&dispatch.getDefaultRegion());
        tile(g, row, 1, panel, prefetch);
        scf::YieldOp::create(b, loc);
      }
      if (g.epilogue)
        epilogueRows(g, row, rows, panel);
      if (g.finish) {
        auto ifOp =
            scf::IfOp::create(b, loc, g.finish, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard finishGuard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        finishRows(g, row, rows, panel);
      }
      scf::YieldOp::create(
          b, loc, ValueRange{arith::AddIOp::create(b, loc, row, rows)});
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

  // The two GEMMs, each one private function that both schedules call (the
  // fused schedule on one chunk at a time), so each tile's code exists once.
  SmallVector<Value> upWeights;
  for (StringRef name : {"w_up", "w_gate", "b_up", "b_gate"})
    if (Value v = params.lookup(name))
      upWeights.push_back(v);
  // GEMM 1: c[:, col - colBase] = epilogue(a W_up[:, col]) for the columns
  // of up panels [p0, p1).
  auto callUp = [&](Value c, Value colBase, Value p0, Value p1) {
    SmallVector<Value> args = {dynamic(a), dynamic(c), colBase, m, p0, p1};
    args.append(upWeights);
    callOutlined("gemm_up", upKey(), args,
                 [&](ValueRange in) { buildUpGemm(in); });
  };
  // GEMM 2 over down panels [p0, p1); with a chunk-major W_down, over
  // chunks [q0, q1), a's column 0 being d_ff row aColBase. `mode` (index):
  // 0 c = a W_down, 1 c += a W_down, 2 y = T(a W_down + b_down [+ x]). One
  // argument, not two flags: a call site whose every flag is a constant
  // gets its own copy of the function from LLVM's function specialization.
  Value wDown = params.lookup("w_down");
  Value bDown = params.lookup("b_down");
  auto callDown = [&](Value a2, Value c, Value p0, Value p1, Value q0, Value q1,
                      Value aColBase, Value mode) {
    SmallVector<Value> args = {dynamic(a2), dynamic(c), m, p0, p1};
    if (l.fusedMaxM > 0)
      args.append({q0, q1, aColBase});
    if (l.fusedMaxM > 0 || l.finishInGemm)
      args.push_back(mode);
    args.push_back(wDown);
    if (l.finishInGemm) {
      args.push_back(y);
      if (op.getResidual())
        args.push_back(x);
      if (bDown)
        args.push_back(bDown);
    }
    callOutlined("gemm_down", downKey(), args,
                 [&](ValueRange in) { buildDownGemm(in); });
  };

  inPhase(phase, 1, [&] { callUp(h, idx(0), begin, end); }); // up panels
  // Into O; only the first d_ff columns of H are real.
  inPhase(phase, 2, [&] { // over down panels
    callDown(h, o, begin, end, idx(0), idx(l.chunks), idx(0),
             idx(l.finishInGemm ? 2 : 0));
  });

  // Phase 3 (small m), over chunk groups: the fused schedule.
  if (l.fusedMaxM > 0)
    inPhase(phase, 3, [&] {
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
          callDown(
              hc, og, idx(0), idx(l.npDown), c, c1, k0,
              arith::IndexCastUIOp::create(b, loc, b.getIndexType(), notFirst));
        });
      });
    });

  // Phase 4, over rows: down bias, residual, post-norm, storage conversion.
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
  inPhase(phase, 4, [&] {
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
      // The pre-norm row goes back where it was read from: O, or (fused)
      // group 0's partial output, the only section of that bucket known
      // not to overlap another group's.
      Value pre = fused ? arith::SelectOp::create(b, loc, fused, partials[0], o)
                              .getResult()
                        : o;
      loop(idx(0), idx(l.d), idx(1), [&](Value j) {
        memref::StoreOp::create(b, loc, finish(j), pre, ValueRange{r, j});
      });
      normRow(
          [&](Value j) {
            return memref::LoadOp::create(b, loc, pre, ValueRange{r, j})
                .getResult();
          },
          storeY, scale, shift);
    });
  });
}

void KernelBuilder::callOutlined(StringRef suffix, StringRef key,
                                 ValueRange args,
                                 function_ref<void(ValueRange)> body) {
  func::FuncOp &fn = outlined[(suffix + ":" + key).str()];
  if (!fn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(kernel);
    fn = func::FuncOp::create(b, loc, (kernel.getName() + "." + suffix).str(),
                              b.getFunctionType(args.getTypes(), {}));
    fn.setPrivate();
    // Both schedules call it: LLVM must not copy it back into each caller.
    // Internal: no symbol of its own in the object.
    // Nor clone it per constant argument (function specialization does
    // not touch `noduplicate` functions). func-to-llvm drops `no_inline`;
    // `passthrough` reaches LLVM.
    fn->setAttr("passthrough",
                b.getArrayAttr({b.getStringAttr("noinline"),
                                b.getStringAttr("noduplicate")}));
    fn->setAttr("llvm.linkage", LLVM::LinkageAttr::get(
                                    b.getContext(), LLVM::Linkage::Internal));
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    body(entry->getArguments());
    func::ReturnOp::create(b, loc);
  }
  func::CallOp::create(b, loc, fn, args);
}

void KernelBuilder::buildUpGemm(ValueRange in) {
  // (a, c, colBase, m, p0, p1, w_up, [w_gate], [b_up], [b_gate])
  int64_t matrices = op.getGated() ? 2 : 1;
  allocTileBuffers(matrices, l.nrUp);
  Gemm up;
  up.a = in[0];
  up.c = in[1];
  up.colBase = in[2];
  up.k = idx(l.d);
  ValueRange weights = in.drop_front(6);
  bool gated = op.getGated();
  up.panels.push_back(weights[0]);
  if (gated)
    up.panels.push_back(weights[1]);
  weights = weights.drop_front(gated ? 2 : 1);
  Value bUp = op.getBUp() ? weights[0] : Value();
  Value bGate = gated && op.getBGate() ? weights.back() : Value();
  up.nr = l.nrUp;
  up.np = l.npUp;
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
      if (gated) {
        Value g = biased(acc[1][v], bGate);
        out.push_back(arith::MulFOp::create(
            b, loc, buildActivation(b, loc, op.getActivation(), g), u));
      } else {
        out.push_back(buildActivation(b, loc, op.getActivation(), u));
      }
    }
    return out;
  };
  gemm(up, in[3], in[4], in[5]);
}

void KernelBuilder::buildDownGemm(ValueRange in) {
  // (a, c, m, p0, p1, [q0, q1, aColBase], [mode], w_down, [y, [x], [b_down]])
  Gemm down;
  down.a = in[0];
  down.c = in[1];
  down.k = idx(l.f);
  size_t weight = 5 + (l.fusedMaxM > 0 ? 3 : 0) +
                  (l.fusedMaxM > 0 || l.finishInGemm ? 1 : 0);
  down.panels.push_back(in[weight]);
  Value mode = weight > 5 ? in[weight - 1] : Value();
  auto modeIs = [&](int64_t v) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, mode,
                                 idx(v));
  };
  if (l.finishInGemm) {
    ValueRange rest = in.drop_front(weight + 1);
    down.y = rest.front();
    down.finish = modeIs(2);
    rest = rest.drop_front();
    if (op.getResidual()) {
      down.residual = rest.front();
      rest = rest.drop_front();
    }
    if (op.getBDown())
      down.bias = rest.front();
  }
  allocTileBuffers(1, l.nrDown);
  down.nr = l.nrDown;
  down.np = l.npDown;
  if (l.fusedMaxM > 0) {
    down.chunkRows = l.chunk;
    down.chunkBegin = in[5];
    down.chunkEnd = in[6];
    down.aColBase = in[7];
    down.accumulate = modeIs(1);
  }
  gemm(down, in[2], in[3], in[4]);
}

/// A private `func @name(%src, %dst)` whose body fills every element of dst
/// from src at `source(iv)`, or with zero where that says the element is
/// padding (past the last row or column).
func::FuncOp
buildPack(OpBuilder &b, Location loc, StringRef name, MemRefType src,
          MemRefType dst,
          function_ref<std::pair<SmallVector<Value>, Value>(
              OpBuilder &, Location, ValueRange, function_ref<Value(int64_t)>)>
              source) {
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
  scf::buildLoopNest(b, loc, lbs, ubs, steps,
                     [&](OpBuilder &nb, Location l, ValueRange iv) {
                       auto [index, inside] = source(nb, l, iv, c);
                       // Clamp padding reads to element 0 so no load leaves
                       // src.
                       for (Value &i : index)
                         i = arith::SelectOp::create(nb, l, inside, i, c(0));
                       Value v = memref::LoadOp::create(nb, l, s, index);
                       v = arith::SelectOp::create(nb, l, inside, v, zero);
                       memref::StoreOp::create(nb, l, v, d, iv);
                     });
  func::ReturnOp::create(b, loc);
  return func;
}

Value lessThan(OpBuilder &b, Location loc, Value v, Value limit) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, limit);
}

/// dst[p][k][c] = src[k][p * nr + c], zero past the last column.
func::FuncOp buildMatrixPack(OpBuilder &b, Location loc, StringRef name,
                             MemRefType src, MemRefType dst) {
  int64_t nr = dst.getDimSize(2), cols = src.getDimSize(1);
  return buildPack(b, loc, name, src, dst,
                   [&](OpBuilder &nb, Location l, ValueRange iv,
                       function_ref<Value(int64_t)> c) {
                     Value col = arith::AddIOp::create(
                         nb, l, arith::MulIOp::create(nb, l, iv[0], c(nr)),
                         iv[2]);
                     return std::make_pair(SmallVector<Value>{iv[1], col},
                                           lessThan(nb, l, col, c(cols)));
                   });
}

/// Chunk-major: dst[q][p][k][c] = src[q * kc + k][p * nr + c], zero past the
/// last row and column.
func::FuncOp buildChunkedPack(OpBuilder &b, Location loc, StringRef name,
                              MemRefType src, MemRefType dst) {
  int64_t kc = dst.getDimSize(2), nr = dst.getDimSize(3);
  int64_t rows = src.getDimSize(0), cols = src.getDimSize(1);
  return buildPack(
      b, loc, name, src, dst,
      [&](OpBuilder &nb, Location l, ValueRange iv,
          function_ref<Value(int64_t)> c) {
        Value row = arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, iv[0], c(kc)), iv[2]);
        Value col = arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, iv[1], c(nr)), iv[3]);
        Value inside =
            arith::AndIOp::create(nb, l, lessThan(nb, l, row, c(rows)),
                                  lessThan(nb, l, col, c(cols)));
        return std::make_pair(SmallVector<Value>{row, col}, inside);
      });
}

/// dst[i] = src[i], zero past the end.
func::FuncOp buildVectorPack(OpBuilder &b, Location loc, StringRef name,
                             MemRefType src, MemRefType dst) {
  int64_t size = src.getDimSize(0);
  return buildPack(b, loc, name, src, dst,
                   [&](OpBuilder &nb, Location l, ValueRange iv,
                       function_ref<Value(int64_t)> c) {
                     return std::make_pair(SmallVector<Value>{iv[0]},
                                           lessThan(nb, l, iv[0], c(size)));
                   });
}

LogicalResult lowerFunction(func::FuncOp func, FfnOp op,
                            llvm::StringMap<func::FuncOp> &gemms) {
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
    } else if (name == "w_down" && l.fusedMaxM > 0) {
      // Chunk-major, so the fused schedule reads one chunk of W_down as one
      // contiguous block.
      packed = MemRefType::get({l.chunks, l.npDown, l.chunk, l.nrDown}, t);
      buildChunkedPack(b, loc, packName, source, packed);
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
  // Work units of the phases per token-count bucket: rows (-1 = m), up
  // panels, down panels, chunk groups, rows. Each bucket runs only its own
  // phases (0 units = skipped).
  int64_t rowsIfA = l.needA ? -1 : 0;
  SmallVector<Attribute> units;
  SmallVector<int64_t> bucketMaxM;
  if (l.fusedMaxM > 0) {
    units.push_back(b.getI64ArrayAttr({rowsIfA, 0, 0, l.groups, -1}));
    bucketMaxM.push_back(l.fusedMaxM);
  }
  units.push_back(b.getI64ArrayAttr(
      {rowsIfA, l.npUp, l.npDown, 0, l.finishInGemm ? 0 : -1}));
  bucketMaxM.push_back(-1);
  kernel->setAttr("ffn.phase_units", b.getArrayAttr(units));
  kernel->setAttr("ffn.bucket_max_m", b.getI64ArrayAttr(bucketMaxM));
  StrategyChoice choice{strategy.getVectorBits(), strategy.getMr(),
                        strategy.getNr(),         strategy.getMc(),
                        strategy.getPrefetch(),   strategy.getFusedMaxM(),
                        strategy.getChunk(),      strategy.getGroups()};
  std::string text =
      describeStrategy(choice, op.getGated(), l.f, op.getBatchInvariant());
  kernel->setAttr("ffn.strategy_text", b.getStringAttr(text));

  Block *body = kernel.addEntryBlock();
  b.setInsertionPointToStart(body);
  llvm::StringMap<Value> params;
  for (auto [i, name] : llvm::enumerate(paramNames))
    params[name] = body->getArgument(1 + i);
  unsigned n = body->getNumArguments();
  KernelBuilder(b, loc, op, kernel, l, gemms)
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
    llvm::StringMap<func::FuncOp> gemms;
    for (auto [func, op] : work)
      if (failed(lowerFunction(func, op, gemms)))
        return signalPassFailure();
  }
};

} // namespace
