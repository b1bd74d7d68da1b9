//===- ffn_reference.h - independent f64 reference of every FFN -*- C++ -*-===//
//
// A plain, obviously-correct implementation of what ffn/kernel_abi.h says a
// kernel computes, in double precision. It shares no code with the
// compiler: it reads only the kernel descriptor. Used by `ffnc run --check`
// and by the tests to judge generated kernels.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_REFERENCE_H
#define FFN_REFERENCE_H

#include "ffn/kernel_abi.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ffn_ref {

/// y = FFN(x) for `m` rows. `x` is [m, d_model]; params[i] holds parameter i
/// of the descriptor in [in, out] layout; y is [m, d_model].
void forward(const ffn_kernel_desc &desc, int64_t m, const double *x,
             const std::vector<const double *> &params, double *y);

/// The bound `ffnc run --check` and ffn-bench apply to
/// max |y - ref| / (|ref| + rms(ref)) (docs/numerics.md): two roundings of
/// the output to the storage type plus f32 accumulation error growing like
/// sqrt of the reduction lengths, with a safety factor.
double tolerance(int64_t dtype, int64_t dModel, int64_t dFF);

struct Comparison {
  bool pass = true;
  double maxAbs = 0, maxRel = 0, scale = 0;
  size_t worst = 0;
  size_t nonFiniteMismatches = 0;
  size_t nonFiniteMatches = 0;
  size_t firstMismatch = SIZE_MAX;
};

/// err_i = |y_i - ref_i| / (|ref_i| + rms(ref)); fails above `tolerance`,
/// and where non-finite values differ (NaN must be NaN, Inf the same Inf).
Comparison compare(const std::vector<double> &got,
                   const std::vector<double> &ref, double tolerance);

/// The activation functions, by their definitions.
double activate(int64_t activation, double v);

// Storage conversions (round to nearest even, NaN and Inf preserved).
uint16_t toBF16(float v);
float fromBF16(uint16_t v);
uint16_t toF16(float v);
float fromF16(uint16_t v);

/// Rounds `v` to the dtype and returns the value the kernel will see.
double roundTo(int64_t dtype, double v);
/// Stores `v` (already representable) into `out` at element `i`.
void store(int64_t dtype, void *out, size_t i, double v);
double load(int64_t dtype, const void *in, size_t i);

} // namespace ffn_ref

#endif // FFN_REFERENCE_H
