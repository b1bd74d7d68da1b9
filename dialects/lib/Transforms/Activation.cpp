//===- Activation.cpp - the activation functions as arith/math ops --------===//

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ffn;

Value mlir::ffn::f32Constant(OpBuilder &b, Location loc, Type type,
                             double value) {
  FloatAttr scalar = b.getF32FloatAttr(static_cast<float>(value));
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vector, scalar.getValue()));
  return arith::ConstantOp::create(b, loc, scalar);
}

Value mlir::ffn::buildActivation(OpBuilder &b, Location loc,
                                 Activation activation, Value v) {
  Type t = v.getType();
  auto c = [&](double value) { return f32Constant(b, loc, t, value); };
  switch (activation) {
  case Activation::relu:
    // maximumf propagates NaN, as the reference's max does.
    return arith::MaximumFOp::create(b, loc, v, c(0.0));
  case Activation::gelu: {
    // 0.5 x (1 + erf(x / sqrt(2)))
    Value e = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, v, c(M_SQRT1_2)));
    Value onePlus = arith::AddFOp::create(b, loc, e, c(1.0));
    Value half = arith::MulFOp::create(b, loc, v, c(0.5));
    return arith::MulFOp::create(b, loc, half, onePlus);
  }
  case Activation::gelu_tanh: {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value x3 =
        arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, v, v), v);
    Value inner = arith::AddFOp::create(
        b, loc, v, arith::MulFOp::create(b, loc, x3, c(0.044715)));
    Value t = math::TanhOp::create(
        b, loc, arith::MulFOp::create(b, loc, inner, c(std::sqrt(2.0 / M_PI))));
    Value onePlus = arith::AddFOp::create(b, loc, t, c(1.0));
    Value half = arith::MulFOp::create(b, loc, v, c(0.5));
    return arith::MulFOp::create(b, loc, half, onePlus);
  }
  case Activation::silu:
  case Activation::sigmoid: {
    // 1 / (1 + exp(-x)): exp overflows to +inf for very negative x, giving
    // exactly 0 instead of NaN.
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, v));
    Value denom = arith::AddFOp::create(b, loc, e, c(1.0));
    if (activation == Activation::sigmoid)
      return arith::DivFOp::create(b, loc, c(1.0), denom);
    return arith::DivFOp::create(b, loc, v, denom);
  }
  case Activation::identity:
    return v;
  }
  llvm_unreachable("unknown activation");
}
