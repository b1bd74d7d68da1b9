//===- SparseBench.h - activation sparsity at decode ------------*- C++ -*-===//
//
// A ReLU FFN at decode with its hidden activations mostly zero, as trained
// ReLU models have them: ffnc's kernel with the sparse GEMM 2
// (sparse_max_m), the same FFN with the cost model's dense schedule, and
// oneDNN, interleaved on the same weights. The share
// of nonzero activations is set through b_up.
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

/// Times the ReLU FFN `spec` from `library` (compiled with sparse_max_m)
/// and `denseLibrary` (the cost model's schedule) and with oneDNN, for
/// each M and nonzero share, on `threads` threads; prints one table row
/// each. Returns the number of rows whose sparse output is not bit-identical
/// to the dense one or fails the f64 reference check.
int benchSparse(const ffnc::FfnSpec &spec, const std::string &library,
                const std::string &denseLibrary, ffn_context *ctx,
                unsigned threads, const ffnc::MachineModel &model,
                const SparseBenchOptions &options);

} // namespace ffn_bench

#endif // FFN_BENCH_SPARSEBENCH_H
