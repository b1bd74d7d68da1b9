//===- Numerics.cpp - ffnc's numerics as Halide expressions ---------------===//

#include "Numerics.h"

#include <cmath>
#include <limits>

using namespace Halide;

namespace ffnc::halide {

Type storageType(const std::string &dtype) {
  if (dtype == "bf16")
    return BFloat(16);
  if (dtype == "f16")
    return Float(16);
  return Float(32);
}

Expr widen(const Expr &v) { return cast<float>(v); }

namespace {
Expr u32(uint32_t v) { return Internal::make_const(UInt(32), v); }
} // namespace

Expr isNaN(const Expr &v) {
  Expr u = reinterpret<uint32_t>(v);
  return (u & u32(0x7FFFFFFF)) > u32(0x7F800000);
}

namespace {

/// ffn_ref::toBF16: add half an ulp of the result (less one, plus the
/// result's last bit: ties to even), then truncate. A NaN keeps its top
/// bits and is made quiet.
Expr toBF16Bits(const Expr &v) {
  Expr u = reinterpret<uint32_t>(v);
  Expr rounded = (u + u32(0x7FFF) + ((u >> 16) & u32(1))) >> 16;
  Expr nan = (u >> 16) | u32(0x40);
  return cast<uint16_t>(select(isNaN(v), nan, rounded));
}

/// IEEE binary16 from binary32, round to nearest even, in integers. NaN:
/// quiet, with the top 9 payload bits (what vcvtps2ph and compilers do).
Expr toF16Bits(const Expr &v) {
  Expr u = reinterpret<uint32_t>(v);
  Expr sign = (u >> 16) & u32(0x8000);
  Expr a = u & u32(0x7FFFFFFF);
  Expr nan = u32(0x7E00) | ((a >> 13) & u32(0x3FF));
  // 65520 = 0x477FF000, the midpoint between 65504 (the largest half,
  // odd mantissa) and 2^16: from there on the value rounds to infinity.
  Expr inf = u32(0x7C00);
  // Normal halves: rebias the exponent (127 - 15 = 112) and round the 13
  // dropped bits to even; a carry into the exponent is the right result.
  Expr normal = (a - u32(0x38000000) + u32(0xFFF) + ((a >> 13) & u32(1))) >> 13;
  // Subnormal halves (|v| < 2^-14): the significand with its implicit bit
  // shifted to units of 2^-24, rounded to even. e <= 112, so shift >= 14;
  // past 24 every bit is below half a unit and the result is 0.
  Expr e = a >> 23;
  Expr m = (a & u32(0x7FFFFF)) | u32(0x800000);
  Expr shift = min(u32(126) - min(e, u32(126)), u32(31));
  Expr q = m >> shift;
  Expr rem = m - (q << shift);
  Expr half = u32(1) << (shift - u32(1));
  Expr roundUp = rem > half || (rem == half && (q & u32(1)) == u32(1));
  Expr sub = q + select(roundUp, u32(1), u32(0));
  Expr bits = select(a > u32(0x7F800000), nan,
                     select(a >= u32(0x477FF000), inf,
                            select(a >= u32(0x38800000), normal, sub)));
  return cast<uint16_t>(sign | bits);
}

} // namespace

Expr storeAs(const Type &type, const Expr &v) {
  if (type == BFloat(16))
    return reinterpret(type, toBF16Bits(v));
  if (type == Float(16))
    return reinterpret(type, toF16Bits(v));
  return v;
}

Expr expG(const Expr &v) {
  // In f32, exp is finite up to 88.7228317 (0x42B17217) and overflows
  // from 0x42B17218 on; Halide's polynomial is not meant for arguments
  // beyond, and gives 0 at +Inf and NaN. Below -103.972084 the result is
  // under half the smallest subnormal.
  const float inf = std::numeric_limits<float>::infinity();
  Expr r = select(v >= 88.72283935546875f, inf,
                  select(v < -103.972084f, 0.0f, exp(v)));
  return strict_float(select(isNaN(v), v, r));
}

Expr erfG(const Expr &v) {
  // Halide's erf is NaN at +-Inf and at large finite arguments (1e20: its
  // rational approximation overflows). |v| >= 4 is +-1 in f32 (1 - erf(4)
  // = 1.5e-8 is below half an ulp of 1), and so is erf(+-4) in Halide's.
  Expr r = erf(clamp(v, -4.0f, 4.0f));
  return strict_float(select(isNaN(v), v, r));
}

Expr activate(const std::string &name, const Expr &v) {
  Expr r;
  if (name == "relu") {
    // NaN stays NaN, as the reference's `isnan(v) ? v : max(v, 0)`.
    r = select(isNaN(v), v, select(v > 0.0f, v, 0.0f));
  } else if (name == "gelu") {
    r = (v * 0.5f) * (1.0f + erfG(v * float(M_SQRT1_2)));
  } else if (name == "gelu_tanh") {
    // 0.5 v (1 + tanh z) = v / (1 + exp(-2z)), z = sqrt(2/pi) (v + 0.044715
    // v^3): exact algebra, and no scalar tanhf calls.
    Expr inner = v + 0.044715f * (v * v * v);
    r = v / (1.0f + expG(inner * float(-2.0 * std::sqrt(2.0 / M_PI))));
  } else if (name == "silu") {
    r = v / (1.0f + expG(-v));
  } else if (name == "sigmoid") {
    r = 1.0f / (1.0f + expG(-v));
  } else {
    r = v;
  }
  return strict_float(r);
}

} // namespace ffnc::halide
