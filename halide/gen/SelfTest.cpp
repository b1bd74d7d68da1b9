//===- SelfTest.cpp - Numerics.cpp against the f64 reference --------------===//
//
// The judges are ffn_reference.cpp's own functions (toBF16, toF16 and
// activate), linked into the generator, so a kernel's conversions and
// activations mean what `ffnc run --check` assumes.
//  - Conversions, bit for bit: every f32 that is a bf16 or f16 value, its
//    f32 neighbours, the midpoints between consecutive 16-bit values and
//    their neighbours (ties and near-ties), and special values (NaNs with
//    payloads, infinities, the f16 overflow boundary, subnormals).
//  - exp, erf and the activations at special points (+-0, +-Inf, NaN,
//    subnormals, the exp range's ends, +-1e4, FLT_MAX) and swept ones.
//    Non-finite reference values must be matched in class (NaN, +Inf,
//    -Inf; a finite value above FLT_MAX must overflow to that Inf). Finite
//    ones must be within the reference's own allowance for approximated
//    activations (ffn_reference.cpp: 16 f32 ulps of |f(v)|, plus of |v| for
//    the two GELUs, whose 1 + erf / 1 + tanh cancels), plus 2^-126 |v|
//    (at least 2^-126): Halide's exp flushes results below 2^-126 to zero,
//    as ffnc's own kernels' exp does. |v| is capped at 128 in both terms,
//    where every function here is exact in f32 again.
//  - Both with the kernels' avx2 target and, on a host with AVX-512, the
//    avx512 one (other vector widths, other instruction selection).
//
//===----------------------------------------------------------------------===//

#include "SelfTest.h"

#include "HalideProtocol.h"
#include "Numerics.h"

#include "ffn_reference.h"

#include "Halide.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace Halide;

namespace ffnc::halide {

namespace {

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// The kernels' targets this host runs, in-process (no no_runtime).
std::vector<Target> jitTargets() {
  std::vector<std::string> rows = {"x86-64-avx2"};
  if (get_host_target().has_feature(Target::AVX512_Skylake))
    rows.push_back("x86-64-avx512");
  std::vector<Target> targets;
  for (const std::string &row : rows) {
    std::string t = halideTargetFor(row);
    const std::string drop = "-no_runtime";
    t.erase(t.find(drop), drop.size());
    targets.emplace_back(t);
  }
  return targets;
}

/// f(input) for every input, JIT-compiled for `target` and vectorized as
/// the kernels are: `f` maps an f32 Expr to an Expr of type Out.
template <typename Out>
std::vector<Out> evaluate(const Target &target,
                          const std::vector<uint32_t> &inputs,
                          const std::function<Expr(Expr)> &f) {
  Buffer<uint32_t> in(static_cast<int>(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    in(static_cast<int>(i)) = inputs[i];
  Var i("i");
  Func g("self_test");
  g(i) = f(reinterpret<float>(in(i)));
  g.vectorize(i, target.natural_vector_size<float>(),
              TailStrategy::GuardWithIf);
  Buffer<Out> out = g.realize({static_cast<int>(inputs.size())}, target);
  std::vector<Out> result(inputs.size());
  for (size_t j = 0; j < inputs.size(); ++j)
    result[j] = out(static_cast<int>(j));
  return result;
}

/// The conversions' inputs: 16-bit values, neighbours and midpoints.
std::vector<uint32_t> conversionInputs() {
  std::vector<uint32_t> v;
  auto around = [&](uint32_t u) {
    v.push_back(u);
    v.push_back(u + 1);
    v.push_back(u - 1);
  };
  // bf16: the value 0xXXXX0000, and the midpoint 0xXXXX8000 up to the
  // next one.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    around(b << 16);
    around((b << 16) | 0x8000);
  }
  // f16: each value widened, and the midpoint to the next magnitude.
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    float lo = ffn_ref::fromF16(static_cast<uint16_t>(h));
    float hi = h + 1 < 0x7C00 ? ffn_ref::fromF16(static_cast<uint16_t>(h + 1))
                              : 65536.0f;
    for (float sign : {1.0f, -1.0f}) {
      around(bitsOf(sign * lo));
      around(bitsOf(sign * static_cast<float>((double(lo) + double(hi)) / 2)));
    }
  }
  for (uint32_t u :
       {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
        0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu,
        0x7FA00000u, 0x7FBFFFFFu, 0x7FC02000u, 0x7F7FFFFFu, 0xFF7FFFFFu,
        0x00000001u, 0x80000001u, 0x007FFFFFu, 0x00800000u, 0x477FE000u,
        0x477FEFFFu, 0x477FF000u, 0x477FF001u, 0x47800000u, 0x33000000u,
        0x33000001u, 0x32FFFFFFu, 0x33800000u, 0x387FE000u, 0x387FF000u})
    v.push_back(u);
  return v;
}

int checkConversions(const Target &target, size_t &count) {
  std::vector<uint32_t> in = conversionInputs();
  count += 2 * in.size();
  std::vector<uint16_t> bf = evaluate<uint16_t>(target, in, [](Expr x) {
    return reinterpret<uint16_t>(storeAs(BFloat(16), x));
  });
  std::vector<uint16_t> f16 = evaluate<uint16_t>(target, in, [](Expr x) {
    return reinterpret<uint16_t>(storeAs(Float(16), x));
  });
  for (size_t i = 0; i < in.size(); ++i) {
    float x = fromBits(in[i]);
    uint16_t wantBf = ffn_ref::toBF16(x), wantH = ffn_ref::toF16(x);
    if (bf[i] != wantBf || f16[i] != wantH) {
      bool isBf = bf[i] != wantBf;
      std::printf("self-test: FAIL (%s): f32 0x%08X (%.9g) to %s: got "
                  "0x%04X, the reference 0x%04X\n",
                  target.to_string().c_str(), in[i], double(x),
                  isBf ? "bf16" : "f16", isBf ? bf[i] : f16[i],
                  isBf ? wantBf : wantH);
      return 1;
    }
  }
  return 0;
}

/// The activation points: special values, the exp range's ends, and
/// sweeps (logarithmic and linear, both signs).
std::vector<uint32_t> activationInputs() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          INFINITY,
                          -INFINITY,
                          1e-40f,
                          -1e-40f,
                          1e-45f,
                          -1e-45f,
                          FLT_MIN,
                          -FLT_MIN,
                          88.8f,
                          -88.8f,
                          1e4f,
                          -1e4f,
                          1e20f,
                          -1e20f,
                          FLT_MAX,
                          -FLT_MAX,
                          fromBits(0x42B17217),
                          fromBits(0x42B17218),
                          -103.972084f,
                          -103.97209f,
                          -87.33655f,
                          -87.3366f};
  for (int e = -800; e <= 250; ++e) {
    float x = static_cast<float>(std::pow(10.0, e / 100.0));
    v.push_back(x);
    v.push_back(-x);
  }
  for (int i = -11000; i <= 11000; ++i)
    v.push_back(static_cast<float>(i / 100.0));
  // Around exp's overflow end, one f32 step at a time.
  for (uint32_t u = 0x42B00000; u <= 0x42B17218; u += 0x40)
    v.push_back(fromBits(u));
  std::vector<uint32_t> bits;
  for (float x : v)
    bits.push_back(bitsOf(x));
  for (uint32_t nan : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x7FFFFFFFu})
    bits.push_back(nan);
  return bits;
}

struct Function {
  const char *name;
  std::function<Expr(Expr)> halide;
  std::function<double(double)> reference;
  bool cancels; ///< the GELUs: the allowance also scales with |v|
};

int checkActivations(const Target &target, size_t &count) {
  const std::vector<uint32_t> in = activationInputs();
  auto act = [](const char *name, int64_t id, bool cancels) {
    return Function{name, [name](Expr x) { return activate(name, x); },
                    [id](double v) { return ffn_ref::activate(id, v); },
                    cancels};
  };
  const std::vector<Function> functions = {
      {"exp", expG, [](double v) { return std::exp(v); }, false},
      {"erf", erfG, [](double v) { return std::erf(v); }, false},
      act("relu", FFN_ACT_RELU, false),
      act("gelu", FFN_ACT_GELU, true),
      act("gelu_tanh", FFN_ACT_GELU_TANH, true),
      act("silu", FFN_ACT_SILU, false),
      act("sigmoid", FFN_ACT_SIGMOID, false),
      act("identity", FFN_ACT_IDENTITY, false)};
  for (const Function &f : functions) {
    std::vector<float> got = evaluate<float>(target, in, f.halide);
    count += in.size();
    for (size_t i = 0; i < in.size(); ++i) {
      const double v = fromBits(in[i]);
      const double want = f.reference(v);
      const double g = got[i];
      bool ok;
      double allowed = 0;
      if (std::isnan(want)) {
        ok = std::isnan(g);
      } else if (std::isinf(want) || std::fabs(want) > FLT_MAX) {
        // Overflowing in f32 may also land on FLT_MAX within the allowance.
        ok = g == (want > 0 ? INFINITY : -INFINITY) ||
             (std::isfinite(want) &&
              std::fabs(g - want) <= 16 * 0x1p-24 * std::fabs(want));
      } else {
        // |v| enters only where the functions cancel or underflow: beyond
        // |v| = 128 both are exact in f32 (1 + erf, 1 + exp(-2z) and
        // exp(-|v|) saturate), and at non-finite v the results are exact.
        const double av = std::isfinite(v) ? std::fmin(std::fabs(v), 128) : 0;
        const double ulps = 16 * 0x1p-24;
        allowed = ulps * (std::fabs(want) + (f.cancels ? av : 0)) +
                  0x1p-126 * std::fmax(1.0, av);
        ok = std::isfinite(g) && std::fabs(g - want) <= allowed;
      }
      if (!ok) {
        std::printf("self-test: FAIL (%s): %s(%.9g) [0x%08X]: got %.9g, "
                    "the reference %.17g (allowed error %.3g)\n",
                    target.to_string().c_str(), f.name, v, in[i], g, want,
                    allowed);
        return 1;
      }
    }
  }
  return 0;
}

} // namespace

int runSelfTest() {
  try {
    size_t conversions = 0, points = 0;
    for (const Target &target : jitTargets())
      if (checkConversions(target, conversions) ||
          checkActivations(target, points))
        return 1;
    std::printf("self-test: %zu conversions, %zu activation points: ok\n",
                conversions, points);
  } catch (const Halide::Error &e) {
    std::printf("self-test: FAIL: Halide: %s\n", e.what());
    return 1;
  }
  return 0;
}

} // namespace ffnc::halide
