//===- GpuInfo.cpp - `ffnc info` for an NVIDIA target ---------------------===//
//
// The CPU's report prices schedules on the CPU's machine; for an NVIDIA
// target the figures are the GPU cost model's, from the same library the
// selection pass asks, so what info says is what the compiler builds.
//
//===----------------------------------------------------------------------===//

#include "GpuInfo.h"

#include <fmt/format.h>

using namespace ffnc;
using namespace mlir::ffn;

GpuFfnShape ffnc::gpuShapeOf(const FfnSpec &spec) {
  GpuFfnShape shape;
  shape.dModel = spec.dModel;
  shape.dFf = spec.dFF;
  shape.elementBytes = spec.dtype == DType::F32 ? 4 : 2;
  shape.f16 = spec.dtype == DType::F16;
  shape.gated = spec.gate != Gate::None;
  shape.batchInvariant = spec.batchInvariant;
  shape.groups = spec.isGrouped() ? spec.groups : 1;
  if (spec.weightQuant != WeightQuant::None) {
    shape.weightBits = spec.weightQuant == WeightQuant::Int8 ? 8 : 4;
    shape.quantGroup = spec.quantGroup;
    shape.zeroPoints = spec.zeroPoints;
  }
  if (spec.isMoe()) {
    shape.experts = spec.experts;
    shape.topK = spec.topK;
    shape.sharedExperts = spec.sharedExperts;
  }
  return shape;
}

std::string ffnc::renderGpuSchedule(const FfnSpec &spec, llvm::StringRef target,
                                    llvm::StringRef chip,
                                    const GpuStrategy &overrides,
                                    llvm::ArrayRef<uint64_t> tokenCounts) {
  // (Specs without NVIDIA kernels -- int8 activations -- were refused
  // before: checkSpecsFit.)
  std::string out;
  GpuFfnShape shape = gpuShapeOf(spec);
  GpuSelection chosen = selectGpuStrategy(shape, chip.str(), overrides);
  if (chosen.error)
    return fmt::format("  {:<22}{}: --strategy {} {}\n\n", "schedule",
                       target.str(), chosen.error->key, chosen.error->message);
  const GpuStrategy &s = chosen.strategy;
  // The device the strategy was chosen for (its sms: --strategy=sms=N).
  GpuDevice nominal = *nominalGpuDevice(chip.str());
  GpuDevice device = resizedGpuDevice(nominal, *s.sms);
  out += fmt::format("  {:<22}{}: {}\n", "schedule", target.str(),
                     describeGpuStrategy(s, chip.str()));
  if (spec.norm != ffnc::NormKind::None &&
      spec.normPosition == ffnc::NormPosition::Post)
    out += fmt::format("  {:<22}{}\n", "post-norm",
                       describeGpuPostNorm(s, spec.dModel, spec.isMoe()));
  out += fmt::format(
      "  {:<22}{}{}: {} SMs, {:.0f} TFLOP/s bf16/f16 (mma.sync {:.0f}), "
      "{:.1f} f32, {:.0f} GB/s HBM\n",
      "device", device.name, device.sms != nominal.sms ? ", resized" : "",
      device.sms, device.tensorTflops,
      device.tensorTflops * device.mmaSyncShare, device.fmaTflops,
      device.hbmGBs);
  GpuPackedDims dims = gpuPackedDims(shape);
  // The weights are packed to whole tiles (a grouped FFN's per block), and
  // the tiles multiply the zero padding too: small widths pay for it.
  int64_t blockD = shape.dModel / dims.groups, blockF = shape.dFf / dims.groups;
  int64_t up = shape.gated ? 2 : 1;
  double useful = double(blockD) * blockF * (up + 1);
  double padded =
      double(dims.kUp) * dims.hidden * up + double(dims.hidden) * dims.nDown;
  out += fmt::format("  {:<22}{:.1f}% of the GEMMs' multiply-adds are on zero "
                     "padding (packed{}: K {}, d_ff {}, N {})\n",
                     "padding", 100 * (1 - useful / padded),
                     dims.groups > 1 ? " per block" : "", dims.kUp, dims.hidden,
                     dims.nDown);
  out += "  predicted time of the two GEMMs and their launches (the GPU cost "
         "model; row kernels not counted):\n";
  for (uint64_t m : tokenCounts) {
    int64_t from = 1;
    const GpuBucket *bucket = &s.buckets[s.numBuckets - 1];
    for (int i = 0; i < s.numBuckets; ++i) {
      if (s.buckets[i].maxM == 0 || int64_t(m) <= s.buckets[i].maxM) {
        bucket = &s.buckets[i];
        break;
      }
      from = s.buckets[i].maxM + 1;
    }
    int64_t rows = static_cast<int64_t>(m);
    double us = gpuFfnGemmMicros(device, *bucket, shape, rows);
    std::string range = bucket->maxM
                            ? fmt::format("m {}-{}", from, bucket->maxM)
                            : fmt::format("m >= {}", from);
    out += fmt::format(
        "    M = {:<6} {:>10.3f} ms  bucket {}: {}x{} {}{}\n", m, us * 1e-3,
        range, bucket->blockM, bucket->blockN, gpuMmaName(bucket->mma),
        bucket->splitUp > 1 || bucket->splitDown > 1
            ? fmt::format(", split-K {}/{}", bucket->splitUp, bucket->splitDown)
            : std::string());
  }
  out += "\n";
  return out;
}
