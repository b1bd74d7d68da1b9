//===- PathNotes.h - why an FFN misses the GPU's tuned path -----*- C++ -*-===//
//
// One list of the reasons an FFN does not get the NVIDIA back end's tuned
// kernels, so that the driver's warnings and the strategy text printed by
// --emit say the same thing (never a silent slow path).
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_GPU_PATHNOTES_H
#define FFN_TARGET_GPU_PATHNOTES_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::ffn::gpu_target {

/// `elementBytes`: 4 for f32, 2 for bf16/f16; `chip`: "sm_80", "sm_90",
/// "sm_90a"; `wgmmaFromM`: the smallest m the strategy multiplies with
/// wgmma (0: none, gpuWgmmaFromM); `groups`: a grouped FFN's blocks;
/// `quantGroup`: the K rows per scale of int8/int4 weights (0: the
/// weights are in the dtype); `moe`: a mixture of experts;
/// `int8Activations`: the matmuls' inputs quantized to int8 too;
/// `registerWiden`: every bucket widens quantized weights in registers.
inline std::vector<std::string>
pathNotes(int64_t dModel, int64_t elementBytes, const std::string &chip,
          bool batchInvariant, int64_t wgmmaFromM, int64_t groups = 1,
          int64_t quantGroup = 0, bool moe = false,
          bool int8Activations = false, bool registerWiden = false) {
  std::vector<std::string> notes;
  if (int8Activations)
    notes.push_back(
        "activations = int8: row kernels quantize x and h per row and group "
        "(the CPU's formula) and GEMM 1 writes h in f32 for them (4 bytes a "
        "hidden value, written and read once more); the integers multiply " +
        std::string(elementBytes == 2
                        ? "exactly on bf16/f16 tensor cores (mma.sync; the "
                          "s8 MMA, twice the rate, is not built)"
                        : "dequantized on the f32 FMA tiles (no integer "
                          "MMA for f32 FFNs)"));
  if (moe)
    notes.push_back("mixture of experts: GEMM 1 never splits K (at decode "
                    "each chosen expert streams W_up with one block per "
                    "column tile)");
  if (batchInvariant)
    notes.push_back("batch_invariant: every m runs the large-m tiles without "
                    "split-K (decode-sized m stream weights slower)");
  if (elementBytes == 4)
    notes.push_back("f32 runs exact FMA tiles on CUDA cores: tensor cores "
                    "take bf16/f16 (TF32 is not offered, it would round the "
                    "inputs to 10 bits)");
  // cp.async reads 16 bytes: every block's A columns must start aligned.
  int64_t width = groups > 1 ? dModel / groups : dModel;
  if ((width * elementBytes) % 16 != 0) {
    std::string what = groups > 1
                           ? "d_model / groups = " + std::to_string(width) +
                                 " columns per block are"
                           : "d_model = " + std::to_string(width) + " rows are";
    notes.push_back(what + " not a multiple of 16 bytes: an extra kernel "
                           "copies each input row to an aligned buffer first");
  }
  if (quantGroup && elementBytes == 2 && quantGroup % 16 == 0)
    notes.push_back(std::string("quantized weights multiply on mma.sync "
                                "tiles of at most 64x128, which ") +
                    (registerWiden
                         ? "widen each warp's B fragments to the dtype in "
                           "registers (widen = registers)"
                         : "convert each B tile to the dtype in shared "
                           "memory") +
                    " and sum each scale group apart (no wgmma, no 128x256 "
                    "tile: its accumulators would not fit twice)");
  if (quantGroup && elementBytes == 2 && quantGroup % 16 != 0)
    notes.push_back("quantization groups of " + std::to_string(quantGroup) +
                    " rows are not a multiple of the tensor cores' K step "
                    "(16): each weight s q is converted into two terms in "
                    "the dtype (hi + lo, exact) and multiplied twice, on "
                    "mma.sync tiles of at most 64x128 (twice the MMAs of a "
                    "group of 16, 32, ...)");
  if (chip == "sm_90")
    notes.push_back("sm_90 without its 'a' features has no wgmma: the "
                    "mma.sync kernels run, about 0.4x of cuBLAS for large m "
                    "on an H100; target nvptx-sm90a for Hopper's tensor-core "
                    "path");
  // Without a wgmma bucket (the cost model found mma.sync faster for every
  // bucket, or --strategy said so) nothing below applies. A mixture's
  // experts gather their A rows, which TMA's box copies cannot.
  if (chip == "sm_90a" && elementBytes == 2 && wgmmaFromM > 0 && moe)
    notes.push_back(std::string("sm_90a: the experts' wgmma tiles") +
                    (wgmmaFromM > 1
                         ? " (m >= " + std::to_string(wgmmaFromM) + ")"
                         : std::string()) +
                    " are fed by cp.async from all threads, not by TMA and "
                    "a producer warpgroup: their A rows are gathered from "
                    "the routing lists");
  return notes;
}

} // namespace mlir::ffn::gpu_target

#endif // FFN_TARGET_GPU_PATHNOTES_H
