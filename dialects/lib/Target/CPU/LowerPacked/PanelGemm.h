//===- PanelGemm.h - a GEMM over packed weight panels -----------*- C++ -*-===//
//
// C = A W over packed weight panels: for each mc-row block, for each panel,
// for each register tile (the tallest of mr, mr/2, ..., 1 rows that fits),
// the tile's contraction acc[rows, nr] += A[rows, K] * W[K, nr] as a
// linalg.generic over (row, k, column) that TilingInterface tiles along k,
// then the accumulators to C -- through an epilogue, accumulated into C, or
// finishing the FFN's output (bias, residual, storage type).
//
// With the strategy's kc, a block of 2 to kKBlockMaxTiles tiles runs K in
// blocks of kc (taller ones: kc_tall) over a group of nc / nr panels: every
// tile of the block over one K block of one panel, then the next panel's,
// its partial sums parked in an mc x nc stack buffer between blocks, and
// the first two tiles prefetch what the group reads next between them
// (KBlocks.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_CPU_LOWERPACKED_PANELGEMM_H
#define FFN_TARGET_CPU_LOWERPACKED_PANELGEMM_H

#include "Emitter.h"
#include "Layout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace mlir::ffn::cpu {

/// How far down a streamed weight panel the K loops prefetch: far enough
/// for DRAM latency at one core's share of the bandwidth, near enough to
/// stay in L1 (measured: 1-8 KiB alike, 16 rows = 512 bytes - 2 KiB
/// short; PanelGemm::prefetchPanelRow).
constexpr int64_t kPrefetchBytesAhead = 2048;

/// One GEMM as the panel loops see it.
struct PanelGemm {
  Value a;                   // memref<?xK x f32> (integer dot: i8)
  Value aScales, aSums;      // integer dot products: a's per-group f32
                             // scales and i32 sums, memref<?x?>
  Value k;                   // reduction length
  SmallVector<Value> panels; // memref<NP x K' x NR x T>, K' >= k
  // Quantized weights: panels are memref<NP x K' x NR x i8> and these their
  // scales, memref<NP x ceil(K / group) x NR x T>, one per panel matrix.
  SmallVector<Value> scales;
  // int4 with zero points: memref<NP x ceil(K / group) x NR x i8> each.
  SmallVector<Value> zeros;
  int64_t nr;
  Value c;       // memref<?x W x f32>
  Value colBase; // global column of c's column 0 (null: 0)
  // Chunk-major panels [chunks][NP][chunkRows][NR] (0: [NP][K][NR]):
  // K runs over chunks [chunkBegin, chunkEnd), chunk q's row k meeting
  // A's column q * chunkRows - aColBase + k.
  int64_t chunkRows = 0;
  Value chunkBegin, chunkEnd, aColBase;
  // The sparse GEMM 2 (fused: one chunk per call): k runs over the kCount
  // entries of kList (row 0 of a memref<?x?xi32>, ascending) only, the chunk's
  // rows (pair rows for pair tiles) whose activations are not all zero.
  Value kList, kCount;
  Value accumulate; // i1: c += A B instead of c = A B (null: false)
  // i1 (null: never): instead of c, y[:, :d] = T(A B + bias + residual),
  // the real d columns of y only (bias, residual: null when absent).
  Value finish, y, bias, residual;
  // y's and the residual's column of c's column 0 (a grouped FFN's block;
  // null: 0). The bias is the block's own.
  Value yColBase;
  // Turns the accumulators of one row ([panel matrix][vector]) into the
  // vectors to store; `col` is the tile's first column.
  std::function<SmallVector<Value>(ArrayRef<SmallVector<Value>>, Value col)>
      epilogue;
};

class PanelGemmBuilder : public Emitter {
public:
  PanelGemmBuilder(OpBuilder &b, Location loc, Type storage, const Layout &l)
      : Emitter(b, loc, storage, l.lanes), l(l) {}

  /// The element type of the matmuls' inputs A and H: bf16 for pair
  /// tiles, else f32.
  Type operandType() { return l.dot ? b.getBF16Type() : f32; }

  /// Called at a GEMM function's entry: the tile buffers (mr x nr, one per
  /// weight matrix) that the epilogue and finishRows read, and with kc the
  /// K blocks' partial sums (mc x nr, one per weight matrix).
  void allocTileBuffers(int64_t matrices, int64_t nr);
  /// The GEMM over panels [panelBegin, panelEnd) for rows [0, m).
  void gemm(const PanelGemm &g, Value m, Value panelBegin, Value panelEnd);
  /// The integer panels and the scales of a quantized weight matrix's byte
  /// buffer (Layout.h), for K rows in np panels of nr columns.
  /// Also the zero points where the weights have them (else null).
  struct QuantViews {
    Value panels, scales, zeros;
  };
  QuantViews quantViews(Value bytes, int64_t np, int64_t k, int64_t nr);

protected:
  const Layout &l;

private:
  /// Matrix mat's accumulators of a `rows`-row tile: the tile buffer for
  /// full-height tiles, else a stack buffer of its own in the entry
  /// block. Upstream hoisting
  /// moves the accumulators of a buffer into registers only when no view
  /// of it is involved (so not a subview of tileBuffers), and LLVM promotes
  /// these small, constant-indexed allocas to registers entirely.
  Value registerTile(int64_t mat, int64_t rows, int64_t nr);
  /// A tile's first column in the panel layout and in C (whose column 0 is
  /// the global column colBase).
  std::pair<Value, Value> tileColumns(const PanelGemm &g, Value panel);
  /// One register tile of `rows` rows at row0: its K loop, then its
  /// accumulators stored to C, or to the tile buffer for epilogueRows.
  /// `streams` (i1): the tile is the first to read the panel; null for a
  /// tile known not to be, which then prefetches nothing unless it is one
  /// row high.
  void tile(const PanelGemm &g, Value row0, int64_t rows, Value panel,
            Value streams);
  /// The accumulators of a `rows`-row tile as values, from its buffers
  /// `acc` (one per weight matrix), in (matrix, row, vector) order; and
  /// back.
  SmallVector<Value> loadAccumulators(ArrayRef<Value> acc, int64_t rows,
                                      int64_t nv);
  void storeAccumulators(ArrayRef<Value> acc, int64_t rows, int64_t nv,
                         ValueRange values);
  /// Every K loop's prefetch at row `row` of `panel` (of a chunk, where
  /// not null): kPrefetchBytesAhead further down the weights where
  /// `streams` (the tile reads the panel from memory), else the row itself;
  /// for one-row tiles, and for multi-row ones where the strategy's
  /// `prefetch` is set and `streams` is not null.
  void prefetchPanelRow(const PanelGemm &g, int64_t rows, Value chunk,
                        Value panel, Value streams, Value row);
  /// A quantized tile's contraction over k in [0, kLen) (A's columns from
  /// aCol): per group of k, the group's scales loaded once, each weight
  /// vector sign-extended, converted and scaled (exactly: a <= 8-bit
  /// integer times a scale of at most 11 significant bits), then one FMA
  /// per row.
  void quantContract(const PanelGemm &g, ArrayRef<Value> acc, Value row0,
                     int64_t rows, Value panel, Value streams,
                     Value aCol, Value kLen);
  /// An integer-dot tile's contraction over k in [0, kLen) (IntDotTile.cpp):
  /// per group, the int8 inputs times the unsigned weights in int32
  /// (vpdpbusd), less the weights' offset times the inputs' group sum, then
  /// converted and accumulated in f32 times the two scales.
  void intDotContract(const PanelGemm &g, ArrayRef<Value> acc, Value row0,
                      int64_t rows, Value panel, Value streams,
                      Value kLen);
  /// A pair tile's contraction over k in [0, kLen) (A's columns from aCol):
  /// acc[mat][rows, nr] += A[rows, k] W[mat][k, nr] with vdpbf16ps, k in
  /// pairs, and an odd last k paired with zero.
  void dotContract(const PanelGemm &g, ArrayRef<Value> acc, Value row0,
                   int64_t rows, Value panel, Value streams, Value chunk,
                   Value aCol, Value kLen);
  /// The sparse GEMM 2's contraction over the listed rows
  /// (SparseTile.cpp): per listed k, one broadcast of A per row and one FMA
  /// (or, pair tiles, one vdpbf16ps) per accumulator vector, in ascending
  /// k -- the dense tile's operations less those of all-zero activations.
  /// Pair tiles' odd last k (paired with zero) is never listed and always
  /// taken.
  void sparseContract(const PanelGemm &g, ArrayRef<Value> acc, Value row0,
                      int64_t rows, Value panel, Value streams,
                      Value chunk, Value aCol, Value kLen);
  /// One pair-tile k-step over pair row kk: A's bf16 word of each row
  /// (`aWord`) broadcast, then per weight vector one load and one
  /// vdpbf16ps per row (PairTile.cpp; the dense and sparse tiles share it).
  SmallVector<Value> pairStep(const PanelGemm &g, int64_t rows, Value row0,
                              Value panel, Value chunk, ValueRange in, Value kk,
                              function_ref<Value(Value row)> aWord);
  /// After a pair tile's K loop (accumulators `in`): an odd kLen's last k,
  /// paired with zero; the accumulators with it (PairTile.cpp).
  SmallVector<Value> pairTail(const PanelGemm &g, int64_t rows, Value row0,
                              Value panel, Value chunk, ValueRange in,
                              Value aCol, Value kLen);
  /// A's bf16 pair at (row, k) as one i32 word; `single`: the element at k
  /// paired with zero (an odd K's last).
  Value pairWord(const PanelGemm &g, Value row, Value k, bool single);

  /// The epilogue (or, without one, none) of the `rows` rows at row0
  /// parked in `from` (one buffer per weight matrix, row r of it C's row
  /// row0 + r: the tile buffers, or the K blocks' partial sums), row by
  /// row into C.
  void epilogueRows(const PanelGemm &g, Value row0, Value rows, Value panel,
                    ArrayRef<Value> from);
  /// GEMM 2 finishing the output: the `rows` rows at row0 from `from` (as
  /// for epilogueRows), plus bias and residual, converted and stored into y.
  void finishRows(const PanelGemm &g, Value row0, Value rows, Value panel,
                  Value from);

  /// The tile loop over rows [i0, end) of a row block: each step the
  /// tallest tile height that fits what is left (of `tallest` -- 0: mr --,
  /// half of it, a quarter, ..., 1); `tileOf(row, h)` emits a tile of h
  /// rows (once per height, in an index switch on it), `after(row, rows)`
  /// what follows every tile (null: nothing).
  void forEachTile(Value i0, Value end,
                   function_ref<void(Value row, int64_t h)> tileOf,
                   function_ref<void(Value row, Value rows)> after,
                   int64_t tallest = 0);
  /// Whether gemm() may run this GEMM's K in blocks: kc or kc_tall is set,
  /// and the tiles are the widening or pair tiles over whole panels (not
  /// chunks, a row list, or quantized weights).
  bool blocksK(const PanelGemm &g) const;
  /// A block's rows [i0, end) (more than one tile) against the group of
  /// panels [p0, p1), K in blocks of kc, each K block over every panel of
  /// the group before the next (KBlocks.cpp), then the finished rows to C
  /// or y.
  void kBlockedGroup(const PanelGemm &g, Value i0, Value end, Value p0,
                     Value p1, Value kc);
  /// One tile of `rows` rows at row0 of panels [panel, panel + span) of
  /// the group [p0, p1) over the K block [k0, k0 + kLen): its partial sums
  /// from the block buffers (zero at k0 = 0), the contraction, and back;
  /// `share` (index 0 or 1, null: none) is the half of what the group reads
  /// next that its K loop prefetches.
  void kBlockTile(const PanelGemm &g, Value i0, Value row0, int64_t rows,
                  Value p0, Value p1, Value panel, Value k0, Value kLen,
                  Value share, int64_t span = 1);
  /// The tail tiles of a K-blocked block (rows [row0, end), fewer than mr)
  /// after the full tiles of `panel` in the K block [k0, k0 + kLen): a tile
  /// of tailSpan(h) panels ending at this one, or this one alone past the
  /// group's last whole span -- or, where the block has one full tile
  /// (`oneFull`), this one alone, prefetching the second half of the
  /// group's next reads.
  void tailTiles(const PanelGemm &g, Value i0, Value row0, Value end,
                 Value p0, Value p1, Value panel, Value k0, Value kLen,
                 Value oneFull);
  /// How many panels one short (tail) tile of h rows spans in a K block:
  /// enough accumulator chains to hide the dot product's latency, no more
  /// accumulators than a full tile's, within the group and the np panels.
  int64_t tailSpan(int64_t h, int64_t np) const;
  /// Panel `panel`'s first column in the group's partial sums.
  Value groupColumn(const PanelGemm &g, Value p0, Value panel);
  /// The contraction of a tile over k in [0, kLen) of the panel (A's
  /// columns from aCol; the panel's packed rows from kBlockRow, 0 where
  /// null), accumulators in `acc`: the widening, pair, quantized or
  /// integer-dot tile's K loop.
  void contractTile(const PanelGemm &g, ArrayRef<Value> acc, Value row0,
                    int64_t rows, Value panel, Value streams, Value chunk,
                    Value aCol, Value kLen);

  /// While a K-blocked tile is emitted (kBlockTile): the panel row its K
  /// loop starts at (packed rows; null: 0), and the panel row that the K
  /// loop's step 0 prefetches, the loop's step t then prefetching row
  /// kBlockAhead + t / 2 (null: the tile's usual prefetch; none for a
  /// K-blocked tile).
  Value kBlockRow, kBlockAhead;

  Block *gemmEntry = nullptr;
  llvm::DenseMap<std::pair<int64_t, int64_t>, Value> registerTiles;
  /// Per weight matrix: the current GEMM function's mr x nr accumulator
  /// buffer on the stack, which the epilogue and finishRows read.
  SmallVector<Value> tileBuffers;
  /// Per weight matrix, with K blocks: the partial sums of a row block's
  /// tiles between K blocks, mc x (nc / nr panels of the GEMM's width).
  SmallVector<Value> kBlockBuffers;
};

} // namespace mlir::ffn::cpu

#endif // FFN_TARGET_CPU_LOWERPACKED_PANELGEMM_H
