//===- FfnAttrs.h - ffn dialect attributes ----------------------*- C++ -*-===//
#ifndef FFN_IR_FFNATTRS_H
#define FFN_IR_FFNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "ffn/Target/CPU/CostModel.h"
#include "ffn/Target/GPU/CostModel.h"

#include "llvm/ADT/Hashing.h"

#include "ffn/IR/FfnEnums.h.inc"

namespace mlir::ffn {
/// #ffn.cpu_strategy's storage hashes its record.
inline llvm::hash_code hash_value(const CpuStrategy &s) {
  return llvm::hash_combine(s.vectorBits, s.mr, s.nr, s.mc, s.prefetch,
                            s.fusedMaxM, s.chunk, s.groups);
}
/// #ffn.gpu_strategy's storage hashes its record (equal records hash
/// equal; the buckets' count and first bucket separate the rest well).
inline llvm::hash_code hash_value(const GpuStrategy &s) {
  const GpuBucket &b = s.buckets[0];
  return llvm::hash_combine(
      s.sms, s.numBuckets, s.numBounds, s.blockM, s.blockN, s.stages, s.splitK,
      s.mma ? int(*s.mma) : -1, b.maxM, b.blockM, b.splitUp, b.splitDown);
}
} // namespace mlir::ffn

#include "ffn/IR/FfnAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ffn/IR/FfnAttrs.h.inc"

#endif // FFN_IR_FFNATTRS_H
