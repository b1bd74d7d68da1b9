//===- GemmSignatures.h - the arguments of the outlined GEMMs ---*- C++ -*-===//
//
// Each GEMM of a packed kernel is one private function that both schedules
// call (`<kernel>.gemm_up`, `<kernel>.gemm_down`). Its arguments depend on
// the FFN (gate, biases, residual) and the layout (fused schedule, finishing
// in GEMM 2), so they are named here once: the caller fills a record, the
// function's body reads the same record back from its block arguments.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_CPU_LOWERPACKED_GEMMSIGNATURES_H
#define FFN_TARGET_CPU_LOWERPACKED_GEMMSIGNATURES_H

#include "Layout.h"

#include "mlir/IR/Value.h"

namespace mlir::ffn::cpu {

/// GEMM 1: c[:, col - colBase] = epilogue(a W_up[:, col]) for the columns
/// of up panels [p0, p1); the epilogue adds the biases and applies the
/// activation (times the gate's).
struct UpGemmArgs {
  Value a, c, colBase, m, p0, p1;
  // Integer dot products: a is the int8 input, these its per-group scales
  // (f32) and sums (i32), [m, groups] (null otherwise).
  Value aScales, aSums;
  Value wUp, wGate, bUp, bGate; // null where the FFN has none

  /// The call's operands, in the function's argument order.
  SmallVector<Value> operands() const;
  /// The record of the function's arguments `in`, for FFN `op`.
  static UpGemmArgs fromArguments(ValueRange in, FfnOp op, const Layout &l);
};

/// GEMM 2 over down panels [p0, p1); with a chunk-major W_down, over chunks
/// [q0, q1), a's column 0 being d_ff row aColBase. `mode` (index): 0 c = a
/// W_down, 1 c += a W_down, 2 y = T(a W_down + b_down [+ x]). One argument,
/// not two flags: a call site whose every flag is a constant gets its own
/// copy of the function from LLVM's function specialization.
struct DownGemmArgs {
  Value a, c, m, p0, p1;
  Value aScales, aSums;   // integer dot products only, as in UpGemmArgs
  Value q0, q1, aColBase; // the fused schedule only
  Value mode;             // the fused schedule or finishing in GEMM 2 only
  Value wDown;
  Value y, x,
      bDown; // finishing in GEMM 2 only; x, bDown where the FFN has them
  // A grouped FFN finishing in GEMM 2: y's (and x's) column of the block's
  // column 0.
  Value yColBase;
  // The sparse GEMM 2 (`gemm_down_sparse`; fused: one chunk, q1 = q0 + 1):
  // the chunk's listed rows (row 0 of a memref<?x?xi32>) and their count.
  Value kList, kCount;

  SmallVector<Value> operands() const;
  static DownGemmArgs fromArguments(ValueRange in, FfnOp op, const Layout &l,
                                    bool sparse = false);
};

} // namespace mlir::ffn::cpu

#endif // FFN_TARGET_CPU_LOWERPACKED_GEMMSIGNATURES_H
