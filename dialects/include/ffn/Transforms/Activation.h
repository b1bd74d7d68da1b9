//===- Activation.h - the activation functions as arith/math ops -*- C++
//-*-===//
//
// One definition of every activation, shared by all lowerings, on f32
// scalars or f32 vectors alike.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TRANSFORMS_ACTIVATION_H
#define FFN_TRANSFORMS_ACTIVATION_H

#include "ffn/IR/FfnAttrs.h"

#include "mlir/IR/Builders.h"

namespace mlir::ffn {

/// An f32 constant of `type` (f32 or a vector of f32).
Value f32Constant(OpBuilder &b, Location loc, Type type, double value);

/// act(v) for an f32 scalar or vector `v`.
Value buildActivation(OpBuilder &b, Location loc, Activation activation,
                      Value v);

} // namespace mlir::ffn

#endif // FFN_TRANSFORMS_ACTIVATION_H
