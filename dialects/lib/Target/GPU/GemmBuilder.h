//===- GemmBuilder.h - the GEMM kernel's builder state --------*- C++ -*-===//
//
// Private to the GEMM kernel's files: GemmKernel.cpp builds the cp.async
// ring, the mma.sync / wgmma / FMA main loops and the epilogues; GemmTma.cpp
// the sm_90a warp-specialized loop fed by TMA.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_GPU_GEMMBUILDER_H
#define FFN_TARGET_GPU_GEMMBUILDER_H

#include "KernelIR.h"
#include "Kernels.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <utility>

namespace mlir::ffn::gpu_target::detail {
/// The kernel's state while its body is built.
class GemmBuilder {
public:
  GemmBuilder(ImplicitLocOpBuilder &b, const GemmConfig &c, gpu::GPUFuncOp f)
      : b(b), ir(b), c(c), func(f) {}
  void build();

private:
  /// The main loop and the epilogue (build() adds the split-K fix-up).
  void buildBody();
  /// A fix-up GEMM's (c.fixup != Partial) ending (GemmFixup.cpp): the block
  /// that finishes a tile's last K slice reduces the tile's slices.
  void fixup();
  /// A fused post-norm's ending (GemmPostNorm.cpp), reached by every block
  /// of the launch (it has block barriers): a block that finished a tile
  /// (all, or where `counts`: the fix-up's last slice) counts it on its row
  /// band, and the block that finishes the band normalizes the band's rows
  /// of z into the output.
  void finishBand(Value z, Value counts = nullptr);
  /// The counting both use (GemmFixup.cpp), reached by every block (it has
  /// block barriers): every thread fences its stores at GPU scope, thread 0
  /// of a block that arrives (every block, or where `arrives`) adds one to
  /// counters[index], and the block that brings it to `arrivals` (i32)
  /// leaves it at zero and runs `body` after fencing again. The block's
  /// verdict passes through a shared i32 flag at byte `flagOffset`;
  /// returned (i1, the same in every thread of the block).
  Value ifLastToArrive(Value index, Value arrivals, int64_t flagOffset,
                       Value arrives, function_ref<void()> body);
  ImplicitLocOpBuilder &b;
  KernelIR ir;
  const GemmConfig &c;
  gpu::GPUFuncOp func;

  // Arguments (quantized: bBuf/bUpBuf are bytes, b*Scales their scales).
  Value aBuf, bBuf, bUpBuf, bScales, bUpScales, out, bias, biasGate, resid, m;
  Value aScales; // int8 activations: A's row scales
  // A fix-up GEMM's final epilogue: its result and the tiles' counters.
  Value fixOut, counters;
  // A fused post-norm: the output and the norm's scale [and shift].
  Value normOut, normScale, normShift;
  // A mixture's expert GEMM: the experts' slot lists and counts, this
  // block's expert, its row count, and the A rows of this thread's copies
  // (the same tile rows every stage).
  Value perm, counts, expert, rows;
  Value routed, routedExpert; // expert < E; the expert clamped to the
                              // routed ones (a valid list index)
  SmallVector<Value> aRows;
  // int8 activations in a mixture: the first scale-table entry of the A
  // row behind each of this lane's fragment rows (mt, half), found once
  // per tile (a list lookup each) rather than at every scale group.
  SmallVector<Value> aScaleRows;
  // Geometry.
  int64_t eb = 0, ldsElems = 0, vec = 0, chunksPerRow = 0;
  int64_t warpTileM = 0, warpTileN = 0, fragsM = 0, fragsN = 0;
  int64_t fragRowStep = 16; // tile rows between fragment rows mt, mt + 1
  int64_t kPerSlice = 0, kTiles = 0;
  Value tid, lane, row0, col0, kBeg, aSmem, bSmem, token;
  Value kSlice;             // this block's K slice (grid.z, or its part of it)
  Value group, partialCol0; // grouped: this block's group; the tile's first
                            // column among all groups' (split-K partials)
  Value aAddr, bAddr;       // wgmma: shared-memory byte addresses of the tiles
  // Quantized weights: the integer tiles' ring (bSmem then holds two
  // converted tiles), bytes per tile row, 16-byte chunks per tile row and
  // k per chunk.
  Value qSmem;
  int64_t qRowTile = 0, qChunksPerRow = 0, qElems = 0;
  Value warpGroup;          // wgmma: this thread's warpgroup (0 or 1)
  Value warp;               // this thread's warp in the block
  Value aMap, bMap, bUpMap; // TMA: the tensor maps (by-value parameters)
  Value warpRow, warpCol;   // first tile row / B row of this warp
  Value grp, tig;           // lane / 4 and lane % 4

  void bindArgs();
  /// Makes tile (x, y, z) of the launch's grid (row block, group x column
  /// block, K slice) this block's: row0, col0, group, kSlice, kBeg.
  void setTile(Value x, Value y, Value z);
  /// body(r, j) for each of a tile's `rows` x `perRow` 16-byte chunks
  /// (row r, chunk j of the row), spread over the block's threads.
  void forEachChunk(int64_t rows, int64_t perRow,
                    function_ref<void(Value r, Value j)> body);
  void loadStage(Value stage, Value tile);
  /// Converts the integer tile of ring stage `stage` (K tile `tile`) into
  /// converted tile `buf` of bSmem.
  void dequantStage(Value stage, Value buf, Value tile);
  /// Whether the converted tile is widened by bit operations
  /// (GemmWiden.cpp): tensor cores, one term, integers exact in the
  /// dtype's mantissa (int4, or int8 on f16).
  bool widensByBits() const;
  /// The 16-byte chunk `raw` (vector<16xi8>) of packed row `srcRow`'s
  /// integers from k = `kChunk` on, in the dtype: 16-byte pieces of 8
  /// values (their zero points from `qBuf`), the k's past the matrix not
  /// yet zeroed.
  SmallVector<Value> widenByBits(Value raw, Value kChunk, Value srcRow,
                                 Value qBuf);
  /// One 32-bit word of integers (8 int4 or 4 int8, k ascending) widened:
  /// i32 words of two dtype values each, in k order; `negatedOffset` from
  /// widenOffset.
  SmallVector<Value> widenWord(Value word, Value negatedOffset);
  /// -(2^p + o) in both halves of an i32, o the zero point `zeroPoint` (a
  /// byte) or, without zero points (null), the signed integers' bias.
  Value widenOffset(Value zeroPoint);
  /// Quantized weights widened in registers (GemmConfig::widenInRegisters):
  /// one 32-wide K chunk's operands of both its MMA steps, straight from the
  /// integer tile (B) and the A tile, in the register stream's bijection
  /// (GemmStream.cpp): `aWords` [mt][4 words: row grp, then grp + 8, of
  /// words 0-3 per row interleaved as the steps take them], `bPairs` [nt][4
  /// pair words].
  void registerOperands(Value stage, Value kChunk, int64_t chunk,
                        SmallVectorImpl<Value> &aWords,
                        SmallVectorImpl<Value> &bPairs);
  /// The 16-byte chunk an integer tile row's chunk `j` is stored at with
  /// register widening: j, XORed so that the lanes of a fragment's eight
  /// rows read distinct banks.
  Value qChunkSlot(Value row, Value j);
  /// Tensor cores on quantized weights: adds each group's sums (the second
  /// half of `acc`) times their scales to the totals (the first half) and
  /// zeroes them; `kEnd` is one past the group's last k.
  void flushGroup(SmallVectorImpl<Value> &acc, Value kEnd);
  /// The packed B row `bRow` of the tile (a column of the gated tile's
  /// interleaving): whether it is the gate's, and its row in that matrix.
  std::pair<Value, Value> bSource(Value bRow);
  /// Element (packed row `srcRow`, scale group `kGroup`) of a quantized
  /// matrix's [row][group] table starting at element `offset` of its block,
  /// in a buffer whose elements are `elementBytes` wide.
  Value groupEntry(Value srcRow, Value kGroup, int64_t offset,
                   int64_t elementBytes);
  Value scaleAt(Value bRow, Value kGroup); ///< f32 scale of a packed row
  /// Tensor cores on quantized weights that sum each scale group apart (one
  /// term per weight: the group is a multiple of the MMA's K step).
  bool quantTc() const {
    return c.weightBits && c.tensorCores() && c.weightTerms == 1;
  }
  SmallVector<Value> computeStage(Value stage, Value bStage, Value kt,
                                  ValueRange acc);
  void loadMatrices(Value smem, Value stage, Value row, Value col,
                    SmallVectorImpl<Value> &frags);
  SmallVector<Value> fragmentA(Value stage, int64_t kk);
  SmallVector<Value> fragmentB(Value stage, int64_t kk);
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                         ArrayRef<Value> acc);
  void epilogue(ArrayRef<Value> acc);
  /// Elements idx and idx + 1 of a buffer as f32: one 2-element load when
  /// `paired` (idx even, the buffer aligned), else two.
  std::pair<Value, Value> loadPair(Value buffer, Value idx, bool paired);
  /// Stores f32 v0, v1 as elements idx, idx + 1 of a buffer (converted to
  /// its type): one 2-element store when `paired`, else two.
  void storePair(Value v0, Value v1, Value buffer, Value idx, bool paired);
  /// v, or 0 where in-group hidden column col + e is padding (c.hValid).
  Value realColumn(Value col, int64_t e, Value v);
  /// One K tile's wgmma group on the accumulator slabs; returns them.
  SmallVector<Value> wgmmaStage(Value stage, ValueRange slabs);
  /// The 16-row tile's main loop without a ring (GemmStream.cpp, stages =
  /// 0): B and A fragments loaded straight into registers.
  void buildStream();
  /// The global byte address (i64) of element `element` of a buffer.
  Value byteAddress(Value buffer, Value element);
  /// 16 bytes at a global byte address as four i32 words (zeros where
  /// `valid` is false); `streaming` loads skip L1.
  SmallVector<Value> load16(Value address, Value valid, bool streaming);
  /// An i32 word as an mma.sync operand of the storage type.
  Value mmaOperand(Value word);
  /// TMA (GemmTma.cpp): the warp-specialized main loop and epilogue that
  /// follow the ring's layout.
  void buildTma();
  /// The shared-memory pointer (address space 3) of a byte address.
  Value sharedPointer(Value byteAddress);
  /// mbarrier `index` of the array at shared byte address `barriers`.
  Value barrier(Value barriers, Value index);
  /// body(tile, done) for each tile of the persistent grid this block
  /// walks: its number in the grid and how many the block walked before.
  /// A ping-pong consumer walks every other one: first (its warpgroup),
  /// first + 2, ...
  void forEachTile(function_ref<void(Value tile, Value done)> body,
                   Value first = nullptr, int64_t step = 1);
  /// The ring stage of K tile `kt` of a block's tile after `done` others,
  /// and the stage's use it is (counted over the block's tiles).
  std::pair<Value, Value> ringSlot(Value done, Value kt);
  /// setTile for the grid's tile number `tile` (row blocks fastest).
  void setLinearTile(Value tile);
  Value rowBlocks(); ///< ceil(m / bm)
  void tmaProducer(Value barriers, Value done);
  /// The ping-pong consumers: each warpgroup its own tiles, in turns.
  void pingPongConsumer(Value barriers);
  /// Ping-pong: the barrier warpgroup `warpGroupIndex` waits on for its
  /// turn (after the ring's full and empty ones).
  Value orderBarrier(Value barriers, Value warpGroupIndex);
  /// One arrival per warp (lane 0's) on the mbarrier at `barrierPtr`.
  void arriveOncePerWarp(Value barrierPtr);
  /// Returns the accumulator slabs.
  SmallVector<Value> tmaConsumer(Value barriers, Value done);
  /// The column among the packed B rows' interleaving (groups of 8 gate,
  /// then 8 up) of column `local` of a tile: itself, except for a gated
  /// TMA tile, which holds 128 gate rows then 128 up rows.
  int64_t packedColumn(int64_t local) const;
  /// wgmma's accumulator structs, one per m64 slab (fragsM; bn / 8
  /// fragments each), zeroed.
  SmallVector<Value> zeroAccumulators();
  /// The accumulators out of wgmma's structs, in the epilogue's order.
  SmallVector<Value> unpackAccumulators(ValueRange slabs);
  /// `v` moved to this block's group (or expert): v + group * stride (v
  /// when dense).
  Value inGroup(Value v, int64_t stride) {
    return group ? ir.add(v, ir.mul(group, stride)) : v;
  }
  bool moe() const { return c.moeRouted > 0; }
  /// The slot of row `i` (< rows) of this block's expert.
  Value slotOf(Value i);
  /// The A row a slot reads: its token when moeGatherToken, else itself.
  Value aRowOf(Value slot) {
    return c.moeGatherToken ? ir.div(slot, c.moeSlots) : slot;
  }
  /// This lane's tile row in fragment row `mt`, half `half` (the MMA's
  /// rows grp and grp + 8).
  Value fragmentRow(int64_t mt, int64_t half) {
    return ir.add(ir.add(ir.add(row0, warpRow), grp),
                  mt * fragRowStep + half * 8);
  }
  Value descriptor(Value byteAddress);
  Value asI32(Value pair); ///< an mma operand register
};
} // namespace mlir::ffn::gpu_target::detail

#endif // FFN_TARGET_GPU_GEMMBUILDER_H
