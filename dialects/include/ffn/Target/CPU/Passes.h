//===- Passes.h - ffn passes for x86 CPUs -----------------------*- C++ -*-===//

#ifndef FFN_TARGET_CPU_PASSES_H
#define FFN_TARGET_CPU_PASSES_H

#include "ffn/IR/FfnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ffn {

/// Marks the k-step contraction of a register tile that ffn-lower-packed
/// emits and ffn-vectorize-register-tiles vectorizes.
inline constexpr llvm::StringLiteral kRegisterTileAttr = "ffn.register_tile";

#define GEN_PASS_DECL
#include "ffn/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ffn/Target/CPU/Passes.h.inc"

} // namespace mlir::ffn

#endif // FFN_TARGET_CPU_PASSES_H
