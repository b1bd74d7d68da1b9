//===- ffn_reference.cpp - independent f64 reference of every FFN ---------===//

#include "ffn_reference.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace ffn_ref {

double tolerance(int64_t dtype, int64_t dModel, int64_t dFF) {
  const double u32 = std::ldexp(1.0, -24);
  double uOut = dtype == FFN_DTYPE_F32    ? u32
                : dtype == FFN_DTYPE_BF16 ? std::ldexp(1.0, -8)
                                          : std::ldexp(1.0, -11);
  return 2.0 * uOut + 16.0 * u32 * std::sqrt(static_cast<double>(dModel + dFF));
}

double activate(int64_t activation, double v) {
  switch (activation) {
  case FFN_ACT_RELU:
    return std::isnan(v) ? v : (v > 0.0 ? v : 0.0);
  case FFN_ACT_GELU:
    return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  case FFN_ACT_GELU_TANH: {
    const double c = std::sqrt(2.0 / M_PI);
    return 0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v)));
  }
  case FFN_ACT_SILU:
    return v / (1.0 + std::exp(-v));
  case FFN_ACT_SIGMOID:
    return 1.0 / (1.0 + std::exp(-v));
  default:
    return v;
  }
}

namespace {
const double *find(const ffn_kernel_desc &d,
                   const std::vector<const double *> &params,
                   const char *name) {
  for (int64_t i = 0; i < d.num_params; ++i)
    if (std::strcmp(d.params[i].name, name) == 0)
      return params[i];
  return nullptr;
}

/// In place: each row normalized as the descriptor says.
void normalize(const ffn_kernel_desc &d, const double *scale,
               const double *shift, std::vector<double> &row) {
  const double n = static_cast<double>(row.size());
  double mean = 0.0;
  if (d.norm == FFN_NORM_LAYERNORM) {
    for (double v : row)
      mean += v;
    mean /= n;
  }
  double sq = 0.0;
  for (double v : row)
    sq += (v - mean) * (v - mean);
  double inv = 1.0 / std::sqrt(sq / n + d.norm_eps);
  for (size_t j = 0; j < row.size(); ++j) {
    row[j] = (row[j] - mean) * inv * scale[j];
    if (shift)
      row[j] += shift[j];
  }
}
} // namespace

void forward(const ffn_kernel_desc &d, int64_t m, const double *x,
             const std::vector<const double *> &params, double *y) {
  const int64_t dm = d.d_model, df = d.d_ff;
  const double *wUp = find(d, params, "w_up");
  const double *wGate = find(d, params, "w_gate");
  const double *wDown = find(d, params, "w_down");
  const double *bUp = find(d, params, "b_up");
  const double *bGate = find(d, params, "b_gate");
  const double *bDown = find(d, params, "b_down");
  const double *scale = find(d, params, "norm_scale");
  const double *shift = find(d, params, "norm_shift");
  const bool pre = d.norm != FFN_NORM_NONE && d.norm_position == FFN_NORM_PRE;
  const bool post = d.norm != FFN_NORM_NONE && d.norm_position == FFN_NORM_POST;

  std::vector<double> in(dm), up(df), gate(df), out(dm);
  for (int64_t r = 0; r < m; ++r) {
    const double *xr = x + r * dm;
    in.assign(xr, xr + dm);
    if (pre)
      normalize(d, scale, shift, in);
    // Loops run along rows of the [in, out] weights (contiguous in memory);
    // sums are in double, so their order does not matter at f32 scale.
    for (int64_t j = 0; j < df; ++j) {
      up[j] = bUp ? bUp[j] : 0.0;
      gate[j] = bGate ? bGate[j] : 0.0;
    }
    for (int64_t k = 0; k < dm; ++k)
      for (int64_t j = 0; j < df; ++j) {
        up[j] += in[k] * wUp[k * df + j];
        if (d.gated)
          gate[j] += in[k] * wGate[k * df + j];
      }
    for (int64_t j = 0; j < df; ++j)
      up[j] = d.gated ? activate(d.activation, gate[j]) * up[j]
                      : activate(d.activation, up[j]);
    for (int64_t j = 0; j < dm; ++j)
      out[j] = bDown ? bDown[j] : 0.0;
    for (int64_t k = 0; k < df; ++k)
      for (int64_t j = 0; j < dm; ++j)
        out[j] += up[k] * wDown[k * dm + j];
    if (d.residual)
      for (int64_t j = 0; j < dm; ++j)
        out[j] += xr[j];
    if (post)
      normalize(d, scale, shift, out);
    for (int64_t j = 0; j < dm; ++j)
      y[r * dm + j] = out[j];
  }
}

uint16_t toBF16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  if (std::isnan(v))
    return static_cast<uint16_t>((bits >> 16) | 0x40); // quiet NaN
  uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float fromBF16(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t toF16(float v) {
  return static_cast<uint16_t>(
      __builtin_bit_cast(uint16_t, static_cast<_Float16>(v)));
}

float fromF16(uint16_t v) {
  return static_cast<float>(__builtin_bit_cast(_Float16, v));
}

double roundTo(int64_t dtype, double v) {
  float f = static_cast<float>(v);
  switch (dtype) {
  case FFN_DTYPE_BF16:
    return fromBF16(toBF16(f));
  case FFN_DTYPE_F16:
    return fromF16(toF16(f));
  default:
    return f;
  }
}

void store(int64_t dtype, void *out, size_t i, double v) {
  float f = static_cast<float>(v);
  switch (dtype) {
  case FFN_DTYPE_BF16:
    static_cast<uint16_t *>(out)[i] = toBF16(f);
    break;
  case FFN_DTYPE_F16:
    static_cast<uint16_t *>(out)[i] = toF16(f);
    break;
  default:
    static_cast<float *>(out)[i] = f;
    break;
  }
}

double load(int64_t dtype, const void *in, size_t i) {
  switch (dtype) {
  case FFN_DTYPE_BF16:
    return fromBF16(static_cast<const uint16_t *>(in)[i]);
  case FFN_DTYPE_F16:
    return fromF16(static_cast<const uint16_t *>(in)[i]);
  default:
    return static_cast<const float *>(in)[i];
  }
}

/// err_i = |y_i - ref_i| / (|ref_i| + rms(ref)): relative where outputs are
/// large, absolute (scaled) where they pass near zero. Non-finite reference
/// values must be reproduced exactly (NaN as NaN, Inf with its sign).
Comparison compare(const std::vector<double> &got,
                   const std::vector<double> &ref, double tolerance) {
  Comparison r;
  double sumSq = 0;
  size_t finite = 0;
  for (double v : ref)
    if (std::isfinite(v)) {
      sumSq += v * v;
      ++finite;
    }
  r.scale = finite ? std::sqrt(sumSq / finite) : 1.0;
  if (r.scale == 0)
    r.scale = 1.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double y = got[i], e = ref[i];
    if (!std::isfinite(e) || !std::isfinite(y)) {
      bool same = (std::isnan(e) && std::isnan(y)) || (y == e);
      if (same)
        ++r.nonFiniteMatches;
      if (!same) {
        ++r.nonFiniteMismatches;
        if (r.firstMismatch == SIZE_MAX)
          r.firstMismatch = i;
        r.pass = false;
      }
      continue;
    }
    double abs = std::fabs(y - e);
    double rel = abs / (std::fabs(e) + r.scale);
    if (abs > r.maxAbs)
      r.maxAbs = abs;
    if (rel > r.maxRel) {
      r.maxRel = rel;
      r.worst = i;
    }
  }
  if (r.maxRel > tolerance)
    r.pass = false;
  return r;
}

} // namespace ffn_ref
