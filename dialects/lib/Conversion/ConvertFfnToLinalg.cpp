//===- ConvertFfnToLinalg.cpp - ffn.ffn to linalg on tensors --------------===//
//
// One ffn.ffn becomes, in f32 throughout:
//
//   x32  = extf(x)                                   (bf16/f16 storage only)
//   n    = pre-norm(x32)                             (if norm position = pre)
//   u    = n · W_up            [linalg.matmul, role "up"]
//   g    = n · W_gate          [linalg.matmul, role "gate"; gated only]
//   h    = act(g + b_gate) * (u + b_up)  or  act(u + b_up)     [role "act"]
//   d    = h · W_down          [linalg.matmul, role "down"]
//   f    = d + b_down (+ x32 if residual)                      [role "out"]
//   y    = truncf(post-norm(f))                                [role "out"]
//
// The matmuls take storage-typed weights and accumulate in f32 (linalg's
// mixed-precision semantics extend each operand to the accumulator type).
//
//===----------------------------------------------------------------------===//

#include "ffn/Conversion/Passes.h"
#include "ffn/IR/FfnOps.h"
#include "ffn/Transforms/Activation.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_CONVERTFFNTOLINALG
#include "ffn/Conversion/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;

namespace {

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Inputs of a linalg.generic whose optional operands (biases, the gate,
/// the residual) are present or not: addIf returns the operand's index in
/// the region's arguments, or -1 when absent.
struct GenericOperands {
  SmallVector<Value> values;
  SmallVector<AffineMap> maps;
  GenericOperands(ArrayRef<Value> v, ArrayRef<AffineMap> m)
      : values(v), maps(m) {}
  int addIf(Value value, AffineMap map) {
    if (!value)
      return -1;
    values.push_back(value);
    maps.push_back(map);
    return static_cast<int>(values.size()) - 1;
  }
};

/// Builds the linalg form of one ffn.ffn at the op's position.
class FfnLowering {
public:
  FfnLowering(RewriterBase &rewriter, FfnOp op)
      : b(rewriter), op(op), loc(op.getLoc()), f32(b.getF32Type()),
        dModel(op.getDModel()), dFf(op.getDFf()) {}

  Value lower();

private:
  /// M as an SSA value, for tensor.empty of dynamic row count.
  SmallVector<Value> dynamicRows() {
    if (!ShapedType::isDynamic(op.getInput().getType().getDimSize(0)))
      return {};
    return {tensor::DimOp::create(b, loc, op.getInput(), 0)};
  }
  int64_t staticRows() { return op.getInput().getType().getDimSize(0); }

  Value empty(int64_t cols, Type elementType) {
    return tensor::EmptyOp::create(b, loc,
                                   ArrayRef<int64_t>{staticRows(), cols},
                                   elementType, dynamicRows());
  }
  Value emptyRows(Type elementType) {
    return tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{staticRows()},
                                   elementType, dynamicRows());
  }
  Value zerosLike(Value empty) {
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  }
  Value constant(OpBuilder &nb, double v) {
    return arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(v));
  }
  /// Widens a storage-typed scalar to f32 inside a generic body.
  Value ext(OpBuilder &nb, Value v) {
    if (v.getType() == f32)
      return v;
    return arith::ExtFOp::create(nb, loc, f32, v);
  }

  // Indexing maps over (row, col) iteration spaces.
  AffineMap identity2() { return b.getMultiDimIdentityMap(2); }
  AffineMap colVector() {
    return AffineMap::get(2, 0, {b.getAffineDimExpr(1)}, b.getContext());
  }
  AffineMap rowVector() {
    return AffineMap::get(2, 0, {b.getAffineDimExpr(0)}, b.getContext());
  }

  /// A 2-D elementwise linalg.generic writing `init`.
  Value elementwise(ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                    Value init, StringRef role, BodyFn body);
  /// Row-wise sum over columns of f(x, extra...) into a [M] f32 tensor.
  Value rowSum(ValueRange inputs, ArrayRef<AffineMap> inputMaps, StringRef role,
               BodyFn term);
  /// 1-D elementwise generic over rows.
  Value rowwise(ValueRange inputs, StringRef role, BodyFn body);

  Value matmul(Value lhs, Value weights, StringRef role);
  Value applyNorm(Value x32, Type resultType);
  Value activation(OpBuilder &nb, Value v);
  void tag(Operation *created, StringRef role) {
    created->setAttr("ffn.role", b.getStringAttr(role));
  }

  RewriterBase &b;
  FfnOp op;
  Location loc;
  Type f32;
  int64_t dModel, dFf;
};

Value FfnLowering::elementwise(ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                               Value init, StringRef role, BodyFn body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(identity2());
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value result = body(nb, l, args.drop_back());
        linalg::YieldOp::create(nb, l, result);
      });
  tag(generic, role);
  return generic.getResult(0);
}

Value FfnLowering::rowSum(ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                          StringRef role, BodyFn term) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(rowVector());
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                utils::IteratorType::reduction};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{RankedTensorType::get({staticRows()}, f32)}, inputs,
      ValueRange{zerosLike(emptyRows(f32))}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value t = term(nb, l, args.drop_back());
        linalg::YieldOp::create(
            nb, l, arith::AddFOp::create(nb, l, args.back(), t).getResult());
      });
  tag(generic, role);
  return generic.getResult(0);
}

Value FfnLowering::rowwise(ValueRange inputs, StringRef role, BodyFn body) {
  AffineMap id1 = b.getMultiDimIdentityMap(1);
  SmallVector<AffineMap> maps(inputs.size() + 1, id1);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{RankedTensorType::get({staticRows()}, f32)}, inputs,
      ValueRange{emptyRows(f32)}, maps,
      SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args.drop_back()));
      });
  tag(generic, role);
  return generic.getResult(0);
}

Value FfnLowering::matmul(Value lhs, Value weights, StringRef role) {
  int64_t cols = cast<RankedTensorType>(weights.getType()).getDimSize(1);
  auto mm = linalg::MatmulOp::create(b, loc, ValueRange{lhs, weights},
                                     ValueRange{zerosLike(empty(cols, f32))});
  tag(mm, role);
  return mm.getResult(0);
}

Value FfnLowering::applyNorm(Value x32, Type resultType) {
  NormAttr norm = *op.getNorm();
  bool layer = norm.getKind() == NormKind::layernorm;
  double invD = 1.0 / static_cast<double>(dModel);
  double eps = norm.getEps().convertToDouble();
  Value scale = op.getNormScale(), shift = op.getNormShift();

  // Statistics per row: mean and 1/sqrt(var + eps) (LayerNorm), or
  // 1/sqrt(mean(x^2) + eps) (RMSNorm).
  Value mean;
  Value sumSq;
  if (layer) {
    Value sum =
        rowSum({x32}, {identity2()}, "norm",
               [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    mean = rowwise({sum}, "norm", [&](OpBuilder &nb, Location l, ValueRange a) {
      return arith::MulFOp::create(nb, l, a[0], constant(nb, invD)).getResult();
    });
    sumSq = rowSum({x32, mean}, {identity2(), rowVector()}, "norm",
                   [](OpBuilder &nb, Location l, ValueRange a) {
                     Value c = arith::SubFOp::create(nb, l, a[0], a[1]);
                     return arith::MulFOp::create(nb, l, c, c).getResult();
                   });
  } else {
    sumSq =
        rowSum({x32}, {identity2()}, "norm",
               [](OpBuilder &nb, Location l, ValueRange a) {
                 return arith::MulFOp::create(nb, l, a[0], a[0]).getResult();
               });
  }
  Value rstd =
      rowwise({sumSq}, "norm", [&](OpBuilder &nb, Location l, ValueRange a) {
        Value var = arith::MulFOp::create(nb, l, a[0], constant(nb, invD));
        Value sum = arith::AddFOp::create(nb, l, var, constant(nb, eps));
        Value root = math::SqrtOp::create(nb, l, sum);
        return arith::DivFOp::create(nb, l, constant(nb, 1.0), root)
            .getResult();
      });

  SmallVector<Value> inputs = {x32, rstd, scale};
  SmallVector<AffineMap> maps = {identity2(), rowVector(), colVector()};
  if (layer) {
    inputs.append({mean, shift});
    maps.append({rowVector(), colVector()});
  }
  return elementwise(inputs, maps, empty(dModel, resultType), "norm",
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       Value centered = a[0];
                       if (layer)
                         centered = arith::SubFOp::create(nb, l, a[0], a[3]);
                       Value v = arith::MulFOp::create(nb, l, centered, a[1]);
                       v = arith::MulFOp::create(nb, l, v, ext(nb, a[2]));
                       if (layer)
                         v = arith::AddFOp::create(nb, l, v, ext(nb, a[4]));
                       if (resultType != f32)
                         v = arith::TruncFOp::create(nb, l, resultType, v);
                       return v;
                     });
}

Value FfnLowering::activation(OpBuilder &nb, Value v) {
  return buildActivation(nb, loc, op.getActivation(), v);
}

Value FfnLowering::lower() {
  Type storage = op.getStorageType();
  Value x = op.getInput();

  Value x32 = x;
  if (storage != f32)
    x32 = elementwise(
        {x}, {identity2()}, empty(dModel, f32), "in",
        [&](OpBuilder &nb, Location, ValueRange a) { return ext(nb, a[0]); });

  std::optional<NormAttr> norm = op.getNorm();
  bool preNorm = norm && norm->getPosition() == NormPosition::pre;
  bool postNorm = norm && norm->getPosition() == NormPosition::post;
  Value normed = preNorm ? applyNorm(x32, f32) : x32;

  // Projections and the activation epilogue.
  Value up = matmul(normed, op.getWUp(), "up");
  Value gate = op.getGated() ? matmul(normed, op.getWGate(), "gate") : Value();
  GenericOperands act({up}, {identity2()});
  int bUpIdx = act.addIf(op.getBUp(), colVector());
  int gateIdx = act.addIf(gate, identity2());
  int bGateIdx = gate ? act.addIf(op.getBGate(), colVector()) : -1;
  Value hidden = elementwise(
      act.values, act.maps, empty(dFf, f32), "act",
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value u = a[0];
        if (bUpIdx >= 0)
          u = arith::AddFOp::create(nb, l, u, ext(nb, a[bUpIdx]));
        if (gateIdx < 0)
          return activation(nb, u);
        Value g = a[gateIdx];
        if (bGateIdx >= 0)
          g = arith::AddFOp::create(nb, l, g, ext(nb, a[bGateIdx]));
        return arith::MulFOp::create(nb, l, activation(nb, g), u).getResult();
      });

  Value down = matmul(hidden, op.getWDown(), "down");

  // Down bias, residual, and the conversion to the storage type (unless a
  // post-norm follows, which converts on its own output).
  GenericOperands out({down}, {identity2()});
  int bDownIdx = out.addIf(op.getBDown(), colVector());
  int residualIdx = out.addIf(op.getResidual() ? x32 : Value(), identity2());
  Type outType = postNorm ? f32 : storage;
  Value result =
      elementwise(out.values, out.maps, empty(dModel, outType), "out",
                  [&](OpBuilder &nb, Location l, ValueRange a) {
                    Value v = a[0];
                    if (bDownIdx >= 0)
                      v = arith::AddFOp::create(nb, l, v, ext(nb, a[bDownIdx]));
                    if (residualIdx >= 0)
                      v = arith::AddFOp::create(nb, l, v, a[residualIdx]);
                    if (outType != f32)
                      v = arith::TruncFOp::create(nb, l, outType, v);
                    return v;
                  });
  if (postNorm)
    result = applyNorm(result, storage);
  return result;
}

/// A function as MLIRGen builds it (every argument a named parameter, the
/// op's result returned) becomes the unscheduled kernel: its contract says
/// so, with the parameters read as they are.
void recordContract(FfnOp op) {
  auto func = dyn_cast<func::FuncOp>(op->getParentOp());
  if (!func || KernelAbiAttr::of(func) || func.getNumArguments() == 0 ||
      func.getNumResults() != 1 || op.getInput() != func.getArgument(0))
    return;
  MLIRContext *ctx = op.getContext();
  SmallVector<Attribute> params;
  for (unsigned i = 1, e = func.getNumArguments(); i < e; ++i) {
    auto name = func.getArgAttrOfType<StringAttr>(i, "ffn.param");
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (!name || !type)
      return;
    params.push_back(buildKernelParam(
        ctx, name, type.getShape(),
        MemRefType::get(type.getShape(), type.getElementType()), ""));
  }
  func->setAttr(
      KernelAbiAttr::kAttrName,
      buildKernelAbi(op, Float32Type::get(ctx), params,
                     /*workspacePerRow=*/std::nullopt, /*phaseUnits=*/{},
                     /*bucketMaxM=*/{},
                     "baseline: unpacked weights, (m, k, n) loops vectorized "
                     "by LLVM"));
}

struct ConvertFfnToLinalgPass
    : ffn::impl::ConvertFfnToLinalgBase<ConvertFfnToLinalgPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<FfnOp> ops;
    getOperation().walk([&](FfnOp op) { ops.push_back(op); });
    for (FfnOp op : ops) {
      // The reference lowering multiplies the weights as given; it has no
      // quantized form, and must not drop the property silently.
      if (op.getWeightQuant()) {
        op.emitOpError("has quantized weights (#ffn.weight_quant), which "
                       "only ffn-lower-packed lowers");
        return signalPassFailure();
      }
      if (op.getMoe()) {
        op.emitOpError("is a mixture of experts (#ffn.moe), which only "
                       "ffn-lower-packed lowers");
        return signalPassFailure();
      }
      if (op.getGroups()) {
        op.emitOpError() << "is a grouped FFN (groups = " << *op.getGroups()
                         << "), which only ffn-lower-packed lowers";
        return signalPassFailure();
      }
      recordContract(op);
      rewriter.setInsertionPoint(op);
      Value result = FfnLowering(rewriter, op).lower();
      rewriter.replaceOp(op, result);
    }
  }
};

} // namespace
