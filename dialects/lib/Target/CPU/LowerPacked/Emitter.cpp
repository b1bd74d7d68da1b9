//===- Emitter.cpp - IR-building helpers of ffn-lower-packed --------------===//

#include "Emitter.h"

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::ffn::cpu;

Attribute Emitter::noUnroll() {
  MLIRContext *ctx = b.getContext();
  return LLVM::LoopAnnotationAttr::get(
      ctx, /*disableNonforced=*/nullptr,
      LLVM::LoopVectorizeAttr::get(ctx, /*disable=*/b.getBoolAttr(true),
                                   /*predicateEnable=*/nullptr,
                                   /*scalableEnable=*/nullptr,
                                   /*width=*/nullptr,
                                   /*followupVectorized=*/nullptr,
                                   /*followupEpilogue=*/nullptr,
                                   /*followupAll=*/nullptr),
      /*interleave=*/nullptr,
      LLVM::LoopUnrollAttr::get(ctx, /*disable=*/b.getBoolAttr(true),
                                /*count=*/nullptr,
                                /*runtimeDisable=*/nullptr,
                                /*full=*/nullptr,
                                /*followupUnrolled=*/nullptr,
                                /*followupRemainder=*/nullptr,
                                /*followupAll=*/nullptr),
      /*unrollAndJam=*/nullptr, /*licm=*/nullptr, /*distribute=*/nullptr,
      /*pipeline=*/nullptr, /*peeled=*/nullptr, /*unswitch=*/nullptr,
      /*mustProgress=*/nullptr, /*isVectorized=*/nullptr,
      /*startLoc=*/nullptr, /*endLoc=*/nullptr, /*parallelAccesses=*/{});
}

Value Emitter::toF32(Value v) {
  Type t = v.getType();
  Type target = isa<VectorType>(t) ? Type(vecF32) : f32;
  if (getElementTypeOrSelf(t).isF32())
    return v;
  return arith::ExtFOp::create(b, loc, target, v);
}

Value Emitter::toStorage(Value v) {
  if (storage.isF32())
    return v;
  return arith::TruncFOp::create(b, loc, storage, v);
}

Value Emitter::view(Value ws, Value rows, Value byteRowOffset, int64_t width,
                    Type element) {
  Value shift = arith::MulIOp::create(b, loc, rows, byteRowOffset);
  auto type =
      MemRefType::get({ShapedType::kDynamic, width}, element ? element : f32);

  return memref::ViewOp::create(b, loc, type, ws, shift, ValueRange{rows});
}

void Emitter::loop(Value lb, Value ub, Value step,
                   function_ref<void(Value)> body) {
  auto forOp = scf::ForOp::create(b, loc, lb, ub, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forOp.getBody());
  body(forOp.getInductionVar());
}

Value Emitter::sumOver(int64_t n, function_ref<Value(Value)> term) {
  Value zero = f32Constant(b, loc, f32, 0.0);
  auto forOp =
      scf::ForOp::create(b, loc, idx(0), idx(n), idx(1), ValueRange{zero});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forOp.getBody());
  Value t = term(forOp.getInductionVar());
  scf::YieldOp::create(
      b, loc,
      ValueRange{arith::AddFOp::create(b, loc, forOp.getRegionIterArg(0), t)});
  return forOp.getResult(0);
}

void Emitter::inPhase(Value phase, int64_t index, function_ref<void()> body) {
  Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, phase,
                                   idx(index));
  auto ifOp = scf::IfOp::create(b, loc, is, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

Value Emitter::stackBuffer(int64_t rows, int64_t nr) {
  return memref::AllocaOp::create(b, loc, MemRefType::get({rows, nr}, f32),
                                  ValueRange{}, b.getI64IntegerAttr(64));
}

Value Emitter::dynamic(Value v) {
  auto type =
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                      cast<MemRefType>(v.getType()).getElementType());

  return memref::CastOp::create(b, loc, type, v);
}

func::FuncOp Emitter::intrinsic(StringRef name, FunctionType type) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto decl = func::FuncOp::create(b, loc, name, type);
  decl.setPrivate();
  return decl;
}
