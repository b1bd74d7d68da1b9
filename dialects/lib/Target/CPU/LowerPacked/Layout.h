//===- Layout.h - sizes of one FFN's packed kernel ---------------*- C++
//-*-===//
//
// Everything ffn-lower-packed derives from an FFN and its #ffn.strategy
// before it emits IR: panel widths and counts, the workspace's row strides,
// and the fused small-m schedule's chunking. The pack functions, the phase
// schedules and the kernel's ABI annotations all read this one record.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_CPU_LOWERPACKED_LAYOUT_H
#define FFN_TARGET_CPU_LOWERPACKED_LAYOUT_H

#include "ffn/IR/FfnOps.h"

#include <algorithm>
#include <cstdint>

namespace mlir::ffn::cpu {

/// Sizes derived from the FFN and its strategy.
struct Layout {
  // The GEMMs' widths: d_model and d_ff, or one block's of a grouped FFN,
  // whose row phases span dModel = blocks * d (here "blocks", as `groups`
  // below are the fused schedule's chunk groups and `group` the quantization
  // group).
  int64_t d, f, lanes, mr, mc;
  // K rows per K block of a row block of 2 to kKBlockMaxTiles tiles, and
  // of a taller one (0: whole K); the panels a K-blocked block runs side by
  // side (nc / nr; PanelGemm.h).
  int64_t kc = 0, kcTall = 0, groupPanels = 1;
  int64_t dModel, blocks = 1;
  // A grouped FFN's work units: one per block, its GEMM 1 and GEMM 2 back
  // to back in one thread (block_units), or panels x blocks per GEMM.
  bool blockUnits = false;
  int64_t nrUp, npUp, fp;         // up/gate panels: width, count, padded d_ff
  int64_t nrDown, npDown, dp;     // down panels
  int64_t aWidth, hWidth, oWidth; // f32 row strides in the workspace
  bool needA;
  bool prefetch;
  // bf16 pair tiles (bf16_dot): the weights packed [panels][K/2][2 nr],
  // each row of a panel holding the pairs (W[2k][c], W[2k+1][c]); the
  // matmuls' inputs A and H are bf16 (A straight from x unless pre-normed).
  bool dot;
  // K rows of a packed panel: K, or its pairs.
  int64_t packedRows(int64_t k) const { return dot ? (k + 1) / 2 : k; }
  // Weight-only quantization (#ffn.weight_quant): 8 or 4 bits per weight
  // (0: none) and the input rows per scale. Each weight matrix is one byte
  // buffer: integer panels [N/nr][K][nr] (int4: [N/nr][K/2][nr], two k per
  // byte, the even k in the low nibble), then from a 64-byte boundary the
  // scales [N/nr][ceil(K/group)][nr] in the storage type.
  int64_t quantBits = 0, group = 0;
  // Integer dot products (#ffn.weight_quant int8_activations, VNNI): the
  // panels hold unsigned bytes, q + 128 (int8) or q + 8 (int4), four k of a
  // column in each 32-bit lane: [N/nr][K/4][4 nr] with byte 4c + j of row
  // kq = W[4 kq + j][c] (int8), or [N/nr][K/8][4 nr] with the low nibble
  // W[8 kq + j][c] and the high one W[8 kq + 4 + j][c] (int4). The
  // matmuls' inputs are quantized per row and group into the workspace.
  bool intDot = false;
  // The FFN is batch_invariant: every tile height must reduce a row in the
  // same order (the dequantizing tiles' per-group sums are for small
  // tiles only, so such FFNs do without them).
  bool batchInvariant = false;
  // k per panel row, and bytes per panel row.
  int64_t kPerQuantRow() const {
    if (intDot)
      return quantBits == 4 ? 8 : 4;
    return quantBits == 4 ? 2 : 1;
  }
  int64_t quantRowWidth(int64_t nr) const { return intDot ? 4 * nr : nr; }
  int64_t quantRows(int64_t k) const {
    return (k + kPerQuantRow() - 1) / kPerQuantRow();
  }
  int64_t scaleOffset(int64_t np, int64_t k, int64_t nr) const {
    return (np * quantRows(k) * quantRowWidth(nr) + 63) / 64 * 64;
  }
  // int4 with zero points (asymmetric): the integers are unsigned, and
  // from the next 64-byte boundary after the scales one zero point byte
  // per group and column, [N/nr][ceil(K/group)][nr].
  bool zeroPoints = false;
  int64_t zeroOffset(int64_t np, int64_t k, int64_t nr,
                     int64_t storageBytes) const {
    return (scaleOffset(np, k, nr) +
            np * ((k + group - 1) / group) * nr * storageBytes + 63) /
           64 * 64;
  }
  int64_t quantBytes(int64_t np, int64_t k, int64_t nr,
                     int64_t storageBytes) const {
    if (zeroPoints)
      return zeroOffset(np, k, nr, storageBytes) +
             np * ((k + group - 1) / group) * nr;
    return scaleOffset(np, k, nr) +
           np * ((k + group - 1) / group) * nr * storageBytes;
  }
  // The quantized copy of a matmul input of K columns, per row: the int8
  // values (zero past K), then per group its f32 scale and its i32 sum of
  // the values (for the unsigned weights' offset), in sections of these
  // widths.
  int64_t actQuantBytes(int64_t k) const { return (k + 63) / 64 * 64; }
  int64_t actQuantGroups(int64_t k) const {
    return ((k + group - 1) / group + 15) / 16 * 16;
  }
  int64_t actQuantRowBytes(int64_t k) const {
    return intDot ? actQuantBytes(k) + 8 * actQuantGroups(k) : 0;
  }

  // Without a post-norm, the two-pass GEMM 2 finishes the output itself
  // (bias, residual, storage type) in its epilogue: no row phase after it.
  bool finishInGemm;
  // The fused small-m schedule (fusedMaxM = 0: not used).
  int64_t fusedMaxM = 0, chunk = 0, panelsPerChunk = 0, chunks = 0,
          chunksPerGroup = 0, groups = 0;
  // Runs with m <= sparseMaxM (0: none) skip W_down's rows of zero
  // activations: in the fused bucket each group lists its chunk's needed
  // rows first.
  int64_t sparseMaxM = 0;
  // 32-bit columns per row of one group's section: its chunk buffer, its
  // partial output, then (sparse) room for its list of a chunk's rows (in
  // row 0: m >= 1).
  int64_t groupWidth() const {
    return chunk + oWidth + (sparseMaxM && fusedMaxM ? chunk : 0);
  }
  // Runs with fusedMaxM < m <= sparseMaxM take the two-pass schedule with
  // the sparse GEMM 2: one unit lists the needed rows of all of d_ff into
  // a section after O, [m, listWidth()] i32: row 0 holds the list, its
  // column hWidth the count.
  // (Only without a fused bucket: checkStrategy keeps sparseMaxM <=
  // fusedMaxM otherwise, as W_down is then packed chunk-major.)
  bool sparseTwoPass() const { return sparseMaxM > fusedMaxM; }
  int64_t listWidth() const { return sparseTwoPass() ? hWidth + 16 : 0; }
  int64_t listOffset() const { return 4 * (aWidth + hWidth + oWidth); }
  int64_t workspacePerRow() const {
    return 4 * (aWidth + std::max(hWidth + oWidth + listWidth(),
                                  groups * groupWidth())) +
           actQuantRowBytes(d) + actQuantRowBytes(f);
  }
  // Where the quantized inputs start in a workspace row (after the f32
  // sections; the fused schedule never quantizes; quantized FFNs have no
  // list section).
  int64_t actQuantOffset() const { return 4 * (aWidth + hWidth + oWidth); }

  // A grouped FFN (blocks > 1) takes the two-pass schedule block by block.
  // Every section of the dense layout exists once per block, block-major
  // ([blocks][m][width]), as the outlined GEMMs take identity-layout views
  // and a block's padded columns must not reach its neighbour's: A (the
  // gathered matmul input, always), H, O (only with a post-norm; otherwise
  // GEMM 2 finishes into y's columns of the block), then P [m, pWidth()],
  // the post-norm's whole pre-norm row, then each block's int8 copies of A
  // and H. Offsets are bytes per row: block g's section of width w starts at
  // byte m * (base + g * w).
  bool grouped() const { return blocks > 1; }
  int64_t pWidth() const {
    return grouped() && !finishInGemm ? (dModel + 15) / 16 * 16 : 0;
  }
  int64_t blockOBytes() const { return finishInGemm ? 0 : 4 * oWidth; }
  int64_t blockHBase() const { return blocks * 4 * aWidth; }
  int64_t blockOBase() const { return blockHBase() + blocks * 4 * hWidth; }
  int64_t blockPBase() const { return blockOBase() + blocks * blockOBytes(); }
  int64_t blockQuantBytes() const {
    return actQuantRowBytes(d) + actQuantRowBytes(f);
  }
  int64_t blockQuantBase() const { return blockPBase() + 4 * pWidth(); }
  int64_t groupedWorkspacePerRow() const {
    return blockQuantBase() + blocks * blockQuantBytes();
  }

  // A mixture of experts (moeTotal = 0: none): routed experts, experts in
  // all (routed, then shared), and the experts each row runs (top k, then
  // the shared ones). Its workspace (MoePhases.cpp), with R = m moeActive
  // routed rows: a head of per-expert row counts and offsets (i64, fixed
  // size, counted in every row's bytes so m = 1 has room), then sections
  // of m or R rows: A (m, as above), the routed copies of the matmul input
  // Ap, H, O (R, f32-sized), their int8 copies (R), the routing table of
  // each row's experts, weights and routed positions (m x moeActive, i32,
  // f32, i32), and each routed row's token (R, i32).
  int64_t moeExperts = 0, moeTotal = 0, moeActive = 0, moeTopK = 0;
  int64_t apWidth() const { return (d + 15) / 16 * 16; }
  int64_t moeHeadBytes() const { return (16 * moeTotal + 63) / 64 * 64; }
  int64_t moeRoutedRowBytes() const {
    return 4 * (apWidth() + hWidth + oWidth) + actQuantRowBytes(d) +
           actQuantRowBytes(f);
  }
  int64_t moeWorkspacePerRow() const {
    return moeHeadBytes() + 4 * aWidth +
           moeActive * (moeRoutedRowBytes() + 12 + 4);
  }
};

Layout layoutFor(FfnOp op, CpuStrategyAttr s);

} // namespace mlir::ffn::cpu

#endif // FFN_TARGET_CPU_LOWERPACKED_LAYOUT_H
