//===- Packing.h - the pack functions of a packed kernel --------*- C++ -*-===//
//
// Private functions `(%src, %dst)` that copy a parameter from its logical
// layout into the kernel's packed one, zero-filling the padding. The kernel
// glue exports them so the runtime packs each parameter once, at load time.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_CPU_LOWERPACKED_PACKING_H
#define FFN_TARGET_CPU_LOWERPACKED_PACKING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ffn::cpu {

/// A private `func @name(%src, %dst)` with an empty entry block, for a
/// pack function's body.
func::FuncOp createPackFunction(OpBuilder &b, Location loc, StringRef name,
                                MemRefType src, MemRefType dst);
/// Panel-major: dst[p][k][c] = src[k][p * nr + c], zero past the last column.
func::FuncOp buildMatrixPack(OpBuilder &b, Location loc, StringRef name,
                             MemRefType src, MemRefType dst);
/// Chunk-major: dst[q][p][k][c] = src[q * kc + k][p * nr + c], zero past the
/// last row and column.
func::FuncOp buildChunkedPack(OpBuilder &b, Location loc, StringRef name,
                              MemRefType src, MemRefType dst);
/// Pair-interleaved panels for bf16 dot products: dst[p][kk][2c + j] =
/// src[2kk + j][p * nr + c] (nr = dst's last size / 2), zero past the last
/// row and column.
func::FuncOp buildPairPack(OpBuilder &b, Location loc, StringRef name,
                           MemRefType src, MemRefType dst);
/// Chunk-major pair panels: dst[q][p][kk][2c + j] = src[q * kc + 2kk +
/// j][p * nr + c] (kc = 2 x dst's third size).
func::FuncOp buildChunkedPairPack(OpBuilder &b, Location loc, StringRef name,
                                  MemRefType src, MemRefType dst);
/// Weight-only quantization of src [K, N] into the byte buffer dst (see
/// Layout.h): per panel p, group g and column c, the scale s = T(max |w| /
/// qmax) computed in f32, then q = roundeven(w / s) clamped to [-qmax,
/// qmax] (0 where s = 0), qmax = 127 for 8 bits, 7 for 4; zero past the
/// last row and column. `zeroPoints` (int4): asymmetric, s = T((max(w, 0) -
/// min(w, 0)) / 15), z = clamp(roundeven(-min / s), 0, 15) stored from
/// `zeroOffset`, q = clamp(roundeven(w / s) + z, 0, 15) unsigned.
/// `scaleOffset`: where the scales start. `intDot`:
/// the integer dot products' unsigned, four-k-interleaved panels (Layout.h).
/// `panelRows` (the GPU's K-major rows, nr = 1): rows per panel beyond
/// what K needs, the buffer zeroed first (0: what K needs).
func::FuncOp buildQuantPack(OpBuilder &b, Location loc, StringRef name,
                            MemRefType src, MemRefType dst, int64_t nr,
                            int64_t np, int64_t bits, int64_t group,
                            bool intDot, bool zeroPoints, int64_t scaleOffset,
                            int64_t zeroOffset, int64_t panelRows = 0);
/// The same byte buffer from blocks quantized elsewhere (the runtime's
/// ffn_kernel_set_quantized_param): `(%q: memref<KxNxi8>, %scales:
/// memref<GxNxT>, [%zero_points: memref<GxNxi8>,] %dst)`, integers, scales
/// and zero points copied as given (zero past the last row and column);
/// `src` is the unquantized matrix's type, for its shape and element type.
func::FuncOp buildPrequantizedPack(OpBuilder &b, Location loc, StringRef name,
                                   MemRefType src, MemRefType dst, int64_t nr,
                                   int64_t np, int64_t bits, int64_t group,
                                   bool intDot, bool zeroPoints,
                                   int64_t scaleOffset, int64_t zeroOffset,
                                   int64_t panelRows = 0);
/// dst[i] = src[i], zero past the end.


func::FuncOp buildVectorPack(OpBuilder &b, Location loc, StringRef name,
                             MemRefType src, MemRefType dst);

} // namespace mlir::ffn::cpu

#endif // FFN_TARGET_CPU_LOWERPACKED_PACKING_H
