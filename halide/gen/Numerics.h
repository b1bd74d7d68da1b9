//===- Numerics.h - ffnc's numerics as Halide expressions ------*- C++ -*-===//
//
// What Halide 14 does differently from ffnc's f64 reference, and the
// expressions that make a kernel match it anyway (docs/halide.md):
//  - f32 -> bf16/f16: Halide's casts turn NaNs into zeros or infinities and
//    round f16 wrongly at the overflow boundary; storeAs rounds to nearest
//    even on the bits and keeps NaNs (quiet, top payload bits).
//  - exp(+Inf) and exp(NaN) are 0 and erf(+-Inf) is NaN in Halide: expG
//    and erfG guard the non-finite arguments.
//  - tanh is a scalar libm call: gelu_tanh uses the identity
//    0.5 (1 + tanh z) = 1 / (1 + exp(-2z)).
//  - Float ops carry fast-math flags: activations and storage conversions
//    are strict (strict_float, or integer arithmetic on the bits).
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_HALIDE_GEN_NUMERICS_H
#define FFNC_HALIDE_GEN_NUMERICS_H

#include "Halide.h"

#include <string>

namespace ffnc::halide {

/// The Halide type of a storage dtype ("f32", "bf16", "f16").
Halide::Type storageType(const std::string &dtype);

/// A storage value widened to f32 (exact for every dtype).
Halide::Expr widen(const Halide::Expr &v);

/// The f32 value `v` rounded to `type` (f32: unchanged), round to nearest
/// even, NaN kept NaN with its sign and top payload bits.
Halide::Expr storeAs(const Halide::Type &type, const Halide::Expr &v);

/// A NaN test on the bits: a float compare may be folded away under
/// Halide's fast-math flags.
Halide::Expr isNaN(const Halide::Expr &v);

/// exp and erf with the reference's values at non-finite arguments (and
/// exp's overflow and underflow ends), strict.
Halide::Expr expG(const Halide::Expr &v);
Halide::Expr erfG(const Halide::Expr &v);

/// The activation `name` (relu gelu gelu_tanh silu sigmoid identity) of
/// the f32 value `v`, as ffn_ref::activate defines it, strict.
Halide::Expr activate(const std::string &name, const Halide::Expr &v);

} // namespace ffnc::halide

#endif // FFNC_HALIDE_GEN_NUMERICS_H
