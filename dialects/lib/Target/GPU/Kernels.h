//===- Kernels.h - the FFN's GPU kernels, one builder each ------*- C++ -*-===//
//
// Every kernel takes its buffers as rank-1 memrefs of its element type
// (memref<?xT>: five launch parameters each, see docs/gpu.md) and the row
// count m as i64, in the order its KernelArgs list says; the launch plan is
// built from the same list, so kernel and launch cannot disagree.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_GPU_KERNELS_H
#define FFN_TARGET_GPU_KERNELS_H

#include "ffn/IR/FfnAttrs.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::ffn::gpu_target {

/// What a kernel argument is bound to at launch (ffn/kernel_abi.h's
/// ffn_device_arg_kind).
enum class ArgKind {
  M = 0,
  Input = 1,
  Output = 2,
  Param = 3,
  Workspace = 4,
  TensorMap = 5,
  Counters = 6
};

/// A TMA tensor map over a buffer argument (ffn/kernel_abi.h's
/// ffn_tensor_map): `rank` dimensions of the buffer's elements, dims[0]
/// contiguous, strides[i] bytes between entries of dimension i + 1, dims[i]
/// = 0 for the run's m; TMA copies boxes of `box` elements (zeros outside
/// the dims) into shared memory swizzled over `swizzle` bytes.
struct TensorMapDesc {
  ArgKind source = ArgKind::Input;
  int64_t index = 0;
  int64_t rank = 3;
  int64_t dims[3] = {1, 1, 1};
  int64_t strides[2] = {0, 0};
  int64_t box[3] = {1, 1, 1};
  int64_t swizzle = 128;
  SmallVector<int64_t> flat() const;
};

struct KernelArg {
  ArgKind kind;
  int64_t index = 0; ///< Param: parameter index; Workspace: bytes per row
                     ///< before the region (its offset is m * index);
                     ///< TensorMap: the launch's map number
  Type elementType;  ///< buffers: the memref element type
  TensorMapDesc map = {}; ///< TensorMap: the map (passed by value, 128
                          ///< bytes, as a __grid_constant__ parameter)
};

/// One kernel launch of the plan.
struct Launch {
  std::string kernel;
  int64_t rowsPerBlock = 1; ///< grid.x = ceil((m gridMScale +
                            ///< gridRowsExtra) / rowsPerBlock)
  int64_t gridMScale = 1, gridRowsExtra = 0;
  int64_t gridY = 1, gridZ = 1;
  /// A persistent launch: at most this many blocks walk the grid's tiles
  /// (0: a block per tile).
  int64_t maxBlocks = 0;
  int64_t threads = 256;
  int64_t sharedBytes = 0;
  int64_t minM = 1, maxM = INT64_MAX; ///< the token-count bucket
  std::vector<KernelArg> args;
  std::vector<TensorMapDesc> maps; ///< the TensorMap arguments' maps
};

/// Where the GEMM's A operand and its epilogue's extra inputs live, and what
/// the epilogue does.
enum class Epilogue {
  Hidden,  ///< h = act(acc + b_up) or act(acc_g + b_g) * (acc_u + b_u)
  Output,  ///< y = acc + b_down [+ x]
  Partial, ///< raw f32 accumulators of a K slice (split-K)
};

struct GemmConfig {
  std::string name;
  Type storage;           ///< A and B element type
  int64_t bm = 128, bn = 128, bk = 32;
  int64_t stages = 3; ///< ring depth; 0: the 16-row tile's register stream
  /// The register stream's weights through each warp's own cp.async ring
  /// of this depth (0: straight into registers; GemmStream.cpp).
  int64_t warpStages = 0;
  int64_t warpsM = 2, warpsN = 4;
  int64_t k = 0;        ///< reduction length of the packed B rows
  int64_t kValid = 0;   ///< A's columns beyond this read as zero
  int64_t lda = 0;      ///< A's row stride (elements)
  int64_t splitK = 1;   ///< K slices (grid.z)
  int64_t nOut = 0;     ///< Output: valid columns (of a block when
                        ///< grouped); Hidden: h row stride
  int64_t outStride = 0; ///< Output: the out row stride
  /// Output: `out` is a workspace region (16-byte aligned), not the
  /// caller's buffer, so an even index may take a 2-element store.
  bool outInWorkspace = false;
  /// Hidden: a block's real columns (d_ff / groups; 0: all are real). The
  /// padded ones past it store 0 rather than what the activation makes of
  /// their zero weights (sigmoid's 0.5, or NaN from an infinite input
  /// times a zero weight, which GEMM 2's zero rows would then spread to
  /// the whole output row).
  int64_t hValid = 0;
  Epilogue epilogue = Epilogue::Hidden;
  bool gated = false;   ///< two B buffers (gate, up), interleaved in the
                        ///< tile in groups of 8 rows
  Activation activation = Activation::identity;
  Type outType;         ///< element type of the result buffer
  bool hasBias = false, hasBiasGate = false, residual = false;
  int64_t partialStride = 0; ///< Partial: f32 columns per row of one slice
  /// A grouped FFN's blocks: grid.y runs over groups x colBlocks tiles;
  /// block g reads A from column g * aGroupStride, the packed B from row
  /// g * bGroupRows, writes its outputs from column g * outGroupStride and
  /// reads its biases from g * biasGroupStride.
  int64_t groups = 1, colBlocks = 0;
  int64_t aGroupStride = 0, bGroupRows = 0, outGroupStride = 0,
          biasGroupStride = 0;
  /// sm_90a, bf16/f16, bm = 128, bk = 64, 2 x 4 warps: each warpgroup
  /// multiplies its 64 rows by the whole bn-wide tile with wgmma
  /// (m64 n<bn> k16) from 128-byte-swizzled shared memory.
  bool wgmma = false;
  /// Quantized weights (weightBits 8 or 4; 0: B in the storage type). B is
  /// then a byte buffer: each packed row's k * weightBits / 8 bytes of
  /// integers (int4: two k a byte, the even one in the low nibble, signed,
  /// or unsigned with zero points), and from byte scaleOffset the scales
  /// [row][kGroups] in the storage type (kGroups = ceil(kRows /
  /// quantGroup), kRows the matrix's real K), from zeroOffset the zero
  /// points [row][kGroups] as bytes. Each buffer is passed twice: as bytes
  /// and as the storage type (the scales). A grouped FFN's blocks are
  /// bGroupBytes apart. Tensor cores multiply by q (q - z), exact in the
  /// dtype, and add each group's sums times s in f32; f32 multiplies by s q
  /// (s (q - z)), exact in f32. With weightTerms = 2 (groups that are not a
  /// multiple of 16, the MMA's K step) tensor cores multiply s q split into
  /// hi = dtype(s q) and lo = s q - hi, each exact in the dtype, and need
  /// no group sums.
  int64_t weightBits = 0, quantGroup = 0, kRows = 0, kGroups = 0;
  int64_t weightTerms = 1;
  bool zeroPoints = false;
  /// Tensor cores on integers exact in the dtype (int4; int8 on f16) in
  /// scale groups that are a multiple of 32: each warp widens its own B
  /// fragments in registers from the ring's integer tile (no converted
  /// tiles, no second barrier a K tile), reading A in the register
  /// stream's k order (GemmWiden.cpp, registerOperands).
  bool widenInRegisters = false;
  int64_t scaleOffset = 0, zeroOffset = 0, bGroupBytes = 0;
  /// Blocks of this kernel an SM's shared memory holds (0: no hint). Told
  /// to ptxas (.minnctapersm), which otherwise budgets registers for more
  /// resident blocks than fit and spills.
  int64_t minBlocksPerSm = 0;
  /// A mixture of experts' expert GEMM (moeRouted > 0): grid.x walks the
  /// list of every expert's row tiles (the routed experts' ceil(count[e] /
  /// bm), then the shared ones' ceil(m / bm); blocks past its end leave),
  /// grid.z the K slices (the partials hold m moeSlots rows a slice), and
  /// block (x, y, z) multiplies rows [i bm, i bm + bm) of expert e's list
  /// when entry x of the list is (e, i). Routed
  /// expert e's rows are the slots perm[e m ..] (count[e] of them, written
  /// by the group kernel); shared expert s takes every row r as slot
  /// r moeSlots + topK + s. A's row is the slot's token (slot / moeSlots)
  /// when moeGatherToken, else the slot; results go to the slot's row.
  /// The experts' weights and biases sit at the group strides, as a
  /// grouped FFN's blocks do.
  int64_t moeRouted = 0, moeShared = 0, moeTopK = 0, moeSlots = 0;
  bool moeGatherToken = false;
  /// int8 activations on tensor cores: A holds the integers q (exact in
  /// the dtype), and each scale group's sums are multiplied by the weights'
  /// scale times A's row scale, from an f32 table argument (the last before
  /// m) [row][groups kGroups]: K group j of block g at g kGroups + j, the
  /// weights' own groups. Groups are then a multiple of 16 (Sema), so
  /// weightTerms is 1. In a mixture the table's rows are A's rows, one
  /// block's kGroups each: tokens for GEMM 1 (x, gathered), slots for
  /// GEMM 2 (h, m moeSlots rows), whatever the expert.
  bool aRowScales = false;
  /// wgmma fed by TMA (sm_90a; not a mixture, whose A rows are gathered):
  /// a producer warpgroup before the 2 x 4 consumer warps issues the tile
  /// copies (tensor-map arguments before m: A, then B, then B up when
  /// gated) into an mbarrier ring. Gated B tiles then hold the 128 gate
  /// rows, then the 128 up rows, instead of groups of 8.
  bool tma = false;
  /// Partial with an in-kernel fix-up (fixup != Partial): each block counts
  /// its finished slice on its tile's i32 counter (an argument after the
  /// final epilogue's, zero at the launch and left zero), and the block that
  /// finishes a tile's last slice sums the slices in slice order and applies
  /// epilogue `fixup` into an argument after the partials (of element type
  /// fixupType), as the reduction kernel would: no reduction launch.
  Epilogue fixup = Epilogue::Partial;
  Type fixupType;
  /// An Output GEMM whose final result is a post-norm's f32 z (unsplit, or
  /// split with the fix-up): the block finishing a row band's last tile
  /// normalizes the band into an argument after the counters (the tiles'
  /// counters, then grid.x band counters), the norm's scale and [shift]
  /// following it, in the storage type (GemmPostNorm.cpp).
  std::optional<NormKind> postNorm;
  double normEps = 0;
  bool normShift = false;

  int64_t sharedBytes() const;
  /// The register stream's staged A slice (GemmStream.cpp): 16 rows of
  /// the K slice, or 0 where that exceeds its limit.
  int64_t streamStageBytes() const;
  /// The register stream's shared memory before its warp rings: the staged
  /// A slice, or the flags it needs without one (the split fix-up's at
  /// byte 0, a fused post-norm's at byte 16).
  int64_t streamFrontBytes() const;
  /// Where the register stream's warp rings start in shared memory (after
  /// the staged A slice or the flags, 128-byte aligned).
  int64_t warpRingOffset() const;
  int64_t threads() const { return 32 * warpsM * warpsN + (tma ? 128 : 0); }
  /// The ping-pong TMA kernel (gpuPingPong's 128 x 128 wgmma tile): each
  /// consumer warpgroup multiplies a whole tile (two m64 n128 slabs), the
  /// two taking the block's tiles in turns (GemmTma.cpp).
  bool pingPong() const;
  bool tensorCores() const { return !storage.isF32(); }
};

/// Builds the GEMM kernel into `module`. Its arguments, in order: A, B (the
/// gate's when gated) [its scales view when quantized], the up B when gated
/// [its scales view], out, then b_up (Hidden) or b_down (Output), b_gate,
/// the residual input, [the expert lists and counts of a mixture of experts,]
/// m. Partial has no biases.
void buildGemmKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                     const GemmConfig &config, ArrayRef<KernelArg> args);

/// Row kernels (one block of 256 threads per token row).
struct NormConfig {
  std::string name;
  NormKind kind;
  double eps;
  int64_t width;     ///< d_model
  int64_t outStride; ///< output row stride; columns beyond width get 0
  /// A grouped FFN's input: each block of groupWidth columns starts a new
  /// groupStride-wide, zero-padded piece of the output row (0: one piece).
  int64_t groupWidth = 0, groupStride = 0;
  Type outType;
  bool shift = false; ///< LayerNorm's learned shift
  bool apply = true;  ///< false: only copy (and pad) the row
  /// The input row is laid out as the output (pieces at groupStride, row
  /// stride outStride) instead of width contiguous columns.
  bool inPadded = false;
  /// int8 activations (quantGroup > 0): each piece's columns quantized in
  /// groups of quantGroup as the CPU does (a = max |v|, q = clamp(roundeven(
  /// v * (127 / a)), -127, 127)); the output takes q (dequantize: q a / 127,
  /// for f32 tiles) and the extra argument after the norm's, an f32 table
  /// [row][pieces ceil(pieceWidth / quantGroup)], the scale a / 127 of piece
  /// p's group j at p ceil(pieceWidth / quantGroup) + j.
  int64_t quantGroup = 0;
  bool dequantize = false;
};
void buildNormKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                     const NormConfig &config, ArrayRef<KernelArg> args);

/// Sums the split-K partials and applies the GEMM's epilogue; block (row,
/// y) of its grid does kReduceColumns of the output columns of one row.
constexpr int64_t kReduceColumns = 1024;
int64_t splitKReduceColumns(const GemmConfig &gemm);
void buildSplitKReduceKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                             const GemmConfig &gemm, ArrayRef<KernelArg> args);
/// The split-K reduction's buffers: the slices' f32 partials (slice z's row
/// r at (z m + r) partialStride), the result, and the epilogue's inputs
/// (null where the GEMM has none).
struct SplitKBuffers {
  Value partial, out, bias, biasGate, resid;
};
class KernelIR;
/// Output column `col` of row `row`: the K slices of its packed column(s)
/// summed in slice order, then `gemm`'s epilogue (Output or Hidden), in the
/// result's type, and where it goes in the result. The reduction kernel and
/// a GEMM's fix-up both compute it so, and give the same bits.
struct SplitKColumn {
  Value value, index;
};
SplitKColumn splitKColumn(KernelIR &ir, const GemmConfig &gemm,
                          const SplitKBuffers &buffers, Value m, Value row,
                          Value col);
/// `v`, or 0 where `inBlockColumn` (a hidden column within its group's
/// block) is one of the block's padding columns (GemmConfig::hValid). The
/// tile epilogue and the split-K reductions both mask with it.
Value maskPaddedHidden(KernelIR &ir, const GemmConfig &gemm,
                       Value inBlockColumn, Value v);

/// A norm's statistics of one row, summed over a block of 256 threads:
/// normalize(v, col) = (v - mean) * rstd * scale[col] [+ shift[col]].
struct RowNorm {
  Value mean, rstd;
};
RowNorm rowNormStats(KernelIR &ir, function_ref<Value(Value)> x, int64_t width,
                     NormKind kind, double eps);

/// A mixture of experts' own kernels (docs/gpu.md, "Mixtures of experts").
struct MoeConfig {
  std::string name;
  Type storage;
  int64_t dModel = 0, experts = 0, topK = 0, shared = 0;
  Router router = Router::softmax_topk;
  bool normalize = false;
  /// The router's input is the pre-normed row, in f32.
  std::optional<NormKind> preNorm;
  double eps = 0;
  bool shift = false;
  bool residual = false;
  /// combine: the FFN's post-norm, applied to the combined row in the
  /// same block (it owns the row), with eps and shift above.
  std::optional<NormKind> postNorm;
  /// combine: GEMM 2's K slices (1: y holds each slot's result, bias
  /// included; more: y holds the slices' f32 partials, partialStride
  /// columns a slot row, and the combine adds them in slice order, then
  /// the slot's expert's b_down at biasStride when hasBias).
  int64_t splitK = 1, partialStride = 0, biasStride = 0;
  bool hasBias = false;
  int64_t slots() const { return topK + shared; }
};
/// Route: one block per row. The f32 logits x . w_router (x pre-normed in
/// f32 when the FFN has a pre-norm), the top k (descending, ties to the
/// lower expert, NaN ranked as -inf) into sel [m][k] (i32), their weights
/// into g [m][k] (f32). Arguments: x, w_router, [scale, [shift]], sel, g, m.
int64_t routeSharedBytes(const MoeConfig &config);
void buildRouteKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                      const MoeConfig &config, ArrayRef<KernelArg> args);
/// Group: block (0, e) lists routed expert e's slots in row order into
/// perm[e m ..] and their number into count[e]. Arguments: sel, perm,
/// count, m.
void buildGroupKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                      const MoeConfig &config, ArrayRef<KernelArg> args);
/// Combine: one block per row. f = sum_j g[r][j] y[slot j] (selection
/// order) + sum_s y[slot k + s] [+ x], from the f32 slot results y (or
/// their K slices and biases, splitK > 1). With a post-norm, f goes to the
/// f32 row z and the block normalizes z into out. Arguments: y, g, [sel,
/// [b_down,]] [x,] [z,] out, [scale, [shift,]] m; sel and b_down only when
/// split, z, scale and shift only with a post-norm.
void buildCombineKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                        const MoeConfig &config, ArrayRef<KernelArg> args);

/// The kernel attribute listing its tensor-map arguments' positions among
/// the lowered LLVM arguments (ffn-gpu-tensor-map-params reads it).
constexpr llvm::StringLiteral kTensorMapArgsAttr = "ffn.tensor_map_args";

/// Creates an empty kernel `name` with memref<?xT> / i64 / tensor-map
/// arguments.
gpu::GPUFuncOp createKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                            StringRef name, ArrayRef<KernelArg> args,
                            int64_t threads);

} // namespace mlir::ffn::gpu_target

#endif // FFN_TARGET_GPU_KERNELS_H
