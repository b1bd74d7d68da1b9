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
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::ffn::gpu_target;
using mlir::ffn::gpu_target::detail::GemmBuilder;

namespace {
/// Registers per thread after the warpgroups re-split the register file
/// (setmaxnreg): the producer needs few; each consumer thread holds bn / 2
/// f32 accumulators (128 for the 128 x 256 tile). 128 x 40 + 256 x 232 fits
/// the SM's 64 Ki registers with one block resident.
constexpr int32_t kProducerRegisters = 40;
constexpr int32_t kConsumerRegisters = 232;
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
  int64_t consumerWarps = c.warpsM * c.warpsN;
  ir.guard(ir.eq(tid, ir.idx(0)), [&] {
    for (int64_t s = 0; s < c.stages; ++s) {
      NVVM::MBarrierInitOp::create(b, barrier(barriers, ir.idx(s)), ir.i32(1),
                                   Value());
      NVVM::MBarrierInitOp::create(b, barrier(barriers, ir.idx(c.stages + s)),
                                   ir.i32(consumerWarps), Value());
    }
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
  ir.guard(ir.eq(tid, ir.idx(0)), [&] { tmaProducer(barriers); });
  b.setInsertionPoint(ifOp.getElseRegion().front().getTerminator());
  NVVM::SetMaxRegisterOp::create(
      b, b.getI32IntegerAttr(kConsumerRegisters),
      NVVM::SetMaxRegisterActionAttr::get(
          b.getContext(), NVVM::SetMaxRegisterAction::increase));
  epilogue(unpackAccumulators(tmaConsumer(barriers)));
}

void GemmBuilder::tmaProducer(Value barriers) {
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
    Value stage = ir.rem(kt, c.stages);
    Value round = ir.div(kt, c.stages);
    Value full = barrier(barriers, stage);
    // Round r > 0 refills the stage the consumers released in round r - 1
    // (that phase's parity is (r - 1) & 1).
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

Value GemmBuilder::tmaConsumer(Value barriers) {
  auto cta =
      NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::CTA);
  Value acc = ir.loop(
      ir.idx(0), ir.idx(kTiles), 1, {zeroAccumulators()},
      [&](Value kt, ValueRange iter) -> SmallVector<Value> {
        Value stage = ir.rem(kt, c.stages);
        Value parity = ir.toI32(ir.rem(ir.div(kt, c.stages), 2));
        NVVM::MBarrierTryWaitParityOp::create(b, barrier(barriers, stage),
                                              parity, ir.i32(kWaitHintNs));
        SmallVector<Value> next = wgmmaStage(stage, iter[0]);
        // wgmmaStage waited for all groups but this tile's: the previous
        // tile's stage has been read, and each warp releases it once.
        ir.guard(ir.andI(ir.lt(ir.idx(0), kt), ir.eq(lane, ir.idx(0))), [&] {
          Value previous = ir.rem(ir.add(kt, c.stages - 1), c.stages);
          NVVM::MBarrierArriveOp::create(
              b, Type(), barrier(barriers, ir.add(previous, c.stages)), Value(),
              cta, b.getBoolAttr(false));
        });
        return next;
      })[0];
  NVVM::WgmmaWaitGroupSyncOp::create(b, b.getI64IntegerAttr(0));
  return acc;
}
