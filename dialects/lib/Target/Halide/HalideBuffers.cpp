//===- HalideBuffers.cpp - halide_buffer_t and AOT calls in MLIR ----------===//

#include "HalideBuffers.h"

#include "ffn/Target/Halide/HalideBufferLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::ffn::halide_target;

namespace layout = ffnc::halide;

HalideCalls::HalideCalls(OpBuilder &b, Location loc, ModuleOp module,
                         Block *entry)
    : b(b), loc(loc), module(module) {
  MLIRContext *ctx = b.getContext();
  ptrType = LLVM::LLVMPointerType::get(ctx);
  i8Type = b.getI8Type();
  i32Type = b.getI32Type();
  i64Type = b.getI64Type();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  one = LLVM::ConstantOp::create(b, loc, i64Type, b.getI64IntegerAttr(1));
}

Value HalideCalls::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, i32Type, v);
}

Value HalideCalls::toI32(Coord c) {
  if (!c.value)
    return i32(c.constant);
  if (c.value.getType() == i32Type)
    return c.value;
  return arith::IndexCastOp::create(b, loc, i32Type, c.value);
}

Value HalideCalls::pointerOf(Value memref) {
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  // The data layout's index is i64 (x86-64).
  Value word = arith::IndexCastOp::create(b, loc, i64Type, address);
  return LLVM::IntToPtrOp::create(b, loc, ptrType, ValueRange{word});
}

Value HalideCalls::offset(Value base, Coord bytes) {
  if (!bytes.value && bytes.constant == 0)
    return base;
  Value word =
      bytes.value
          ? Value(arith::IndexCastOp::create(b, loc, i64Type, bytes.value))
          : Value(
                arith::ConstantIntOp::create(b, loc, i64Type, bytes.constant));
  return LLVM::GEPOp::create(b, loc, ptrType, i8Type, base,
                             ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(word)});
}

Value HalideCalls::slot(int64_t bytes, int64_t alignment) {
  auto type = LLVM::LLVMArrayType::get(i8Type, bytes);
  return LLVM::AllocaOp::create(b, loc, ptrType, type, one,
                                static_cast<unsigned>(alignment));
}

void HalideCalls::store(Value value, Value base, int64_t byteOffset) {
  Value address = base;
  if (byteOffset != 0)
    address = LLVM::GEPOp::create(
        b, loc, ptrType, i8Type, base,
        ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(static_cast<int32_t>(byteOffset))},
        LLVM::GEPNoWrapFlags::inbounds);
  LLVM::StoreOp::create(b, loc, value, address);
}

Value HalideCalls::buffer(Value host, uint32_t typeWord, ArrayRef<Dim> dims) {
  auto dimOffset = [](size_t i, int64_t field) {
    return layout::kDimensionBytes * static_cast<int64_t>(i) + field;
  };
  Value buf, dimArray;
  {
    // The slots, and every field that is the same at each call, once in the
    // entry block (right after its constant 1: before every other op, so
    // they are static allocas wherever the call is): a call in a loop then
    // stores only its host pointer and its crop.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(one.getDefiningOp());
    buf = slot(layout::kBufferBytes, layout::kBufferAlignment);
    dimArray = slot(layout::kDimensionBytes * static_cast<int64_t>(dims.size()),
                    layout::kBufferAlignment);
    Value zero64 = arith::ConstantIntOp::create(b, loc, i64Type, 0);
    Value null = LLVM::ZeroOp::create(b, loc, ptrType);
    store(zero64, buf, layout::kBufferDevice);
    store(null, buf, layout::kBufferDeviceInterface);
    store(zero64, buf, layout::kBufferFlags);
    store(i32(static_cast<int64_t>(typeWord)), buf, layout::kBufferType);
    store(i32(static_cast<int64_t>(dims.size())), buf,
          layout::kBufferDimensions);
    store(dimArray, buf, layout::kBufferDim);
    store(null, buf, layout::kBufferPadding);
    for (auto [i, d] : llvm::enumerate(dims)) {
      for (auto [c, field] : {std::pair{d.min, layout::kDimensionMin},
                              std::pair{d.extent, layout::kDimensionExtent},
                              std::pair{d.stride, layout::kDimensionStride}})
        if (!c.value)
          store(i32(c.constant), dimArray, dimOffset(i, field));
      store(i32(0), dimArray, dimOffset(i, layout::kDimensionFlags));
    }
  }
  store(host, buf, layout::kBufferHost);
  for (auto [i, d] : llvm::enumerate(dims))
    for (auto [c, field] : {std::pair{d.min, layout::kDimensionMin},
                            std::pair{d.extent, layout::kDimensionExtent},
                            std::pair{d.stride, layout::kDimensionStride}})
      if (c.value)
        store(toI32(c), dimArray, dimOffset(i, field));
  return buf;
}

LLVM::LLVMFuncOp HalideCalls::declare(StringRef name, Type result,
                                      ArrayRef<Type> args) {
  auto type = LLVM::LLVMFunctionType::get(result, args);
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, name)) {
    auto fn = dyn_cast<LLVM::LLVMFuncOp>(existing);
    if (fn && fn.getFunctionType() == type)
      return fn;
    if (!failed)
      module.emitError() << "ffn-halide-lower: the module already defines '"
                         << name << "', which the kernels call as " << type;
    failed = true;
    return nullptr;
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  return LLVM::LLVMFuncOp::create(b, loc, name, type);
}

void HalideCalls::call(StringRef symbol, Type result, ArrayRef<Value> args) {
  SmallVector<Type> types;
  for (Value v : args)
    types.push_back(v.getType());
  if (LLVM::LLVMFuncOp fn = declare(symbol, result, types))
    LLVM::CallOp::create(b, loc, fn, args);
}

void HalideCalls::callChecked(StringRef symbol, ArrayRef<Value> args) {
  SmallVector<Type> types;
  for (Value v : args)
    types.push_back(v.getType());
  LLVM::LLVMFuncOp fn = declare(symbol, i32Type, types);
  if (!fn)
    return;
  Value rc = LLVM::CallOp::create(b, loc, fn, args).getResult();
  Value bad =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rc, i32(0));
  auto ifBad = scf::IfOp::create(b, loc, bad, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifBad.thenBlock());
  call("abort", LLVM::LLVMVoidType::get(b.getContext()), {});
}
