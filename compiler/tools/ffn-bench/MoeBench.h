//===- MoeBench.h - a mixture of experts against oneDNN per expert -*- C++ -*-//
//
// ffnc's MoE kernel against the way eager frameworks run a mixture on CPU:
// route each token, gather each expert's tokens, run that expert's FFN
// (oneDNN matmuls, as OneDnnFfn) on them, scatter the weighted outputs
// back. Both from the same bf16 weights, interleaved in one process.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_BENCH_MOEBENCH_H
#define FFN_BENCH_MOEBENCH_H

#include "ffnc/Analysis/MachineProfile.h"
#include "ffnc/Frontend/Spec.h"

#include "ffn/runtime.h"

#include <string>
#include <vector>

namespace ffn_bench {

struct MoeBenchOptions {
  std::vector<int64_t> tokens; ///< the M of each row
  double seconds = 0.5;        ///< time budget per (M, implementation)
  bool quick = false;
};

/// Times `spec` (an MoE of SwiGLU experts without biases, bf16) from
/// `library` with ffnc's kernel and with oneDNN per expert, for each M, on
/// `threads` threads; prints one table row per M, and appends the decode
/// summary to `summary`. Returns the number of rows where the two outputs
/// disagree beyond bf16 rounding (a routing or expert mix-up).
int benchMoe(const ffnc::FfnSpec &spec, const std::string &library,
             ffn_context *ctx, unsigned threads, const ffnc::MachineModel &model,
             const MoeBenchOptions &options, std::vector<std::string> &summary);

} // namespace ffn_bench

#endif // FFN_BENCH_MOEBENCH_H
