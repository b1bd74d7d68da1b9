//===- FfnGpuLower.cpp - ffn.ffn to GPU kernels and a launch plan ---------===//
//
// The plan for one FFN (docs/gpu.md):
//
//   [row kernel]  x -> xn (pre-norm, or a copy padding d_model to a multiple
//                 of 8 so that every A row is 16-byte aligned)
//   GEMM 1        h = act(xn . W1 + b1)  or  act(xn . Wg + bg) * (xn . Wu + bu)
//   GEMM 2        y = h . W2 + b2 [+ x]  (f32 z instead when post-norm)
//   [row kernel]  y = norm(z)
//
// A mixture of experts adds a router and runs the GEMMs per expert on the
// rows that chose it (MoeKernels.cpp; docs/gpu.md):
//
//   [row kernel]  x -> xn
//   route         top k of the f32 logits, and their weights
//   group         each routed expert's rows, in row order
//   GEMM 1, 2     grid.z over the experts; rows gathered through the lists,
//                 results to each (row, choice) slot: h, then f32 y
//   combine       f = sum of the weighted slots [+ x] (f32 z when post-norm)
//   [row kernel]  y = norm(z)
//
// per token-count bucket of the op's #ffn.gpu_strategy (ffn-gpu-select-
// strategy): its block tile, ring depth, MMA instruction and K splits. A
// split GEMM writes f32 partials to the workspace, and the epilogue is
// applied to their sum in slice order (deterministic): by the block that
// finishes a tile's last slice where the tiles are small (decode,
// GemmFixup.cpp), else by a reduction kernel spread over the rows.
//
// The hidden activations h, and xn, are stored in the FFN's dtype: they are
// the next matmul's tensor-core operands. The kernel descriptor says so
// (operand_rounding), and the f64 reference's error bound accounts for it.
//
//===----------------------------------------------------------------------===//

#include "ffn/Target/GPU/Passes.h"

#include "FfnShape.h"
#include "Kernels.h"
#include "PackFunctions.h"
#include "ffn/Target/GPU/PathNotes.h"
// The CPU back end's quantizing pack functions write the GPU's K-major
// rows too (one column per panel).
#include "../CPU/LowerPacked/Packing.h"

#include "ffn/IR/FfnOps.h"
#include "ffn/Target/GPU/CostModel.h"

#include "mlir/IR/Builders.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNGPULOWER
#include "ffn/Target/GPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::gpu_target;

static int64_t roundUp(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

namespace {

/// Builds one FFN's kernels and launches.
class FfnPlanner {
public:
  FfnPlanner(OpBuilder &builder, ModuleOp module, func::FuncOp func, FfnOp op,
             StringRef chip, const GpuStrategy &strategy)
      : builder(builder), module(module), func(func), op(op), chip(chip),
        strategy(strategy) {}

  LogicalResult plan();

private:
  OpBuilder &builder;
  ModuleOp module;
  func::FuncOp func;
  FfnOp op;
  std::string chip;
  // A copy: the attribute hands its knobs out by value.
  const GpuStrategy strategy;

  std::string name;
  Type t, f32;
  int64_t dm = 0, eb = 0;
  // Per block of a grouped FFN (the whole FFN when dense): its d_model and
  // packed widths; the blocks' tiles follow one another in every buffer.
  int64_t groups = 1, dmBlock = 0;
  int64_t kp1 = 0, hs = 0, nb2 = 0;
  // A mixture of experts (moe.experts > 0): its routed and shared experts,
  // choices per row and slots per row (choices, then the shared experts).
  MoeConfig moe;
  bool isMoe() const { return moe.experts > 0; }
  // The pieces of a token row of h: a grouped FFN's blocks, or a mixture's
  // slots (each an expert's d_ff, padded to hs).
  int64_t hPieces() const { return isMoe() ? moe.slots() : groups; }
  // The blocks or experts a stacked parameter holds (1: none).
  int64_t stackedBlocks() const {
    return isMoe() ? moe.experts + moe.shared : groups;
  }
  // Parameter indices (-1: absent).
  int64_t wUp = -1, wGate = -1, wDown = -1, bUp = -1, bGate = -1, bDown = -1,
          scale = -1, shift = -1, router = -1;
  bool preNorm = false, postNorm = false, padInput = false;
  // int8 activations: x and h quantized per row and group by row kernels
  // (values in the dtype, exact integers; f32 tiles take them dequantized),
  // GEMM 1 writing f32 h; the scale groups are the weights' (quantUp's and
  // quantDown's kGroups a block).
  bool int8Act = false;
  // The FFN as the cost model read it (its weight format too).
  GpuFfnShape shape;
  // Quantized weights: the byte layout of one block's packed W_up/W_gate
  // and W_down.
  struct QuantMatrix {
    int64_t rows = 0, k = 0, kRows = 0, kGroups = 0;
    int64_t scaleOffset = 0, zeroOffset = 0, bytes = 0;
  };
  QuantMatrix quantUp, quantDown;
  QuantMatrix quantLayout(int64_t rows, int64_t k, int64_t kRows) const;
  /// The B operand(s) of a GEMM over matrix parameter `index` (quantized:
  /// its bytes and its scales).
  void addWeight(std::vector<KernelArg> &args, int64_t index) const;
  void setQuant(GemmConfig &c, const QuantMatrix &q) const;
  // Workspace regions: offset of each region in bytes per row.
  int64_t wsXn = 0, wsH = 0, wsZ = 0, wsPartial = 0;
  // int8 activations: x's and h's scale tables, GEMM 1's f32 h.
  int64_t wsSx = 0, wsSh = 0, wsH32 = 0;
  // A mixture's: choices, weights, expert lists (m per expert), counts (E
  // used of m E), f32 slot results.
  int64_t wsSel = 0, wsG = 0, wsPerm = 0, wsCount = 0, wsY = 0;
  // The f32 partials per row of each bucket that splits K, after the
  // regions every launch shares: a run of m rows allocates only its own
  // bucket's.
  struct PartialRange {
    int64_t minM, maxM, bytesPerRow;
  };
  std::vector<PartialRange> partials;
  /// The workspace bytes per row that launch `l` reaches.
  int64_t workspaceReach(const Launch &l) const;
  gpu::GPUModuleOp gpuModule;
  std::vector<Launch> launches;

  KernelArg param(int64_t i) const { return {ArgKind::Param, i, t}; }
  KernelArg ws(int64_t offset, Type type) const {
    return {ArgKind::Workspace, offset, type};
  }
  KernelArg mArg() const { return {ArgKind::M, 0, Type()}; }
  void addGemms(const GpuBucket &bucket, int64_t minM);
  /// Whether TMA feeds a bucket's tiles: wgmma's, except a mixture's (its
  /// experts gather their A rows; TMA copies boxes).
  bool tmaFeeds(GpuMma mma) const { return mma == GpuMma::Wgmma && !isMoe(); }
  /// A TMA GEMM's tensor-map arguments (A, B, [B up]) over its `operands`,
  /// their maps added to `l`.
  std::vector<KernelArg> tensorMaps(const GemmConfig &c,
                                    ArrayRef<KernelArg> operands,
                                    Launch &l) const;
  /// `finishArgs`: a fused post-norm's output, scale [and shift]
  /// (config.postNorm).
  void addGemm(GemmConfig config, std::vector<KernelArg> args,
               std::vector<KernelArg> epilogueArgs, int64_t minM, int64_t maxM,
               std::vector<KernelArg> aScaleArgs = {},
               std::vector<KernelArg> finishArgs = {});
  /// int8 activations: the launch quantizing GEMM 1's f32 h for GEMM 2 in
  /// the bucket [minM, maxM] (the kernel is built once).
  void addQuantizeH(int64_t minM, int64_t maxM);
  /// A row kernel's launch for the token counts [minM, maxM]; a kernel
  /// launched in several buckets is built once.
  void addRowKernel(const NormConfig &config, std::vector<KernelArg> args,
                    int64_t minM = 1, int64_t maxM = INT64_MAX);
  void addMoeKernels();
  /// The combine kernel of the bucket (named by `suffix`) whose GEMM 2 is
  /// `down`.
  void addCombine(const GemmConfig &down, const std::string &suffix,
                  int64_t minM, int64_t maxM);
  void writeStub();
};
} // namespace

FfnPlanner::QuantMatrix FfnPlanner::quantLayout(int64_t rows, int64_t k,
                                                int64_t kRows) const {
  // Integers [rows][k * bits / 8], then scales [rows][kGroups] in the
  // dtype, then zero points [rows][kGroups] bytes: GemmConfig's layout.
  QuantMatrix q;
  q.rows = rows;
  q.k = k;
  q.kRows = kRows;
  q.kGroups = (kRows + shape.quantGroup - 1) / shape.quantGroup;
  q.scaleOffset = roundUp(rows * k * shape.weightBits / 8, 16);
  int64_t end = q.scaleOffset + rows * q.kGroups * eb;
  if (shape.zeroPoints) {
    q.zeroOffset = roundUp(end, 16);
    end = q.zeroOffset + rows * q.kGroups;
  }
  q.bytes = roundUp(end, 16);
  return q;
}

void FfnPlanner::addWeight(std::vector<KernelArg> &args, int64_t index) const {
  if (!shape.weightBits) {
    args.push_back(param(index));
    return;
  }
  args.push_back({ArgKind::Param, index, builder.getI8Type()});
  args.push_back(param(index));
}

void FfnPlanner::setQuant(GemmConfig &c, const QuantMatrix &q) const {
  if (!shape.weightBits)
    return;
  c.weightBits = shape.weightBits;
  c.quantGroup = shape.quantGroup;
  c.weightTerms = shape.mmaTerms();
  c.zeroPoints = shape.zeroPoints;
  c.kRows = q.kRows;
  c.kGroups = q.kGroups;
  c.scaleOffset = q.scaleOffset;
  c.zeroOffset = q.zeroOffset;
  // A stacked parameter's blocks are 64-byte aligned (KernelParamAttr).
  c.bGroupBytes = stackedBlocks() > 1 ? roundUp(q.bytes, 64) : 0;
}

void FfnPlanner::addRowKernel(const NormConfig &config,
                              std::vector<KernelArg> args, int64_t minM,
                              int64_t maxM) {
  if (llvm::none_of(launches,
                    [&](const Launch &l) { return l.kernel == config.name; }))
    buildNormKernel(builder, gpuModule, config, args);
  Launch l;
  l.kernel = config.name;
  l.rowsPerBlock = 1;
  l.threads = 256;
  l.sharedBytes = 32;
  l.minM = minM;
  l.maxM = maxM;
  l.args = std::move(args);
  launches.push_back(std::move(l));
}

void FfnPlanner::addMoeKernels() {
  Type i32 = builder.getI32Type();
  MoeConfig route = moe;
  route.name = name + "_route";
  Launch r;
  r.kernel = route.name;
  r.sharedBytes = routeSharedBytes(route);
  r.args = {{ArgKind::Input, 0, t}, param(router)};
  if (preNorm) {
    r.args.push_back(param(scale));
    if (shift >= 0)
      r.args.push_back(param(shift));
  }
  r.args.push_back(ws(wsSel, i32));
  r.args.push_back(ws(wsG, f32));
  r.args.push_back(mArg());
  buildRouteKernel(builder, gpuModule, route, r.args);
  launches.push_back(std::move(r));

  MoeConfig group = moe;
  group.name = name + "_group";
  Launch l;
  l.kernel = group.name;
  // One block per routed expert (grid.y), a single one along x at any m.
  l.rowsPerBlock = int64_t(1) << 40;
  l.gridY = moe.experts;
  l.sharedBytes = 32;
  l.args = {ws(wsSel, i32), ws(wsPerm, i32), ws(wsCount, i32), mArg()};
  buildGroupKernel(builder, gpuModule, group, l.args);
  launches.push_back(std::move(l));
}

void FfnPlanner::addCombine(const GemmConfig &down, const std::string &suffix,
                            int64_t minM, int64_t maxM) {
  MoeConfig combine = moe;
  combine.name = name + "_combine" + suffix;
  combine.splitK = down.splitK;
  Launch l;
  l.kernel = combine.name;
  l.minM = minM;
  l.maxM = maxM;
  if (down.splitK == 1) {
    l.args = {ws(wsY, f32), ws(wsG, f32)};
  } else {
    combine.partialStride = nb2;
    combine.hasBias = bDown >= 0;
    combine.biasStride = nb2;
    l.args = {ws(wsPartial, f32), ws(wsG, f32),
              ws(wsSel, builder.getI32Type())};
    if (combine.hasBias)
      l.args.push_back(param(bDown));
  }
  if (moe.residual)
    l.args.push_back({ArgKind::Input, 0, t});
  if (postNorm)
    l.args.push_back(ws(wsZ, f32));
  l.args.push_back({ArgKind::Output, 0, t});
  if (postNorm) {
    l.args.push_back(param(scale));
    if (shift >= 0)
      l.args.push_back(param(shift));
  }
  l.args.push_back(mArg());
  // The combine owns its row: it applies a post-norm itself.
  l.sharedBytes = postNorm ? 32 : 0;
  buildCombineKernel(builder, gpuModule, combine, l.args);
  launches.push_back(std::move(l));
}

void FfnPlanner::addGemm(GemmConfig c, std::vector<KernelArg> operands,
                         std::vector<KernelArg> epilogueArgs, int64_t minM,
                         int64_t maxM, std::vector<KernelArg> aScaleArgs,
                         std::vector<KernelArg> finishArgs) {
  assert(!c.postNorm == finishArgs.empty() && "a fused norm's arguments");
  // A fused post-norm's band counters follow the tiles' (one argument).
  // Small split tiles reduce their slices in the GEMM (no reduction
  // launch); a mixture's combine kernel adds its slices anyway.
  bool fixup = !isMoe() && gpuSplitFixup(c.bm, c.bn, c.splitK);
  std::vector<KernelArg> counterArgs;
  if (c.postNorm || fixup)
    counterArgs.push_back({ArgKind::Counters, 0, builder.getI32Type()});
  counterArgs.insert(counterArgs.end(), finishArgs.begin(), finishArgs.end());
  // operands: A, B (, B up), out. c.splitK is the strategy's.
  int64_t colBlocks =
      (c.gated ? 2 : 1) * (c.epilogue == Epilogue::Output ? nb2 : hs) / c.bn;
  c.groups = groups;
  c.colBlocks = colBlocks;
  // The register stream: ptxas, left alone, gave some kernels 48 registers
  // and spilled. Long K slices with A staged in shared memory keep four
  // blocks an SM (their loads in flight are their registers; LLaMA-7B's
  // 516-block GEMM 1 fits one wave of four on an H200); short ones, which
  // LLVM unrolls whole and whose grids are small, and those that carry A
  // from global memory too, may take twice the registers. sm_80's ptxas
  // spilled a GEMM 2 at the four blocks' 64 registers (LLaMA-7B): it gets
  // three (not timed on an A100).
  if (c.stages == 0) {
    int64_t sliceTiles = (c.k / c.bk + c.splitK - 1) / c.splitK;
    bool long_ = sliceTiles >= 8 && c.streamStageBytes() > 0;
    c.minBlocksPerSm = !long_ ? 2 : chip == "sm_80" ? 3 : 4;
  }
  // A ring kernel whose shared memory leaves room for at most two blocks
  // an SM: ptxas, not knowing that, budgeted registers for more resident
  // blocks (three 256-thread blocks' 80, or 64) and spilled a few words in
  // some shapes (docs/gpu.md). Telling it the blocks that fit cannot lower
  // the occupancy, which the shared memory already caps there; kernels
  // with room for more keep ptxas's own budget. The TMA kernels split the
  // register file between their warpgroups themselves (setmaxnreg).
  int64_t fit =
      gpuBlocksPerSm(*nominalGpuDevice(chip), c.sharedBytes(), c.threads());
  if (c.stages > 0 && !c.tma && fit <= 2)
    c.minBlocksPerSm = std::max<int64_t>(fit, 1);
  // The stream's warp rings hold its loads in flight in shared memory, not
  // registers: no more blocks than that memory holds are promised.
  if (c.stages == 0 && c.warpStages)
    c.minBlocksPerSm = std::clamp<int64_t>(fit, 1, c.minBlocksPerSm);
  if (c.weightBits) {
    // A quantized kernel whose ring leaves room for one or two blocks per
    // SM: say so, and ptxas spends the registers that leaves instead of
    // spilling for blocks that cannot come (the dense kernels' hint waits
    // for a GPU to time it, docs/gpu.md). Decode tiles keep the blocks that
    // fit (loads in flight); larger tiles get one block's registers (their
    // two accumulator sets need more than half). Where more than two fit,
    // ptxas's own budget is mostly no tighter than the hint's would be;
    // a mixture's bf16/f16 decode tiles are the exception seen (ptxas gave
    // them 64 registers, four blocks' worth, where three fit, and the
    // gathered rows spilled), so they always get the blocks that fit (its
    // f32 ones spill with that hint and not without it).
    if (fit <= 2 || (c.bm == 16 && isMoe() && c.tensorCores()))
      c.minBlocksPerSm = c.bm == 16 ? std::max<int64_t>(fit, 1) : 1;
    // A mixture's int8 activations also keep each fragment row's
    // scale-table row through the K loop: left at three blocks' 80
    // registers (or its own budget), ptxas spilled 12-52 bytes (f16, int4
    // in groups of 16, sm_90a, every tile); two blocks' registers hold
    // them.
    if (c.aRowScales && isMoe() && fit > 2)
      c.minBlocksPerSm = 2;
  }
  Launch l;
  l.rowsPerBlock = c.bm;
  l.gridY = groups * colBlocks;
  l.minM = minM;
  l.maxM = maxM;
  l.threads = c.threads();
  l.sharedBytes = c.sharedBytes();
  // A mixture's GEMMs also take the experts' lists and counts (after the
  // epilogue's arguments), and grid.x walks every expert's row tiles: at
  // most m (k + S) slot rows in tiles plus one partial tile per expert; a
  // slice's partials hold every slot row.
  std::vector<KernelArg> moeArgs;
  int64_t partialRows = 1;
  l.gridZ = c.splitK;
  if (isMoe()) {
    c.moeRouted = moe.experts;
    c.moeShared = moe.shared;
    c.moeTopK = moe.topK;
    c.moeSlots = moe.slots();
    l.gridMScale = moe.slots();
    l.gridRowsExtra = (moe.experts + moe.shared) * (c.bm - 1);
    moeArgs = {ws(wsPerm, builder.getI32Type()),
               ws(wsCount, builder.getI32Type())};
    partialRows = moe.slots();
  }
  std::vector<KernelArg> mapArgs;
  if (c.tma) {
    mapArgs = tensorMaps(c, operands, l);
    // Persistent (GemmTma.cpp): a block per SM, the most the ring's shared
    // memory and its warpgroups' re-split register file let reside, walks
    // the tiles; the strategy's SM count sizes it, as it sized the tiles.
    l.maxBlocks = *strategy.sms;
  }
  if (c.splitK == 1) {
    l.kernel = c.name;
    l.args = operands;
    l.args.insert(l.args.end(), epilogueArgs.begin(), epilogueArgs.end());
    l.args.insert(l.args.end(), counterArgs.begin(), counterArgs.end());
    l.args.insert(l.args.end(), moeArgs.begin(), moeArgs.end());
    l.args.insert(l.args.end(), aScaleArgs.begin(), aScaleArgs.end());
    l.args.insert(l.args.end(), mapArgs.begin(), mapArgs.end());
    l.args.push_back(mArg());
    buildGemmKernel(builder, gpuModule, c, l.args);
    launches.push_back(std::move(l));
    return;
  }
  // K slices write f32 partials; the reduction applies the epilogue.
  GemmConfig partial = c;
  partial.epilogue = Epilogue::Partial;
  partial.outType = f32;
  partial.partialStride = groups * colBlocks * c.bn;
  partials.push_back(
      {minM, maxM, c.splitK * partialRows * partial.partialStride * 4});
  KernelArg out = operands.back();
  operands.back() = ws(wsPartial, f32);
  l.kernel = c.name;
  l.args = operands;
  if (fixup) {
    partial.fixup = c.epilogue;
    partial.fixupType = c.outType;
    l.args.push_back(out);
    l.args.insert(l.args.end(), epilogueArgs.begin(), epilogueArgs.end());
    l.args.insert(l.args.end(), counterArgs.begin(), counterArgs.end());
  }
  assert((fixup || !c.postNorm) && "the reduction kernel writes z");
  l.args.insert(l.args.end(), moeArgs.begin(), moeArgs.end());
  l.args.insert(l.args.end(), aScaleArgs.begin(), aScaleArgs.end());
  l.args.insert(l.args.end(), mapArgs.begin(), mapArgs.end());
  l.args.push_back(mArg());
  buildGemmKernel(builder, gpuModule, partial, l.args);
  launches.push_back(l);
  // A mixture's combine kernel adds the slices and the bias.
  if (isMoe() || fixup)
    return;

  c.partialStride = partial.partialStride;
  Launch r;
  r.kernel = c.name + "_reduce";
  r.rowsPerBlock = 1;
  r.gridY = (splitKReduceColumns(c) + kReduceColumns - 1) / kReduceColumns;
  r.minM = minM;
  r.maxM = maxM;
  r.threads = 256;
  r.args = {ws(wsPartial, f32), out};
  r.args.insert(r.args.end(), epilogueArgs.begin(), epilogueArgs.end());
  r.args.push_back(mArg());
  buildSplitKReduceKernel(builder, gpuModule, c, r.args);
  launches.push_back(std::move(r));
}

std::vector<KernelArg> FfnPlanner::tensorMaps(const GemmConfig &c,
                                              ArrayRef<KernelArg> operands,
                                              Launch &l) const {
  std::vector<KernelArg> args;
  auto add = [&](const KernelArg &buffer, ArrayRef<int64_t> dims,
                 ArrayRef<int64_t> strides, ArrayRef<int64_t> box) {
    TensorMapDesc map;
    map.source = buffer.kind;
    map.index = buffer.index;
    map.rank = dims.size();
    llvm::copy(dims, map.dims);
    llvm::copy(strides, map.strides);
    llvm::copy(box, map.box);
    map.swizzle = c.bk * eb; // one 128-byte swizzle span per tile row
    args.push_back(
        {ArgKind::TensorMap, static_cast<int64_t>(l.maps.size()), Type(), map});
    l.maps.push_back(map);
  };
  // A: [m][groups][kValid] at row stride lda and group stride aGroupStride
  // (columns past kValid, a group's padding, read as zero); 0 stands for m.
  if (groups > 1)
    add(operands[0], {c.kValid, groups, 0}, {c.aGroupStride * eb, c.lda * eb},
        {c.bk, 1, c.bm});
  else
    add(operands[0], {c.kValid, 0}, {c.lda * eb}, {c.bk, c.bm});
  // B: [groups][bGroupRows][k], a gated tile's half from each matrix.
  int64_t bRows = c.gated ? c.bn / 2 : c.bn;
  for (int64_t i = 1; i <= (c.gated ? 2 : 1); ++i) {
    if (groups > 1)
      add(operands[i], {c.k, c.bGroupRows, groups},
          {c.k * eb, c.bGroupRows * c.k * eb}, {c.bk, bRows, 1});
    else
      add(operands[i], {c.k, c.bGroupRows}, {c.k * eb}, {c.bk, bRows});
  }
  return args;
}

void FfnPlanner::addGemms(const GpuBucket &bucket, int64_t minM) {
  // Kernels are named after their bucket's largest m.
  int64_t maxM = bucket.maxM ? bucket.maxM : INT64_MAX;
  std::string suffix =
      bucket.maxM ? "_m" + std::to_string(bucket.maxM) : std::string("_mlarge");
  GemmConfig base;
  base.storage = t;
  base.bm = bucket.blockM;
  base.bn = bucket.blockN;
  base.warpsM = bucket.warpsM;
  base.warpsN = bucket.warpsN;
  base.bk = bucket.blockK;
  base.wgmma = bucket.mma == GpuMma::Wgmma;
  base.tma = tmaFeeds(bucket.mma);
  base.stages = bucket.stages;
  base.warpStages = bucket.warpStages;
  base.widenInRegisters = bucket.registerWiden;

  // GEMM 1.
  GemmConfig up = base;
  up.name = name + "_up" + suffix;
  up.k = kp1;
  bool aFromWorkspace = preNorm || padInput || int8Act;
  // A block's A columns: its piece of the workspace row (padded to kp1) or
  // of the input row.
  up.kValid = aFromWorkspace ? kp1 : dmBlock;
  up.lda = aFromWorkspace ? groups * kp1 : dm;
  up.aGroupStride = aFromWorkspace ? kp1 : dmBlock;
  up.bGroupRows = hs;
  up.nOut = groups * hs;
  up.outGroupStride = hs;
  if (isMoe()) {
    // Every expert reads the whole row of its slot's token and writes the
    // slot's row of h.
    up.aGroupStride = 0;
    up.outGroupStride = 0;
    up.moeGatherToken = true;
  }
  up.biasGroupStride = hs;
  up.epilogue = Epilogue::Hidden;
  if (shape.dFf / groups < hs)
    up.hValid = shape.dFf / groups;
  up.gated = wGate >= 0;
  up.activation = op.getActivation();
  up.outType = int8Act ? f32 : t;
  up.hasBias = bUp >= 0;
  up.hasBiasGate = bGate >= 0;
  up.splitK = bucket.splitUp;
  std::vector<KernelArg> ops1 = {
      aFromWorkspace ? ws(wsXn, t) : KernelArg{ArgKind::Input, 0, t}};
  setQuant(up, quantUp);
  if (up.gated) {
    addWeight(ops1, wGate);
    addWeight(ops1, wUp);
  } else {
    addWeight(ops1, wUp);
  }
  ops1.push_back(int8Act ? ws(wsH32, f32) : ws(wsH, t));
  std::vector<KernelArg> epi1;
  if (up.hasBias)
    epi1.push_back(param(bUp));
  if (up.hasBiasGate)
    epi1.push_back(param(bGate));
  // Tensor cores multiply the integers; f32 tiles took them dequantized.
  bool rowScales = int8Act && up.tensorCores();
  std::vector<KernelArg> scales1, scales2;
  if (rowScales) {
    up.aRowScales = true;
    scales1.push_back(ws(wsSx, f32));
  }
  addGemm(up, ops1, epi1, minM, maxM, scales1);
  if (int8Act)
    addQuantizeH(minM, maxM);

  // GEMM 2.
  GemmConfig down = base;
  down.name = name + "_down" + suffix;
  down.k = hs;
  down.kValid = hs;
  down.lda = groups * hs;
  down.aGroupStride = hs;
  down.bGroupRows = nb2;
  down.nOut = dmBlock;
  down.outStride = dm;
  down.outGroupStride = dmBlock;
  down.biasGroupStride = nb2; // grouped: b_down packed to nb2 per block
  down.epilogue = Epilogue::Output;
  down.outType = postNorm ? f32 : t;
  down.hasBias = bDown >= 0;
  down.residual = op.getResidual();
  // z (post-norm) and a mixture's y are workspace rows (ops2 below).
  down.outInWorkspace = postNorm || isMoe();
  if (isMoe()) {
    // f32 results per slot; the combine kernel weighs them and adds the
    // residual.
    down.aGroupStride = 0;
    down.outGroupStride = 0;
    down.outType = f32;
    down.residual = false;
  }
  down.splitK = bucket.splitDown;
  setQuant(down, quantDown);
  if (rowScales) {
    down.aRowScales = true;
    scales2.push_back(ws(wsSh, f32));
  }
  std::vector<KernelArg> ops2 = {ws(wsH, t)};
  addWeight(ops2, wDown);
  ops2.push_back(isMoe()    ? ws(wsY, f32)
                 : postNorm ? ws(wsZ, f32)
                            : KernelArg{ArgKind::Output, 0, t});
  std::vector<KernelArg> epi2;
  if (down.hasBias)
    epi2.push_back(param(bDown));
  if (down.residual)
    epi2.push_back({ArgKind::Input, 0, t});
  std::vector<KernelArg> finish;
  if (postNorm && !isMoe() && gpuFusesPostNorm(bucket, dm)) {
    auto norm = *op.getNorm();
    down.postNorm = norm.getKind();
    down.normEps = norm.getEps().convertToDouble();
    down.normShift = shift >= 0;
    finish = {{ArgKind::Output, 0, t}, param(scale)};
    if (down.normShift)
      finish.push_back(param(shift));
  }
  addGemm(down, ops2, epi2, minM, maxM, scales2, finish);
  if (isMoe())
    addCombine(down, suffix, minM, maxM);
}

void FfnPlanner::addQuantizeH(int64_t minM, int64_t maxM) {
  int64_t dff = op.getDFf();
  NormConfig n;
  n.name = name + "_quantize_h";
  // h's pieces quantized apart, as GEMM 2's scale table reads them.
  int64_t pieces = hPieces();
  int64_t pieceWidth = isMoe() ? dff : dff / groups;
  n.width = pieces * pieceWidth;
  n.outStride = pieces * hs;
  n.groupWidth = pieces > 1 ? pieceWidth : 0;
  n.groupStride = pieces > 1 ? hs : 0;
  n.inPadded = true;
  n.outType = t;
  n.apply = false;
  n.quantGroup = shape.quantGroup;
  n.dequantize = t.isF32();
  // One kernel, launched in every bucket between its two GEMMs.
  addRowKernel(n, {ws(wsH32, f32), ws(wsH, t), ws(wsSh, f32), mArg()}, minM,
               maxM);
}

LogicalResult FfnPlanner::plan() {
  name = func.getSymName().str();
  t = op.getStorageType();
  f32 = builder.getF32Type();
  dm = op.getDModel();
  eb = t.getIntOrFloatBitWidth() / 8;
  shape = gpuShapeOf(op);
  GpuPackedDims dims = gpuPackedDims(shape);
  groups = dims.groups;
  dmBlock = dm / groups;
  kp1 = dims.kUp;
  hs = dims.hidden;
  nb2 = dims.nDown;
  if (auto norm = op.getNorm()) {
    preNorm = norm->getPosition() == NormPosition::pre;
    postNorm = !preNorm;
  }
  if (auto mix = op.getMoe()) {
    moe.name = name;
    moe.storage = t;
    moe.dModel = dm;
    moe.experts = mix->getExperts();
    moe.topK = mix->getTopK();
    moe.shared = mix->getShared();
    moe.router = mix->getRouter();
    moe.normalize = mix->getNormalize();
    moe.residual = op.getResidual();
    if (auto norm = op.getNorm()) {
      (preNorm ? moe.preNorm : moe.postNorm) = norm->getKind();
      moe.eps = norm->getEps().convertToDouble();
    }
    // grid.z holds the experts and GEMM 2's K slices.
    for (const GpuBucket &bucket :
         ArrayRef<GpuBucket>(strategy.buckets, strategy.numBuckets))
      if ((moe.experts + moe.shared) * bucket.splitDown > 65535)
        return op.emitOpError("has ")
               << moe.experts + moe.shared << " experts in " << bucket.splitDown
               << " K slices: more than grid.z's 65535 blocks";
  }
  // cp.async copies 16 bytes: A rows must start 16-byte aligned.
  // (Each block's: a grouped FFN's blocks start at multiples of dmBlock.)
  padInput = !preNorm && (dmBlock * eb) % 16 != 0;

  // Parameter indices: the function's arguments after the input.
  auto indexOf = [&](Value v) -> int64_t {
    if (!v)
      return -1;
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner()->getParentOp() != func)
      return -2;
    return static_cast<int64_t>(arg.getArgNumber()) - 1;
  };
  if (auto quant = op.getWeightQuant()) {
    int8Act = quant->getInt8Activations();
    quantUp = quantLayout(hs, kp1, dmBlock);
    quantDown = quantLayout(nb2, hs, op.getDFf() / groups);
  }
  wUp = indexOf(op.getWUp());
  wGate = indexOf(op.getWGate());
  wDown = indexOf(op.getWDown());
  bUp = indexOf(op.getBUp());
  bGate = indexOf(op.getBGate());
  bDown = indexOf(op.getBDown());
  scale = indexOf(op.getNormScale());
  shift = indexOf(op.getNormShift());
  router = indexOf(op.getRouter());
  moe.shift = shift >= 0;
  for (int64_t i : {wUp, wGate, wDown, bUp, bGate, bDown, scale, shift, router})
    if (i == -2)
      return op.emitOpError("ffn-gpu-lower needs every operand of ffn.ffn to "
                            "be an argument of its function");
  if (indexOf(op.getInput()) != -1)
    return op.emitOpError("ffn-gpu-lower needs the input as argument 0");

  // Workspace layout (bytes per row, 16-byte aligned regions).
  int64_t offset = 0;
  auto region = [&](int64_t bytes) {
    int64_t at = offset;
    offset += roundUp(bytes, 16);
    return at;
  };
  if (preNorm || padInput || int8Act)
    wsXn = region(groups * kp1 * eb);
  if (int8Act) {
    wsSx = region(groups * quantUp.kGroups * 4);
    wsH32 = region(hPieces() * hs * 4);
    wsSh = region(hPieces() * quantDown.kGroups * 4);
  }
  if (isMoe()) {
    wsSel = region(moe.topK * 4);
    wsG = region(moe.topK * 4);
    wsPerm = region(moe.experts * 4);
    wsCount = region(moe.experts * 4);
    wsH = region(moe.slots() * hs * eb);
    wsY = region(moe.slots() * dm * 4);
  } else {
    wsH = region(groups * hs * eb);
  }
  if (postNorm)
    wsZ = region(dm * 4);
  wsPartial = offset; // sized once the split factors are known

  OpBuilder::InsertionGuard g(builder);
  builder.setInsertionPointToEnd(module.getBody());
  MLIRContext *ctx = builder.getContext();
  auto target = NVVM::NVVMTargetAttr::get(
      ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda", chip, "+ptx80");
  gpuModule = gpu::GPUModuleOp::create(builder, op.getLoc(), name + "_device",
                                       builder.getArrayAttr({target}));

  if (preNorm || padInput || int8Act) {
    NormConfig n;
    n.name = name + "_input";
    n.width = dm;
    n.outStride = groups * kp1;
    if (groups > 1) {
      n.groupWidth = dmBlock;
      n.groupStride = kp1;
    }
    n.outType = t;
    n.apply = preNorm;
    if (int8Act) {
      n.quantGroup = shape.quantGroup;
      n.dequantize = t.isF32();
    }
    std::vector<KernelArg> args = {{ArgKind::Input, 0, t}, ws(wsXn, t)};
    if (preNorm) {
      auto norm = *op.getNorm();
      n.kind = norm.getKind();
      n.eps = norm.getEps().convertToDouble();
      n.shift = shift >= 0;
      args.push_back(param(scale));
      if (n.shift)
        args.push_back(param(shift));
    }
    if (int8Act)
      args.push_back(ws(wsSx, f32));
    args.push_back(mArg());
    addRowKernel(n, args);
  }

  if (isMoe())
    addMoeKernels();
  // Batch invariance is the strategy's: one bucket without a K split, so
  // each output row takes the same operations whatever rows share its run.
  int64_t minM = 1;
  for (const GpuBucket &bucket :
       ArrayRef<GpuBucket>(strategy.buckets, strategy.numBuckets)) {
    addGemms(bucket, minM);
    minM = bucket.maxM + 1;
  }

  // A mixture's combine applies the post-norm (it owns the row), and so do
  // the GEMM 2 launches of the fused buckets: the row kernel runs in the
  // others.
  std::vector<std::pair<int64_t, int64_t>> normKernelRanges;
  if (postNorm && !isMoe())
    normKernelRanges = gpuPostNormRanges(strategy, dm, /*fused=*/false);
  for (auto [normMinM, normMaxM] : normKernelRanges) {
    auto norm = *op.getNorm();
    NormConfig n;
    n.name = name + "_output";
    n.kind = norm.getKind();
    n.eps = norm.getEps().convertToDouble();
    n.width = dm;
    n.outStride = dm;
    n.outType = t;
    n.shift = shift >= 0;
    std::vector<KernelArg> args = {
        ws(wsZ, f32), {ArgKind::Output, 0, t}, param(scale)};
    if (n.shift)
      args.push_back(param(shift));
    args.push_back(mArg());
    addRowKernel(n, args, normMinM, normMaxM);
  }
  writeStub();
  return success();
}

int64_t FfnPlanner::workspaceReach(const Launch &l) const {
  // Every region before the partials is small (a row's xn, h, y, z); the
  // partials are what a split bucket adds, read and written only by its
  // split GEMMs, their reductions and its combine. Both GEMMs of a bucket
  // may split K; they share the one region.
  bool readsPartials = llvm::any_of(l.args, [&](const KernelArg &a) {
    return a.kind == ArgKind::Workspace && a.index == wsPartial;
  });
  int64_t bytes = 0;
  if (readsPartials)
    for (const PartialRange &p : partials)
      if (p.minM <= l.maxM && l.minM <= p.maxM)
        bytes = std::max(bytes, p.bytesPerRow);
  return wsPartial + roundUp(bytes, 16);
}

void FfnPlanner::writeStub() {
  MLIRContext *ctx = builder.getContext();
  // Packed parameter types and their pack functions.
  SmallVector<Type> argTypes;
  SmallVector<Attribute> params;
  argTypes.push_back(MemRefType::get({ShapedType::kDynamic, dm}, t));
  auto inputs = func.getArgumentTypes().drop_front();
  for (auto [i, type] : llvm::enumerate(inputs)) {
    auto shaped = cast<ShapedType>(type);
    int64_t idx = static_cast<int64_t>(i);
    // A grouped FFN's block parameters are stacked [groups, ...]: the
    // runtime packs each block's tensor into its own slot, one after the
    // other (what the kernels' group strides assume); the norm's act on
    // the whole row.
    // A mixture's experts are stacked the same way (one expert too: its
    // tensors are [1, ...]); its router is one matrix.
    bool stacked = (isMoe() || groups > 1) && idx != scale && idx != shift &&
                   idx != router;
    ArrayRef<int64_t> logical = shaped.getShape();
    if (stacked)
      logical = logical.drop_front();
    auto source = MemRefType::get(logical, t);
    MemRefType packed;
    StringRef paramName =
        func.getArgAttrOfType<StringAttr>(i + 1, "ffn.param").getValue();
    int64_t experts = stacked ? stackedBlocks() : 0;
    bool matrix = idx == wUp || idx == wGate || idx == wDown;
    if (shape.weightBits && matrix) {
      // One byte buffer per block: integers, scales, zero points.
      const QuantMatrix &q = idx == wDown ? quantDown : quantUp;
      packed = MemRefType::get({q.bytes}, builder.getI8Type());
      std::string packName = name + "_pack_" + std::to_string(idx);
      std::string packQuantizedName =
          name + "_pack_quantized_" + std::to_string(idx);
      OpBuilder::InsertionGuard g(builder);
      builder.setInsertionPointToEnd(module.getBody());
      int64_t panelRows = q.k * shape.weightBits / 8;
      cpu::buildQuantPack(builder, module.getLoc(), packName, source, packed,
                          /*nr=*/1, /*np=*/q.rows, shape.weightBits,
                          shape.quantGroup,
                          /*intDot=*/false, shape.zeroPoints, q.scaleOffset,
                          q.zeroOffset, panelRows);
      cpu::buildPrequantizedPack(builder, module.getLoc(), packQuantizedName,
                                 source, packed, 1, q.rows, shape.weightBits,
                                 shape.quantGroup, false, shape.zeroPoints,
                                 q.scaleOffset, q.zeroOffset, panelRows);
      KernelParamAttr param =
          buildKernelParam(ctx, paramName, logical, packed, packName,
                           packQuantizedName, experts);
      argTypes.push_back(param.kernelType());
      params.push_back(param);
      continue;
    }
    if (idx == wUp || idx == wGate)
      packed = MemRefType::get({hs, kp1}, t);
    else if (idx == wDown)
      packed = MemRefType::get({nb2, hs}, t);
    else if (idx == bUp || idx == bGate)
      packed = MemRefType::get({hs}, t);
    else if (idx == bDown && stacked)
      packed = MemRefType::get({nb2}, t); // whole 16-byte aligned slots
    KernelParamAttr param;
    if (!packed) {
      param =
          buildKernelParam(ctx, paramName, logical, source, "", "", experts);
    } else {
      std::string packName = name + "_pack_" + std::to_string(idx);
      buildPackFunction(builder, module, packName, source, packed);
      param = buildKernelParam(ctx, paramName, logical, packed, packName, "",
                               experts);
    }
    argTypes.push_back(param.kernelType());
    params.push_back(param);
  }
  argTypes.push_back(MemRefType::get({ShapedType::kDynamic, dm}, t));
  argTypes.push_back(
      MemRefType::get({ShapedType::kDynamic}, builder.getI8Type()));

  // The kernel's workspace per row: the most any launch reaches.
  SmallVector<Attribute> plan;
  int64_t wsPerRow = 0;
  for (const Launch &l : launches) {
    SmallVector<int64_t> args, maps;
    for (const KernelArg &a : l.args)
      args.append({static_cast<int64_t>(a.kind), a.index});
    for (const TensorMapDesc &map : l.maps)
      llvm::append_range(maps, map.flat());
    int64_t reach = workspaceReach(l);
    wsPerRow = std::max(wsPerRow, reach);
    plan.push_back(DeviceLaunchAttr::get(
        ctx, l.kernel, l.minM, l.maxM, l.rowsPerBlock, l.gridY, l.gridZ,
        l.threads, l.sharedBytes, reach, builder.getDenseI64ArrayAttr(args),
        maps.empty() ? DenseI64ArrayAttr() : builder.getDenseI64ArrayAttr(maps),
        l.gridMScale, l.gridRowsExtra, l.maxBlocks));
  }

  OpBuilder::InsertionGuard g(builder);
  builder.setInsertionPoint(func);
  auto stub = func::FuncOp::create(builder, func.getLoc(), name,
                                   builder.getFunctionType(argTypes, {}));
  stub.setPrivate();
  // The strategy itself stays with the kernel for --emit=gpu to print.
  stub->setAttr("ffn.gpu_strategy",
                GpuStrategyAttr::get(builder.getContext(), strategy));
  // wgmma tiles load with TMA except a mixture's (their A rows are
  // gathered); every other tile with cp.async.
  bool tma = gpuWgmmaFromM(strategy) > 0 && tmaFeeds(GpuMma::Wgmma);
  std::string text =
      describeGpuStrategy(strategy, chip) +
      (tma ? "; wgmma tiles fed by TMA into an mbarrier ring (a producer "
             "warpgroup), the others by a cp.async ring"
           : "; tiles fed by a cp.async ring");
  if (postNorm)
    text += "; " + describeGpuPostNorm(strategy, dm, isMoe());
  for (const std::string &note :
       pathNotes(dm, eb, chip, op.getBatchInvariant(), gpuWgmmaFromM(strategy),
                 groups, shape.quantized() ? shape.quantGroup : 0, isMoe(),
                 int8Act, gpuWidensInRegisters(strategy)))
    text += "; note: " + note;
  // Tensor cores round the GEMM operands to the storage type.
  stub->setAttr(KernelAbiAttr::kAttrName,
                buildKernelAbi(op, int8Act ? builder.getIntegerType(8) : t,
                               params, wsPerRow, /*phaseUnits=*/{},
                               /*bucketMaxM=*/{}, text,
                               builder.getStringAttr(gpuModule.getSymName()),
                               builder.getArrayAttr(plan)));
  func.erase();
}

namespace {
struct FfnGpuLowerPass : mlir::ffn::impl::FfnGpuLowerBase<FfnGpuLowerPass> {
  using FfnGpuLowerBase::FfnGpuLowerBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(&getContext()));
    SmallVector<std::pair<func::FuncOp, FfnOp>> work;
    for (auto func : module.getOps<func::FuncOp>()) {
      FfnOp found;
      func.walk([&](FfnOp op) { found = op; });
      if (found)
        work.push_back({func, found});
    }
    OpBuilder builder(&getContext());
    for (auto [func, op] : work) {
      auto strategy = dyn_cast_or_null<GpuStrategyAttr>(op.getStrategyAttr());
      if (!strategy || !strategy.isComplete()) {
        op.emitOpError("needs a complete #ffn.gpu_strategy (run "
                       "ffn-gpu-select-strategy first)");
        return signalPassFailure();
      }
      if (std::optional<GpuKnobError> bad =
              checkGpuStrategy(strategy.getKnobs(), gpuShapeOf(op), chip)) {
        op.emitOpError("strategy ") << bad->key << " " << bad->message;
        return signalPassFailure();
      }
      FfnPlanner planner(builder, module, func, op, chip, strategy.getKnobs());
      if (failed(planner.plan()))
        return signalPassFailure();
    }
  }
};
} // namespace
