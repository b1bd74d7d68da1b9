//===- MoeBaseline.h - a mixture of experts from cuBLASLt -------*- C++ -*-===//
//
// ffn-gpu-bench's baseline for a mixture of experts, what a framework does
// with a GEMM library: the routing of the run's rows (computed once on the
// host, outside the timing, where ffnc's kernel routes on the device inside
// it), each expert's rows gathered into one block, that expert's FFN as
// cuBLASLt GEMMs on its rows only (with the dense baseline's epilogues and
// act(g) * u kernel; every expert's GEMMs tuned on its own row count), and
// the slots weighed and summed back per row with the residual.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_GPU_BENCH_MOEBASELINE_H
#define FFN_GPU_BENCH_MOEBASELINE_H

#include "CublasLt.h"
#include "Device.h"

#include "ffn/kernel_abi.h"
#include "ffn_harness.h"

#include <memory>
#include <vector>

namespace gpu_bench {

class MoeBaseline {
public:
  /// `params`: the FFN's parameters as the baseline multiplies them (in the
  /// dtype; a quantized FFN's dequantized), uploaded once. `glu`: the
  /// act(g) * u kernel of separate g and u (gated FFNs); `plainUp`: GEMM
  /// 1's epilogue otherwise.
  MoeBaseline(const Device &d, const Lt &lt, CUmodule elementwise,
              const ffn_kernel_desc &desc,
              const std::vector<ffn_ref::Buffer> &params, CUfunction glu,
              LtEpilogue plainUp);

  /// Routes the first m rows of `x` (on the host), uploads the lists and
  /// weights, and tunes each expert's GEMMs on its rows; `xDev` holds x.
  void prepare(int64_t m, const ffn_ref::Buffer &x, const void *xDev);
  /// One run on the prepared rows into `y` (m rows of d_model).
  void run(const void *xDev, void *y, bool heuristicFirst) const;

  /// Experts that took rows in the prepared run (routed with rows, and
  /// every shared one), and the bytes of their weights.
  int64_t activeExperts() const { return active; }
  double activeWeightBytes() const;

private:
  struct Expert {
    int64_t index = 0, rows = 0, first = 0; ///< its block of gathered rows
    std::unique_ptr<LtGemm> up, gate, down;
  };
  const Device &d;
  const Lt &lt;
  const ffn_kernel_desc &desc;
  const std::vector<ffn_ref::Buffer> &params;
  cudaDataType type;
  int64_t eb, dm, dff, k, slots;
  bool gated;
  CUfunction gather = nullptr, combine = nullptr, glu = nullptr;
  LtEpilogue plainUp;
  // Parameters on the device (all experts stacked), by name.
  Buffer wUp, wGate, wDown, bUp, bGate, bDown;
  // The prepared run.
  int64_t m = 0, active = 0, total = 0; ///< total: gathered rows
  std::vector<Expert> experts;
  Buffer rows, pos, weights, xg, g, u, h, ys;

  Buffer upload(const void *host, size_t bytes) const;
  const ffn_ref::Buffer *find(const char *name) const;
  /// Expert e's slice of a stacked parameter of `perExpert` elements.
  const void *slice(const Buffer &b, int64_t e, int64_t perExpert) const;
  void launch(CUfunction f, int64_t threads, void **args) const;
  /// Gathers the prepared rows of x into xg.
  void gatherRows(const void *xDev) const;
  /// Expert `ex`'s first row in a buffer of gathered rows `width` wide.
  void *rowsAt(const Buffer &b, const Expert &ex, int64_t width) const;
};

} // namespace gpu_bench

#endif // FFN_GPU_BENCH_MOEBASELINE_H
