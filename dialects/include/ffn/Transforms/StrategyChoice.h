//===- StrategyChoice.h - the CPU schedule heuristic ------------*- C++ -*-===//
//
// The choice ffn-select-strategy makes, as a plain function so `ffnc info`
// reports exactly what the compiler will pick.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TRANSFORMS_STRATEGYCHOICE_H
#define FFN_TRANSFORMS_STRATEGYCHOICE_H

#include <cstdint>

namespace mlir::ffn {

struct StrategyChoice {
  int64_t vectorBits, mr, nr, mc;
  bool prefetch;
};

/// Weights above this size cannot stay in any CPU's last-level cache from
/// one token to the next, so each run streams them from DRAM.
constexpr uint64_t kStreamedWeightBytes = 64ull << 20;

/// Fills the register file with accumulators (8 x 2 zmm of 32 with
/// AVX-512, 6 x 2 ymm of 16 with AVX2), leaving room for the weight vectors
/// and the broadcast; 256-row cache blocks (a packed weight panel stays in
/// L2 while the block's rows stream past it); prefetching of the next weight
/// panel when the weights (`weightBytes` in all) are streamed from DRAM
/// (measured: LLaMA-7B at M = 16 44.4 -> 39.4 ms; BERT-base, whose weights
/// stay in L3, 5-10% slower with it). Non-zero arguments override;
/// `prefetch` < 0 means choose.
inline StrategyChoice chooseStrategy(int64_t vectorBits, uint64_t weightBytes,
                                     int64_t mr = 0, int64_t nr = 0,
                                     int64_t mc = 0, int prefetch = -1) {
  int64_t lanes = vectorBits / 32;
  StrategyChoice c;
  c.vectorBits = vectorBits;
  c.nr = nr ? nr : 2 * lanes;
  c.mr = mr ? mr : (vectorBits == 512 ? 8 : 6);
  c.mc = mc ? mc : 256 / c.mr * c.mr;
  c.prefetch =
      prefetch >= 0 ? prefetch != 0 : weightBytes > kStreamedWeightBytes;
  return c;
}

} // namespace mlir::ffn

#endif // FFN_TRANSFORMS_STRATEGYCHOICE_H
