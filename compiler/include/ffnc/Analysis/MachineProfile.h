//===- MachineProfile.h - what the cost models know of a machine -*- C++
//-*-===//
//
// One description of the machine for both cost models (the schedule choice
// in ffn-select-strategy and the roofline of `ffnc info` / ffn-bench):
// nominal, measured on this machine (`ffnc probe`, `info --measure`,
// ffn-bench), or read back from a profile file that `ffnc probe -o` wrote
// (`--machine=FILE`), so kernels cross-compiled for a machine can still be
// tuned with its numbers.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_ANALYSIS_MACHINEPROFILE_H
#define FFNC_ANALYSIS_MACHINEPROFILE_H

#include "ffnc/Analysis/CostModel.h"

#include "ffn/Target/CPU/CostModel.h"

#include "llvm/Support/Error.h"

#include <string>

namespace ffnc {

/// Numbers for one thread and for all `cores` threads at once.
struct MachineProfile {
  unsigned cores = 1;
  double peak1 = 0, peakAll = 0;   ///< f32 FMA peak, GFLOP/s
  double dram1 = 0, dramAll = 0;   ///< read bandwidth from memory, GB/s
  double cache1 = 0, cacheAll = 0; ///< read bandwidth from cache, GB/s
  /// One phase hand-off of the runtime's thread pool with all cores
  /// (its workers spinning, as they are between the phases of a run).
  double syncMicros = 0;
  /// "nominal", "measured", or "profile FILE" (read from FILE).
  std::string source;

  /// The roofline numbers for a kernel running on `threads` threads.
  MachineModel roofline(unsigned threads) const;
  /// The schedule cost model's view for `threads` threads.
  mlir::ffn::MachineAssumptions assumptions(unsigned threads) const;
};

/// The schedule cost model's defaults (ffn/Target/CPU/CostModel.h) on `cores` cores.
MachineProfile nominalMachine(unsigned cores);

/// Measures this machine (a few seconds): every core, and one.
MachineProfile measureMachine(bool avx512);

/// The profile file: `key = value` lines, `#` comments.
std::string printMachineProfile(const MachineProfile &profile,
                                llvm::StringRef description);

/// Reads a profile file; errors name the file and line.
llvm::Expected<MachineProfile> readMachineProfile(llvm::StringRef path);

} // namespace ffnc

#endif // FFNC_ANALYSIS_MACHINEPROFILE_H
