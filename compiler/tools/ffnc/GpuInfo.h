//===- GpuInfo.h - `ffnc info` for an NVIDIA target -------------*- C++ -*-===//

#ifndef FFNC_TOOLS_GPUINFO_H
#define FFNC_TOOLS_GPUINFO_H

#include "ffnc/Frontend/Spec.h"

#include "ffn/Target/GPU/CostModel.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace ffnc {

/// A spec as the GPU cost model sees it (what ffn-gpu-select-strategy reads
/// from the op the spec becomes).
mlir::ffn::GpuFfnShape gpuShapeOf(const FfnSpec &spec);

/// The lines `info --target=nvptx-*` adds to a spec's report: the strategy
/// the GPU cost model picks (as ffn-gpu-select-strategy does, with the same
/// overrides), the device it prices for, and per token count the bucket
/// that runs it and the model's time for its two GEMMs.
std::string renderGpuSchedule(const FfnSpec &spec, llvm::StringRef target,
                              llvm::StringRef chip,
                              const mlir::ffn::GpuStrategy &overrides,
                              llvm::ArrayRef<uint64_t> tokenCounts);

} // namespace ffnc

#endif // FFNC_TOOLS_GPUINFO_H
