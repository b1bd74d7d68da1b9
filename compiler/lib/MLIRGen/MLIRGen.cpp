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

static func::FuncOp buildFunction(OpBuilder &builder, const FfnSpec &spec,
                                  const llvm::SourceMgr &sm) {
  MLIRContext &ctx = *builder.getContext();
  Location loc = locationOf(ctx, sm, spec.loc);
  Type elt = elementType(ctx, spec.dtype);
  int64_t d = spec.dModel;
  auto tensor = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elt);
  };

  // Arguments: the input, then the parameters in kernelParams() order.
  auto ioType = tensor({ShapedType::kDynamic, d});
  SmallVector<Type> argTypes = {ioType};
  SmallVector<StringRef> argNames = {"input"};
  std::vector<ParamInfo> params = kernelParams(spec);
  for (const ParamInfo &p : params) {
    SmallVector<int64_t, 3> shape;
    if (p.experts > 0)
      shape.push_back(p.experts);
    shape.push_back(p.rows);
    if (p.rank() == 2)
      shape.push_back(p.cols);
    argTypes.push_back(tensor(shape));
    argNames.push_back(p.name);
  }

  auto func = func::FuncOp::create(builder, loc, spec.name,
                                   builder.getFunctionType(argTypes, {ioType}));
  for (auto [i, name] : llvm::enumerate(argNames))
    func.setArgAttr(i, "ffn.param", builder.getStringAttr(name));

  Block *body = func.addEntryBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  auto arg = [&](StringRef name) -> Value {
    for (auto [i, n] : llvm::enumerate(argNames))
      if (n == name)
        return body->getArgument(i);
    return Value();
  };

  ffn::NormAttr norm;
  if (spec.norm != NormKind::None)
    norm = ffn::NormAttr::get(
        &ctx,
        spec.norm == NormKind::LayerNorm ? ffn::NormKind::layernorm
                                         : ffn::NormKind::rmsnorm,
        spec.normPosition == NormPosition::Pre ? ffn::NormPosition::pre
                                               : ffn::NormPosition::post,
        llvm::APFloat(spec.normEps));

  ffn::WeightQuantAttr weightQuant;
  if (spec.weightQuant != WeightQuant::None)
    weightQuant = ffn::WeightQuantAttr::get(
        &ctx,
        spec.weightQuant == WeightQuant::Int8 ? ffn::WeightQuantKind::int8
                                              : ffn::WeightQuantKind::int4,
        spec.quantGroup, spec.int8Activations, spec.zeroPoints);

  ffn::MoeAttr moe;
  if (spec.isMoe())
    moe = ffn::MoeAttr::get(&ctx, spec.experts, spec.topK,
                            spec.router == Router::SoftmaxTopK
                                ? ffn::Router::softmax_topk
                                : ffn::Router::topk_softmax,
                            spec.routerNormalize, spec.sharedExperts);

  auto op = ffn::FfnOp::create(
      builder, loc, ioType, arg("input"), arg("w_up"), arg("w_gate"),
      arg("w_down"), arg("b_up"), arg("b_gate"), arg("b_down"),
      arg("norm_scale"), arg("norm_shift"), arg("w_router"),
      ffn::ActivationAttr::get(&ctx, toDialect(spec.activation)),
      spec.isGated() ? builder.getUnitAttr() : UnitAttr(),
      spec.residual ? builder.getUnitAttr() : UnitAttr(), norm, weightQuant,
      moe,
      spec.isGrouped() ? builder.getI64IntegerAttr(spec.groups) : IntegerAttr(),
      spec.batchInvariant ? builder.getUnitAttr() : UnitAttr(),
      spec.activationSparsity >= 0
          ? builder.getF64FloatAttr(spec.activationSparsity)
          : FloatAttr(),
      ffn::StrategyAttrInterface());
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
