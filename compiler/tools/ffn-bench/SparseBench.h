//===- SparseBench.h - activation sparsity at decode ------------*- C++ -*-===//
//
// A ReLU FFN at decode with its hidden activations mostly zero, as trained
// ReLU models have them: ffnc's kernel as the cost model schedules it from
// the spec's activation_sparsity, the same FFN with the dense GEMM 2
// (sparse_max_m = 0) and with the sparse one at every M (sparse_max_m = 8),
// and oneDNN, interleaved on the same weights. The share of nonzero
// activations is set through b_up.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_BENCH_SPARSEBENCH_H
#define FFN_BENCH_SPARSEBENCH_H

#include "ffnc/Analysis/MachineProfile.h"
#include "ffnc/Frontend/Spec.h"

#include "ffn/runtime.h"

#include <string>
#include <vector>

namespace ffn_bench {

struct SparseBenchOptions {
  std::vector<int64_t> tokens; ///< the M of each row
  std::vector<double> nonzero; ///< target shares of nonzero activations
  double seconds = 0.5;        ///< time budget per (row, implementation)
  bool quick = false;
};

/// The libraries holding the FFN: as the cost model schedules it, with
/// sparse_max_m = 0, and with sparse_max_m = 8.
struct SparseLibraries {
  std::string chosen, dense, always;
};

/// Times the ReLU FFN `spec` from each library and with oneDNN, for each M
/// and nonzero share, on `threads` threads; prints one table row each.
/// Returns the number of rows whose outputs are not bit-identical across
/// the three kernels or fail the f64 reference check.
int benchSparse(const ffnc::FfnSpec &spec, const SparseLibraries &libraries,
                ffn_context *ctx, unsigned threads,
                const ffnc::MachineModel &model,
                const SparseBenchOptions &options);

} // namespace ffn_bench

#endif // FFN_BENCH_SPARSEBENCH_H
