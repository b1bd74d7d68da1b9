//===- Rational.h - exact arithmetic for dimension expressions --*- C++ -*-===//
//
// Dimension expressions are evaluated exactly, as fractions, so that the
// LLaMA rule `round_up(2/3 * 4 * d_model, 256)` means what it says (11008
// for 4096) instead of truncating 2/3 to 0. Every operation detects int64
// overflow instead of wrapping.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_FRONTEND_RATIONAL_H
#define FFNC_FRONTEND_RATIONAL_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ffnc {

/// num/den in lowest terms with den > 0.
struct Rational {
  int64_t num = 0;
  int64_t den = 1;

  /// Reduces num/den; nullopt if den == 0 or the result does not fit.
  static std::optional<Rational> make(__int128 num, __int128 den);
  static Rational integer(int64_t v) { return {v, 1}; }
  /// Parses a decimal literal such as "0.5", "1e-3" or "2.5E2" exactly.
  static std::optional<Rational> parseDecimal(llvm::StringRef text);

  bool isInteger() const { return den == 1; }
  std::string str() const;
};

// Each returns nullopt on overflow (and, for div, on division by zero:
// callers check the divisor first to give the better message).
std::optional<Rational> add(Rational a, Rational b);
std::optional<Rational> sub(Rational a, Rational b);
std::optional<Rational> mul(Rational a, Rational b);
std::optional<Rational> div(Rational a, Rational b);
std::optional<Rational> negate(Rational a);
/// ceil(a / b) * b for positive integer b.
std::optional<Rational> roundUp(Rational a, int64_t b);
/// ceil(a / b).
std::optional<Rational> ceilDiv(Rational a, Rational b);

} // namespace ffnc

#endif // FFNC_FRONTEND_RATIONAL_H
