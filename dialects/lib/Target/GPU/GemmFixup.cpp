//===- GemmFixup.cpp - a split GEMM's in-kernel reduction -----------------===//
//
// A K-split GEMM whose tiles are small (decode) reduces its slices in the
// GEMM launch instead of a reduction kernel: each block, after storing its
// slice's f32 partials, counts itself on its tile's counter, and the block
// that brings the count to the number of slices sums the tile's slices and
// applies the final epilogue. That saves a launch and its gap, which at
// decode cost about as much as the reduction's work.
//
// Ordering (the PTX memory model's fence-fence synchronization through the
// counter): every thread fences at GPU scope after its partial stores, the
// block's barrier orders them before thread 0's atomic, and the last block
// fences again after reading the count, before it loads the partials. The
// sum runs in slice order whichever block is last, so results do not depend
// on the blocks' timing, and they are the reduction kernel's bits.
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "ffn/Target/GPU/CostModel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::ffn::gpu_target;
using mlir::ffn::gpu_target::detail::GemmBuilder;

Value GemmBuilder::ifLastToArrive(Value index, Value arrivals,
                                  int64_t flagOffset, Value arrives,
                                  function_ref<void()> body) {
  auto gpuScope =
      NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::GPU);
  NVVM::MembarOp::create(b, gpuScope);
  // The barrier also puts every thread past the main loop: the ring's first
  // bytes are free for the flag.
  ir.barrier();
  Value flag = ir.sharedArray(b.getI32Type(), 1, flagOffset);
  Value zero32 = ir.i32(0);
  ir.guard(ir.eq(tid, ir.idx(0)), [&] {
    ir.store(zero32, flag, {ir.idx(0)});
    auto arrive = [&] {
      Value before =
          memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi, ir.i32(1),
                                      counters, ValueRange{index});
      Value last = arith::CmpIOp::create(
          b, arith::CmpIPredicate::eq,
          arith::AddIOp::create(b, before, ir.i32(1)), arrivals);
      // No block counts on it any more: the last one leaves the counter at
      // zero for the launches after this one.
      ir.guard(last, [&] {
        ir.store(zero32, counters, {index});
        ir.store(ir.i32(1), flag, {ir.idx(0)});
      });
    };
    if (arrives)
      ir.guard(arrives, arrive);
    else
      arrive();
  });
  ir.barrier();
  Value isLast = arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                       ir.load(flag, {ir.idx(0)}), zero32);
  ir.guard(isLast, [&] {
    NVVM::MembarOp::create(b, gpuScope);
    body();
  });
  return isLast;
}

void GemmBuilder::fixup() {
  assert(!moe() && "a mixture's combine kernel adds its slices");
  Value gridY = gpu::GridDimOp::create(b, gpu::Dimension::y);
  Value tile = ir.add(ir.mul(ir.blockId(gpu::Dimension::x), gridY),
                      ir.blockId(gpu::Dimension::y));
  Value lastSlice = ifLastToArrive(
      tile, ir.i32(c.splitK), /*flagOffset=*/0,
      /*arrives=*/{}, [&] {
        // The GEMM as if unsplit: its own epilogue, on the summed slices.
        GemmConfig whole = c;
        whole.epilogue = c.fixup;
        whole.outType = c.fixupType;
        SplitKBuffers buffers{out, fixOut, bias, biasGate, resid};
        // The tile's output columns [first, first + width): a gated tile's bn
        // packed columns are bn / 2 outputs; an output tile's last may be
        // partly past the row (or its group's block, whose output column is
        // then group * nOut + column).
        Value first, width;
        if (c.fixup == Epilogue::Output) {
          first = col0;
          width = ir.sub(ir.min(ir.add(col0, c.bn), ir.idx(c.nOut)), col0);
        } else {
          first = c.gated ? ir.div(partialCol0, 2) : partialCol0;
          width = ir.idx(c.gated ? c.bn / 2 : c.bn);
        }
        Value rowsHere = ir.sub(ir.min(ir.add(row0, c.bm), m), row0);
        Value total = ir.mul(rowsHere, width),
              lastElement = ir.sub(total, ir.idx(1));
        // Each thread takes `unroll` elements a round, consecutive threads
        // consecutive columns (coalesced), and loads all of them before it
        // stores any (the stores could alias the loads as far as the compiler
        // knows): the round's slices are in flight together. Elements past the
        // tile repeat its last one, the same value to the same place.
        int64_t threads = c.threads();
        int64_t unroll = std::max<int64_t>(1, kFixupElementsPerRound / threads);
        ir.loop(tid, total, threads * unroll, [&](Value e) {
          SmallVector<SplitKColumn> results;
          for (int64_t u = 0; u < unroll; ++u) {
            Value at = ir.min(ir.add(e, u * threads), lastElement);
            Value row = ir.add(row0, ir.div(at, width));
            Value col = ir.add(first, ir.rem(at, width));
            if (c.fixup == Epilogue::Output)
              col = inGroup(col, c.nOut);
            results.push_back(splitKColumn(ir, whole, buffers, m, row, col));
          }
          for (const SplitKColumn &r : results)
            ir.store(r.value, fixOut, {r.index});
        });
      });
  // Outside the guard: its barriers need every thread of the launch's
  // blocks, and ptxas spilled a word with them nested in it.
  if (c.postNorm)
    finishBand(fixOut, lastSlice);
}
