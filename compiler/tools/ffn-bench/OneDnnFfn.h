//===- OneDnnFfn.h - the same FFN built from oneDNN primitives ---*- C++
//-*-===//

#ifndef FFN_BENCH_ONEDNNFFN_H
#define FFN_BENCH_ONEDNNFFN_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ffn_bench {

/// An f32 or bf16 FFN as PyTorch runs it on CPU through oneDNN: one matmul
/// primitive per projection with the bias and activation as post-ops
/// (SwiGLU: swish on the gate matmul, a binary multiply post-op on the up
/// matmul). Weights are reordered once into the layout oneDNN picks. In
/// bf16 every tensor, the hidden activations included, is bf16 and the
/// matmuls accumulate in f32, as torch.bfloat16 eager runs.
class OneDnnFfn {
public:
  struct Config {
    int64_t dModel, dFF, m;
    bool gated;             ///< SwiGLU when true
    std::string activation; ///< "relu" or "gelu" (plain FFNs)
    bool bias;
    bool bf16 = false; ///< every tensor bf16 (else f32)
  };
  /// `weights`: w_up, [w_gate], w_down in [in, out] layout, then b_up,
  /// b_down when `bias`. Throws std::runtime_error on failure.
  OneDnnFfn(const Config &config, const std::vector<const void *> &weights);
  ~OneDnnFfn();

  /// y = FFN(x), x and y [m, d_model] of the config's type.
  void run(const void *x, void *y);

  /// One-line description of the primitives oneDNN chose.
  std::string implementation() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Threads oneDNN's OpenMP runtime may use.
void setOneDnnThreads(int threads);

} // namespace ffn_bench

#endif // FFN_BENCH_ONEDNNFFN_H
