//===- ffn_reference.cpp - independent f64 reference of every FFN ---------===//

#include "ffn_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <thread>

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
  /// Adds the terms of a[first, first + rows) (and their errors): `first`
  /// is a block's first column of a grouped FFN's input row, whose other
  /// blocks feed other sums.
  void add(const double *a, const RowErrors &aErr, size_t rows, const double *w,
           size_t cols, size_t first = 0) {
    // Four rows of w at a time, each sum kept in a register across them:
    // the four sums of a row as wide as d_ff no longer stream through the
    // cache once per k. Every sum still adds its terms one by one in k's
    // order, so the values are those of a plain k loop.
    size_t k = 0;
    for (; k + 4 <= rows; k += 4)
      addRows<4>(a, aErr, w, cols, first, k);
    for (; k < rows; ++k)
      addRows<1>(a, aErr, w, cols, first, k);
  }
  /// The sum's own rounding, g(n) sum |t|, goes with its model's part. The
  /// errors go to out's elements from `first` on (a grouped FFN's block
  /// writes its columns of the whole row).
  void finish(BoundModel model, int64_t n, RowErrors &out,
              size_t first = 0) const {
    double g = sumBound(model, n);
    for (size_t j = 0; j < value.size(); ++j) {
      const size_t o = first + j;
      out.lin[o] = lin[j];
      out.rss[o] = std::sqrt(rssSq[j]);
      (model == BoundModel::WorstCase ? out.lin[o] : out.rss[o]) +=
          g * absSum[j];
    }
  }

private:
  /// The terms of rows [k, k + B) of w (a's elements first + k, ...).
  template <size_t B>
  void addRows(const double *a, const RowErrors &aErr, const double *w,
               size_t cols, size_t first, size_t k) {
    double ak[B], lk[B], rk[B];
    const double *__restrict wk[B];
    for (size_t t = 0; t < B; ++t) {
      const size_t i = first + k + t;
      ak[t] = a[i];
      lk[t] = aErr.lin[i];
      rk[t] = aErr.rss[i];
      wk[t] = w + (k + t) * cols;
    }
    double *__restrict v = value.data(), *__restrict s = absSum.data(),
                       *__restrict l = lin.data(), *__restrict q = rssSq.data();
    for (size_t j = 0; j < cols; ++j) {
      double vj = v[j], sj = s[j], lj = l[j], qj = q[j];
      for (size_t t = 0; t < B; ++t) {
        const double wj = wk[t][j];
        vj += ak[t] * wj;
        sj += std::fabs(ak[t] * wj);
        lj += std::fabs(wj) * lk[t];
        qj += (wj * rk[t]) * (wj * rk[t]);
      }
      v[j] = vj;
      s[j] = sj;
      l[j] = lj;
      q[j] = qj;
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
  // An infinite input makes the variance infinite and inv exactly 0, in
  // f32 as here: every finite deviation then scales to exactly 0 (which a
  // grouped FFN's other blocks see), the infinite ones to NaN, compared
  // exactly. The relative-error formula would give NaN bounds instead.
  double invRel =
      std::isinf(var) ? 0.0 : varErr / (2.0 * var) + kRsqrtUlps * kU;
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

/// The weights and biases of one FFN: the dense FFN's, one expert's of a
/// mixture, or one block's of a grouped FFN (null where absent).
struct FfnWeights {
  const double *wUp = nullptr, *wGate = nullptr, *wDown = nullptr;
  const double *bUp = nullptr, *bGate = nullptr, *bDown = nullptr;
};

/// One FFN's output for one row before the post-norm: its values, the
/// magnitudes GEMM 2 summed (bias and residual included), and its errors.
struct FfnRow {
  std::vector<double> value, absSum;
  RowErrors err;
  explicit FfnRow(size_t n) : value(n), absSum(n), err(n) {}
};

/// The blocks of a grouped FFN (kind FFN_KIND_GROUPED); 1 otherwise, as a
/// dense FFN or a mixture's expert is one block of the whole widths.
int64_t blockCount(const ffn_kernel_desc &d) {
  return d.kind == FFN_KIND_GROUPED && d.groups > 1 ? d.groups : 1;
}

/// Evaluates a kernel's FFNs on one row at a time, with their error bounds.
class RowEvaluator {
public:
  RowEvaluator(const ffn_kernel_desc &d, const ForwardOptions &options)
      : d(d), model(options.model), argScale(1.0 + options.activationError),
        blocks(blockCount(d)), bd(d.d_model / blocks), bf(d.d_ff / blocks),
        a(d.d_model), aErr(d.d_model), op(d.d_model), opErr(d.d_model), h(bf),
        upErr(bf), gateErr(bf), hErr(bf), up(bf), gate(bf), down(bd) {}

  /// Loads input row `xr`: `a` is the matmuls' input before the operand
  /// rounding (x, or pre-norm(x): the router's input), `op` after it.
  void load(const double *xr, const double *scale, const double *shift) {
    a.assign(xr, xr + d.d_model);
    aErr.clear(); // storage values are exact
    if (pre())
      normalize(d, scale, shift, a, &aErr, model);
    op = a;
    opErr = aErr;
    // The pre-normalized input is rounded; x itself only when quantized.
    // Block by block: each block's GEMM 1 quantizes its own input, so a
    // grouped FFN's int8 groups restart at every block's first column.
    if (pre() || d.operand_rounding == FFN_DTYPE_INT8)
      for (int64_t g = 0; g < blocks; ++g)
        roundOperands(op, opErr, g * bd, (g + 1) * bd);
  }

  /// The FFN with weights `w` on block `block` of the loaded row (a grouped
  /// FFN's; else block 0, the whole row), into the block's columns of `out`;
  /// `residual` (the whole row, or null) joins GEMM 2's sum, whose rounding
  /// is bounded as that of a sum of `downTerms` terms.
  void ffn(const FfnWeights &w, int64_t block, const double *residual,
           int64_t downTerms, FfnRow &out) {
    const size_t first = static_cast<size_t>(block * bd);
    for (int64_t j = 0; j < bf; ++j) {
      double bu = w.bUp ? w.bUp[j] : 0.0, bg = w.bGate ? w.bGate[j] : 0.0;
      up.start(j, bu, std::fabs(bu));
      gate.start(j, bg, std::fabs(bg));
    }
    up.add(op.data(), opErr, bd, w.wUp, bf, first);
    up.finish(model, bd + 1, upErr);
    if (d.gated) {
      gate.add(op.data(), opErr, bd, w.wGate, bf, first);
      gate.finish(model, bd + 1, gateErr);
    }
    for (int64_t j = 0; j < bf; ++j) {
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
    roundOperands(h, hErr, 0, h.size());
    // The residual joins GEMM 2's sum as one more term.
    for (int64_t j = 0; j < bd; ++j) {
      double b = w.bDown ? w.bDown[j] : 0.0;
      double res = residual ? residual[first + j] : 0.0;
      down.start(j, b + res, std::fabs(b) + std::fabs(res));
    }
    down.add(h.data(), hErr, bf, w.wDown, bd);
    down.finish(model, downTerms, out.err, first);
    std::copy(down.value.begin(), down.value.end(), out.value.begin() + first);
    std::copy(down.absSum.begin(), down.absSum.end(),
              out.absSum.begin() + first);
  }

  /// The post-norm of `out` (errors `err`), then the row's values and
  /// bounds (with the final f32 rounding) into y and, if not null, bound.
  void finish(std::vector<double> &out, RowErrors &err, const double *scale,
              const double *shift, double *y, double *bound) const {
    if (d.norm != FFN_NORM_NONE && d.norm_position == FFN_NORM_POST)
      normalize(d, scale, shift, out, &err, model);
    for (int64_t j = 0; j < d.d_model; ++j) {
      y[j] = out[j];
      if (bound)
        bound[j] = err.total(j) + kU * std::fabs(out[j]);
    }
  }

  const ffn_kernel_desc &d;
  const BoundModel model;
  const double argScale;
  /// The blocks and one block's widths, GEMM 1's and GEMM 2's reductions:
  /// d_model and d_ff as one block but for a grouped FFN.
  const int64_t blocks, bd, bf;
  std::vector<double> a;
  RowErrors aErr;

private:
  bool pre() const {
    return d.norm != FFN_NORM_NONE && d.norm_position == FFN_NORM_PRE;
  }

  // A kernel that rounds the matmuls' inputs to its dtype (GPU tensor-core
  // operands: the pre-normalized input, the hidden activations) adds one
  // rounding of unit roundoff uOp to each, after whatever error the value
  // already had; the reference keeps the unrounded value, and the interval
  // covers the rounding either way. These roundings only feed the next
  // matmul's sum, where the probabilistic model adds them as root sum of
  // squares: scaled by lambda, that is the Hoeffding bound of a sum of
  // independent roundings.
  // Int8 operands (ffn_weight_quant): per group of quant_group values, a
  // quantum of max |v| / 127, the kernel's max taken over its own values
  // (within err of these); each value is off by at most half a quantum,
  // plus the f32 rounding of the scale products (a few units of 2^-24).
  // Only v[begin, end), one matmul's input, whose int8 groups start at
  // `begin`.
  void roundOperands(const std::vector<double> &v, RowErrors &err, size_t begin,
                     size_t end) const {
    if (d.operand_rounding == FFN_DTYPE_INT8) {
      const size_t g = static_cast<size_t>(d.quant_group);
      for (size_t k0 = begin; k0 < end; k0 += g) {
        size_t k1 = std::min(end, k0 + g);
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
      return;
    }
    const double uOp = d.operand_rounding == FFN_DTYPE_BF16  ? 0x1p-8
                       : d.operand_rounding == FFN_DTYPE_F16 ? 0x1p-11
                                                             : 0.0;
    if (uOp == 0.0)
      return;
    for (size_t j = begin; j < end; ++j) {
      double e = uOp * (std::fabs(v[j]) + err.total(j));
      if (model == BoundModel::WorstCase)
        err.lin[j] += e;
      else
        err.rss[j] += kLambda * e;
    }
  }

  std::vector<double> op;
  RowErrors opErr;
  // Sums run along rows of the [in, out] weights (contiguous in memory); in
  // double, so their order does not matter at f32 scale. Each carries the
  // magnitudes it summed, from which the f32 evaluation's error is bounded.
  std::vector<double> h;
  RowErrors upErr, gateErr, hErr;
  BoundedSum up, gate, down;
};

/// Parameter `name`'s index, or -1.
int64_t paramIndex(const ffn_kernel_desc &d, const char *name) {
  for (int64_t i = 0; i < d.num_params; ++i)
    if (std::strcmp(d.params[i].name, name) == 0)
      return i;
  return -1;
}

/// The dense FFN's weights, or expert e's of a mixture's stacked ones (block
/// e's of a grouped FFN's).
FfnWeights ffnWeights(const ffn_kernel_desc &d,
                      const std::vector<const double *> &params,
                      int64_t expert = 0) {
  auto get = [&](const char *name) -> const double * {
    int64_t i = paramIndex(d, name);
    if (i < 0)
      return nullptr;
    const ffn_param_desc &p = d.params[i];
    int64_t size = p.shape[0] * std::max<int64_t>(p.shape[1], 1);
    return params[i] + (p.experts > 0 ? expert * size : 0);
  };
  FfnWeights w;
  w.wUp = get("w_up");
  w.wGate = get("w_gate");
  w.wDown = get("w_down");
  w.bUp = get("b_up");
  w.bGate = get("b_gate");
  w.bDown = get("b_down");
  return w;
}

/// The order the f64 reference ranks experts in: descending logit, ties to
/// the lower index; NaN (from non-finite inputs) last.
bool ranksBefore(const std::vector<double> &l, int64_t e1, int64_t e2) {
  double k1 = std::isnan(l[e1]) ? -INFINITY : l[e1];
  double k2 = std::isnan(l[e2]) ? -INFINITY : l[e2];
  return k1 > k2 || (k1 == k2 && e1 < e2);
}

/// At most this many candidate selections are tested for one row; beyond
/// it only the single swaps of the reference's selection are.
constexpr uint64_t kMaxCombinations = 1 << 16;

/// The selections of top_k experts an f32 router may make for one row:
/// sets[0] is the f64 reference's; the others are those the logits' f32
/// errors allow, the likeliest first, at most kMaxAlternatives of them.
/// Each is ordered by descending f64 logit.
struct Selections {
  std::vector<std::vector<int64_t>> sets;
  bool unresolved = false;
};

/// Every logit l[e] of the kernel lies within L[e] of the reference's, and
/// experts whose router columns are identical (the same class, cls[e] = its
/// lowest member) get bit-identical logits, which the kernel ranks by index.
/// A selection S is then plausible when some logits within those intervals
/// make it the top k: within each class S holds a prefix of the members by
/// index, and max over e outside S of (l - L) <= min over e in S of (l + L)
/// (a common threshold lies between them; '<=' includes ties, a superset).
/// Its margin, the gap between the two, ranks it.
Selections selections(const std::vector<double> &l,
                      const std::vector<double> &L,
                      const std::vector<int64_t> &cls, int64_t k,
                      bool analyse) {
  const int64_t n = static_cast<int64_t>(l.size());
  std::vector<int64_t> order(n);
  for (int64_t e = 0; e < n; ++e)
    order[e] = e;
  std::sort(order.begin(), order.end(),
            [&](int64_t e1, int64_t e2) { return ranksBefore(l, e1, e2); });
  Selections s;
  s.sets.emplace_back(order.begin(), order.begin() + k);
  if (!analyse || k == 0 || k == n)
    return s;
  // Non-finite logits have no meaningful interval: the row is judged by
  // the reference's selection (its output is then not finite anyway).
  for (int64_t e = 0; e < n; ++e)
    if (!std::isfinite(l[e]) || !std::isfinite(L[e]))
      return s;
  std::vector<double> lo(n), up(n);
  std::vector<int64_t> pos(n);
  for (int64_t e = 0; e < n; ++e) {
    lo[e] = l[e] - L[e];
    up[e] = l[e] + L[e];
    pos[order[e]] = e;
  }
  auto canBeat = [&](int64_t e2, int64_t e) {
    return cls[e2] == cls[e] ? e2 < e : up[e2] >= lo[e];
  };
  auto surelyBeats = [&](int64_t e2, int64_t e) {
    return cls[e2] == cls[e] ? e2 < e : lo[e2] > up[e];
  };
  // Unambiguous (the common case): no selected expert's interval reaches
  // down to an unselected one's of another class.
  bool overlap = false;
  for (int64_t i = 0; i < k && !overlap; ++i)
    for (int64_t j = k; j < n && !overlap; ++j)
      overlap = cls[order[i]] != cls[order[j]] && up[order[j]] >= lo[order[i]];
  if (!overlap)
    return s;

  // In every plausible selection: fewer than k others can beat it. In none:
  // at least k others surely beat it. The rest are the candidates.
  std::vector<int64_t> sureIn, candidates;
  for (int64_t e : order) {
    int64_t can = 0, surely = 0;
    for (int64_t e2 = 0; e2 < n; ++e2) {
      if (e2 == e)
        continue;
      can += canBeat(e2, e);
      surely += surelyBeats(e2, e);
    }
    if (can < k)
      sureIn.push_back(e);
    else if (surely < k)
      candidates.push_back(e);
  }
  const int64_t r = k - static_cast<int64_t>(sureIn.size());

  std::vector<char> in(n);
  std::vector<int64_t> firstOut(n);
  // The margin of selection `set`, or -1 if it is not plausible.
  auto margin = [&](const std::vector<int64_t> &set) {
    std::fill(in.begin(), in.end(), 0);
    for (int64_t e : set)
      in[e] = 1;
    std::fill(firstOut.begin(), firstOut.end(), n);
    double maxLo = -INFINITY, minUp = INFINITY;
    for (int64_t e = 0; e < n; ++e)
      if (!in[e]) {
        firstOut[cls[e]] = std::min(firstOut[cls[e]], e);
        maxLo = std::max(maxLo, lo[e]);
      }
    for (int64_t e : set) {
      if (firstOut[cls[e]] < e)
        return -1.0; // not a prefix of its class
      minUp = std::min(minUp, up[e]);
    }
    return maxLo <= minUp ? minUp - maxLo : -1.0;
  };
  auto byRank = [&](std::vector<int64_t> &set) {
    std::sort(set.begin(), set.end(),
              [&](int64_t e1, int64_t e2) { return pos[e1] < pos[e2]; });
  };
  std::vector<std::pair<double, std::vector<int64_t>>> found;
  auto consider = [&](std::vector<int64_t> set) {
    byRank(set);
    if (set == s.sets[0])
      return;
    double gap = margin(set);
    if (gap >= 0)
      found.emplace_back(gap, std::move(set));
  };

  // C(candidates, r), saturating.
  uint64_t combinations = 1;
  const int64_t c = static_cast<int64_t>(candidates.size());
  for (int64_t i = 0; i < r && combinations <= kMaxCombinations; ++i)
    combinations = combinations * (c - i) / (i + 1);
  if (r >= 0 && r <= c && combinations <= kMaxCombinations) {
    std::vector<int64_t> pick(r);
    for (int64_t i = 0; i < r; ++i)
      pick[i] = i;
    while (true) {
      std::vector<int64_t> set = sureIn;
      for (int64_t i : pick)
        set.push_back(candidates[i]);
      consider(std::move(set));
      int64_t i = r - 1;
      while (i >= 0 && pick[i] == c - r + i)
        --i;
      if (i < 0)
        break;
      ++pick[i];
      for (int64_t j = i + 1; j < r; ++j)
        pick[j] = pick[j - 1] + 1;
    }
  } else {
    s.unresolved = true;
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = k; j < n; ++j) {
        std::vector<int64_t> set = s.sets[0];
        set[i] = order[j];
        consider(std::move(set));
      }
  }
  // The likeliest first; equal margins in the order found (deterministic).
  std::vector<size_t> rank(found.size());
  for (size_t i = 0; i < rank.size(); ++i)
    rank[i] = i;
  std::sort(rank.begin(), rank.end(), [&](size_t x, size_t y) {
    return found[x].first > found[y].first ||
           (found[x].first == found[y].first && x < y);
  });
  if (rank.size() > kMaxAlternatives) {
    s.unresolved = true;
    rank.resize(kMaxAlternatives);
  }
  for (size_t i : rank)
    s.sets.push_back(std::move(found[i].second));
  return s;
}

/// The exp approximation's error (ffn-approximate-math's f32 polynomial), in
/// units of kU relative to the result: as for the activations.
constexpr double kExpUlps = kActivationUlps;

/// The router's weights g of selection `sel` (ffn_router) for logits `l`,
/// and a bound rel[j] on the relative error |g'[j] - g[j]| / |g[j]| of an
/// f32 kernel's g', whose logits are within L of these.
///  - The logits' error: log g[j] is l[e_j] minus the log-sum-exp over the
///    softmax's set, which is 1-Lipschitz in the max norm, so log g moves by
///    at most L[e_j] + max L over the set (for softmax_topk with
///    router_normalize, g = exp(l[e_j]) / sum over the selection: the same
///    with the selection's max).
///  - The f32 evaluation: exp's argument l - max rounded (u (|l| + |max| +
///    2 L) covers it, with or without the max subtracted), exp itself
///    (kExpUlps u), the sum of n positive terms (gamma_n relative), the
///    division (u); a normalization divides by a sum of k of these (their
///    largest error, gamma_k, u). Each is a factor (1 + d) with |d| <= rho_i;
///    their product lies within exp(+-(-log(1 - sum rho_i))).
/// Together rel = exp(logit part - log(1 - rho)) - 1, where rho is about
/// (2 kExpUlps + n + 1) u + 2 u (|l| + |max| + 2 L) (doubled again when
/// normalizing): ~1e-5 relative for realistic logits.
void routerWeights(const ffn_kernel_desc &d, const std::vector<int64_t> &sel,
                   const std::vector<double> &l, const std::vector<double> &L,
                   std::vector<double> &g, std::vector<double> &rel) {
  const int64_t k = static_cast<int64_t>(sel.size());
  const bool topkSoftmax = d.router == FFN_ROUTER_TOPK_SOFTMAX;
  std::vector<int64_t> set;
  if (topkSoftmax) {
    set = sel;
  } else {
    for (int64_t e = 0; e < d.experts; ++e)
      set.push_back(e);
  }
  const int64_t n = static_cast<int64_t>(set.size());
  double lmax = -INFINITY, Lset = 0.0, Lsel = 0.0;
  for (int64_t e : set) {
    lmax = std::max(lmax, l[e]);
    Lset = std::max(Lset, L[e]);
  }
  for (int64_t e : sel)
    Lsel = std::max(Lsel, L[e]);
  double den = 0.0;
  for (int64_t e : set)
    den += std::exp(l[e] - lmax);
  auto rhoNum = [&](int64_t e) {
    return kExpUlps * kU + kU * (std::fabs(l[e]) + std::fabs(lmax) + 2 * Lset);
  };
  double rhoNumMax = 0.0;
  for (int64_t e : set)
    rhoNumMax = std::max(rhoNumMax, rhoNum(e));
  const double rhoDen = rhoNumMax + sumBound(BoundModel::WorstCase, n);
  auto rhoP = [&](int64_t e) { return rhoNum(e) + rhoDen + kU; };
  double selSum = 0.0, rhoSelMax = 0.0;
  for (int64_t e : sel) {
    selSum += std::exp(l[e] - lmax) / den;
    rhoSelMax = std::max(rhoSelMax, rhoP(e));
  }
  const bool normalize = !topkSoftmax && d.router_normalize;
  g.resize(k);
  rel.resize(k);
  for (int64_t j = 0; j < k; ++j) {
    int64_t e = sel[j];
    double p = std::exp(l[e] - lmax) / den;
    double logitPart = L[e] + (normalize ? Lsel : Lset);
    double rho = rhoP(e);
    if (normalize) {
      p /= selSum;
      rho += rhoSelMax + sumBound(BoundModel::WorstCase, k) + kU;
    }
    g[j] = p;
    rel[j] = rho < 1 ? std::expm1(logitPart - std::log1p(-rho)) : INFINITY;
  }
}

/// How many threads evaluate m rows of `rowMacs` multiply-adds each: one
/// per core, but none that would get less than about 10^7 (a thread's
/// start and join cost more than that saves). One core took 8.7 s for
/// LLaMA-7B's MLP at m = 64, and a GPU check of Mixtral at m = 65 ran past
/// its time limit.
int64_t rowThreads(int64_t m, double rowMacs) {
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  const double byWork = double(m) * rowMacs / 1e7;
  return static_cast<int64_t>(
      std::clamp(std::min(double(m), byWork), 1.0, cores));
}

/// body(part, r0, r1) for `parts` contiguous ranges of rows [0, m), each on
/// its own thread (the first on the caller's; where the system refuses a
/// thread, that range and the later ones too). Rows are independent and
/// each is evaluated by the same code wherever it runs: the results do not
/// depend on the split.
template <typename Body>
void forRowRanges(int64_t m, int64_t parts, Body &&body) {
  auto first = [&](int64_t p) { return p * m / parts; };
  std::vector<std::thread> threads;
  int64_t started = 1;
  for (; started < parts; ++started) {
    try {
      threads.emplace_back(
          [&body, p = started, r0 = first(started), r1 = first(started + 1)] {
            body(p, r0, r1);
          });
    } catch (const std::system_error &) {
      break;
    }
  }
  body(0, 0, first(1));
  for (int64_t p = started; p < parts; ++p)
    body(p, first(p), first(p + 1));
  for (std::thread &t : threads)
    t.join();
}

/// forward() and route(): `evaluate` false computes the routing only.
void run(const ffn_kernel_desc &d, int64_t m, const double *x,
         const std::vector<const double *> &params, double *y, double *bound,
         const ForwardOptions &options, Routing *routing, bool evaluate) {
  const int64_t dm = d.d_model, df = d.d_ff;
  const BoundModel model = options.model;
  const double *scale = find(d, params, "norm_scale");
  const double *shift = find(d, params, "norm_shift");
  // Multiply-adds of one row's matmuls (a mixture's: of its active experts
  // and router), which sets how many threads share the rows.
  const bool moe = d.kind == FFN_KIND_MOE;
  const int64_t blocks = blockCount(d);
  const int64_t active =
      moe ? std::clamp<int64_t>(d.top_k, 0, d.experts) + d.shared_experts : 1;
  const double rowMacs = (d.gated ? 3.0 : 2.0) * dm * (df / blocks) * active +
                         (moe ? double(dm) * d.experts : 0.0);
  const int64_t parts = rowThreads(m, rowMacs);

  if (!moe) {
    if (!evaluate)
      return;
    // A dense FFN is one block. A grouped FFN's blocks fill their columns
    // of the row, each GEMM 2 a sum of its block's bf products, its bias
    // and the residual; a post-norm then sees the whole row.
    std::vector<FfnWeights> weights;
    for (int64_t g = 0; g < blocks; ++g)
      weights.push_back(ffnWeights(d, params, g));
    const int64_t downTerms = df / blocks + 1 + (d.residual ? 1 : 0);
    forRowRanges(m, parts, [&](int64_t, int64_t r0, int64_t r1) {
      RowEvaluator ev(d, options);
      FfnRow out(dm);
      for (int64_t r = r0; r < r1; ++r) {
        const double *xr = x + r * dm;
        ev.load(xr, scale, shift);
        for (int64_t g = 0; g < ev.blocks; ++g)
          ev.ffn(weights[g], g, d.residual ? xr : nullptr, downTerms, out);
        ev.finish(out.value, out.err, scale, shift, y + r * dm,
                  bound ? bound + r * dm : nullptr);
      }
    });
    return;
  }

  // A mixture of experts (ffn_router).
  const int64_t E = d.experts, S = d.shared_experts;
  const int64_t k = std::clamp<int64_t>(d.top_k, 0, E);
  const double *wRouter = find(d, params, "w_router");
  // Experts with identical router columns: their logits are the same f32
  // computation on the same values, so bit-identical in the kernel too,
  // which then ranks them by index, as the reference does.
  std::vector<int64_t> cls(E);
  for (int64_t e = 0; e < E; ++e) {
    cls[e] = e;
    for (int64_t e2 = 0; e2 < e; ++e2) {
      if (cls[e2] != e2)
        continue;
      bool same = true;
      for (int64_t i = 0; i < dm && same; ++i)
        same = wRouter[i * E + e] == wRouter[i * E + e2];
      if (same) {
        cls[e] = e2;
        break;
      }
    }
  }
  std::vector<FfnWeights> weights;
  for (int64_t e = 0; e < E + S; ++e)
    weights.push_back(ffnWeights(d, params, e));
  // Each expert's GEMM 2 is its own f32 reduction (d_ff products, then the
  // bias), as kernel_abi.h's sum order says: the experts' outputs are
  // combined afterwards, in the mixture's sum of k + S terms (and the
  // residual).
  const int64_t res = d.residual ? 1 : 0;
  const int64_t downTerms = df + 1;
  const int64_t mixTerms = k + S + res;

  // Each range of rows routes into its own part, joined in row order below.
  std::vector<Routing> routed(routing ? parts : 0);
  forRowRanges(m, parts, [&](int64_t part, int64_t r0, int64_t r1) {
    RowEvaluator ev(d, options);
    Routing *rowRouting = routing ? &routed[part] : nullptr;
    std::vector<FfnRow> experts(E + S, FfnRow(dm));
    std::vector<char> have(E + S);
    auto expert = [&](int64_t e) -> const FfnRow & {
      if (!have[e]) {
        ev.ffn(weights[e], 0, nullptr, downTerms, experts[e]);
        have[e] = 1;
      }
      return experts[e];
    };
    BoundedSum router(E);
    RowErrors logitErr(E);
    std::vector<double> l(E), L(E), g, rel, mixAbs(dm), out(dm);
    RowErrors err(dm);
    // The mixture f = sum_j g_j FFN_{e_j} + sum_s FFN_s (+ x) of selection
    // `sel` on row xr, post-normed, into yr and br. Each routed term's error:
    // |g| (1 + rel) times the expert's, rel |g FFN| for g's own error, and
    // the rounding of multiplying by g (wherever the kernel does it: its
    // output or its hidden values, u |g| sum |terms| covers both). The
    // experts' errors add up linearly (they share the input's). Then the
    // mixture's sum of k + S (+ 1) terms.
    auto mixture = [&](const std::vector<int64_t> &sel, const double *xr,
                       double *yr, double *br) {
      routerWeights(d, sel, l, L, g, rel);
      err.clear();
      for (int64_t j = 0; j < dm; ++j) {
        out[j] = res ? xr[j] : 0.0;
        mixAbs[j] = std::fabs(out[j]);
      }
      auto addTerm = [&](const FfnRow &f, double gj, double rj, bool scaled) {
        const double ag = std::fabs(gj), grow = ag * (1 + rj);
        for (int64_t c = 0; c < dm; ++c) {
          double v = gj * f.value[c];
          out[c] += v;
          mixAbs[c] += std::fabs(v);
          err.lin[c] +=
              grow * f.err.lin[c] + rj * std::fabs(v) +
              (scaled ? kU * grow * (f.absSum[c] + f.err.total(c)) : 0.0);
          err.rss[c] += grow * f.err.rss[c];
        }
      };
      for (size_t j = 0; j < sel.size(); ++j)
        addTerm(expert(sel[j]), g[j], rel[j], true);
      for (int64_t s = 0; s < S; ++s)
        addTerm(expert(E + s), 1.0, 0.0, false);
      const double gm = sumBound(model, mixTerms);
      for (int64_t c = 0; c < dm; ++c)
        (model == BoundModel::WorstCase ? err.lin[c] : err.rss[c]) +=
            gm * mixAbs[c];
      ev.finish(out, err, scale, shift, yr, br);
    };

    if (rowRouting)
      rowRouting->tokensPerExpert.assign(E, 0);
    for (int64_t r = r0; r < r1; ++r) {
      const double *xr = x + r * dm;
      ev.load(xr, scale, shift);
      std::fill(have.begin(), have.end(), 0);
      // The logits: an f32 dot product of d_model terms on the router's
      // input, which carries the pre-norm's errors (not the operand
      // rounding: the router takes the input in f32).
      for (int64_t e = 0; e < E; ++e)
        router.start(e, 0.0, 0.0);
      router.add(ev.a.data(), ev.aErr, dm, wRouter, E);
      router.finish(model, dm, logitErr);
      for (int64_t e = 0; e < E; ++e) {
        l[e] = router.value[e];
        L[e] = logitErr.total(e);
      }
      Selections sets = selections(l, L, cls, k, rowRouting != nullptr);
      if (evaluate)
        mixture(sets.sets[0], xr, y + r * dm, bound ? bound + r * dm : nullptr);
      if (!rowRouting)
        continue;
      for (int64_t e : sets.sets[0]) {
        rowRouting->selected.push_back(e);
        ++rowRouting->tokensPerExpert[e];
      }
      if (sets.sets.size() > 1)
        ++rowRouting->ambiguousRows;
      if (sets.unresolved)
        ++rowRouting->unresolvedRows;
      for (size_t i = 1; i < sets.sets.size(); ++i) {
        Alternative alt;
        alt.row = r;
        alt.experts = sets.sets[i];
        if (evaluate) {
          alt.y.resize(dm);
          alt.bound.resize(dm);
          mixture(alt.experts, xr, alt.y.data(), alt.bound.data());
        }
        rowRouting->alternatives.push_back(std::move(alt));
      }
    }
  });
  if (!routing)
    return;
  *routing = Routing();
  routing->topK = k;
  routing->tokensPerExpert.assign(E, 0);
  for (Routing &part : routed) {
    routing->selected.insert(routing->selected.end(), part.selected.begin(),
                             part.selected.end());
    for (int64_t e = 0; e < E; ++e)
      routing->tokensPerExpert[e] += part.tokensPerExpert[e];
    routing->ambiguousRows += part.ambiguousRows;
    routing->unresolvedRows += part.unresolvedRows;
    for (Alternative &alt : part.alternatives)
      routing->alternatives.push_back(std::move(alt));
  }
}
} // namespace

void forward(const ffn_kernel_desc &d, int64_t m, const double *x,
             const std::vector<const double *> &params, double *y,
             double *bound, const ForwardOptions &options, Routing *routing) {
  run(d, m, x, params, y, bound, options, routing, true);
}

Routing route(const ffn_kernel_desc &d, int64_t m, const double *x,
              const std::vector<const double *> &params,
              const ForwardOptions &options) {
  Routing routing;
  if (d.kind == FFN_KIND_MOE)
    run(d, m, x, params, nullptr, nullptr, options, &routing, false);
  return routing;
}

size_t elementCount(const ffn_param_desc &p) {
  size_t one = static_cast<size_t>(p.shape[0]) *
               static_cast<size_t>(p.rank == 2 ? p.shape[1] : 1);
  return one * static_cast<size_t>(p.experts > 0 ? p.experts : 1);
}

bool isQuantized(const ffn_kernel_desc &d, const ffn_param_desc &p) {
  return d.weight_quant != FFN_WEIGHTS_DTYPE && p.rank == 2 &&
         std::strcmp(p.name, "w_router") != 0;
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

namespace {
/// Judges element i, output y against reference e with bound b, into r.
void judge(int64_t dtype, double y, double e, double b, size_t i,
           Comparison &r) {
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
    return;
  }
  // The interval an f32 result within the bound rounds into.
  double lo = roundTo(dtype, e - b), hi = roundTo(dtype, e + b);
  bool inside = lo <= y && y <= hi; // false for NaN
  if (!inside) {
    r.pass = false;
    if (!std::isfinite(y)) {
      ++r.nonFiniteMismatches;
      if (r.firstMismatch == SIZE_MAX)
        r.firstMismatch = i;
      return;
    }
  } else if (!std::isfinite(y)) {
    ++r.nonFiniteMatches; // a correct overflow to +-Inf
    return;
  }
  // For the report: the bound plus the final rounding's half ulp, which
  // every element inside the interval meets.
  double abs = std::fabs(y - e);
  double allowed = b + roundingBound(dtype, std::fabs(e) + b);
  double ratio = abs / allowed;
  if (abs > r.maxAbs)
    r.maxAbs = abs;
  if (ratio > r.maxRatio) {
    r.maxRatio = ratio;
    r.worst = i;
    r.worstAllowed = allowed;
  }
}

/// Adds the verdict on some elements, `part`, to the verdict on others.
void merge(Comparison &into, const Comparison &part) {
  into.pass = into.pass && part.pass;
  into.maxAbs = std::max(into.maxAbs, part.maxAbs);
  if (part.maxRatio > into.maxRatio) {
    into.maxRatio = part.maxRatio;
    into.worst = part.worst;
    into.worstAllowed = part.worstAllowed;
  }
  into.nonFiniteMismatches += part.nonFiniteMismatches;
  into.nonFiniteMatches += part.nonFiniteMatches;
  into.firstMismatch = std::min(into.firstMismatch, part.firstMismatch);
  into.rowsOnAlternative += part.rowsOnAlternative;
}
} // namespace

Comparison compare(int64_t dtype, const std::vector<double> &got,
                   const std::vector<double> &ref,
                   const std::vector<double> &bound) {
  Comparison r;
  for (size_t i = 0; i < ref.size(); ++i)
    judge(dtype, got[i], ref[i], bound[i], i, r);
  return r;
}

Comparison compare(int64_t dtype, const std::vector<double> &got,
                   std::vector<double> &ref, std::vector<double> &bound,
                   size_t rowLength,
                   const std::vector<Alternative> &alternatives) {
  Comparison r;
  size_t next = 0; // the first alternative of a row not yet judged
  const size_t rows = rowLength ? ref.size() / rowLength : 0;
  for (size_t row = 0; row < rows; ++row) {
    const size_t begin = row * rowLength;
    Comparison best;
    for (size_t i = 0; i < rowLength; ++i)
      judge(dtype, got[begin + i], ref[begin + i], bound[begin + i], begin + i,
            best);
    const Alternative *bestAlt = nullptr;
    // Only the row's alternatives (they are ordered by row).
    while (next < alternatives.size() &&
           alternatives[next].row < static_cast<int64_t>(row))
      ++next;
    for (; next < alternatives.size() &&
           alternatives[next].row == static_cast<int64_t>(row);
         ++next) {
      const Alternative &alt = alternatives[next];
      if (alt.y.size() != rowLength || alt.bound.size() != rowLength)
        continue;
      Comparison c;
      for (size_t i = 0; i < rowLength; ++i)
        judge(dtype, got[begin + i], alt.y[i], alt.bound[i], begin + i, c);
      // Passing first; then the fewest non-finite mismatches; then the
      // smallest err/bound.
      bool better = c.pass != best.pass ? c.pass
                    : c.nonFiniteMismatches != best.nonFiniteMismatches
                        ? c.nonFiniteMismatches < best.nonFiniteMismatches
                        : c.maxRatio < best.maxRatio;
      if (better) {
        best = c;
        bestAlt = &alt;
      }
    }
    if (bestAlt) {
      std::copy(bestAlt->y.begin(), bestAlt->y.end(), ref.begin() + begin);
      std::copy(bestAlt->bound.begin(), bestAlt->bound.end(),
                bound.begin() + begin);
      best.rowsOnAlternative = 1;
    }
    merge(r, best);
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
