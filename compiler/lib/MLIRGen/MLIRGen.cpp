//===- MLIRGen.cpp - from resolved specs to the ffn dialect ---------------===//

#include "ffnc/MLIRGen/MLIRGen.h"

#include "ffn/IR/FfnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace ffnc;
using namespace mlir;

void ffnc::loadDialects(MLIRContext &context) {
  context.loadDialect<ffn::FfnDialect, func::FuncDialect>();
}

static Type elementType(MLIRContext &ctx, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return Float32Type::get(&ctx);
  case DType::BF16:
    return BFloat16Type::get(&ctx);
  case DType::F16:
    return Float16Type::get(&ctx);
  }
  return {};
}

static ffn::Activation toDialect(Activation a) {
  switch (a) {
  case Activation::Relu:
    return ffn::Activation::relu;
  case Activation::Gelu:
    return ffn::Activation::gelu;
  case Activation::GeluTanh:
    return ffn::Activation::gelu_tanh;
  case Activation::Silu:
    return ffn::Activation::silu;
  case Activation::Sigmoid:
    return ffn::Activation::sigmoid;
  case Activation::Identity:
    return ffn::Activation::identity;
  }
  return ffn::Activation::identity;
}

static Location locationOf(MLIRContext &ctx, const llvm::SourceMgr &sm,
                           llvm::SMLoc loc) {
  unsigned id = sm.FindBufferContainingLoc(loc);
  if (id == 0)
    return UnknownLoc::get(&ctx);
  auto [line, col] = sm.getLineAndColumn(loc, id);
  return FileLineColLoc::get(
      &ctx, sm.getMemoryBuffer(id)->getBufferIdentifier(), line, col);
}

namespace {
/// Collects the function signature while the op's operands are assigned, so
/// the argument order is written down exactly once.
struct Signature {
  SmallVector<Type> types;
  SmallVector<StringRef> names;
  unsigned add(Type type, StringRef name) {
    types.push_back(type);
    names.push_back(name);
    return types.size() - 1;
  }
};
} // namespace

static func::FuncOp buildFunction(OpBuilder &builder, const FfnSpec &spec,
                                  const llvm::SourceMgr &sm) {
  MLIRContext &ctx = *builder.getContext();
  Location loc = locationOf(ctx, sm, spec.loc);
  Type elt = elementType(ctx, spec.dtype);
  int64_t d = spec.dModel, f = spec.dFF;
  auto tensor = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elt);
  };

  Signature sig;
  auto ioType = tensor({ShapedType::kDynamic, d});
  int input = sig.add(ioType, "input");
  int wUp = sig.add(tensor({d, f}), "w_up");
  int wGate = spec.isGated() ? sig.add(tensor({d, f}), "w_gate") : -1;
  int wDown = sig.add(tensor({f, d}), "w_down");
  int bUp = spec.biasUp ? sig.add(tensor({f}), "b_up") : -1;
  int bGate = spec.hasBiasGate() ? sig.add(tensor({f}), "b_gate") : -1;
  int bDown = spec.biasDown ? sig.add(tensor({d}), "b_down") : -1;
  bool hasNorm = spec.norm != NormKind::None;
  int scale = hasNorm ? sig.add(tensor({d}), "norm_scale") : -1;
  int shift =
      spec.norm == NormKind::LayerNorm ? sig.add(tensor({d}), "norm_shift") : -1;

  auto func = func::FuncOp::create(
      builder, loc, spec.name, builder.getFunctionType(sig.types, {ioType}));
  for (auto [i, name] : llvm::enumerate(sig.names))
    func.setArgAttr(i, "ffn.param", builder.getStringAttr(name));

  Block *body = func.addEntryBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  auto arg = [&](int index) -> Value {
    return index < 0 ? Value() : body->getArgument(index);
  };

  ffn::NormAttr norm;
  if (hasNorm)
    norm = ffn::NormAttr::get(
        &ctx,
        spec.norm == NormKind::LayerNorm ? ffn::NormKind::layernorm
                                         : ffn::NormKind::rmsnorm,
        spec.normPosition == NormPosition::Pre ? ffn::NormPosition::pre
                                               : ffn::NormPosition::post,
        llvm::APFloat(spec.normEps));

  auto op = ffn::FfnOp::create(
      builder, loc, ioType, arg(input), arg(wUp), arg(wGate), arg(wDown),
      arg(bUp), arg(bGate), arg(bDown), arg(scale), arg(shift),
      ffn::ActivationAttr::get(&ctx, toDialect(spec.activation)),
      spec.isGated() ? builder.getUnitAttr() : UnitAttr(),
      spec.residual ? builder.getUnitAttr() : UnitAttr(), norm);
  func::ReturnOp::create(builder, loc, op.getResult());
  return func;
}

OwningOpRef<ModuleOp> ffnc::buildModule(MLIRContext &context,
                                        ArrayRef<FfnSpec> specs,
                                        const llvm::SourceMgr &sourceMgr) {
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  builder.setInsertionPointToEnd(module->getBody());
  for (const FfnSpec &spec : specs)
    buildFunction(builder, spec, sourceMgr);
  return module;
}
