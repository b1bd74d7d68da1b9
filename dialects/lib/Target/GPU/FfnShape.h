//===- FfnShape.h - an ffn.ffn as the GPU cost model sees it ----*- C++ -*-===//
//
// One reading of the op for the selection pass, the lowering's check of
// the strategy and its packed dimensions, so that they cannot disagree.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_GPU_FFNSHAPE_H
#define FFN_TARGET_GPU_FFNSHAPE_H

#include "ffn/IR/FfnOps.h"
#include "ffn/Target/GPU/CostModel.h"

namespace mlir::ffn::gpu_target {

inline GpuFfnShape gpuShapeOf(FfnOp op) {
  GpuFfnShape shape;
  shape.dModel = op.getDModel();
  shape.dFf = op.getDFf();
  shape.elementBytes = op.getStorageType().getIntOrFloatBitWidth() / 8;
  shape.f16 = op.getStorageType().isF16();
  shape.gated = op.getGated();
  shape.batchInvariant = op.getBatchInvariant();
  shape.groups = static_cast<int64_t>(op.getGroups().value_or(1));
  if (auto quant = op.getWeightQuant()) {
    shape.weightBits = quant->getKind() == WeightQuantKind::int8 ? 8 : 4;
    shape.quantGroup = quant->getGroup();
    shape.zeroPoints = quant->getZeroPoints();
  }
  if (auto moe = op.getMoe()) {
    shape.experts = moe->getExperts();
    shape.topK = moe->getTopK();
    shape.sharedExperts = moe->getShared();
  }
  return shape;
}

} // namespace mlir::ffn::gpu_target

#endif // FFN_TARGET_GPU_FFNSHAPE_H
