//===- CostModel.h - predicted time of an FFN on a machine ------*- C++ -*-===//
//
// A roofline model: a run takes the longer of computing every FLOP at a
// fraction of the FMA peak and moving every compulsory byte (weights once,
// input and output once) at the bandwidth of where the weights live: the
// last-level cache when they fit (at most 64 MiB, kept there from one run
// to the next), memory otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_ANALYSIS_COSTMODEL_H
#define FFNC_ANALYSIS_COSTMODEL_H

#include "ffnc/Frontend/Spec.h"

#include <cstdint>

namespace ffnc {

struct MachineModel {
  double peakGflops;        ///< FMA peak of the threads used
  double bandwidthGBs;      ///< memory read bandwidth of the threads used
  double cacheBandwidthGBs; ///< cache read bandwidth of the threads used
};

struct Prediction {
  double seconds = 0;
  bool memoryBound = false;
};

/// Compute-bound phases run at the schedule cost model's efficiency
/// (MachineAssumptions: 0.9 of peak, what ffn-bench measures for the packed
/// schedule).
Prediction predict(const FfnSpec &spec, uint64_t tokens,
                   const MachineModel &machine);

} // namespace ffnc

#endif // FFNC_ANALYSIS_COSTMODEL_H
