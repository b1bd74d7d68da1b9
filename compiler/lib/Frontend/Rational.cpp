//===- Rational.cpp - exact arithmetic for dimension expressions ----------===//

#include "ffnc/Frontend/Rational.h"

#include "llvm/ADT/StringExtras.h"

#include <limits>

using namespace ffnc;

static __int128 gcd128(__int128 a, __int128 b) {
  if (a < 0)
    a = -a;
  if (b < 0)
    b = -b;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

std::optional<Rational> Rational::make(__int128 num, __int128 den) {
  if (den == 0)
    return std::nullopt;
  if (den < 0) {
    num = -num;
    den = -den;
  }
  __int128 g = gcd128(num, den);
  if (g > 1) {
    num /= g;
    den /= g;
  }
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  if (num > kMax || num < -kMax || den > kMax)
    return std::nullopt;
  return Rational{static_cast<int64_t>(num), static_cast<int64_t>(den)};
}

std::optional<Rational> Rational::parseDecimal(llvm::StringRef text) {
  // mantissa digits (with an optional '.') and an optional exponent.
  llvm::StringRef mantissa = text, exponent;
  size_t e = text.find_first_of("eE");
  if (e != llvm::StringRef::npos) {
    mantissa = text.substr(0, e);
    exponent = text.substr(e + 1);
  }
  __int128 num = 0, den = 1;
  constexpr __int128 kLimit = static_cast<__int128>(1) << 100;
  bool afterDot = false;
  for (char c : mantissa) {
    if (c == '.') {
      afterDot = true;
      continue;
    }
    if (!llvm::isDigit(c))
      return std::nullopt;
    num = num * 10 + (c - '0');
    if (afterDot)
      den *= 10;
    if (num > kLimit || den > kLimit)
      return std::nullopt;
  }
  if (!exponent.empty()) {
    int sign = 1;
    if (exponent.consume_front("-"))
      sign = -1;
    else
      exponent.consume_front("+");
    unsigned exp;
    if (exponent.getAsInteger(10, exp) || exp > 30)
      return std::nullopt;
    for (unsigned i = 0; i < exp; ++i) {
      if (sign > 0)
        num *= 10;
      else
        den *= 10;
      if (num > kLimit || den > kLimit)
        return std::nullopt;
    }
  }
  return make(num, den);
}

std::string Rational::str() const {
  if (den == 1)
    return std::to_string(num);
  return std::to_string(num) + "/" + std::to_string(den);
}

std::optional<Rational> ffnc::add(Rational a, Rational b) {
  return Rational::make(static_cast<__int128>(a.num) * b.den +
                            static_cast<__int128>(b.num) * a.den,
                        static_cast<__int128>(a.den) * b.den);
}

std::optional<Rational> ffnc::sub(Rational a, Rational b) {
  return Rational::make(static_cast<__int128>(a.num) * b.den -
                            static_cast<__int128>(b.num) * a.den,
                        static_cast<__int128>(a.den) * b.den);
}

std::optional<Rational> ffnc::mul(Rational a, Rational b) {
  return Rational::make(static_cast<__int128>(a.num) * b.num,
                        static_cast<__int128>(a.den) * b.den);
}

std::optional<Rational> ffnc::div(Rational a, Rational b) {
  if (b.num == 0)
    return std::nullopt;
  return Rational::make(static_cast<__int128>(a.num) * b.den,
                        static_cast<__int128>(a.den) * b.num);
}

std::optional<Rational> ffnc::negate(Rational a) {
  return Rational::make(-static_cast<__int128>(a.num), a.den);
}

static __int128 floorDiv(__int128 a, __int128 b) {
  __int128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

std::optional<Rational> ffnc::ceilDiv(Rational a, Rational b) {
  std::optional<Rational> q = div(a, b);
  if (!q)
    return std::nullopt;
  return Rational::make(-floorDiv(-static_cast<__int128>(q->num), q->den), 1);
}

std::optional<Rational> ffnc::roundUp(Rational a, int64_t b) {
  std::optional<Rational> q = ceilDiv(a, Rational::integer(b));
  if (!q)
    return std::nullopt;
  return Rational::make(static_cast<__int128>(q->num) * b, 1);
}
