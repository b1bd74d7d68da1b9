//===- PackFunctions.h - host functions packing weights for the GPU -*- C++ -*-===//

#ifndef FFN_TARGET_GPU_PACKFUNCTIONS_H
#define FFN_TARGET_GPU_PACKFUNCTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ffn::gpu_target {

/// func.func @name(%src: source, %dst: packed): a matrix [in, out] becomes
/// packed [out', in'] (transposed, zero-padded to packed's shape); a vector
/// is zero-padded.
func::FuncOp buildPackFunction(OpBuilder &builder, ModuleOp module,
                               StringRef name, MemRefType source,
                               MemRefType packed);

} // namespace mlir::ffn::gpu_target

#endif // FFN_TARGET_GPU_PACKFUNCTIONS_H
