//===- GemmTma.cpp - the sm_90a GEMM main loop fed by TMA
//------------------===//
//
// Warp-specialized: warpgroup 0 produces, warpgroups 1 and 2 consume. One
// producer thread copies each K tile's A box (bm x 64) and B box(es) (bn x
// 64; gated: the gate's 128 rows, then the up's 128) with TMA into a ring
// of `stages` shared-memory stages, 128-byte swizzled as wgmma's
// descriptors read them, and signals each stage's "full" mbarrier with the
// bytes it expects. Each consumer warpgroup waits for the stage, multiplies
// its 64 rows by the tile with wgmma, keeps one wgmma group in flight, and
// releases the stage the previous group read through its "empty" mbarrier
// (one arrival per consumer warp), which the producer waits for before it
// refills that stage. No block barrier runs in the loop: a warpgroup only
// waits for data or for a free stage.
//
// Tensor maps give the zero padding cp.async's partial copies gave: rows
// past m, columns past A's valid K and B rows past a group's read as zero.
//
// Persistent: the launch runs at most a block per SM (the ring's shared
// memory and the re-split register file hold one), and each block walks
// the grid's tiles blockIdx.x, + gridDim.x, ... (row blocks fastest, then
// column blocks, then K slices). The ring's stages and barrier phases run
// on across a block's tiles, so the producer fills the next tile's stages
// while the consumers run the previous tile's epilogue: the fill latency
// of a block's start is paid once a block, not once a tile. Every tile
// starts at stage 0 (K tile kt in stage kt % stages), so a short K loop,
// unrolled, addresses its stages with constants, and stage s completes
// `uses(s)` phases a tile.
//
// Ping-pong (the 128 x 128 tile, GemmConfig::pingPong): each consumer
// warpgroup multiplies a whole tile (two m64 slabs) and takes every other
// tile of the block's; their K loops take turns (pingPongConsumer), so one
// warpgroup's epilogue runs while the other's MMAs keep the tensor cores
// busy. The producer and the ring are the same; a stage's readers are one
// warpgroup's four warps.
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::ffn::gpu_target;
using mlir::ffn::gpu_target::detail::GemmBuilder;

namespace {
/// Registers per thread after the warpgroups re-split the block's 168 x
/// 384 (setmaxnreg): each consumer thread holds bn / 2 f32 accumulators
/// (128 for the 128 x 256 tile); the producer's tile loop keeps each
/// stage's copy destinations (LLVM hoists them out of it when the K loop
/// unrolls), which spilled at 40 registers (a gated FFN with K = 256:
/// 32 bytes) and fit at 56. 128 x 56 + 256 x 224 = 168 x 384.
constexpr int32_t kProducerRegisters = 56;
constexpr int32_t kConsumerRegisters = 224;
/// try_wait's suspend-time hint (ns) between its polls of a barrier.
constexpr int64_t kWaitHintNs = 1000000;
} // namespace

Value GemmBuilder::sharedPointer(Value byteAddress) {
  Value i64v = arith::IndexCastOp::create(b, b.getI64Type(), byteAddress);
  return LLVM::IntToPtrOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext(), 3), i64v);
}

Value GemmBuilder::barrier(Value barriers, Value index) {
  return sharedPointer(ir.add(barriers, ir.mul(index, 8)));
}

void GemmBuilder::buildTma() {
  int64_t rowBytes = c.bk * eb; // 128: one swizzle span per row
  // The barriers follow the ring (each stage a multiple of 1024 bytes, so
  // they are 8-byte aligned): full[s] at s, empty[s] at stages + s.
  Value barriers = ir.add(aAddr, c.stages * (c.bm + c.bn) * rowBytes);
  // A stage is released by the warps that read it: both warpgroups', or
  // the ping-pong warpgroup's whose tile it holds.
  int64_t readers = c.pingPong() ? 4 : c.warpsM * c.warpsN;
  ir.guard(ir.eq(tid, ir.idx(0)), [&] {
    for (int64_t s = 0; s < c.stages; ++s) {
      NVVM::MBarrierInitOp::create(b, barrier(barriers, ir.idx(s)), ir.i32(1),
                                   Value());
      NVVM::MBarrierInitOp::create(b, barrier(barriers, ir.idx(c.stages + s)),
                                   ir.i32(readers), Value());
    }
    // Ping-pong: order[w] (after the empty ones) releases warpgroup w's
    // main loop; the other's four warps arrive as theirs ends.
    if (c.pingPong())
      for (int64_t w = 0; w < 2; ++w)
        NVVM::MBarrierInitOp::create(b, orderBarrier(barriers, ir.idx(w)),
                                     ir.i32(4), Value());
    // Makes the initialized barriers visible to the async proxy (TMA's
    // complete_tx) as well as to the other threads (the barrier below).
    NVVM::FenceMbarrierInitOp::create(b);
  });
  ir.barrier();

  auto ifOp = scf::IfOp::create(b, ir.lt(tid, ir.idx(128)), /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.getThenRegion().front().getTerminator());
  NVVM::SetMaxRegisterOp::create(
      b, b.getI32IntegerAttr(kProducerRegisters),
      NVVM::SetMaxRegisterActionAttr::get(
          b.getContext(), NVVM::SetMaxRegisterAction::decrease));
  ir.guard(ir.eq(tid, ir.idx(0)), [&] {
    forEachTile([&](Value tile, Value done) {
      setLinearTile(tile);
      tmaProducer(barriers, done);
    });
  });
  b.setInsertionPoint(ifOp.getElseRegion().front().getTerminator());
  NVVM::SetMaxRegisterOp::create(
      b, b.getI32IntegerAttr(kConsumerRegisters),
      NVVM::SetMaxRegisterActionAttr::get(
          b.getContext(), NVVM::SetMaxRegisterAction::increase));
  if (c.pingPong())
    return pingPongConsumer(barriers);
  forEachTile([&](Value tile, Value done) {
    SmallVector<Value> acc = tmaConsumer(barriers, done);
    // The tile's coordinates only now: the main loop does not need them,
    // and kept live through it they would sit beside its 128 accumulators.
    setLinearTile(tile);
    epilogue(unpackAccumulators(acc));
  });
}

void GemmBuilder::pingPongConsumer(Value barriers) {
  // Warpgroup w takes the block's tiles w, w + 2, ... (`done` counts all
  // the block's tiles: the ring's uses run over both warpgroups' tiles in
  // the producer's order). The main loops take turns: tile i's starts once
  // tile i - 1's has ended, so one warpgroup's epilogue runs beside the
  // other's MMAs and the tensor cores serve one warpgroup at a time. The
  // turns also keep every wait on a stage's "full" barrier within a phase
  // of it: tile i - 1's waits on every stage have passed.
  Value other = ir.sub(ir.idx(1), warpGroup);
  forEachTile(
      [&](Value tile, Value done) {
        // Tile i waits for phase (i - 1) / 2 of its warpgroup's order
        // barrier: the other warpgroup's main loops end in turn with it.
        ir.guard(ir.lt(ir.idx(0), done), [&] {
          Value phase = ir.div(ir.sub(done, ir.idx(1)), 2);
          NVVM::MBarrierTryWaitParityOp::create(
              b, orderBarrier(barriers, warpGroup), ir.toI32(ir.rem(phase, 2)),
              ir.i32(kWaitHintNs));
        });
        SmallVector<Value> acc = tmaConsumer(barriers, done);
        // The MMAs are done (tmaConsumer waited for them): the other
        // warpgroup's turn. Its last arrival goes unanswered, harmlessly.
        arriveOncePerWarp(orderBarrier(barriers, other));
        setLinearTile(tile);
        epilogue(unpackAccumulators(acc));
      },
      warpGroup, 2);
}

Value GemmBuilder::rowBlocks() { return ir.div(ir.add(m, c.bm - 1), c.bm); }

void GemmBuilder::setLinearTile(Value tile) {
  // Row blocks fastest, then grid.y's column tiles, then K slices.
  Value rows = rowBlocks();
  int64_t colTiles = c.groups * c.colBlocks;
  Value rest = ir.div(tile, rows);
  setTile(ir.rem(tile, rows), ir.rem(rest, ir.idx(colTiles)),
          ir.div(rest, colTiles));
}

void GemmBuilder::forEachTile(function_ref<void(Value, Value)> body,
                              Value first, int64_t step) {
  // The grid's tiles: ceil(m / bm) row blocks x grid.y x grid.z.
  Value tiles = ir.mul(rowBlocks(), c.groups * c.colBlocks * c.splitK);
  Value block = ir.blockId(gpu::Dimension::x);
  Value blocks = gpu::GridDimOp::create(b, gpu::Dimension::x);
  // This block's tiles: block, block + blocks, ... below tiles (none if
  // the launch has more blocks than tiles, as the runtime's does not).
  Value left = ir.max(ir.sub(tiles, block), ir.idx(0));
  Value mine = ir.div(ir.add(left, ir.sub(blocks, ir.idx(1))), blocks);
  ir.loop(first ? first : ir.idx(0), mine, step,
          [&](Value i) { body(ir.add(block, ir.mul(i, blocks)), i); });
}

std::pair<Value, Value> GemmBuilder::ringSlot(Value done, Value kt) {
  Value stage = ir.rem(kt, c.stages);
  // Stage s holds K tiles s, s + stages, ... below kTiles: (kTiles - 1 -
  // s) / stages + 1 of them a tile (s < kTiles; a later stage is unused).
  Value uses = ir.add(ir.div(ir.sub(ir.idx(kTiles - 1), stage), c.stages), 1);
  return {stage, ir.add(ir.mul(done, uses), ir.div(kt, c.stages))};
}

void GemmBuilder::tmaProducer(Value barriers, Value done) {
  int64_t rowBytes = c.bk * eb;
  int64_t aStage = c.bm * rowBytes, bStage = c.bn * rowBytes;
  auto clusterPtr = [&](Value byteAddress) -> Value {
    // TMA names its destination in the cluster's shared window; a
    // one-block cluster's is the block's own shared memory.
    return LLVM::AddrSpaceCastOp::create(
        b, LLVM::LLVMPointerType::get(b.getContext(), 7),
        sharedPointer(byteAddress));
  };
  auto i32 = [&](Value v) { return ir.toI32(v); };
  Value bytes = ir.i32(aStage + bStage);
  Value groupCoord = group ? group : ir.idx(0);
  auto cta =
      NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::CTA);
  ir.loop(ir.idx(0), ir.idx(kTiles), 1, [&](Value kt) {
    auto [stage, round] = ringSlot(done, kt);
    Value full = barrier(barriers, stage);
    // The stage's use r > 0 refills what the consumers released in use
    // r - 1 (that phase's parity is (r - 1) & 1).
    ir.guard(ir.lt(ir.idx(0), round), [&] {
      Value parity = i32(ir.rem(ir.add(round, 1), 2));
      NVVM::MBarrierTryWaitParityOp::create(
          b, barrier(barriers, ir.add(stage, c.stages)), parity,
          ir.i32(kWaitHintNs));
    });
    NVVM::MBarrierArriveExpectTxOp::create(b, Type(), full, bytes, cta,
                                           b.getBoolAttr(false), Value());
    Value k0 = i32(ir.add(kBeg, ir.mul(kt, c.bk)));
    auto copy = [&](Value dst, Value map, SmallVector<Value> coords) {
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, clusterPtr(dst), map, coords, full, ValueRange{}, Value(), Value(),
          NVVM::TMALoadModeAttr::get(b.getContext(), NVVM::TMALoadMode::TILE),
          b.getBoolAttr(false), nullptr, Value());
    };
    // A: columns k0.., rows row0.. (of group g's piece when grouped).
    Value aDst = ir.add(aAddr, ir.mul(stage, aStage));
    if (c.groups > 1)
      copy(aDst, aMap, {k0, i32(groupCoord), i32(row0)});
    else
      copy(aDst, aMap, {k0, i32(row0)});
    Value bDst = ir.add(bAddr, ir.mul(stage, bStage));
    auto copyB = [&](Value dst, Value map, Value firstRow) {
      if (c.groups > 1)
        copy(dst, map, {k0, i32(firstRow), i32(groupCoord)});
      else
        copy(dst, map, {k0, i32(firstRow)});
    };
    if (c.gated) {
      // The tile's bn packed columns are bn / 2 gate and bn / 2 up ones.
      Value first = ir.div(col0, 2);
      copyB(bDst, bMap, first);
      copyB(ir.add(bDst, bStage / 2), bUpMap, first);
    } else {
      copyB(bDst, bMap, col0);
    }
  });
}

void GemmBuilder::arriveOncePerWarp(Value barrierPtr) {
  ir.guard(ir.eq(lane, ir.idx(0)), [&] {
    NVVM::MBarrierArriveOp::create(
        b, Type(), barrierPtr, Value(),
        NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::CTA),
        b.getBoolAttr(false));
  });
}

Value GemmBuilder::orderBarrier(Value barriers, Value warpGroupIndex) {
  return barrier(barriers, ir.add(warpGroupIndex, 2 * c.stages));
}

SmallVector<Value> GemmBuilder::tmaConsumer(Value barriers, Value done) {
  // Each warp releases a stage it has read once.
  auto release = [&](Value kt) {
    arriveOncePerWarp(
        barrier(barriers, ir.add(ir.rem(kt, c.stages), c.stages)));
  };
  SmallVector<Value> acc = ir.loop(
      ir.idx(0), ir.idx(kTiles), 1, zeroAccumulators(),
      [&](Value kt, ValueRange iter) -> SmallVector<Value> {
        auto [stage, use] = ringSlot(done, kt);
        Value parity = ir.toI32(ir.rem(use, 2));
        NVVM::MBarrierTryWaitParityOp::create(b, barrier(barriers, stage),
                                              parity, ir.i32(kWaitHintNs));
        SmallVector<Value> next = wgmmaStage(stage, iter);
        // wgmmaStage waited for all groups but this tile's: the previous
        // K tile's stage has been read.
        ir.guard(ir.lt(ir.idx(0), kt), [&] { release(ir.sub(kt, ir.idx(1))); });
        return next;
      });
  NVVM::WgmmaWaitGroupSyncOp::create(b, b.getI64IntegerAttr(0));
  // The last K tile's stage too, before the epilogue: the producer refills
  // it for the block's next tile meanwhile.
  release(ir.idx(kTiles - 1));
  return acc;
}
