//===- PtxFloat.h - f16, bf16 and tf32 conversions for the interpreter ----===//
//
// Bit-exact conversions between f32 and the 16-bit floating types with the
// rounding modes PTX names (rn, rz, rm, rp), written out here rather than
// taken from the host compiler so that the interpreter does not depend on
// its _Float16 support or on the host's rounding mode.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_TEST_GPU_SIM_PTXFLOAT_H
#define FFNC_TEST_GPU_SIM_PTXFLOAT_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ptxsim {

enum class Round { Nearest, Zero, Down, Up };

inline float asF32(uint64_t v) {
  uint32_t u = static_cast<uint32_t>(v);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint64_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline double asF64(uint64_t v) {
  double d;
  std::memcpy(&d, &v, 8);
  return d;
}
inline uint64_t bitsOf(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

inline float bf16ToF32(uint16_t h) { return asF32(uint32_t(h) << 16); }

/// Rounds away `drop` low bits of a magnitude, per `r` and the sign.
inline uint32_t roundBits(uint32_t mag, unsigned drop, Round r, bool negative) {
  if (drop == 0)
    return mag;
  if (drop >= 32)
    return (r == Round::Up && !negative && mag) ||
                   (r == Round::Down && negative && mag)
               ? 1
               : 0;
  uint32_t kept = mag >> drop, rest = mag & ((1u << drop) - 1);
  uint32_t half = 1u << (drop - 1);
  switch (r) {
  case Round::Nearest:
    if (rest > half || (rest == half && (kept & 1)))
      ++kept;
    break;
  case Round::Zero:
    break;
  case Round::Up:
    kept += !negative && rest;
    break;
  case Round::Down:
    kept += negative && rest;
    break;
  }
  return kept;
}

inline uint16_t f32ToBf16(float f, Round r = Round::Nearest) {
  uint32_t u = static_cast<uint32_t>(bitsOf(f));
  if (std::isnan(f))
    return 0x7FFF;
  uint32_t sign = u & 0x80000000u, mag = u & 0x7FFFFFFFu;
  uint32_t m = roundBits(mag, 16, r, sign != 0); // may carry into the exponent
  return static_cast<uint16_t>((sign >> 16) | m);
}

inline float f16ToF32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  if (exp == 0x1F)
    return asF32(sign | 0x7F800000u | (man << 13));
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  return asF32(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t f32ToF16(float f, Round r = Round::Nearest) {
  uint32_t u = static_cast<uint32_t>(bitsOf(f));
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  if (std::isnan(f))
    return 0x7FFF;
  bool neg = sign != 0;
  int exp = static_cast<int>((u >> 23) & 0xFF) - 127;
  uint32_t man = u & 0x7FFFFF;
  if (std::isinf(f))
    return sign | 0x7C00;
  if (((u >> 23) & 0xFF) == 0) // f32 subnormals are far below f16's range
    return sign | static_cast<uint16_t>(roundBits(man ? 1 : 0, 32, r, neg));
  uint32_t full = man | 0x800000; // 24 significant bits
  uint32_t h;
  if (exp < -14) {
    // f16 subnormal: units of 2^-24.
    unsigned drop = static_cast<unsigned>(13 + (-14 - exp));
    h = roundBits(full, drop > 31 ? 32 : drop, r, neg);
  } else {
    uint32_t m = roundBits(full, 13, r, neg); // 11 bits, may reach 2^11
    int e = exp;
    if (m >> 11) {
      m >>= 1;
      ++e;
    }
    if (e > 15) {
      bool toInf = r == Round::Nearest || (r == Round::Up && !neg) ||
                   (r == Round::Down && neg);
      return sign | (toInf ? 0x7C00 : 0x7BFF);
    }
    h = (uint32_t(e + 15) << 10) | (m & 0x3FF);
  }
  return sign | static_cast<uint16_t>(h);
}

/// tf32: f32 with the low 13 mantissa bits dropped (cvt.rna: ties away).
inline float f32ToTf32(float f) {
  if (!std::isfinite(f))
    return f;
  uint32_t u = static_cast<uint32_t>(bitsOf(f));
  u += 0x1000;
  u &= 0xFFFFE000u;
  return asF32(u);
}

inline float flushSubnormal(float f) {
  return std::fpclassify(f) == FP_SUBNORMAL ? std::copysign(0.0f, f) : f;
}

} // namespace ptxsim

#endif
