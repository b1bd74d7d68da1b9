//===- GroupedBench.h - grouped FFNs against dense equivalents --*- C++ -*-===//
//
// A grouped (block-diagonal) FFN (d, f, G) against its dense equivalent, the
// dense FFN (d, f / G) of the same family and dtype: both do the same FLOPs
// per token and the same row work (x in, y out, norm and residual over d),
// and without biases read the same weight bytes. Only the GEMM shapes
// differ (G blocks with K = d / G against one with K = d), so the time ratio
// is what the blocking costs. Grouped kernels have the two-pass schedule
// only, so the dense equivalent is timed twice: as the cost model schedules
// it (possibly fused), and two-pass (fused_max_m = 0). All three run
// interleaved.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_BENCH_GROUPEDBENCH_H
#define FFN_BENCH_GROUPEDBENCH_H

#include "ffnc/Analysis/MachineProfile.h"
#include "ffnc/Frontend/Spec.h"

#include "ffn/runtime.h"

#include <cmath>
#include <string>
#include <vector>

namespace ffn_bench {

struct GroupedBenchOptions {
  std::vector<int64_t> tokens; ///< the M of each row
  double seconds = 0.5;        ///< time budget per (row, implementation)
  bool quick = false;
};

/// The libraries: `chosen` holds the grouped FFN and its dense equivalent,
/// each as the cost model schedules it; `twoPass` the dense equivalent
/// with fused_max_m = 0.
struct GroupedLibraries {
  /// The cost model's strategies; the dense equivalents' two-pass ones; the
  /// grouped FFNs with each block as a work unit and with panels x blocks
  /// (`block_units`), so a row can time the split the model did not take.
  std::string chosen, twoPass, blockUnits, panelUnits;
};

/// The slowest grouped rows relative to their dense equivalents, across
/// every call of benchGrouped.
struct GroupedSummary {
  double minVsDense = INFINITY, minVsTwoPass = INFINITY;
  std::string whereDense, whereTwoPass;
  /// The chosen unit split against the other one (time ratio other /
  /// chosen): the smallest, and the rows measured.
  double minVsOtherUnits = INFINITY;
  std::string whereOtherUnits;
};

/// The dense FFN that grouped `spec` is measured against: groups 1, d_ff /
/// groups, named `<name>_dense_eq`, everything else `spec`'s. Derived here
/// rather than written in bench.ffn so that the two cannot drift apart.
ffnc::FfnSpec denseEquivalent(const ffnc::FfnSpec &spec);

/// Times grouped `spec`, its dense equivalent and that one's two-pass
/// schedule, interleaved, for each M on `threads` threads; prints one table
/// row each and folds the per-FLOP ratios into `summary`. Speed is only
/// reported. Returns the number of rows where the grouped kernel fails the
/// f64 reference check, or 1 if the comparison cannot be made (a kernel
/// does not load, or the FLOPs per token differ).
int benchGrouped(const ffnc::FfnSpec &spec, const GroupedLibraries &libraries,
                 ffn_context *ctx, unsigned threads,
                 const ffnc::MachineModel &model,
                 const GroupedBenchOptions &options, GroupedSummary &summary);

/// The summary lines: the smallest per-FLOP speed against the dense
/// equivalent and against its two-pass schedule, and where (nothing when
/// no row was timed).
void printGroupedSummary(const GroupedSummary &summary);

} // namespace ffn_bench

#endif // FFN_BENCH_GROUPEDBENCH_H
