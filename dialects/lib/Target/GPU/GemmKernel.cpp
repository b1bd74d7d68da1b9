//===- GemmKernel.cpp - the tiled GEMM kernel with a fused epilogue -------===//
//
// One block computes a bm x bn tile of A[m, k] . B[n, k]^T (B is the packed
// weight: K-major rows). Warps split the tile warpsM x warpsN; each warp
// owns (bm / warpsM) x (bn / warpsN) as m16n8 fragments, in the register
// layout of mma.sync.m16n8k16: lane (g = lane / 4, t = lane % 4) holds rows
// g and g + 8, columns 2t and 2t + 1 of each fragment.
//
// Operands stream through a `stages`-deep ring of shared-memory tiles filled
// by cp.async (16-byte copies; out-of-range rows and columns zero-filled by
// the copy itself, so there is no tail code). Rows are padded by one 16-byte
// chunk so that ldmatrix and the f32 reads of eight rows hit distinct banks.
//
// bf16/f16 multiply on tensor cores (ldmatrix + nvvm.mma.sync, emitted
// directly: nvgpu.mma.sync cannot lower bf16 in MLIR 22, docs/gpu.md). f32
// keeps exact f32 products with FMA in the same fragment layout, so both
// share one epilogue.
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "ffn/Target/GPU/CostModel.h"
#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::gpu_target;
using mlir::ffn::gpu_target::detail::GemmBuilder;

static int64_t elementBytes(Type t) { return t.getIntOrFloatBitWidth() / 8; }

/// The cost model's bucket for a kernel's ring: one rule for the kernel
/// and the model that chose it (the ring's bytes, the ping-pong tile).
static GpuBucket ringOf(const GemmConfig &c) {
  GpuBucket ring;
  ring.blockM = c.bm;
  ring.blockN = c.bn;
  ring.blockK = c.bk;
  ring.stages = c.stages;
  ring.mma = c.wgmma ? GpuMma::Wgmma : GpuMma::MmaSync;
  ring.registerWiden = c.widenInRegisters;
  return ring;
}

int64_t GemmConfig::sharedBytes() const {
  // The register stream: its front (A slice or flags), then its warp rings.
  if (stages == 0)
    return warpStages
               ? warpRingOffset() + warpStages * bn * bk * elementBytes(storage)
               : streamFrontBytes();
  return gpuGemmSharedBytes(ringOf(*this), elementBytes(storage), weightBits,
                            weightTerms);
}

bool GemmConfig::pingPong() const { return tma && gpuPingPong(ringOf(*this)); }

SmallVector<int64_t> TensorMapDesc::flat() const {
  // ffn_tensor_map's fields in order: source, index, rank, dims[3],
  // strides[2], box[3], swizzle.
  return {static_cast<int64_t>(source),
          index,
          rank,
          dims[0],
          dims[1],
          dims[2],
          strides[0],
          strides[1],
          box[0],
          box[1],
          box[2],
          swizzle};
}

gpu::GPUFuncOp mlir::ffn::gpu_target::createKernel(OpBuilder &builder,
                                                   gpu::GPUModuleOp module,
                                                   StringRef name,
                                                   ArrayRef<KernelArg> args,
                                                   int64_t threads) {
  SmallVector<Type> types;
  // Tensor maps are 128-byte by-value parameters: an !llvm.ptr here, which
  // ffn-gpu-tensor-map-params turns into a byval __grid_constant__ one at
  // its position among the lowered arguments (a rank-1 memref expands to
  // five).
  SmallVector<int64_t> mapPositions;
  int64_t position = 0;
  for (const KernelArg &arg : args) {
    if (arg.kind == ArgKind::M) {
      types.push_back(builder.getI64Type());
      ++position;
    } else if (arg.kind == ArgKind::TensorMap) {
      types.push_back(LLVM::LLVMPointerType::get(builder.getContext()));
      mapPositions.push_back(position++);
    } else {
      types.push_back(MemRefType::get({ShapedType::kDynamic}, arg.elementType));
      position += 5;
    }
  }
  OpBuilder::InsertionGuard g(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(builder, module.getLoc(), name,
                                     builder.getFunctionType(types, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  if (!mapPositions.empty())
    func->setAttr(kTensorMapArgsAttr,
                  builder.getDenseI64ArrayAttr(mapPositions));
  func.setKnownBlockSizeAttr(builder.getDenseI32ArrayAttr(
      {static_cast<int32_t>(threads), 1, 1}));
  // The launch never uses more threads than this: lets ptxas budget
  // registers for it (up to 255 per thread at 256 threads).
  func->setAttr("nvvm.maxntid", builder.getDenseI32ArrayAttr(
                                    {static_cast<int32_t>(threads), 1, 1}));
  builder.setInsertionPointToStart(&func.getBody().front());
  gpu::ReturnOp::create(builder, module.getLoc());
  return func;
}

void GemmBuilder::bindArgs() {
  auto args = func.getArguments();
  unsigned i = 0;
  aBuf = args[i++];
  bBuf = args[i++];
  if (c.weightBits)
    bScales = args[i++];
  if (c.gated) {
    bUpBuf = args[i++];
    if (c.weightBits)
      bUpScales = args[i++];
  }
  out = args[i++];
  bool fixup = c.fixup != Epilogue::Partial;
  if (fixup)
    fixOut = args[i++];
  if (c.epilogue != Epilogue::Partial || fixup) {
    if (c.hasBias)
      bias = args[i++];
    if (c.hasBiasGate)
      biasGate = args[i++];
    if (c.residual)
      resid = args[i++];
  }
  if (fixup || c.postNorm)
    counters = args[i++];
  if (c.postNorm) {
    normOut = args[i++];
    normScale = args[i++];
    if (c.normShift)
      normShift = args[i++];
  }
  if (moe()) {
    perm = args[i++];
    counts = args[i++];
  }
  if (c.aRowScales)
    aScales = args[i++];
  if (c.tma) {
    aMap = args[i++];
    bMap = args[i++];
    if (c.gated)
      bUpMap = args[i++];
  }
  m = ir.toIndex(args[i++]);
}

void GemmBuilder::build() {
  bindArgs();
  buildBody();
  if (c.fixup != Epilogue::Partial)
    fixup(); // finishes the band itself, in the block that sums the tile
  else if (c.postNorm)
    finishBand(out);
}

void GemmBuilder::setTile(Value x, Value y, Value z) {
  row0 = ir.mul(x, c.bm);
  col0 = ir.mul(y, c.bn);
  partialCol0 = col0;
  if (c.groups > 1) {
    // grid.y enumerates the groups' column tiles, group after group.
    group = ir.div(y, c.colBlocks);
    col0 = ir.mul(ir.rem(y, c.colBlocks), c.bn);
  }
  kSlice = z;
  kBeg = ir.mul(kSlice, kPerSlice);
}

void GemmBuilder::buildBody() {
  eb = elementBytes(c.storage);
  vec = 16 / eb;
  ldsElems = c.bk + vec;
  chunksPerRow = c.bk / vec;
  warpTileM = c.bm / c.warpsM;
  warpTileN = c.bn / c.warpsN;
  fragsM = warpTileM / 16;
  fragsN = warpTileN / 8;
  // Slices of whole tiles; the last may be shorter (its tiles past k are
  // zero-filled by the copies).
  kTiles = (c.k / c.bk + c.splitK - 1) / c.splitK;
  kPerSlice = kTiles * c.bk;
  if (c.weightBits) {
    qRowTile = c.bk * c.weightBits / 8;
    qChunksPerRow = qRowTile / 16;
    qElems = 128 / c.weightBits;
  }
  if (c.widenInRegisters) {
    // A is read 16 bytes a lane (registerOperands), from padded rows.
    assert(widensByBits() && !c.wgmma && c.stages > 0 &&
           c.quantGroup % 32 == 0 && c.bk % 32 == 0 &&
           "register widening: exact integers, 32-k chunks in one group");
    ldsElems = gpuRegisterWidenARowBytes(c.bk, eb) / eb;
  }

  tid = ir.threadId();
  lane = ir.rem(tid, 32);
  warp = ir.div(tid, 32);
  grp = ir.div(lane, 4);
  tig = ir.rem(lane, 4);
  warpRow = ir.mul(ir.div(warp, c.warpsN), warpTileM);
  warpCol = ir.mul(ir.rem(warp, c.warpsN), warpTileN);
  Value blockX = ir.blockId(gpu::Dimension::x);
  // A persistent kernel (the TMA ring) sets its tiles as it walks them.
  if (!c.tma)
    setTile(blockX, ir.blockId(gpu::Dimension::y),
            ir.blockId(gpu::Dimension::z));
  if (c.stages == 0)
    return buildStream();
  if (moe()) {
    // grid.x walks the list of every expert's row tiles, routed experts
    // first (ceil(count[e] / bm) tiles each), then the shared ones
    // (ceil(m / bm) each); a block past the list's end, which the launch's
    // bound leaves for skewed counts, leaves (a uniform branch), as no
    // block of an expert's does.
    Value t = blockX;
    int64_t experts = c.moeRouted + c.moeShared;
    Value sharedTiles = ir.div(ir.add(m, c.bm - 1), c.bm);
    SmallVector<Value> found = ir.loop(
        ir.idx(0), ir.idx(experts), 1, {ir.idx(0), ir.idx(experts), ir.idx(0)},
        [&](Value e, ValueRange iter) -> SmallVector<Value> {
          Value count =
              ir.toIndex(ir.load(counts, {ir.min(e, ir.idx(c.moeRouted - 1))}));
          Value tiles =
              ir.select(ir.lt(e, c.moeRouted),
                        ir.div(ir.add(count, c.bm - 1), c.bm), sharedTiles);
          Value base = iter[0], end = ir.add(base, tiles);
          Value here = ir.andI(
              ir.lt(t, end),
              arith::CmpIOp::create(b, arith::CmpIPredicate::sle, base, t));
          return {end, ir.select(here, e, iter[1]),
                  ir.select(here, ir.sub(t, base), iter[2])};
        });
    expert = found[1];
    row0 = ir.mul(found[2], c.bm);
    group = expert;
    routed = ir.lt(expert, c.moeRouted);
    routedExpert = ir.min(expert, ir.idx(c.moeRouted - 1));
    rows = ir.select(routed, ir.toIndex(ir.load(counts, {routedExpert})), m);
    rows = ir.select(ir.lt(expert, experts), rows, ir.idx(0));
    auto ifOp = scf::IfOp::create(b, ir.lt(row0, rows), /*withElse=*/false);
    b.setInsertionPoint(ifOp.getThenRegion().front().getTerminator());
    // The A rows this thread copies (forEachChunk's rows, stage after
    // stage): rows past the expert's read nothing.
    forEachChunk(c.bm, chunksPerRow, [&](Value r, Value) {
      Value i = ir.min(ir.add(row0, r), ir.sub(rows, ir.idx(1)));
      Value slot = slotOf(i);
      aRows.push_back(aRowOf(slot));
    });
    // int8 activations: A's row scales are per token (x, GEMM 1) or per
    // slot (h, GEMM 2), one block's kGroups a row, so the table row is
    // the lane's A row, not its tile row (rows past the expert's take the
    // last one's, as the copies do: never stored).
    if (aScales)
      for (int64_t mt = 0; mt < fragsM; ++mt)
        for (int64_t half = 0; half < 2; ++half) {
          Value r = ir.min(fragmentRow(mt, half), ir.sub(rows, ir.idx(1)));
          aScaleRows.push_back(ir.mul(aRowOf(slotOf(r)), c.kGroups));
        }
  }

  auto smemSpace = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  auto raw = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                         smemSpace));
  Value shift = ir.idx(0);
  if (c.wgmma) {
    // wgmma's swizzled tiles must start 1024-byte aligned.
    ldsElems = c.bk;
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, raw);
    shift = ir.rem(ir.sub(ir.idx(1024), ir.rem(base, 1024)), 1024);
    aAddr = ir.add(base, shift);
    bAddr = ir.add(aAddr, c.stages * c.bm * ldsElems * eb);
    // The TMA ring's warpgroups are the consumers after the producer's.
    Value mmaWarp = c.tma ? ir.sub(warp, ir.idx(4)) : warp;
    warpGroup = ir.div(mmaWarp, 4);
    warpCol = ir.idx(0);
    fragsN = c.bn / 8;
    if (c.pingPong()) {
      // Each warpgroup owns a whole tile: two m64 slabs, its warps 16 rows
      // of each.
      warpRow = ir.mul(ir.rem(mmaWarp, 4), 16);
      fragsM = 2;
      fragRowStep = 64;
    } else {
      // Each warpgroup owns 64 rows; its warps 16 rows each, all columns.
      warpRow = ir.mul(mmaWarp, 16);
      fragsM = 1;
    }
  }
  auto view = [&](int64_t count, int64_t rows, int64_t cols, Type type,
                  int64_t byteOffset) {
    auto memrefType =
        MemRefType::get({count, rows, cols}, type, nullptr, smemSpace);
    return memref::ViewOp::create(b, memrefType, raw, ir.add(shift, byteOffset),
                                  ValueRange{});
  };
  int64_t aBytes = c.stages * c.bm * ldsElems * eb;
  aSmem = view(c.stages, c.bm, ldsElems, c.storage, 0);
  // Quantized: B's integer tiles stream through the ring, and two tiles in
  // the storage type take them converted (one being read while the next is
  // written); with two terms per weight, tiles 2 and 3 take the lo terms.
  // Widened in registers, there are no converted tiles.
  int64_t converted = c.widenInRegisters ? 0 : 2 * c.weightTerms;
  if (!c.widenInRegisters)
    bSmem = view(c.weightBits ? converted : c.stages, c.bn, ldsElems, c.storage,
                 aBytes);
  if (c.weightBits)
    qSmem = view(c.stages, c.bn, qRowTile, b.getI8Type(),
                 aBytes + converted * c.bn * ldsElems * eb);

  if (c.tma)
    return buildTma();

  // Prologue: the first stages - 1 tiles in flight (wgmma: stages - 2, one
  // stage stays with the warpgroup MMAs still running).
  int64_t ahead = c.wgmma ? c.stages - 2 : c.stages - 1;
  for (int64_t s = 0; s < ahead; ++s)
    loadStage(ir.idx(s), ir.idx(s));
  // The waits count groups; the token they name is only the op's operand,
  // so the prologue's (which dominates them all) serves.
  Value waitToken = token;

  int64_t accCount = fragsM * fragsN * 4;
  if (c.wgmma) {
    // The accumulators stay in wgmma's register struct through the loop.
    SmallVector<Value> result = ir.loop(
        ir.idx(0), ir.idx(kTiles), 1, zeroAccumulators(),
        [&](Value kt, ValueRange iter) -> SmallVector<Value> {
          nvgpu::DeviceAsyncWaitOp::create(
              b, waitToken, b.getI32IntegerAttr(ahead - 1));
          // cp.async wrote the tiles through the generic proxy; wgmma
          // reads them through the async proxy.
          NVVM::FenceProxyOp::create(
              b, NVVM::ProxyKind::async_shared,
              NVVM::SharedSpaceAttr::get(b.getContext(),
                                         NVVM::SharedSpace::shared_cta));
          ir.barrier();
          // Refill the stage of tile kt - 2: every warpgroup has waited
          // for its MMAs (wait 1 at the end of the previous iteration)
          // before the barrier above.
          Value next = ir.add(kt, ahead);
          loadStage(ir.rem(next, c.stages), next);
          return wgmmaStage(ir.rem(kt, c.stages), iter);
        });
    NVVM::WgmmaWaitGroupSyncOp::create(b, b.getI64IntegerAttr(0));
    nvgpu::DeviceAsyncWaitOp::create(b, waitToken, b.getI32IntegerAttr(0));
    epilogue(unpackAccumulators(result));
    return;
  }
  // Tensor cores on quantized weights carry each scale group's sums
  // after the totals.
  SmallVector<Value> init(quantTc() ? 2 * accCount : accCount, ir.f32(0));
  SmallVector<Value> acc = ir.loop(
      ir.idx(0), ir.idx(kTiles), 1, init,
      [&](Value kt, ValueRange iter) -> SmallVector<Value> {
        // Tile kt has landed once at most stages - 2 groups are pending.
        nvgpu::DeviceAsyncWaitOp::create(
            b, waitToken, b.getI32IntegerAttr(c.stages - 2));
        ir.barrier();
        // Refill the stage computed in the previous iteration: every
        // thread is past that compute (the barrier above).
        Value next = ir.add(kt, c.stages - 1);
        loadStage(ir.rem(next, c.stages), next);
        Value stage = ir.rem(kt, c.stages);
        if (!c.weightBits || c.widenInRegisters)
          return computeStage(stage, stage, kt, iter);
        // Converted tile kt % 2 was last read by the compute of tile
        // kt - 2, which every thread finished before the barrier above.
        Value buf = ir.rem(kt, 2);
        dequantStage(stage, buf, kt);
        ir.barrier();
        return computeStage(stage, buf, kt, iter);
      });
  nvgpu::DeviceAsyncWaitOp::create(b, waitToken, b.getI32IntegerAttr(0));
  if (quantTc()) {
    // The slice's last group, whether or not it ended on a boundary (an
    // empty one adds zeros).
    Value sliceEnd = ir.min(ir.add(kBeg, kPerSlice), ir.idx(c.k));
    flushGroup(acc, sliceEnd);
    acc.resize(accCount);
  }
  epilogue(acc);
}

Value GemmBuilder::slotOf(Value i) {
  // Routed: the group kernel's list; shared expert s: every row, in order.
  Value listed =
      ir.toIndex(ir.load(perm, {ir.add(ir.mul(routedExpert, m), i)}));
  Value shared = ir.add(ir.mul(i, c.moeSlots),
                        ir.add(ir.sub(expert, ir.idx(c.moeRouted)), c.moeTopK));
  return ir.select(routed, listed, shared);
}

void GemmBuilder::forEachChunk(int64_t rows, int64_t perRow,
                               function_ref<void(Value, Value)> body) {
  int64_t chunks = rows * perRow;
  int64_t perThread = (chunks + c.threads() - 1) / c.threads();
  for (int64_t i = 0; i < perThread; ++i) {
    // Threads beyond the tile's chunks repeat a chunk: the same work to the
    // same place, cheaper than a branch around it.
    Value chunk = ir.rem(ir.add(tid, i * c.threads()), chunks);
    body(ir.div(chunk, perRow), ir.rem(chunk, perRow));
  }
}

void GemmBuilder::loadStage(Value stage, Value tile) {
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  Value k0 = ir.add(kBeg, ir.mul(tile, c.bk));
  Value inSlice = ir.lt(tile, ir.idx(kTiles));
  Value zero = ir.idx(0), full = ir.idx(vec);
  SmallVector<Value> tokens;
  auto copy = [&](Value smem, Value buf, int64_t tileRows, bool isA) {
    size_t chunkIndex = 0;
    forEachChunk(tileRows, chunksPerRow, [&](Value r, Value j) {
      Value kc = ir.mul(j, vec);
      Value gk = ir.add(k0, kc);
      Value valid, src, srcBuf = buf;
      if (isA) {
        Value gm = ir.add(row0, r);
        Value left = ir.max(ir.min(ir.sub(ir.idx(c.kValid), gk), full), zero);
        valid = ir.select(ir.andI(inSlice, ir.lt(gm, moe() ? rows : m)), left,
                          zero);
        if (moe())
          gm = aRows[chunkIndex++];
        src = inGroup(ir.add(ir.mul(gm, c.lda), gk), c.aGroupStride);
      } else {
        valid = ir.select(ir.andI(inSlice, ir.lt(gk, ir.idx(c.k))), full, zero);
        // Gated: the gate and up values of one column meet in one thread.
        auto [isGate, srcRow] = bSource(ir.add(col0, r));
        src = ir.add(ir.mul(inGroup(srcRow, c.bGroupRows), c.k), gk);
        if (c.gated)
          srcBuf = ir.select(isGate, bBuf, bUpBuf);
      }
      // A zero-filled copy reads nothing, but its address must still be a
      // valid one: point it at the buffer's start.
      src = ir.select(ir.lt(zero, valid), src, zero);
      // wgmma tiles: 16-byte chunk j of row r lives at chunk j ^ (r % 8)
      // (the 128-byte swizzle its descriptors name).
      Value dstCol = kc;
      if (c.wgmma)
        dstCol = ir.mul(arith::XOrIOp::create(b, ir.div(kc, vec), ir.rem(r, 8)),
                        vec);
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, tokenType, smem, ValueRange{stage, r, dstCol}, srcBuf,
          ValueRange{src}, b.getIndexAttr(vec), valid, b.getUnitAttr()));
    });
  };
  copy(aSmem, aBuf, c.bm, /*isA=*/true);
  if (!c.weightBits) {
    copy(bSmem, bBuf, c.bn, /*isA=*/false);
  } else {
    // B's integers: 16-byte chunks of qElems k each; K is padded to whole
    // tiles, so a chunk is all inside K or all past it.
    Value sixteen = ir.idx(16);
    forEachChunk(c.bn, qChunksPerRow, [&](Value r, Value j) {
      Value gk = ir.add(k0, ir.mul(j, qElems));
      Value valid =
          ir.select(ir.andI(inSlice, ir.lt(gk, ir.idx(c.k))), sixteen, zero);
      auto [isGate, srcRow] = bSource(ir.add(col0, r));
      Value srcBuf = c.gated ? ir.select(isGate, bBuf, bUpBuf) : bBuf;
      Value src = inGroup(ir.add(ir.mul(srcRow, c.k * c.weightBits / 8),
                                 ir.div(ir.mul(gk, c.weightBits), 8)),
                          c.bGroupBytes);
      src = ir.select(ir.lt(zero, valid), src, zero);
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, tokenType, qSmem,
          ValueRange{stage, r, ir.mul(qChunkSlot(r, j), 16)}, srcBuf,
          ValueRange{src}, b.getIndexAttr(16), valid, b.getUnitAttr()));
    });
  }
  token = nvgpu::DeviceAsyncCreateGroupOp::create(b, tokenType, tokens);
}

std::pair<Value, Value> GemmBuilder::bSource(Value bRow) {
  if (!c.gated)
    return {Value(), bRow};
  // Tile rows 16j..16j+7 are gate rows 8j.., 16j+8.. up rows 8j.. (the
  // interleaving of loadStage's copies).
  Value i = ir.rem(bRow, 16);
  Value srcRow = ir.add(ir.mul(ir.div(bRow, 16), 8), ir.rem(i, 8));
  return {ir.lt(i, 8), srcRow};
}

Value GemmBuilder::groupEntry(Value srcRow, Value kGroup, int64_t offset,
                              int64_t elementBytes) {
  // Past the last group (K's padding), the last group's entry: finite, and
  // multiplied by zeros.
  Value g = ir.min(kGroup, ir.idx(c.kGroups - 1));
  return inGroup(ir.add(ir.add(ir.mul(srcRow, c.kGroups), g), offset),
                 c.bGroupBytes / elementBytes);
}

Value GemmBuilder::scaleAt(Value bRow, Value kGroup) {
  auto [isGate, srcRow] = bSource(bRow);
  Value buf = c.gated ? ir.select(isGate, bScales, bUpScales) : bScales;
  return ir.toF32(
      ir.load(buf, {groupEntry(srcRow, kGroup, c.scaleOffset / eb, eb)}));
}

void GemmBuilder::dequantStage(Value stage, Value buf, Value tile) {
  Type i8 = b.getI8Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
  auto vecOf = [](int64_t n, Type t) { return VectorType::get({n}, t); };
  // Elements [from, from + n) of a vector (vector.shuffle lowers where the
  // strided-slice ops would need another conversion pass).
  auto slice = [&](Value v, int64_t from, int64_t n) -> Value {
    SmallVector<int64_t> mask;
    for (int64_t e = 0; e < n; ++e)
      mask.push_back(from + e);
    return vector::ShuffleOp::create(b, v, v, mask);
  };
  // k of one scale (and zero point) inside a chunk: groups are even, and a
  // multiple of 16 on tensor cores.
  int64_t run = std::gcd(c.quantGroup, qElems);
  Value kTile0 = ir.add(kBeg, ir.mul(tile, c.bk));
  // Past the matrix's K the integers are 0 but a zero point is not: those
  // weights are kept 0, as the unquantized padding is. `values` holds the
  // weights of k's from `firstK` on.
  auto keepInsideK = [&](Value values, Value firstK) -> Value {
    auto type = cast<VectorType>(values.getType());
    int64_t n = type.getNumElements();
    SmallVector<int32_t> iota(n);
    for (int64_t e = 0; e < n; ++e)
      iota[e] = static_cast<int32_t>(e);
    Value kVec = arith::AddIOp::create(
        b,
        vector::BroadcastOp::create(b, vecOf(n, i32),
                                    arith::IndexCastOp::create(b, i32, firstK)),
        arith::ConstantOp::create(
            b, DenseElementsAttr::get(vecOf(n, i32), ArrayRef(iota))));
    Value inside = arith::CmpIOp::create(
        b, arith::CmpIPredicate::slt, kVec,
        vector::BroadcastOp::create(
            b, vecOf(n, i32), arith::ConstantIntOp::create(b, c.kRows, 32)));
    return arith::SelectOp::create(
        b, inside, values,
        arith::ConstantOp::create(b, cast<TypedAttr>(b.getZeroAttr(type))));
  };
  forEachChunk(c.bn, qChunksPerRow, [&](Value r, Value j) {
    Value raw = vector::LoadOp::create(b, vecOf(16, i8), qSmem,
                                       ValueRange{stage, r, ir.mul(j, 16)},
                                       false, llvm::MaybeAlign(16));
    Value kChunk = ir.add(kTile0, ir.mul(j, qElems));
    Value bRow = ir.add(col0, r);
    auto [isGate, srcRow] = bSource(bRow);
    Value qBuf = c.gated ? ir.select(isGate, bBuf, bUpBuf) : bBuf;
    if (widensByBits()) {
      // Whole words of two values at a time (GemmWiden.cpp).
      SmallVector<Value> pieces = widenByBits(raw, kChunk, srcRow, qBuf);
      for (auto [p, piece] : llvm::enumerate(pieces)) {
        int64_t at = static_cast<int64_t>(p) * 8;
        if (c.zeroPoints)
          piece = keepInsideK(piece, ir.add(kChunk, at));
        vector::StoreOp::create(
            b, piece, bSmem, ValueRange{buf, r, ir.add(ir.mul(j, qElems), at)},
            false, llvm::MaybeAlign(16));
      }
      return;
    }
    // The integers in k order.
    Value q;
    if (c.weightBits == 8) {
      q = arith::ExtSIOp::create(b, vecOf(16, i32), raw);
    } else {
      auto splat = [&](int64_t v) {
        return arith::ConstantOp::create(
            b, DenseElementsAttr::get(
                   vecOf(16, i8), ArrayRef<Attribute>{b.getI8IntegerAttr(v)}));
      };
      Value lo, hi;
      if (c.zeroPoints) {
        lo = arith::AndIOp::create(b, raw, splat(15));
        hi = arith::ShRUIOp::create(b, raw, splat(4));
      } else {
        // Signed nibbles: shift each to the top, then back arithmetically.
        lo = arith::ShRSIOp::create(b, arith::ShLIOp::create(b, raw, splat(4)),
                                    splat(4));
        hi = arith::ShRSIOp::create(b, raw, splat(4));
      }
      SmallVector<int64_t> order;
      for (int64_t e = 0; e < 16; ++e)
        order.append({e, 16 + e});
      Value both = vector::ShuffleOp::create(b, lo, hi, order);
      q = arith::ExtSIOp::create(b, vecOf(32, i32), both);
    }
    Value values = arith::SIToFPOp::create(b, vecOf(qElems, f32), q);
    Value result = values;
    for (int64_t s = 0; s < qElems / run; ++s) {
      Value kg = ir.div(ir.add(kChunk, s * run), c.quantGroup);
      Value part = slice(values, s * run, run);
      if (c.zeroPoints) {
        // q - z, exact: |q - z| <= 15.
        Value z = arith::UIToFPOp::create(
            b, f32, ir.load(qBuf, {groupEntry(srcRow, kg, c.zeroOffset, 1)}));
        part = arith::SubFOp::create(
            b, part, vector::BroadcastOp::create(b, vecOf(run, f32), z));
      }
      // f32, or two terms: s q, exact in f32.
      if (!c.tensorCores() || c.weightTerms == 2)
        part = arith::MulFOp::create(
            b, part,
            vector::BroadcastOp::create(b, vecOf(run, f32), scaleAt(bRow, kg)));
      if (run == qElems) {
        result = part;
      } else {
        // result[s run ..] = part: a shuffle of the two (part widened).
        SmallVector<int64_t> wide, pick;
        for (int64_t e = 0; e < qElems; ++e)
          wide.push_back(e < run ? e : 0);
        Value partWide = vector::ShuffleOp::create(b, part, part, wide);
        for (int64_t e = 0; e < qElems; ++e)
          pick.push_back(
              e >= s * run && e < (s + 1) * run ? qElems + e - s * run : e);
        result = vector::ShuffleOp::create(b, result, partWide, pick);
      }
    }
    if (c.zeroPoints)
      result = keepInsideK(result, kChunk);
    // 16-byte stores into converted tile `to`.
    auto store = [&](Value values, Value to) {
      int64_t perStore = 16 / eb;
      for (int64_t p = 0; p < qElems / perStore; ++p) {
        Value piece = slice(values, p * perStore, perStore);
        vector::StoreOp::create(
            b, piece, bSmem,
            ValueRange{to, r, ir.add(ir.mul(j, qElems), p * perStore)}, false,
            llvm::MaybeAlign(16));
      }
    };
    if (c.storage.isF32()) {
      store(result, buf);
      return;
    }
    VectorType narrow = vecOf(qElems, c.storage);
    Value hi = arith::TruncFOp::create(b, narrow, result);
    store(hi, buf);
    if (c.weightTerms == 2) {
      // s q is exact in f32 and has at most 8 (bf16) or 11 (f16) bits
      // more than s: hi takes the top ones, and the rest, above s's last
      // bit, is exact in the dtype too.
      Value rest = arith::SubFOp::create(
          b, result, arith::ExtFOp::create(b, vecOf(qElems, f32), hi));
      store(arith::TruncFOp::create(b, narrow, rest), ir.add(buf, 2));
    }
  });
}

Value GemmBuilder::asI32(Value pair) {
  // nvvm.mma.sync takes f16 pairs as vector<2xf16> and bf16 pairs packed in
  // an i32.
  if (c.storage.isF16())
    return pair;
  Value v = vector::BitCastOp::create(
      b, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, v, ArrayRef<int64_t>{0});
}

void GemmBuilder::loadMatrices(Value smem, Value stage, Value row, Value col,
                               SmallVectorImpl<Value> &frags) {
  // One ldmatrix.x4: four 8x8 matrices, each lane's addressed row giving
  // one; appended as four mma operand registers.
  auto type = VectorType::get({4, 2}, c.storage);
  Value f = nvgpu::LdMatrixOp::create(b, type, smem,
                                      ValueRange{stage, row, col},
                                      b.getBoolAttr(false),
                                      b.getI32IntegerAttr(4));
  for (int64_t i = 0; i < 4; ++i)
    frags.push_back(
        asI32(vector::ExtractOp::create(b, f, ArrayRef<int64_t>{i})));
}

SmallVector<Value> GemmBuilder::fragmentA(Value stage, int64_t kk) {
  // ldmatrix.x4: lanes 0-15 address rows 0-15 at column 0, lanes 16-31 the
  // same rows at column 8, giving a0..a3 of mma.m16n8k16 in order.
  SmallVector<Value> frags;
  Value r = ir.rem(lane, 16), col = ir.add(ir.mul(ir.div(lane, 16), 8), kk * 16);
  for (int64_t mt = 0; mt < fragsM; ++mt)
    loadMatrices(aSmem, stage, ir.add(ir.add(warpRow, r), mt * 16), col, frags);
  return frags;
}

SmallVector<Value> GemmBuilder::fragmentB(Value stage, int64_t kk) {
  // B rows are output columns (K contiguous), i.e. mma's "col" layout.
  // ldmatrix.x4 over two n8 fragments: lanes 0-7 rows 0-7 at k 0, 8-15 the
  // same rows at k 8, 16-23 rows 8-15 at k 0, 24-31 rows 8-15 at k 8,
  // giving b0, b1 of fragment 2j then of fragment 2j + 1.
  SmallVector<Value> frags;
  Value r = ir.add(ir.rem(lane, 8), ir.mul(ir.div(lane, 16), 8));
  Value col = ir.add(ir.mul(ir.rem(ir.div(lane, 8), 2), 8), kk * 16);
  for (int64_t np = 0; np < fragsN / 2; ++np)
    loadMatrices(bSmem, stage, ir.add(ir.add(warpCol, r), np * 16), col, frags);
  return frags;
}

SmallVector<Value> GemmBuilder::mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                                    ArrayRef<Value> acc) {
  auto f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32, f32, f32, f32});
  NVVM::MMATypes ptx = c.storage.isBF16() ? NVVM::MMATypes::bf16
                                          : NVVM::MMATypes::f16;
  Value d = NVVM::MmaOp::create(
      b, resultType, a, bFrag, acc, ArrayRef<int64_t>{16, 8, 16},
      std::nullopt, std::nullopt, std::array<NVVM::MMATypes, 2>{ptx, ptx},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> r;
  for (int64_t i = 0; i < 4; ++i)
    r.push_back(LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{i}));
  return r;
}

void GemmBuilder::flushGroup(SmallVectorImpl<Value> &acc, Value kEnd) {
  int64_t accCount = fragsM * fragsN * 4;
  Value kGroup = ir.div(ir.sub(kEnd, ir.idx(1)), c.quantGroup);
  Value zero = ir.f32(0);
  // int8 activations: the scales of this lane's rows grp and grp + 8 of
  // each fragment row (rows past m read the last row's: never stored).
  SmallVector<Value> rowScale;
  if (aScales) {
    // K's padding past the last group multiplies zeros: any finite scale.
    Value column = ir.min(kGroup, ir.idx(c.kGroups - 1));
    for (int64_t mt = 0; mt < fragsM; ++mt)
      for (int64_t half = 0; half < 2; ++half) {
        Value at;
        if (moe()) {
          at = ir.add(aScaleRows[mt * 2 + half], column);
        } else {
          Value r = ir.min(fragmentRow(mt, half), ir.sub(m, ir.idx(1)));
          at = ir.add(ir.mul(r, c.groups * c.kGroups),
                      inGroup(column, c.kGroups));
        }
        rowScale.push_back(ir.load(aScales, {at}));
      }
  }
  for (int64_t nt = 0; nt < fragsN; ++nt) {
    // This lane's columns 2 tig and 2 tig + 1 of fragment nt.
    Value bRow = ir.add(ir.add(ir.add(col0, warpCol), ir.mul(tig, 2)), nt * 8);
    Value s[2] = {scaleAt(bRow, kGroup), scaleAt(ir.add(bRow, 1), kGroup)};
    for (int64_t mt = 0; mt < fragsM; ++mt)
      for (int64_t i = 0; i < 4; ++i) {
        int64_t at = (mt * fragsN + nt) * 4 + i;
        Value scale = s[i % 2];
        if (aScales)
          scale = ir.mulf(scale, rowScale[mt * 2 + i / 2]);
        acc[at] = ir.fma(acc[accCount + at], scale, acc[at]);
        acc[accCount + at] = zero;
      }
  }
}

SmallVector<Value> GemmBuilder::computeStage(Value stage, Value bStage,
                                             Value kt, ValueRange accIn) {
  SmallVector<Value> acc(accIn.begin(), accIn.end());
  // Quantized weights on tensor cores: the MMAs add into the group's sums
  // (the second half), flushed at each group's end.
  int64_t base = quantTc() ? fragsM * fragsN * 4 : 0;
  auto at = [&](int64_t mt, int64_t nt, int64_t i) -> Value & {
    return acc[base + (mt * fragsN + nt) * 4 + i];
  };
  if (c.tensorCores()) {
    Value kTile0 = quantTc() ? ir.add(kBeg, ir.mul(kt, c.bk)) : Value();
    // A group ends after step kk only where (kk + 1) * 16 is a multiple of
    // gcd(bk, group) (tiles start at multiples of bk); if the group divides
    // bk, it ends there every tile, otherwise only some tiles.
    int64_t step = c.weightBits ? std::gcd(c.bk, c.quantGroup) : 0;
    SmallVector<Value> aWords, bPairs;
    for (int64_t kk = 0; kk < c.bk / 16; ++kk) {
      SmallVector<Value> aFr;
      SmallVector<SmallVector<Value>> bFrs;
      if (c.widenInRegisters) {
        // Both steps of a 32-wide chunk come from one set of loads: step j
        // takes words 2j, 2j + 1 of each row and pair.
        int64_t j = kk % 2;
        if (j == 0)
          registerOperands(stage, ir.add(kTile0, kk * 16), kk / 2, aWords,
                           bPairs);
        for (int64_t mt = 0; mt < fragsM; ++mt)
          for (int64_t i = 0; i < 4; ++i)
            aFr.push_back(
                mmaOperand(aWords[mt * 8 + (2 * j + i / 2) * 2 + i % 2]));
        bFrs.emplace_back();
        for (int64_t nt = 0; nt < fragsN; ++nt)
          for (int64_t i = 0; i < 2; ++i)
            bFrs.back().push_back(mmaOperand(bPairs[nt * 4 + 2 * j + i]));
      } else {
        aFr = fragmentA(stage, kk);
        // Two terms per weight: the hi tile's fragments, then the lo tile's
        // (converted tile bStage + 2), into the same accumulators.
        bFrs.push_back(fragmentB(bStage, kk));
        if (c.weightTerms == 2)
          bFrs.push_back(fragmentB(ir.add(bStage, 2), kk));
      }
      for (const SmallVector<Value> &bFr : bFrs)
        for (int64_t mt = 0; mt < fragsM; ++mt)
          for (int64_t nt = 0; nt < fragsN; ++nt) {
            ArrayRef<Value> a(aFr.data() + mt * 4, 4);
            ArrayRef<Value> bb(bFr.data() + nt * 2, 2);
            SmallVector<Value> cIn{at(mt, nt, 0), at(mt, nt, 1), at(mt, nt, 2),
                                   at(mt, nt, 3)};
            SmallVector<Value> d = mma(a, bb, cIn);
            for (int64_t i = 0; i < 4; ++i)
              at(mt, nt, i) = d[i];
          }
      if (!quantTc() || ((kk + 1) * 16) % step != 0)
        continue;
      Value kEnd = ir.add(kTile0, (kk + 1) * 16);
      if (c.bk % c.quantGroup == 0) {
        flushGroup(acc, kEnd);
        continue;
      }
      // The same branch for the whole block (kEnd is uniform).
      Value ends = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                         ir.rem(kEnd, c.quantGroup), ir.idx(0));
      SmallVector<Type> types(acc.size(), b.getF32Type());
      auto ifOp = scf::IfOp::create(b, types, ends, /*withElse=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        SmallVector<Value> flushed = acc;
        flushGroup(flushed, kEnd);
        scf::YieldOp::create(b, flushed);
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(b, acc);
      }
      acc.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    }
    return acc;
  }
  // f32: the same fragments, exact FMAs. Per k: 2 A and 2 B values per
  // fragment row/column pair from shared memory, 4 FMAs per fragment.
  for (int64_t kk = 0; kk < c.bk; ++kk) {
    Value k = ir.idx(kk);
    SmallVector<Value> aLo, aHi, b0, b1;
    for (int64_t mt = 0; mt < fragsM; ++mt) {
      Value row = ir.add(ir.add(warpRow, grp), mt * 16);
      aLo.push_back(ir.load(aSmem, {stage, row, k}));
      aHi.push_back(ir.load(aSmem, {stage, ir.add(row, 8), k}));
    }
    for (int64_t nt = 0; nt < fragsN; ++nt) {
      Value col = ir.add(ir.add(warpCol, ir.mul(tig, 2)), nt * 8);
      b0.push_back(ir.load(bSmem, {bStage, col, k}));
      b1.push_back(ir.load(bSmem, {bStage, ir.add(col, 1), k}));
    }
    for (int64_t mt = 0; mt < fragsM; ++mt)
      for (int64_t nt = 0; nt < fragsN; ++nt) {
        at(mt, nt, 0) = ir.fma(aLo[mt], b0[nt], at(mt, nt, 0));
        at(mt, nt, 1) = ir.fma(aLo[mt], b1[nt], at(mt, nt, 1));
        at(mt, nt, 2) = ir.fma(aHi[mt], b0[nt], at(mt, nt, 2));
        at(mt, nt, 3) = ir.fma(aHi[mt], b1[nt], at(mt, nt, 3));
      }
  }
  return acc;
}

Value GemmBuilder::descriptor(Value byteAddress) {
  // sm_90 shared-memory matrix descriptor: start address >> 4 (bits 0-13),
  // leading byte offset 16 (unused by swizzled K-major tiles), stride byte
  // offset 1024 >> 4 (eight 128-byte rows), 128-byte swizzle (bits 62-63).
  Value a = arith::IndexCastOp::create(b, b.getI64Type(), byteAddress);
  auto c64 = [&](uint64_t v) {
    return arith::ConstantIntOp::create(b, static_cast<int64_t>(v), 64);
  };
  Value start = arith::ShRUIOp::create(
      b, arith::AndIOp::create(b, a, c64(0x3FFFF)), c64(4));
  Value fixed = c64((uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
                    (uint64_t(1) << 62));
  return arith::OrIOp::create(b, start, fixed);
}

SmallVector<Value> GemmBuilder::zeroAccumulators() {
  // One struct per m64 slab (fragment row of the warp): fragsN fragments.
  int64_t count = fragsN * 4;
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(count, b.getF32Type()));
  Value zero = ir.f32(0);
  SmallVector<Value> slabs;
  for (int64_t mt = 0; mt < fragsM; ++mt) {
    Value acc = LLVM::PoisonOp::create(b, structType);
    for (int64_t i = 0; i < count; ++i)
      acc = LLVM::InsertValueOp::create(b, acc, zero, ArrayRef<int64_t>{i});
    slabs.push_back(acc);
  }
  return slabs;
}

SmallVector<Value> GemmBuilder::unpackAccumulators(ValueRange slabs) {
  SmallVector<Value> values;
  for (Value acc : slabs)
    for (int64_t i = 0; i < fragsN * 4; ++i)
      values.push_back(
          LLVM::ExtractValueOp::create(b, acc, ArrayRef<int64_t>{i}));
  return values;
}

int64_t GemmBuilder::packedColumn(int64_t local) const {
  if (!(c.tma && c.gated))
    return local;
  // Gate row j of the tile's 128 sits at 16 (j / 8) + j % 8 of the
  // interleaving, up row j at 16 (j / 8) + 8 + j % 8.
  int64_t half = c.bn / 2, j = local % half;
  return 16 * (j / 8) + (local >= half ? 8 : 0) + j % 8;
}

SmallVector<Value> GemmBuilder::wgmmaStage(Value stage, ValueRange slabs) {
  int64_t rowBytes = c.bk * eb; // 128: one swizzle atom per row
  // Slab mt multiplies rows 64 mt.. of the warpgroup's (a ping-pong
  // warpgroup has the whole tile, a cooperative one its 64 rows).
  Value aTile = ir.add(aAddr, ir.mul(stage, c.bm * rowBytes));
  if (!c.pingPong())
    aTile = ir.add(aTile, ir.mul(warpGroup, 64 * rowBytes));
  Value bTile = ir.add(bAddr, ir.mul(stage, c.bn * rowBytes));
  NVVM::WgmmaFenceAlignedOp::create(b);
  auto type = c.storage.isBF16() ? NVVM::WGMMATypes::bf16
                                 : NVVM::WGMMATypes::f16;
  SmallVector<Value> acc(slabs);
  for (int64_t kk = 0; kk < c.bk / 16; ++kk) {
    // k16 steps advance 32 bytes inside the swizzled rows.
    Value descB = descriptor(ir.add(bTile, kk * 32));
    for (auto [mt, slab] : llvm::enumerate(acc)) {
      Value descA =
          descriptor(ir.add(aTile, int64_t(mt) * 64 * rowBytes + kk * 32));
      slab = NVVM::WgmmaMmaAsyncOp::create(
          b, slab.getType(), slab, descA, descB,
          NVVM::MMAShapeAttr::get(b.getContext(), 64, c.bn, 16), type, type,
          NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row, NVVM::MMALayout::col, nullptr);
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  // Keep this tile's MMAs running into the next iteration's wait, barrier
  // and copies; the previous tile's are done after this.
  NVVM::WgmmaWaitGroupSyncOp::create(b, b.getI64IntegerAttr(1));
  return acc;
}

std::pair<Value, Value> GemmBuilder::loadPair(Value buffer, Value idx,
                                              bool paired) {
  if (!paired)
    return {ir.toF32(ir.load(buffer, {idx})),
            ir.toF32(ir.load(buffer, {ir.add(idx, 1)}))};
  Type type = cast<MemRefType>(buffer.getType()).getElementType();
  int64_t bytes = 2 * type.getIntOrFloatBitWidth() / 8;
  Value pair =
      vector::LoadOp::create(b, VectorType::get({2}, type), buffer,
                             ValueRange{idx}, false, llvm::MaybeAlign(bytes));
  auto element = [&](int64_t i) {
    return ir.toF32(vector::ExtractOp::create(b, pair, ArrayRef<int64_t>{i}));
  };
  return {element(0), element(1)};
}

void GemmBuilder::storePair(Value v0, Value v1, Value buffer, Value idx,
                            bool paired) {
  Type type = cast<MemRefType>(buffer.getType()).getElementType();
  if (!paired) {
    ir.store(ir.fromF32(v0, type), buffer, {idx});
    ir.store(ir.fromF32(v1, type), buffer, {ir.add(idx, 1)});
    return;
  }
  // One conversion of the pair (cvt.rn.bf16x2.f32 / f16x2) and one store.
  Value pair = vector::FromElementsOp::create(
      b, VectorType::get({2}, b.getF32Type()), ValueRange{v0, v1});
  auto vecType = VectorType::get({2}, type);
  if (!type.isF32())
    pair = arith::TruncFOp::create(b, vecType, pair);
  int64_t bytes = 2 * type.getIntOrFloatBitWidth() / 8;
  vector::StoreOp::create(b, pair, buffer, ValueRange{idx}, false,
                          llvm::MaybeAlign(bytes));
}

Value GemmBuilder::realColumn(Value col, int64_t e, Value v) {
  return maskPaddedHidden(ir, c, c.hValid ? ir.add(col, e) : col, v);
}

void GemmBuilder::epilogue(ArrayRef<Value> acc) {
  auto at = [&](int64_t mt, int64_t nt, int64_t i) {
    return acc[(mt * fragsN + nt) * 4 + i];
  };
  // Partials are indexed by the column among all groups' (the same as
  // col0 when dense); the other epilogues by the column in the group.
  Value tileCol0 = c.epilogue == Epilogue::Partial ? partialCol0 : col0;
  // A fragment row's elements e = 0, 1 are adjacent columns (2 tig + e)
  // whose first one is even: they travel as one 2-element access where
  // every row and group stride keeps that index even and the buffer is
  // the runtime's (workspace regions and parameters are 16-byte aligned;
  // the caller's output rows need not be). Halves the epilogue's loads and
  // stores.
  bool biasPairs = c.biasGroupStride % 2 == 0;
  bool storePairs = false;
  // The f32 FMA kernels' split-K partials stay scalar: ptxas spilled 8
  // bytes with the pairs at their 64 registers (int4 weights, sm_80).
  if (c.epilogue == Epilogue::Partial)
    storePairs = c.partialStride % 2 == 0 && c.tensorCores();
  else if (c.epilogue == Epilogue::Hidden)
    storePairs = c.nOut % 2 == 0 && c.outGroupStride % 2 == 0;
  else
    storePairs =
        c.outInWorkspace && c.outStride % 2 == 0 && c.outGroupStride % 2 == 0;
  for (int64_t mt = 0; mt < fragsM; ++mt) {
    for (int64_t half = 0; half < 2; ++half) {
      Value row = fragmentRow(mt, half);
      ir.guard(ir.lt(row, moe() ? rows : m), [&] {
        // A mixture's results go to the slot's row.
        Value outRow = moe() ? slotOf(row) : row;
        for (int64_t nt = 0; nt < fragsN; ++nt) {
          Value v0 = at(mt, nt, half * 2), v1 = at(mt, nt, half * 2 + 1);
          // The B row (packed column) of element 0 of this fragment row.
          Value n =
              ir.add(ir.add(ir.add(tileCol0, warpCol), ir.mul(tig, 2)), nt * 8);
          if (c.tma && c.gated) {
            // Columns 2 tig + e of fragment nt (warpCol is 0): in the
            // packed interleaving, the fragment's 8 columns stay
            // together, 16 apart.
            n = ir.add(n, packedColumn(nt * 8) - nt * 8);
          }
          switch (c.epilogue) {
          case Epilogue::Partial: {
            // A mixture's slices hold every slot row (m moeSlots).
            Value sliceRows = moe() ? ir.mul(m, c.moeSlots) : m;
            Value rowAt = ir.mul(ir.add(ir.mul(kSlice, sliceRows), outRow),
                                 c.partialStride);
            storePair(v0, v1, out, ir.add(rowAt, n), storePairs);
            break;
          }
          case Epilogue::Hidden: {
            if (!c.gated) {
              if (c.hasBias) {
                auto [b0, b1] =
                    loadPair(bias, inGroup(n, c.biasGroupStride), biasPairs);
                v0 = ir.addf(v0, b0);
                v1 = ir.addf(v1, b1);
              }
              storePair(
                  realColumn(n, 0, buildGpuActivation(b, c.activation, v0)),
                  realColumn(n, 1, buildGpuActivation(b, c.activation, v1)),
                  out,
                  ir.add(ir.mul(outRow, c.nOut), inGroup(n, c.outGroupStride)),
                  storePairs);
              break;
            }
            // Gate fragments are the even ones, the up fragment of the
            // same columns follows (groups of 8 interleaved at pack time);
            // a TMA tile's gate fragments are the first half, each up
            // fragment bn / 16 later.
            bool split = c.tma;
            if (split ? nt >= fragsN / 2 : nt % 2)
              break;
            int64_t upNt = split ? nt + fragsN / 2 : nt + 1;
            Value u0 = at(mt, upNt, half * 2), u1 = at(mt, upNt, half * 2 + 1);
            // Output column: B rows 16j..16j+7 are gate columns 8j..8j+7.
            Value col =
                ir.add(ir.add(ir.div(ir.add(col0, warpCol), 2), ir.mul(tig, 2)),
                       (split ? nt : nt / 2) * 8);
            Value biasCol = inGroup(col, c.biasGroupStride);
            if (c.hasBiasGate) {
              auto [b0, b1] = loadPair(biasGate, biasCol, biasPairs);
              v0 = ir.addf(v0, b0);
              v1 = ir.addf(v1, b1);
            }
            if (c.hasBias) {
              auto [b0, b1] = loadPair(bias, biasCol, biasPairs);
              u0 = ir.addf(u0, b0);
              u1 = ir.addf(u1, b1);
            }
            storePair(
                realColumn(
                    col, 0,
                    ir.mulf(buildGpuActivation(b, c.activation, v0), u0)),
                realColumn(
                    col, 1,
                    ir.mulf(buildGpuActivation(b, c.activation, v1), u1)),
                out,
                ir.add(ir.mul(outRow, c.nOut), inGroup(col, c.outGroupStride)),
                storePairs);
            break;
          }
          case Epilogue::Output: {
            auto index = [&](Value col) {
              return ir.add(ir.mul(outRow, c.outStride),
                            inGroup(col, c.outGroupStride));
            };
            auto finish = [&](Value y, Value biasValue, Value idx) {
              if (c.hasBias)
                y = ir.addf(y, biasValue);
              if (c.residual)
                y = ir.addf(y, ir.toF32(ir.load(resid, {idx})));
              return y;
            };
            if (c.nOut % 2 == 0) {
              // n is even, so n < nOut holds for the pair's both columns.
              ir.guard(ir.lt(n, ir.idx(c.nOut)), [&] {
                Value b0, b1;
                if (c.hasBias)
                  std::tie(b0, b1) =
                      loadPair(bias, inGroup(n, c.biasGroupStride), biasPairs);
                Value idx = index(n);
                storePair(finish(v0, b0, idx), finish(v1, b1, ir.add(idx, 1)),
                          out, idx, storePairs);
              });
              break;
            }
            for (int64_t e = 0; e < 2; ++e) {
              Value ne = ir.add(n, e);
              ir.guard(ir.lt(ne, ir.idx(c.nOut)), [&] {
                Value be = c.hasBias
                               ? ir.toF32(ir.load(
                                     bias, {inGroup(ne, c.biasGroupStride)}))
                               : Value();
                Value idx = index(ne);
                ir.store(ir.fromF32(finish(e ? v1 : v0, be, idx), c.outType),
                         out, {idx});
              });
            }
            break;
          }
          }
        }
      });
    }
  }
}

void mlir::ffn::gpu_target::buildGemmKernel(OpBuilder &builder,
                                            gpu::GPUModuleOp module,
                                            const GemmConfig &config,
                                            ArrayRef<KernelArg> args) {
  KernelBody body(builder, module, config.name, args, config.threads());
  if (config.minBlocksPerSm > 0)
    body.func->setAttr(
        NVVM::NVVMDialect::getMinctasmAttrName(),
        builder.getI32IntegerAttr(static_cast<int32_t>(config.minBlocksPerSm)));
  GemmBuilder(body.b, config, body.func).build();
}
