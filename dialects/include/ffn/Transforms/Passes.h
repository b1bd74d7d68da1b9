//===- Passes.h - target-neutral ffn passes ---------------------*- C++ -*-===//

#ifndef FFN_TRANSFORMS_PASSES_H
#define FFN_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "ffn/IR/FfnDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ffn {

#define GEN_PASS_DECL
#include "ffn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ffn/Transforms/Passes.h.inc"

} // namespace mlir::ffn

#endif // FFN_TRANSFORMS_PASSES_H
