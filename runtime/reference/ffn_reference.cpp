//===- ffn_reference.cpp - independent f64 reference of every FFN ---------===//

#include "ffn_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace ffn_ref {

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

/// f32's unit roundoff.
constexpr double kU = 0x1.0p-24;
/// Error of the kernel's activation approximations (ffn-approximate-math's
/// f32 polynomials for exp, erf and tanh, a few ulps) in units of kU,
/// relative to |f(v)|, plus, for the erf/tanh GELUs whose 1 + erf(.) cancels
/// for negative v, relative to |v|. 16 is a margin; the sum that follows
/// adds at least 8 sqrt(n) kU of the same magnitudes anyway.
constexpr double kActivationUlps = 16;
/// Error of the norms' rsqrt, in units of kU.
constexpr double kRsqrtUlps = 4;

/// The probabilistic model's confidence factor (Higham & Mary's lambda):
/// a sum of independent, zero-mean errors bounded by c_k exceeds
/// lambda sqrt(sum c_k^2) with probability below 2 exp(-lambda^2 / 2).
constexpr double kLambda = 8.0;

/// The rounding-error bound of a sum of n terms, as a factor of sum |t|.
double sumBound(BoundModel model, int64_t n) {
  double nu = static_cast<double>(n) * kU;
  if (model == BoundModel::WorstCase)
    return nu / (1 - nu);
  return kLambda * std::sqrt(static_cast<double>(n)) * kU;
}

/// Error bounds of the values of one row, in two parts. `lin` is propagated
/// as a worst case (through a sum, sum_k |w_k| lin_k): errors shared by many
/// outputs (a norm's mean and variance) and the activation approximations'
/// deterministic errors. `rss` holds bounds, at the probabilistic model's
/// confidence, of sums of independent rounding errors, and propagates as a
/// root sum of squares, sqrt(sum_k (w_k rss_k)^2). The worst-case model
/// keeps everything in `lin`.
struct RowErrors {
  std::vector<double> lin, rss;
  explicit RowErrors(size_t n) : lin(n), rss(n) {}
  void clear() {
    std::fill(lin.begin(), lin.end(), 0.0);
    std::fill(rss.begin(), rss.end(), 0.0);
  }
  double total(size_t j) const { return lin[j] + rss[j]; }
};

/// out_j = init_j + sum_k a_k w[k * cols + j] with the error bound of its
/// f32 evaluation: `terms` extra magnitudes (bias, residual) join the sum.
struct BoundedSum {
  std::vector<double> value, absSum, lin, rssSq;
  explicit BoundedSum(size_t cols)
      : value(cols), absSum(cols), lin(cols), rssSq(cols) {}
  void start(size_t j, double init, double initAbs) {
    value[j] = init;
    absSum[j] = initAbs;
    lin[j] = rssSq[j] = 0.0;
  }
  void add(const double *a, const RowErrors &aErr, size_t rows,
           const double *w, size_t cols) {
    for (size_t k = 0; k < rows; ++k) {
      const double ak = a[k], lk = aErr.lin[k], rk = aErr.rss[k];
      const double *wk = w + k * cols;
      for (size_t j = 0; j < cols; ++j) {
        value[j] += ak * wk[j];
        absSum[j] += std::fabs(ak * wk[j]);
        lin[j] += std::fabs(wk[j]) * lk;
        rssSq[j] += (wk[j] * rk) * (wk[j] * rk);
      }
    }
  }
  /// The sum's own rounding, g(n) sum |t|, goes with its model's part.
  void finish(BoundModel model, int64_t n, RowErrors &out) const {
    double g = sumBound(model, n);
    for (size_t j = 0; j < value.size(); ++j) {
      out.lin[j] = lin[j];
      out.rss[j] = std::sqrt(rssSq[j]);
      (model == BoundModel::WorstCase ? out.lin[j] : out.rss[j]) +=
          g * absSum[j];
    }
  }
};

/// In place: each row normalized as the descriptor says. With `err` (the
/// row's error bounds on entry), also the error bounds of the normalized
/// row: mean and variance as sums of d terms (shared by the whole row, so
/// worst-case), rsqrt's own error, then (v - mean) * r * scale + shift with
/// one rounding per operation.
void normalize(const ffn_kernel_desc &d, const double *scale,
               const double *shift, std::vector<double> &row, RowErrors *err,
               BoundModel model) {
  const size_t n = row.size();
  const double dn = static_cast<double>(n), g = sumBound(model, n + 1);
  const bool layer = d.norm == FFN_NORM_LAYERNORM;
  double mean = 0.0, meanErr = 0.0;
  if (layer) {
    double meanAbs = 0.0;
    for (size_t j = 0; j < n; ++j) {
      mean += row[j];
      meanAbs += std::fabs(row[j]);
      if (err)
        meanErr += err->total(j);
    }
    mean /= dn;
    meanErr = meanErr / dn + (g + kU) * meanAbs / dn;
  }
  auto devLin = [&](size_t j) {
    return err->lin[j] + meanErr + kU * std::fabs(row[j] - mean);
  };
  double sq = 0.0, sqErr = 0.0;
  for (size_t j = 0; j < n; ++j) {
    double dev = row[j] - mean;
    sq += dev * dev;
    if (err)
      sqErr += 2.0 * std::fabs(dev) * (devLin(j) + err->rss[j]);
  }
  double var = sq / dn + d.norm_eps;
  double inv = 1.0 / std::sqrt(var);
  // Relative error of inv: half the variance's, plus rsqrt's own.
  double varErr = sqErr / dn + (g + 2 * kU) * var;
  double invRel = varErr / (2.0 * var) + kRsqrtUlps * kU;
  for (size_t j = 0; j < n; ++j) {
    double dev = row[j] - mean;
    double scaled = dev * inv * scale[j];
    if (err) {
      double factor = std::fabs(inv * scale[j]);
      err->lin[j] = factor * devLin(j) + std::fabs(scaled) * (invRel + 2 * kU);
      err->rss[j] *= factor;
    }
    row[j] = scaled + (shift ? shift[j] : 0.0);
    if (err)
      err->lin[j] += kU * std::fabs(row[j]);
  }
}

/// The kernel's error in f(v) beyond the propagated input error.
double activationRoundoff(int64_t activation, double v, double fv) {
  if (activation == FFN_ACT_RELU || activation == FFN_ACT_IDENTITY)
    return 0.0;
  bool cancels =
      activation == FFN_ACT_GELU || activation == FFN_ACT_GELU_TANH;
  return kActivationUlps * kU * (std::fabs(fv) + (cancels ? std::fabs(v) : 0));
}

/// f(v) for an argument known to within lin + rss: f's largest change over
/// that interval (exact for monotone f, first order elsewhere) scales both
/// parts; the approximation's own error is deterministic.
void activationErrors(int64_t activation, double v, double fv, double &lin,
                      double &rss) {
  // An infinite argument (from infinite inputs) saturates f exactly, or the
  // result is not finite and is compared exactly.
  if (!std::isfinite(v)) {
    lin = rss = 0.0;
    return;
  }
  double e = lin + rss;
  double spread = std::max(std::fabs(activate(activation, v + e) - fv),
                           std::fabs(activate(activation, v - e) - fv));
  double slope = e > 0 ? spread / e : 0.0;
  lin = slope * lin + activationRoundoff(activation, v, fv);
  rss = slope * rss;
}
} // namespace

void forward(const ffn_kernel_desc &d, int64_t m, const double *x,
             const std::vector<const double *> &params, double *y,
             double *bound, const ForwardOptions &options) {
  const int64_t dm = d.d_model, df = d.d_ff;
  const BoundModel model = options.model;
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
  const double argScale = 1.0 + options.activationError;
  // A kernel that rounds the matmuls' inputs to its dtype (GPU tensor-core
  // operands: the pre-normalized input, the hidden activations) adds one
  // rounding of unit roundoff uOp to each, after whatever error the value
  // already had; the reference keeps the unrounded value, and the interval
  // covers the rounding either way.
  const double uOp = d.operand_rounding == FFN_DTYPE_BF16  ? 0x1p-8
                     : d.operand_rounding == FFN_DTYPE_F16 ? 0x1p-11
                                                           : 0.0;
  // These roundings only feed the next matmul's sum, where the
  // probabilistic model adds them as root sum of squares: scaled by lambda,
  // that is the Hoeffding bound of a sum of independent roundings.
  // Int8 operands (ffn_weight_quant): per group of quant_group values, a
  // quantum of max |v| / 127, the kernel's max taken over its own values
  // (within err of these); each value is off by at most half a quantum,
  // plus the f32 rounding of the scale products (a few units of 2^-24).
  const bool int8Operands = d.operand_rounding == FFN_DTYPE_INT8;
  auto quantizeOperands = [&](const std::vector<double> &v, RowErrors &err) {
    const size_t g = static_cast<size_t>(d.quant_group);
    for (size_t k0 = 0; k0 < v.size(); k0 += g) {
      size_t k1 = std::min(v.size(), k0 + g);
      double amax = 0.0;
      for (size_t j = k0; j < k1; ++j)
        amax = std::max(amax, std::fabs(v[j]) + err.total(j));
      double e = amax / 254.0 * (1.0 + 0x1p-20);
      for (size_t j = k0; j < k1; ++j) {
        if (model == BoundModel::WorstCase)
          err.lin[j] += e;
        else
          err.rss[j] += kLambda * e;
      }
    }
  };
  auto roundOperands = [&](const std::vector<double> &v, RowErrors &err) {
    if (int8Operands)
      return quantizeOperands(v, err);
    if (uOp == 0.0)
      return;
    for (size_t j = 0; j < v.size(); ++j) {
      double e = uOp * (std::fabs(v[j]) + err.total(j));
      if (model == BoundModel::WorstCase)
        err.lin[j] += e;
      else
        err.rss[j] += kLambda * e;
    }
  };

  // Sums run along rows of the [in, out] weights (contiguous in memory); in
  // double, so their order does not matter at f32 scale. Each carries the
  // magnitudes it summed, from which the f32 evaluation's error is bounded.
  std::vector<double> in(dm), h(df), out(dm);
  RowErrors inErr(dm), upErr(df), gateErr(df), hErr(df), outErr(dm);
  BoundedSum up(df), gate(df), down(dm);
  for (int64_t r = 0; r < m; ++r) {
    const double *xr = x + r * dm;
    in.assign(xr, xr + dm);
    inErr.clear(); // storage values are exact
    if (pre) {
      normalize(d, scale, shift, in, &inErr, model);
      roundOperands(in, inErr);
    } else if (int8Operands) {
      roundOperands(in, inErr); // x itself is quantized
    }
    for (int64_t j = 0; j < df; ++j) {
      double bu = bUp ? bUp[j] : 0.0, bg = bGate ? bGate[j] : 0.0;
      up.start(j, bu, std::fabs(bu));
      gate.start(j, bg, std::fabs(bg));
    }
    up.add(in.data(), inErr, dm, wUp, df);
    up.finish(model, dm + 1, upErr);
    if (d.gated) {
      gate.add(in.data(), inErr, dm, wGate, df);
      gate.finish(model, dm + 1, gateErr);
    }
    for (int64_t j = 0; j < df; ++j) {
      const BoundedSum &argSum = d.gated ? gate : up;
      RowErrors &argErr = d.gated ? gateErr : upErr;
      double arg = argSum.value[j] * argScale;
      double f = activate(d.activation, arg);
      double fLin = argErr.lin[j], fRss = argErr.rss[j];
      activationErrors(d.activation, arg, f, fLin, fRss);
      if (!d.gated) {
        h[j] = f;
        hErr.lin[j] = fLin;
        hErr.rss[j] = fRss;
        continue;
      }
      // f(gate) * up, one more rounding.
      double u = up.value[j];
      h[j] = f * u;
      hErr.lin[j] = std::fabs(u) * fLin + std::fabs(f) * upErr.lin[j] +
                    (fLin + fRss) * upErr.total(j) + kU * std::fabs(h[j]);
      hErr.rss[j] = std::hypot(u * fRss, f * upErr.rss[j]);
    }
    roundOperands(h, hErr);
    // The residual joins GEMM 2's sum as one more term.
    for (int64_t j = 0; j < dm; ++j) {
      double b = bDown ? bDown[j] : 0.0, res = d.residual ? xr[j] : 0.0;
      down.start(j, b + res, std::fabs(b) + std::fabs(res));
    }
    down.add(h.data(), hErr, df, wDown, dm);
    down.finish(model, df + 1 + (d.residual ? 1 : 0), outErr);
    out = down.value;
    if (post)
      normalize(d, scale, shift, out, &outErr, model);
    for (int64_t j = 0; j < dm; ++j) {
      y[r * dm + j] = out[j];
      if (bound)
        bound[r * dm + j] = outErr.total(j) + kU * std::fabs(out[j]);
    }
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

namespace {
/// |roundTo(dtype, v) - v| at most, for |v| <= a: half an ulp, relative in
/// the normal range, absolute among the subnormals.
double roundingBound(int64_t dtype, double a) {
  switch (dtype) {
  case FFN_DTYPE_BF16:
    return std::ldexp(a, -8) + std::ldexp(1.0, -134);
  case FFN_DTYPE_F16:
    return std::ldexp(a, -11) + std::ldexp(1.0, -25);
  default:
    return std::ldexp(a, -24) + std::ldexp(1.0, -150);
  }
}
} // namespace

Comparison compare(int64_t dtype, const std::vector<double> &got,
                   const std::vector<double> &ref,
                   const std::vector<double> &bound) {
  Comparison r;
  for (size_t i = 0; i < ref.size(); ++i) {
    double y = got[i], e = ref[i];
    if (!std::isfinite(e)) {
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
    // The interval an f32 result within the bound rounds into.
    double lo = roundTo(dtype, e - bound[i]), hi = roundTo(dtype, e + bound[i]);
    bool inside = lo <= y && y <= hi; // false for NaN
    if (!inside) {
      r.pass = false;
      if (!std::isfinite(y)) {
        ++r.nonFiniteMismatches;
        if (r.firstMismatch == SIZE_MAX)
          r.firstMismatch = i;
        continue;
      }
    } else if (!std::isfinite(y)) {
      ++r.nonFiniteMatches; // a correct overflow to +-Inf
      continue;
    }
    // For the report: the bound plus the final rounding's half ulp, which
    // every element inside the interval meets.
    double abs = std::fabs(y - e);
    double allowed = bound[i] + roundingBound(dtype, std::fabs(e) + bound[i]);
    double ratio = abs / allowed;
    if (abs > r.maxAbs)
      r.maxAbs = abs;
    if (ratio > r.maxRatio) {
      r.maxRatio = ratio;
      r.worst = i;
      r.worstAllowed = allowed;
    }
  }
  return r;
}

double Random::uniform(double lo, double hi) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return lo + (hi - lo) * static_cast<double>(z >> 11) * 0x1.0p-53;
}

Buffer makeBuffer(int64_t dtype, size_t n) {
  Buffer b;
  b.bytes.resize(n * (dtype == FFN_DTYPE_F32 ? 4 : 2));
  b.values.resize(n);
  return b;
}

void fill(Buffer &b, int64_t dtype, Random &rng, double lo, double hi) {
  for (size_t i = 0; i < b.values.size(); ++i) {
    double v = roundTo(dtype, rng.uniform(lo, hi));
    b.values[i] = v;
    store(dtype, b.bytes.data(), i, v);
  }
}

} // namespace ffn_ref
