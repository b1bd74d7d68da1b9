//===- Passes.h - ffn dialect conversions -----------------------*- C++ -*-===//

#ifndef FFN_CONVERSION_PASSES_H
#define FFN_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ffn {

#define GEN_PASS_DECL
#include "ffn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ffn/Conversion/Passes.h.inc"

} // namespace mlir::ffn

#endif // FFN_CONVERSION_PASSES_H
