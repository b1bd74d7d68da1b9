//===- CostModel.cpp - predicted time of an FFN on a machine --------------===//

#include "ffnc/Analysis/CostModel.h"

#include "ffnc/Analysis/FfnInfo.h"

#include "ffn/Target/CPU/CostModel.h"

#include <algorithm>

using namespace ffnc;

Prediction ffnc::predict(const FfnSpec &spec, uint64_t tokens,
                         const MachineModel &machine) {
  double efficiency = mlir::ffn::MachineAssumptions().efficiency;
  double flops = static_cast<double>(flopsPerToken(spec)) * tokens;
  // A mixture of experts reads only the experts its tokens can choose.
  uint64_t weights = weightBytesRead(spec, tokens);
  double bytes = static_cast<double>(weights) +
                 2.0 * tokens * spec.dModel * byteWidth(spec.dtype);
  double compute = flops / (efficiency * machine.peakGflops * 1e9);
  bool streamed = weights > mlir::ffn::kStreamedWeightBytes;
  double memory =
      bytes /
      ((streamed ? machine.bandwidthGBs : machine.cacheBandwidthGBs) * 1e9);
  Prediction p;
  p.seconds = std::max(compute, memory);
  p.memoryBound = memory >= compute;
  return p;
}
