//===- Emitter.h - IR-building helpers of ffn-lower-packed ------*- C++ -*-===//
//
// The small vocabulary every part of the packed kernel is written in: index
// constants, loops, f32 <-> storage conversions, views of the workspace, and
// the loop annotation that keeps LLVM from unrolling register-tile loops.
// Holds the builder, the location and the element types; no layout.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_CPU_LOWERPACKED_EMITTER_H
#define FFN_TARGET_CPU_LOWERPACKED_EMITTER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::ffn::cpu {

class Emitter {
public:
  Emitter(OpBuilder &b, Location loc, Type storage, int64_t lanes)
      : b(b), loc(loc), f32(b.getF32Type()), storage(storage),
        vecF32(VectorType::get({lanes}, f32)),
        vecStorage(VectorType::get({lanes}, storage)) {}

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// An llvm.loop_annotation that disables unrolling and vectorization.
  Attribute noUnroll();
  Value toF32(Value v);
  Value toStorage(Value v);
  Value view(Value ws, Value rows, int64_t byteRowOffset, int64_t width,
             Type element = {}) {
    return view(ws, rows, idx(byteRowOffset), width, element);
  }
  /// The [rows, width] section of `element`s (default f32) that starts at
  /// byte rows * byteRowOffset.
  Value view(Value ws, Value rows, Value byteRowOffset, int64_t width,
             Type element = {});

  /// for (i = lb; i < ub; i += step) body(i)
  void loop(Value lb, Value ub, Value step, function_ref<void(Value)> body);
  /// sum over j < n of term(j), as a scalar f32.
  Value sumOver(int64_t n, function_ref<Value(Value)> term);
  /// if (phase == index) body()
  void inPhase(Value phase, int64_t index, function_ref<void()> body);
  /// An rows x nr f32 accumulator buffer on the stack, 64-byte aligned.
  Value stackBuffer(int64_t rows, int64_t nr);
  /// An LLVM intrinsic the vector dialect has no op for, as a private
  /// function declaration of its name: LLVM knows it by name (and its
  /// attributes: no memory access), and a func.call, unlike
  /// llvm.call_intrinsic, has the call semantics that buffer deallocation
  /// understands.
  func::FuncOp intrinsic(StringRef name, FunctionType type);
  /// `v` as memref<?x?xT>, the one type the GEMM functions take for
  /// every A and C section of element type T.

  Value dynamic(Value v);

protected:
  OpBuilder &b;
  Location loc;
  Type f32, storage;
  VectorType vecF32, vecStorage;
};

} // namespace mlir::ffn::cpu

#endif // FFN_TARGET_CPU_LOWERPACKED_EMITTER_H
