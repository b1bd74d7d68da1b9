//===- HalideBuffers.h - halide_buffer_t and AOT calls in MLIR --*- C++ -*-===//
//
// What a kernel stub of ffn-halide-lower is made of: raw pointers from
// memrefs, halide_buffer_t / halide_dimension_t structs on the stack
// (HalideBufferLayout.h), and calls of the ahead-of-time compiled Halide
// pipelines, `int f(i32 scalars..., halide_buffer_t *...)`, each result
// checked. Index arithmetic stays in arith on `index`; what crosses into
// the LLVM dialect is i32 (Halide's coordinates), i64 and !llvm.ptr.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_LIB_TARGET_HALIDE_HALIDEBUFFERS_H
#define FFN_LIB_TARGET_HALIDE_HALIDEBUFFERS_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <type_traits>

namespace mlir::ffn::halide_target {

/// A coordinate of a buffer's dimension: an `index` value or a constant.
struct Coord {
  Coord(Value value) : value(value) {}
  // A template, so that a literal 0 is a constant, not a null Value.
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
  Coord(T constant) : constant(static_cast<int64_t>(constant)) {}
  Value value;
  int64_t constant = 0;
};

/// One halide_dimension_t, in elements, coordinates absolute: `min` is the
/// coordinate of the element the buffer's host pointer points at.
struct Dim {
  Coord min, extent, stride;
};

/// Builds the calls of one function (a kernel stub or a pack adapter). Its
/// insertion point is the caller's OpBuilder's; the stack slots of the
/// buffers go to the function's entry block, so a call in a loop reuses its
/// slots instead of growing the stack.
class HalideCalls {
public:
  HalideCalls(OpBuilder &b, Location loc, ModuleOp module, Block *entry);

  /// An i32 constant.
  Value i32(int64_t v);
  /// `c` as an i32 (Halide's coordinates and scalars are int32).
  Value toI32(Coord c);

  /// The aligned base pointer of `memref` (the buffers' memrefs have offset
  /// 0: the glue passes dense buffers).
  Value pointerOf(Value memref);
  /// `base` + `bytes`.
  Value offset(Value base, Coord bytes);

  /// A halide_buffer_t describing `host` with Halide type `typeWord`
  /// (halideTypeWord) and `dims` (innermost first); returns its address.
  Value buffer(Value host, uint32_t typeWord, ArrayRef<Dim> dims);

  /// Calls the pipeline `symbol` (declared as an external `i32 (args)` on
  /// first use) and aborts when it returns nonzero: Halide's error handler
  /// has already printed its message, and a kernel has no error result.
  void callChecked(StringRef symbol, ArrayRef<Value> args);
  /// Calls `symbol` (declared with `result` (args)) and ignores any result.
  void call(StringRef symbol, Type result, ArrayRef<Value> args);

  /// False after a symbol clash (a declaration the module already holds
  /// with another type); the error is emitted on the module.
  bool ok() const { return !failed; }

private:
  LLVM::LLVMFuncOp declare(StringRef name, Type result, ArrayRef<Type> args);
  /// An uninitialized stack slot of `bytes` (at the insertion point).
  Value slot(int64_t bytes, int64_t alignment);
  /// Stores `value` at `base` + `byteOffset`.
  void store(Value value, Value base, int64_t byteOffset);

  OpBuilder &b;
  Location loc;
  ModuleOp module;
  Type ptrType, i8Type, i32Type, i64Type;
  /// The entry block's constant 1 (the slots' count), their anchor.
  Value one;
  bool failed = false;
};

} // namespace mlir::ffn::halide_target

#endif // FFN_LIB_TARGET_HALIDE_HALIDEBUFFERS_H
