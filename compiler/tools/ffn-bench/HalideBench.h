//===- HalideBench.h - ffnc against its Halide back end ---------*- C++ -*-===//
//
// The dense, unquantized bench FFNs compiled twice more by the Halide back
// end (--backend=halide, docs/halide.md): once with the schedule derived
// from the cost model's strategy, and once per distinct M with one of
// Halide's autoschedulers, which takes that M as its estimate. The three
// kernels have the same ABI, so they load, take parameters and run
// through the same runtime calls; they run interleaved on the same
// parameters and input, as the oneDNN rows do. A build without the Halide
// back end prints one line saying so instead of the table.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_BENCH_HALIDEBENCH_H
#define FFN_BENCH_HALIDEBENCH_H

#include "ffnc/CodeGen/Pipeline.h"
#include "ffnc/CodeGen/Target.h"
#include "ffnc/Frontend/Spec.h"

#include "ffn/runtime.h"

#include "llvm/Support/SourceMgr.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ffn_bench {

struct HalideBenchOptions {
  /// The autoscheduler of the Halide-auto column: "mullapudi2016",
  /// "li2018", "adams2019", or "none" (no such column).
  std::string autoscheduler = "mullapudi2016";
  double seconds = 0.5; ///< time budget per (row, implementation)
  bool quick = false;
};

/// One table row per thread count: FFN `name` at M = `m`.
struct HalideRow {
  std::string name;
  int64_t m;
};

/// Compiles `specs` into library `name` of the bench's directory, tuned for
/// `threads`, with `tweak` applied to the schedule the bench would use
/// otherwise; returns its path, or an empty string on failure (said on
/// stderr).
using CompileLibrary = std::function<std::string(
    const std::vector<ffnc::FfnSpec> &specs, unsigned threads,
    const std::function<void(ffnc::ScheduleOptions &)> &tweak,
    const std::string &name)>;

/// Prints the Halide section: the back end's version (or the line saying
/// it is not built, and nothing more), the rows' FFNs the Halide back end
/// refuses (checkSpecsFit's reason, once each), then per thread count (the
/// keys of `ffncLibraries`, each mapped to the ffnc library tuned for it)
/// builds halide<thr>.so and halide-auto<thr>-m<M>.so with `compile`, and
/// times each row's ffnc, Halide and Halide-auto kernels interleaved; then
/// the table, the geometric-mean summaries and the autoscheduler used.
/// Appends every library it built to `built` (the caller removes them).
/// Returns the number of rows where a Halide kernel fails the f64 reference
/// check, plus one per library that fails to build or row whose kernels
/// cannot be loaded.
int benchHalide(const std::vector<ffnc::FfnSpec> &specs,
                const std::vector<HalideRow> &rows,
                const ffnc::TargetInfo &target, llvm::SourceMgr &sm,
                const std::map<unsigned, std::string> &ffncLibraries,
                const CompileLibrary &compile, ffn_context *ctx,
                const HalideBenchOptions &options,
                std::vector<std::string> &built);

} // namespace ffn_bench

#endif // FFN_BENCH_HALIDEBENCH_H
