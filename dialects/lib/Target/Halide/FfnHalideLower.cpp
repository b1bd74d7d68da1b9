//===- FfnHalideLower.cpp - ffn.ffn to calls of Halide pipelines ----------===//
//
// For an FFN function whose ffn.ffn is dense (docs/plans/halide-backend.md
// §5), with the CPU back end's calling convention:
//
//   func @f(%x: memref<?xDxT>, <params>, %y: memref<?xDxT>,
//           %ws: memref<?xi8>, %phase, %begin, %end)
//
// Strategy mode (#ffn.cpu_strategy, two-pass), phases and their units:
//
//   0  rows        a = norm_in(x)                     (pre-norm only)
//   1  up panels   h[:, panels] = up(x | a)           per block of mc rows
//   2  down panels y[:, panels] = down(h) [+ x]       per block of mc rows
//                  (o instead of y with a post-norm)
//   3  rows        y = norm_out(o)                    (post-norm only)
//
// a, h and o are f32 sections of the workspace (HalideLayout). Each phase
// calls the AOT pipeline `__ffnh_<f>_<role>` that ffnc-halide-gen builds
// from the request written into the module (`ffn.halide_request`); the
// pipelines and their arguments come from ffnc::halide::pipelinesOf, which
// the generator runs too, and each argument is built here by its name.
// Weight matrices are packed panel-major by Halide pack pipelines, through
// adapters `<f>_pack_<param>` the kernel glue calls as pack functions.
//
// Auto mode (an autoscheduler; no strategy on the op): one phase over rows
// that calls the `whole` pipeline on unpacked parameters, on Halide's own
// thread pool.
//
// Halide coordinates are absolute: a buffer's dim[i].min is the coordinate
// of the element its host pointer points at, so a crop of rows or columns
// is a host pointer moved to its first element plus that min.
//
//===----------------------------------------------------------------------===//

#include "HalideBuffers.h"

#include "ffn/IR/FfnOps.h"
#include "ffn/Target/CPU/CostModel.h"
#include "ffn/Target/Halide/HalideBufferLayout.h"
#include "ffn/Target/Halide/Passes.h"

#include "HalideProtocol.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNHALIDELOWER
#include "ffn/Target/Halide/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::halide_target;

namespace hp = ffnc::halide;

namespace {

/// Halide's buffer extents and coordinates are int32: a call covers at most
/// this many rows.
constexpr int64_t kMaxRowsPerCall = int64_t(1) << 30;

constexpr const char *kAutoschedulers[] = {"mullapudi2016", "li2018",
                                           "adams2019"};

std::string dtypeName(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  return "f32";
}

/// The Halide type of a protocol type name.
std::optional<uint32_t> typeWordOf(const std::string &name) {
  if (name == "f32")
    return hp::halideTypeWord(hp::kTypeFloat, 32);
  if (name == "f16")
    return hp::halideTypeWord(hp::kTypeFloat, 16);
  if (name == "bf16")
    return hp::halideTypeWord(hp::kTypeBFloat, 16);
  return std::nullopt;
}

std::string autoschedulerTitle(StringRef name) {
  if (name == "mullapudi2016")
    return "Mullapudi2016";
  if (name == "li2018")
    return "Li2018";
  if (name == "adams2019")
    return "Adams2019";
  return name.str();
}

/// Why the Halide back end cannot lower `op` (twins of the spec-level
/// refusals, for ffn-opt users); nothing if it can.
std::optional<std::string> refusal(FfnOp op, CpuStrategyAttr strategy) {
  if (op.getMoe())
    return std::string("mixtures of experts (moe) have no Halide kernels; "
                       "use --backend=ffnc");
  if (op.getGroups())
    return "grouped FFNs (groups = " + std::to_string(*op.getGroups()) +
           ") have no Halide kernels; use --backend=ffnc";
  if (op.getWeightQuant())
    return std::string("quantized weights (weights <...>) have no Halide "
                       "kernels; use --backend=ffnc");
  if (!strategy)
    return std::nullopt;
  CpuStrategy s = strategy.getKnobs();
  if (s.fusedMaxM.value_or(0) > 0)
    return "the strategy takes the fused schedule (fused_max_m = " +
           std::to_string(*s.fusedMaxM) +
           "); the Halide back end is two-pass only (fused_max_m = 0)";
  if (s.sparseMaxM.value_or(0) > 0)
    return "the strategy takes the sparse GEMM 2 (sparse_max_m = " +
           std::to_string(*s.sparseMaxM) +
           "); the Halide back end has no sparse schedule (sparse_max_m = 0)";
  if (s.kc.value_or(0) > 0 || s.kcTall.value_or(0) > 0) {
    bool few = s.kc.value_or(0) > 0;
    return std::string("the strategy runs K in blocks (") +
           (few ? "kc" : "kc_tall") + " = " +
           std::to_string(few ? *s.kc : *s.kcTall) +
           "); the Halide back end runs K whole (kc = 0, kc_tall = 0)";
  }
  if (s.bf16Dot.value_or(false))
    return std::string("the strategy takes bf16 pair tiles (bf16_dot = "
                       "true); the Halide back end widens to f32 "
                       "(bf16_dot = false)");
  if (!s.isComplete())
    return std::string("the strategy is incomplete");
  return std::nullopt;
}

/// The protocol's record of `op` in function `func`.
hp::HalideKernel kernelOf(func::FuncOp func, FfnOp op, CpuStrategyAttr strategy,
                          const FfnHalideLowerOptions &options) {
  hp::HalideKernel k;
  k.name = func.getName().str();
  k.dModel = op.getDModel();
  k.dFf = op.getDFf();
  k.dtype = dtypeName(op.getStorageType());
  k.activation = stringifyActivation(op.getActivation()).str();
  k.gated = op.getGated();
  k.biasUp = bool(op.getBUp());
  k.biasGate = bool(op.getBGate());
  k.biasDown = bool(op.getBDown());
  k.residual = op.getResidual();
  if (std::optional<NormAttr> norm = op.getNorm()) {
    k.norm = stringifyNormKind(norm->getKind()).str();
    k.normPosition = stringifyNormPosition(norm->getPosition()).str();
    k.eps = norm->getEps().convertToDouble();
  }
  k.batchInvariant = op.getBatchInvariant();
  k.testBug = options.testBug;
  hp::Schedule &sched = k.schedule;
  if (strategy) {
    CpuStrategy s = strategy.getKnobs();
    sched.mode = "strategy";
    sched.lanes = *s.vectorBits / 32;
    sched.mr = *s.mr;
    sched.upPanel = upPanelWidth(*s.nr, *s.vectorBits, k.gated);
    sched.downPanel = *s.nr;
    sched.mc = *s.mc;
    sched.prefetch = *s.prefetch;
  } else {
    sched.mode = "auto";
    sched.autoscheduler = options.schedule;
    sched.parallelism = options.threads;
    sched.mEstimate = options.mEstimate;
  }
  return k;
}

/// The strategy text of the descriptor.
std::string describe(const hp::HalideKernel &k, CpuStrategyAttr strategy) {
  std::string text;
  const hp::Schedule &s = k.schedule;
  if (k.autoMode()) {
    text = "halide 14 autoscheduled (" + autoschedulerTitle(s.autoscheduler) +
           ") for " + std::to_string(s.parallelism) + " thread" +
           (s.parallelism == 1 ? "" : "s") +
           " of Halide's own thread pool per call, M estimate " +
           std::to_string(s.mEstimate) +
           ", unpacked weights; one unit of work (Halide's pool, not the "
           "runtime's threads, runs it in parallel)";
  } else {
    int64_t nr = *strategy.getKnobs().nr;
    text = "halide 14 two-pass: " + std::to_string(s.lanes * 32) +
           "-bit vectors, register tile " + std::to_string(s.mr) + "x" +
           std::to_string(nr) +
           (k.gated ? " (gate+up " + std::to_string(s.upPanel) + "+" +
                          std::to_string(s.upPanel) + ")"
                    : std::string()) +
           ", " + std::to_string(s.mc) + "-row blocks, " +
           (s.prefetch ? "next-panel prefetch" : "no prefetch") +
           ", phases split by the runtime's threads; f32 sums, strict "
           "epilogues";
  }
  if (k.batchInvariant)
    text += "; batch-invariant";
  if (!k.testBug.empty())
    text += "; test bug " + k.testBug;
  return text;
}

/// Lowers one function. Errors go to the op (the spec's location);
/// failure means one was emitted.
class HalideLowering {
public:
  HalideLowering(ModuleOp module, func::FuncOp func, FfnOp op,
                 CpuStrategyAttr strategy, hp::HalideKernel kernel)
      : module(module), func(func), op(op), strategy(strategy),
        k(std::move(kernel)), b(func), loc(func.getLoc()),
        t(op.getStorageType()),
        elementBytes(op.getStorageType().getIntOrFloatBitWidth() / 8) {}

  LogicalResult lower();

private:
  using ArgFn = function_ref<Value(HalideCalls &, const hp::PipelineArg &)>;

  const hp::PipelineSpec *pipeline(hp::Role role);
  InFlightDiagnostic internalError() {
    return op.emitError("ffn-halide-lower: internal error: ");
  }
  LogicalResult checkLayout();
  /// The pack adapter of matrix `name`: (memref<in x out x T>, packed).
  LogicalResult buildPackAdapter(StringRef symbol, StringRef name,
                                 MemRefType source, MemRefType packed);
  /// Calls `spec` with each argument built by `argFor` (null: the stub does
  /// not know the argument, a protocol skew inside ffnc).
  void callPipeline(HalideCalls &h, const hp::PipelineSpec &spec, ArgFn argFor);
  /// The buffer of a protocol argument at `host`, after checking that the
  /// protocol declares the rank the stub builds.
  Value buffer(HalideCalls &h, const hp::PipelineArg &arg, Value host,
               ArrayRef<Dim> dims);
  /// scf.for over [lb, ub) in steps of `step`: body(first, end of step).
  void forRange(Value lb, Value ub, int64_t step,
                function_ref<void(Value, Value)> body);
  /// Where a call works: rows [r0, r1) and, for a panel pipeline, panels
  /// [p0, p1).
  struct CallSite {
    Value r0, r1, p0, p1;
  };
  /// The kernel stub's argument `arg` of a `role` pipeline called at `at`:
  /// the buffer conventions of the protocol, in one place.
  Value argFor(HalideCalls &h, hp::Role role, const hp::PipelineArg &arg,
               const CallSite &at);
  void call(HalideCalls &h, const hp::PipelineSpec &spec, const CallSite &at);
  void buildStrategyBody(HalideCalls &h, Value phase, Value begin, Value end);
  void buildAutoBody(HalideCalls &h, Value phase, Value begin, Value end);

  // Index arithmetic on coordinates, constants folded (the buffers' constant
  // fields are then stored once, in the entry block).
  Value idxConst(int64_t c) {
    return arith::ConstantIndexOp::create(b, loc, c);
  }
  Value index(Coord c) { return c.value ? c.value : idxConst(c.constant); }
  Coord mul(Coord v, int64_t c) {
    if (!v.value)
      return v.constant * c;
    if (c == 1)
      return v;
    return Value(arith::MulIOp::create(b, loc, v.value, idxConst(c)));
  }
  Coord add(Coord l, Coord r) {
    if (!l.value && !r.value)
      return l.constant + r.constant;
    if (!l.value && l.constant == 0)
      return r;
    if (!r.value && r.constant == 0)
      return l;
    return Value(arith::AddIOp::create(b, loc, index(l), index(r)));
  }
  Coord sub(Coord l, Coord r) {
    if (!l.value && !r.value)
      return l.constant - r.constant;
    if (!r.value && r.constant == 0)
      return l;
    return Value(arith::SubIOp::create(b, loc, index(l), index(r)));
  }

  // Buffers of the stub's memrefs and workspace sections; rows [r0, r1),
  // columns [c0, c1) where the call crops them.
  Value xRows(HalideCalls &h, const hp::PipelineArg &arg, Value r0, Value r1);
  Value yRows(HalideCalls &h, const hp::PipelineArg &arg, Value r0, Value r1,
              Coord c0, Coord c1);
  /// A workspace section (f32 rows of `stride` floats from byte
  /// `perRowOffset` * m).
  Value section(HalideCalls &h, const hp::PipelineArg &arg,
                int64_t perRowOffset, int64_t stride, Value r0, Value r1,
                Coord c0, Coord c1);
  /// A parameter as the kernel takes it: packed panels, or unpacked.
  Value param(HalideCalls &h, const hp::PipelineArg &arg);

  ModuleOp module;
  func::FuncOp func;
  FfnOp op;
  CpuStrategyAttr strategy;
  hp::HalideKernel k;
  OpBuilder b;
  Location loc;
  Type t;
  int64_t elementBytes;

  hp::HalideLayout layout;
  std::vector<hp::PipelineSpec> pipelines;
  /// The kernel's parameters: their names in argument order, and for each
  /// its type as the kernel takes it.
  SmallVector<std::string> paramNames;
  llvm::StringMap<MemRefType> paramTypes;
  // The stub's raw pointers and the row count.
  Value x, y, ws, m;
  llvm::StringMap<Value> paramPointers;
  bool skew = false;
};

const hp::PipelineSpec *HalideLowering::pipeline(hp::Role role) {
  for (const hp::PipelineSpec &spec : pipelines)
    if (spec.role == role)
      return &spec;
  return nullptr;
}

LogicalResult HalideLowering::checkLayout() {
  // The generator writes whole panels into h (up) and o (down with a
  // post-norm): a row must hold them, or a panel's tail would spill into
  // the next row, which another thread may be writing.
  int64_t upCols = layout.npUp * k.schedule.upPanel;
  int64_t downCols = layout.npDown * k.schedule.downPanel;
  if (layout.npUp < 1 || layout.npDown < 1 ||
      layout.npUp != (k.dFf + k.schedule.upPanel - 1) / k.schedule.upPanel ||
      layout.npDown !=
          (k.dModel + k.schedule.downPanel - 1) / k.schedule.downPanel)
    return internalError() << "layoutOf gives " << layout.npUp << " up and "
                           << layout.npDown << " down panels for d_ff " << k.dFf
                           << " / " << k.schedule.upPanel << " and d_model "
                           << k.dModel << " / " << k.schedule.downPanel;
  if (layout.hStride < upCols || (k.preNorm() && layout.aStride < k.dModel) ||
      (k.postNorm() && layout.oStride < downCols))
    return internalError() << "layoutOf's rows are too short for whole "
                              "panels (h "
                           << layout.hStride << " < " << upCols << ", or o "
                           << layout.oStride << " < " << downCols << ")";
  int64_t end = layout.hOffset(1) + 4 * layout.hStride;
  if (k.postNorm())
    end = std::max(end, layout.oOffset(1) + 4 * layout.oStride);
  if (end > layout.workspacePerRow)
    return internalError() << "layoutOf's sections need " << end
                           << " bytes per row, its workspace_per_row is "
                           << layout.workspacePerRow;
  return success();
}

LogicalResult HalideLowering::buildPackAdapter(StringRef symbol, StringRef name,
                                               MemRefType source,
                                               MemRefType packed) {
  hp::Role role = name == "w_up"     ? hp::Role::PackUp
                  : name == "w_gate" ? hp::Role::PackGate
                                     : hp::Role::PackDown;
  const hp::PipelineSpec *spec = pipeline(role);
  if (!spec)
    return internalError() << "pipelinesOf has no " << hp::roleName(role)
                           << " pipeline";
  auto adapter = func::FuncOp::create(b, loc, symbol,
                                      b.getFunctionType({source, packed}, {}));
  adapter.setPrivate();
  OpBuilder::InsertionGuard guard(b);
  Block *body = adapter.addEntryBlock();
  b.setInsertionPointToStart(body);
  HalideCalls h(b, loc, module, body);
  Value w = h.pointerOf(body->getArgument(0));
  Value p = h.pointerOf(body->getArgument(1));
  ArrayRef<int64_t> in = source.getShape(), out = packed.getShape();
  callPipeline(h, *spec, [&](HalideCalls &h, const hp::PipelineArg &arg) {
    if (arg.name == "w") // [in, out] row-major: Halide's (out, in)
      return buffer(h, arg, w, {{0, in[1], 1}, {0, in[0], in[1]}});
    if (arg.name == "p") // [np][K][pw]: (lane, k, panel)
      return buffer(
          h, arg, p,
          {{0, out[2], 1}, {0, out[1], out[2]}, {0, out[0], out[1] * out[2]}});
    return Value();
  });
  func::ReturnOp::create(b, loc);
  return success(h.ok());
}

Value HalideLowering::buffer(HalideCalls &h, const hp::PipelineArg &arg,
                             Value host, ArrayRef<Dim> dims) {
  std::optional<uint32_t> word = typeWordOf(arg.type);
  if (!word || arg.dims != static_cast<int>(dims.size())) {
    skew = true;
    return Value();
  }
  return h.buffer(host, *word, dims);
}

void HalideLowering::callPipeline(HalideCalls &h, const hp::PipelineSpec &spec,
                                  ArgFn argFor) {
  SmallVector<Value> args;
  for (const hp::PipelineArg &arg : spec.args) {
    Value v = argFor(h, arg);
    if (!v) {
      if (!skew)
        internalError() << "the kernel stub cannot build argument '" << arg.name
                        << "' (" << arg.type << ", " << arg.dims << " dims) of "
                        << spec.symbol;
      skew = true;
      return;
    }
    args.push_back(v);
  }
  h.callChecked(spec.symbol, args);
}

void HalideLowering::forRange(Value lb, Value ub, int64_t step,
                              function_ref<void(Value, Value)> body) {
  auto loop = scf::ForOp::create(b, loc, lb, ub, idxConst(step));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value first = loop.getInductionVar();
  Value last = arith::MinSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, first, idxConst(step)), ub);
  body(first, last);
}

Value HalideLowering::xRows(HalideCalls &h, const hp::PipelineArg &arg,
                            Value r0, Value r1) {
  Value host = h.offset(x, mul(r0, k.dModel * elementBytes));
  return buffer(h, arg, host, {{0, k.dModel, 1}, {r0, sub(r1, r0), k.dModel}});
}

Value HalideLowering::yRows(HalideCalls &h, const hp::PipelineArg &arg,
                            Value r0, Value r1, Coord c0, Coord c1) {
  Value host = h.offset(y, mul(add(mul(r0, k.dModel), c0), elementBytes));
  return buffer(h, arg, host,
                {{c0, sub(c1, c0), 1}, {r0, sub(r1, r0), k.dModel}});
}

Value HalideLowering::section(HalideCalls &h, const hp::PipelineArg &arg,
                              int64_t perRowOffset, int64_t stride, Value r0,
                              Value r1, Coord c0, Coord c1) {
  // Sections start at a multiple of m (HalideLayout): the whole run's m,
  // not the call's rows.
  Coord start = perRowOffset ? mul(m, perRowOffset) : Coord(0);
  Coord bytes = add(start, mul(add(mul(r0, stride), c0), 4));
  return buffer(h, arg, h.offset(ws, bytes),
                {{c0, sub(c1, c0), 1}, {r0, sub(r1, r0), stride}});
}

Value HalideLowering::param(HalideCalls &h, const hp::PipelineArg &arg) {
  auto it = paramPointers.find(arg.name);
  if (it == paramPointers.end())
    return Value();
  ArrayRef<int64_t> shape = paramTypes.lookup(arg.name).getShape();
  if (shape.size() == 3) // packed panels [np][K][pw]: (lane, k, panel)
    return buffer(h, arg, it->second,
                  {{0, shape[2], 1},
                   {0, shape[1], shape[2]},
                   {0, shape[0], shape[1] * shape[2]}});
  if (shape.size() == 2) // [in, out] row-major: Halide's (out, in)
    return buffer(h, arg, it->second,
                  {{0, shape[1], 1}, {0, shape[0], shape[1]}});
  return buffer(h, arg, it->second, {{0, shape[0], 1}});
}

Value HalideLowering::argFor(HalideCalls &h, hp::Role role,
                             const hp::PipelineArg &arg, const CallSite &at) {
  const hp::Schedule &s = k.schedule;
  const std::string &name = arg.name;
  if (name == "p0") // a panel pipeline's first panel
    return h.toI32(at.p0);
  if (name == "x") // the input's rows, every column (also the residual)
    return xRows(h, arg, at.r0, at.r1);
  if (name == "a") // the pre-normed rows
    return section(h, arg, layout.aOffset(1), layout.aStride, at.r0, at.r1, 0,
                   k.dModel);
  if (name == "h") // up writes its panels' columns, down reads them all
    return role == hp::Role::Up
               ? section(h, arg, layout.hOffset(1), layout.hStride, at.r0,
                         at.r1, mul(at.p0, s.upPanel), mul(at.p1, s.upPanel))
               : section(h, arg, layout.hOffset(1), layout.hStride, at.r0,
                         at.r1, 0, layout.npUp * s.upPanel);
  if (name == "o") // down writes whole f32 panels, norm_out reads them all
    return role == hp::Role::Down
               ? section(h, arg, layout.oOffset(1), layout.oStride, at.r0,
                         at.r1, mul(at.p0, s.downPanel),
                         mul(at.p1, s.downPanel))
               : section(h, arg, layout.oOffset(1), layout.oStride, at.r0,
                         at.r1, 0, layout.npDown * s.downPanel);
  if (name == "y") { // down writes its panels' columns inside d_model
    if (role != hp::Role::Down)
      return yRows(h, arg, at.r0, at.r1, 0, k.dModel);
    Value last = arith::MinSIOp::create(b, loc, index(mul(at.p1, s.downPanel)),
                                        idxConst(k.dModel));
    return yRows(h, arg, at.r0, at.r1, mul(at.p0, s.downPanel), last);
  }
  return param(h, arg);
}

void HalideLowering::call(HalideCalls &h, const hp::PipelineSpec &spec,
                          const CallSite &at) {
  callPipeline(h, spec, [&](HalideCalls &h, const hp::PipelineArg &arg) {
    return argFor(h, spec.role, arg, at);
  });
}

void HalideLowering::buildStrategyBody(HalideCalls &h, Value phase, Value begin,
                                       Value end) {
  const hp::PipelineSpec *normIn = pipeline(hp::Role::NormIn);
  const hp::PipelineSpec *up = pipeline(hp::Role::Up);
  const hp::PipelineSpec *down = pipeline(hp::Role::Down);
  const hp::PipelineSpec *normOut = pipeline(hp::Role::NormOut);
  if (!up || !down || bool(normIn) != k.preNorm() ||
      bool(normOut) != k.postNorm()) {
    internalError() << "pipelinesOf's pipelines do not match the kernel's "
                       "phases";
    skew = true;
    return;
  }

  // The phases with units (phase_units): 0 and 3 only with their norms.
  SmallVector<int64_t> cases;
  if (normIn)
    cases.push_back(0);
  cases.append({1, 2});
  if (normOut)
    cases.push_back(3);
  auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange{}, phase, cases,
                                             cases.size());
  {
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&dispatch.getDefaultRegion());
    scf::YieldOp::create(b, loc);
  }
  // Row phases: [begin, end) in calls of at most kMaxRowsPerCall rows.
  // Panel phases: panels [begin, end) of every row, one call per block of
  // mc rows, since Halide's schedule has no cache block of its own.
  int64_t blockRows = std::min(k.schedule.mc, kMaxRowsPerCall);
  for (auto [region, phaseIndex] :
       llvm::zip(dispatch.getCaseRegions(), cases)) {
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&region);
    const hp::PipelineSpec *spec = phaseIndex == 0   ? normIn
                                   : phaseIndex == 1 ? up
                                   : phaseIndex == 2 ? down
                                                     : normOut;
    if (spec->unit == hp::UnitKind::Panels)
      forRange(idxConst(0), m, blockRows, [&](Value r0, Value r1) {
        call(h, *spec, {r0, r1, begin, end});
      });
    else
      forRange(begin, end, kMaxRowsPerCall, [&](Value r0, Value r1) {
        call(h, *spec, {r0, r1, Value(), Value()});
      });
    scf::YieldOp::create(b, loc);
  }
}

void HalideLowering::buildAutoBody(HalideCalls &h, Value phase, Value begin,
                                   Value end) {
  const hp::PipelineSpec *whole = pipeline(hp::Role::Whole);
  if (!whole) {
    internalError() << "pipelinesOf has no whole pipeline";
    skew = true;
    return;
  }
  // One phase of rows; the switch keeps the stub's shape.
  auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange{}, phase,
                                             ArrayRef<int64_t>{0}, 1);
  {
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&dispatch.getDefaultRegion());
    scf::YieldOp::create(b, loc);
  }
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&dispatch.getCaseRegions()[0]);
  // Halide's pool, sized as the schedule assumes (the pool keeps its size
  // between calls; setting it again costs a lock).
  h.call("halide_set_num_threads", b.getI32Type(),
         {h.i32(k.schedule.parallelism)});
  // The phase's single unit is every row.
  (void)begin;
  (void)end;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  forRange(zero, m, kMaxRowsPerCall, [&](Value r0, Value r1) {
    call(h, *whole, {r0, r1, Value(), Value()});
  });
  scf::YieldOp::create(b, loc);
}

LogicalResult HalideLowering::lower() {
  pipelines = hp::pipelinesOf(k);
  layout = hp::layoutOf(k);
  bool packed = !k.autoMode();
  if (packed && failed(checkLayout()))
    return failure();

  MLIRContext *ctx = b.getContext();
  int64_t dModel = k.dModel;
  SmallVector<Type> kernelArgTypes;
  SmallVector<StringRef> kernelParamNames;
  SmallVector<Attribute> contractParams;
  for (unsigned i = 1, e = func.getNumArguments(); i < e; ++i) {
    auto nameAttr = func.getArgAttrOfType<StringAttr>(i, "ffn.param");
    if (!nameAttr)
      return op.emitError("ffn-halide-lower: argument ")
             << i << " of the FFN function has no ffn.param name";
    StringRef name = nameAttr.getValue();
    auto logical = cast<RankedTensorType>(func.getArgument(i).getType());
    MemRefType source = MemRefType::get(logical.getShape(), t);
    MemRefType kernelType = source;
    std::string packName;
    if (packed && (name == "w_up" || name == "w_gate" || name == "w_down")) {
      bool isDown = name == "w_down";
      int64_t np = isDown ? layout.npDown : layout.npUp;
      int64_t rows = isDown ? k.dFf : k.dModel;
      int64_t width = isDown ? k.schedule.downPanel : k.schedule.upPanel;
      kernelType = MemRefType::get({np, rows, width}, t);
      packName = (func.getName() + "_pack_" + name).str();
      if (failed(buildPackAdapter(packName, name, source, kernelType)))
        return failure();
    }
    contractParams.push_back(
        buildKernelParam(ctx, name, logical.getShape(), kernelType, packName));
    kernelArgTypes.push_back(kernelType);
    kernelParamNames.push_back(name);
    paramNames.push_back(name.str());
    paramTypes[name] = kernelType;
  }
  func::FuncOp kernel = buildPhasedKernel(b, func, func.getName(), t, dModel,
                                          kernelArgTypes, kernelParamNames);

  // Phases and their units (-1: m rows): strategy mode pre-norm rows, up
  // panels, down panels, post-norm rows; auto mode one phase of one unit,
  // all m rows, which the autoscheduler's parallel loops spread over
  // Halide's pool (splitting rows across the runtime's threads as well
  // would run threads x parallelism workers).
  SmallVector<int64_t> units =
      packed ? SmallVector<int64_t>{k.preNorm() ? -1 : 0, layout.npUp,
                                    layout.npDown, k.postNorm() ? -1 : 0}
             : SmallVector<int64_t>{1};
  kernel->setAttr(
      KernelAbiAttr::kAttrName,
      buildKernelAbi(op, b.getF32Type(), contractParams,
                     packed ? layout.workspacePerRow : 0,
                     b.getArrayAttr({b.getDenseI64ArrayAttr(units)}),
                     b.getDenseI64ArrayAttr({-1}), describe(k, strategy),
                     /*deviceModule=*/{}, /*launches=*/{},
                     packed ? hp::kPackLayout : ""));

  Block *body = kernel.addEntryBlock();
  b.setInsertionPointToStart(body);
  HalideCalls h(b, loc, module, body);
  unsigned n = body->getNumArguments();
  Value xMemRef = body->getArgument(0);
  m = memref::DimOp::create(b, loc, xMemRef, int64_t{0});
  x = h.pointerOf(xMemRef);
  for (auto [i, name] : llvm::enumerate(paramNames))
    paramPointers[name] = h.pointerOf(body->getArgument(1 + i));
  y = h.pointerOf(body->getArgument(n - 5));
  ws = h.pointerOf(body->getArgument(n - 4));
  Value phase = body->getArgument(n - 3), begin = body->getArgument(n - 2),
        end = body->getArgument(n - 1);
  if (packed)
    buildStrategyBody(h, phase, begin, end);
  else
    buildAutoBody(h, phase, begin, end);
  func::ReturnOp::create(b, loc);
  if (skew || !h.ok())
    return failure();
  func.erase();
  return success();
}

struct FfnHalideLowerPass : ffn::impl::FfnHalideLowerBase<FfnHalideLowerPass> {
  using FfnHalideLowerBase::FfnHalideLowerBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FfnHalideLowerOptions options;
    options.schedule = schedule;
    options.mEstimate = mEstimate;
    options.threads = threads;
    options.testBug = testBug;
    bool autoMode = options.schedule != "strategy";
    if (autoMode &&
        !llvm::is_contained(kAutoschedulers, StringRef(options.schedule))) {
      module.emitError("ffn-halide-lower: unknown schedule '")
          << options.schedule
          << "' (strategy, mullapudi2016, li2018 or adams2019)";
      return signalPassFailure();
    }
    if (options.threads < 1 || options.mEstimate < 1) {
      module.emitError("ffn-halide-lower: threads and m-estimate must be "
                       "positive");
      return signalPassFailure();
    }
    const std::string &bug = options.testBug;
    if (!bug.empty() && bug != "drop-last-k-after-row-0" &&
        bug != "bias-shift") {
      module.emitError("ffn-halide-lower: unknown test-bug '")
          << bug << "' (drop-last-k-after-row-0 or bias-shift)";
      return signalPassFailure();
    }

    // The work list: functions holding one ffn.ffn, as MLIRGen builds them.
    bool failedAny = false;
    SmallVector<std::tuple<func::FuncOp, FfnOp, CpuStrategyAttr>> work;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || KernelAbiAttr::of(func))
        continue;
      FfnOp ffnOp;
      unsigned count = 0;
      func.walk([&](FfnOp op) {
        ffnOp = op;
        ++count;
      });
      if (count != 1)
        continue;
      auto strategy =
          dyn_cast_or_null<CpuStrategyAttr>(ffnOp.getStrategyAttr());
      auto fail = [&](const Twine &message) {
        ffnOp.emitError("ffn-halide-lower: ") << message;
        failedAny = true;
      };
      if (std::optional<std::string> why = refusal(ffnOp, strategy)) {
        fail(*why);
        continue;
      }
      if (ffnOp.getStrategyAttr() && !strategy) {
        fail("the op's strategy is another target's");
        continue;
      }
      if (!autoMode && !strategy) {
        fail("schedule=strategy needs a #ffn.cpu_strategy on the op "
             "(ffn-select-strategy), or an autoscheduler's schedule");
        continue;
      }
      if (autoMode && strategy) {
        fail("schedule=" + options.schedule +
             " autoschedules an FFN without a strategy; this one has a "
             "#ffn.cpu_strategy");
        continue;
      }
      auto ret = dyn_cast<func::ReturnOp>(func.front().getTerminator());
      if (!ret || ret.getNumOperands() != 1 ||
          ret.getOperand(0) != ffnOp.getResult() ||
          ffnOp.getInput() != func.getArgument(0)) {
        fail("expects a function that applies one ffn.ffn to its arguments "
             "and returns it");
        continue;
      }
      work.emplace_back(func, ffnOp, strategy);
    }
    if (failedAny)
      return signalPassFailure();
    if (work.empty())
      return;

    // The pipelines are compiled for the module's target row, never the
    // host's: a kernel must run on every CPU of its row.
    TargetAttr target = TargetAttr::lookup(module);
    std::string halideTarget =
        target ? hp::halideTargetFor(target.getIsa().str()) : std::string();
    if (halideTarget.empty()) {
      module.emitError("ffn-halide-lower: ")
          << (target ? "the target '" + target.getIsa().str() +
                           "' has no Halide target (x86-64 CPUs only)"
                     : std::string("the module needs a CPU #ffn.target "
                                   "(ffn-attach-target)"));
      return signalPassFailure();
    }

    hp::HalideRequest request;
    request.target = halideTarget;
    for (auto [func, op, strategy] : work) {
      hp::HalideKernel kernel = kernelOf(func, op, strategy, options);
      request.kernels.push_back(kernel);
      if (failed(HalideLowering(module, func, op, strategy, std::move(kernel))
                     .lower()))
        return signalPassFailure();
    }
    module->setAttr(ffnc::halide::kHalideRequestAttrName,
                    StringAttr::get(&getContext(), request.print()));
  }
};

} // namespace
