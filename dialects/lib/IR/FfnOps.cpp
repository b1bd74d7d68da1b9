//===- FfnOps.cpp - ffn dialect operations --------------------------------===//

#include "ffn/IR/FfnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::ffn;

/// `gated silu` or `relu`: the FFN family reads as one phrase.
static ParseResult parseKind(OpAsmParser &parser, UnitAttr &gated,
                             ActivationAttr &activation) {
  if (succeeded(parser.parseOptionalKeyword("gated")))
    gated = parser.getBuilder().getUnitAttr();
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<Activation> value = symbolizeActivation(keyword);
  if (!value)
    return parser.emitError(loc) << "unknown activation '" << keyword << "'";
  activation = ActivationAttr::get(parser.getContext(), *value);
  return success();
}

static void printKind(OpAsmPrinter &printer, Operation *, UnitAttr gated,
                      ActivationAttr activation) {
  if (gated)
    printer << "gated ";
  printer << stringifyActivation(activation.getValue());
}

// The last two dimensions: a mixture of experts stacks its experts'
// weights along a leading one, a grouped FFN its blocks'.
int64_t FfnOp::getBlockDModel() {
  RankedTensorType t = getWUp().getType();
  return t.getDimSize(t.getRank() - 2);
}
int64_t FfnOp::getBlockDFf() {
  RankedTensorType t = getWUp().getType();
  return t.getDimSize(t.getRank() - 1);
}
int64_t FfnOp::getDModel() { return getNumBlocks() * getBlockDModel(); }
int64_t FfnOp::getDFf() { return getNumBlocks() * getBlockDFf(); }

namespace {
/// Checks one operand against its expected static shape and the common
/// element type, so every verifier message names the operand and both shapes.
class OperandChecker {
public:
  OperandChecker(FfnOp op, Type elementType)
      : op(op), elementType(elementType) {}

  LogicalResult check(Value value, StringRef name, ArrayRef<int64_t> expected) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType() != elementType)
      return op.emitOpError()
             << name << " has element type " << type.getElementType()
             << " but the input has " << elementType;
    if (type.getShape() != expected)
      return op.emitOpError()
             << name << " must have shape [" << formatShape(expected)
             << "], got [" << formatShape(type.getShape()) << "]";
    return success();
  }

private:
  static std::string formatShape(ArrayRef<int64_t> shape) {
    std::string out;
    llvm::raw_string_ostream os(out);
    llvm::interleave(
        shape, os,
        [&](int64_t d) {
          if (ShapedType::isDynamic(d))
            os << "?";
          else
            os << d;
        },
        ", ");
    return out;
  }

  FfnOp op;
  Type elementType;
};
} // namespace

LogicalResult FfnOp::verify() {
  RankedTensorType inputType = getInput().getType();
  if (inputType.getRank() != 2)
    return emitOpError() << "input must be a rank-2 tensor [M, d_model], got "
                         << inputType;
  RankedTensorType upType = getWUp().getType();
  std::optional<MoeAttr> moe = getMoe();
  // A mixture of experts' weights and biases: one slice per expert.
  SmallVector<int64_t, 1> stack;
  if (moe && getGroups())
    return emitOpError() << "groups cannot be combined with moe";
  if (moe)
    stack.push_back(moe->totalExperts());
  if (getGroups())
    stack.push_back(*getGroups());
  if (upType.getRank() != 2 + int64_t(stack.size()) || !upType.hasStaticShape())
    return emitOpError() << "w_up must be a static rank-" << 2 + stack.size()
                         << " tensor ["
                         << (moe           ? "experts + shared, d_model, d_ff"
                             : getGroups() ? "groups, d_model/groups, "
                                             "d_ff/groups"
                                           : "d_model, d_ff")
                         << "], got " << upType;
  auto stacked = [&](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> out(stack.begin(), stack.end());
    out.append(shape.begin(), shape.end());
    return out;
  };

  // The GEMMs' widths: one block's for a grouped FFN.
  int64_t dModel = getBlockDModel();
  int64_t dFf = getBlockDFf();
  if (dModel <= 0 || dFf <= 0)
    return emitOpError() << "d_model and d_ff must be positive";
  if (inputType.getDimSize(1) != getDModel())
    return emitOpError() << "input has " << inputType.getDimSize(1)
                         << " columns but "
                         << (getGroups() ? "groups x w_up rows" : "w_up")
                         << " has " << getDModel() << " rows (d_model)";
  if (getResult().getType() != inputType)
    return emitOpError() << "result type " << getResult().getType()
                         << " must equal the input type " << inputType;

  Type elementType = inputType.getElementType();
  OperandChecker checker(*this, elementType);
  if (failed(checker.check(getWUp(), "w_up", stacked({dModel, dFf}))) ||
      failed(checker.check(getWDown(), "w_down", stacked({dFf, dModel}))))
    return failure();
  if (moe) {
    if (!getRouter())
      return emitOpError() << "a mixture of experts needs a router operand";
    if (failed(
            checker.check(getRouter(), "router", {dModel, moe->getExperts()})))
      return failure();
  } else if (getRouter()) {
    return emitOpError() << "router is only allowed with moe";
  }

  if (getGated()) {
    if (!getWGate())
      return emitOpError() << "a gated FFN needs a w_gate operand";
    if (failed(checker.check(getWGate(), "w_gate", stacked({dModel, dFf}))))
      return failure();
  } else {
    if (getWGate())
      return emitOpError() << "w_gate is only allowed on a gated FFN";
    if (getBGate())
      return emitOpError() << "b_gate is only allowed on a gated FFN";
  }
  if (getBUp() && failed(checker.check(getBUp(), "b_up", stacked({dFf}))))
    return failure();
  if (getBGate() && failed(checker.check(getBGate(), "b_gate", stacked({dFf}))))
    return failure();
  if (getBDown() &&
      failed(checker.check(getBDown(), "b_down", stacked({dModel}))))
    return failure();

  if (StrategyAttrInterface strategy = getStrategyAttr()) {
    // The strategy on an op is a decision; overrides are for the options.
    if (!strategy.isComplete())
      return emitOpError() << "strategy " << strategy
                           << " leaves knobs undecided";
    if (TargetAttr target = TargetAttr::lookup(*this))
      if (failed(strategy.verifyForTarget(target, [&] {
            return emitOpError() << "strategy does not fit the module's target: ";
          })))
        return failure();
    auto cpu = dyn_cast<CpuStrategyAttr>(strategy);
    if (getGroups() && cpu &&
        (*cpu.getKnobs().fusedMaxM > 0 ||
         cpu.getKnobs().sparseMaxM.value_or(0) > 0))
      return emitOpError() << "is a grouped FFN, whose blocks take the "
                              "two-pass schedule; its strategy takes the "
                           << (*cpu.getKnobs().fusedMaxM > 0 ? "fused"
                                                             : "sparse")
                           << " one for small m";
    if (moe && cpu && *cpu.getKnobs().fusedMaxM > 0)
      return emitOpError() << "is a mixture of experts, whose experts take "
                              "the two-pass schedule; its strategy takes the "
                              "fused one for m <= "
                           << *cpu.getKnobs().fusedMaxM;
    if (getBatchInvariant() && cpu && *cpu.getKnobs().fusedMaxM > 0)
      return emitOpError() << "is batch_invariant, but its strategy takes the "
                              "fused schedule for m <= "
                           << *cpu.getKnobs().fusedMaxM
                           << " (a row's reduction order would depend on m)";
  }

  if (FloatAttr attr = getActivationSparsityAttr()) {
    double sparsity = attr.getValueAsDouble();
    if (!(sparsity >= 0 && sparsity < 1))
      return emitOpError() << "activation_sparsity must be in [0, 1), got "
                           << sparsity;
    if (getActivation() != Activation::relu)
      return emitOpError()
             << "activation_sparsity needs an activation that makes exact "
                "zeros (relu, gated or not), got "
             << stringifyActivation(getActivation());
  }

  std::optional<NormAttr> norm = getNorm();
  if (!norm) {
    if (getNormScale() || getNormShift())
      return emitOpError() << "norm parameters given without a norm";
    return success();
  }
  if (!getNormScale())
    return emitOpError() << "a norm needs a norm_scale operand";
  if (failed(checker.check(getNormScale(), "norm_scale", {getDModel()})))
    return failure();
  if (norm->getKind() == NormKind::layernorm) {
    if (!getNormShift())
      return emitOpError() << "a layernorm needs a norm_shift operand";
    if (failed(checker.check(getNormShift(), "norm_shift", {getDModel()})))
      return failure();
  } else if (getNormShift()) {
    return emitOpError() << "an rmsnorm has no norm_shift operand";
  }
  return success();
}

#define GET_OP_CLASSES
#include "ffn/IR/FfnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Kernel contracts
//===----------------------------------------------------------------------===//

KernelAbiAttr mlir::ffn::buildKernelAbi(
    FfnOp op, Type operandType, ArrayRef<Attribute> params,
    std::optional<int64_t> workspacePerRow, ArrayAttr phaseUnits,
    DenseI64ArrayAttr bucketMaxM, StringRef strategy, StringAttr deviceModule,
    ArrayAttr launches, StringRef packLayout) {
  MLIRContext *ctx = op.getContext();
  NormAttr norm = op.getNorm() ? *op.getNorm() : NormAttr();
  return KernelAbiAttr::get(
      ctx, op.getDModel(), op.getDFf(), op.getStorageType(), op.getActivation(),
      op.getGated(), op.getResidual(), norm,
      op.getWeightQuant() ? *op.getWeightQuant() : WeightQuantAttr(),
      op.getMoe() ? *op.getMoe() : MoeAttr(),
      op.getGroups() ? *op.getGroups() : 0, packLayout, operandType,
      ArrayAttr::get(ctx, params), workspacePerRow, phaseUnits, bucketMaxM,
      strategy, deviceModule, launches);
}

func::FuncOp mlir::ffn::buildPhasedKernel(OpBuilder &b, Operation *before,
                                          StringRef name, Type storage,
                                          int64_t dModel,
                                          ArrayRef<Type> paramTypes,
                                          ArrayRef<StringRef> paramNames) {
  auto rows = MemRefType::get({ShapedType::kDynamic, dModel}, storage);
  SmallVector<Type> types = {rows};
  SmallVector<StringRef> names = {"input"};
  types.append(paramTypes.begin(), paramTypes.end());
  names.append(paramNames.begin(), paramNames.end());
  types.append({rows, MemRefType::get({ShapedType::kDynamic}, b.getI8Type())});
  names.append({"output", "workspace"});
  for (StringRef range : {"phase", "begin", "end"}) {
    types.push_back(b.getIndexType());
    names.push_back(range);
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(before);
  auto kernel = func::FuncOp::create(b, before->getLoc(), name,
                                     b.getFunctionType(types, {}));
  for (auto [i, argName] : llvm::enumerate(names))
    kernel.setArgAttr(i, "ffn.param", b.getStringAttr(argName));
  return kernel;
}

KernelParamAttr mlir::ffn::buildKernelParam(MLIRContext *ctx, StringRef name,
                                            ArrayRef<int64_t> logical,
                                            MemRefType packed, StringRef pack,
                                            StringRef packQuantized,
                                            int64_t experts) {
  return KernelParamAttr::get(ctx, name, DenseI64ArrayAttr::get(ctx, logical),
                              packed, pack, packQuantized, experts);
}
