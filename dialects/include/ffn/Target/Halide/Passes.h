//===- Passes.h - ffn passes for the Halide back end ------------*- C++ -*-===//

#ifndef FFN_TARGET_HALIDE_PASSES_H
#define FFN_TARGET_HALIDE_PASSES_H

#include "ffn/IR/FfnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ffn {

#define GEN_PASS_DECL
#include "ffn/Target/Halide/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ffn/Target/Halide/Passes.h.inc"

} // namespace mlir::ffn

#endif // FFN_TARGET_HALIDE_PASSES_H
