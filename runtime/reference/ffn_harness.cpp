//===- ffn_harness.cpp - one way to run and check a kernel ----------------===//

#include "ffn_harness.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

using namespace ffn_ref;

std::vector<Buffer> ffn_ref::makeParams(const ffn_kernel_desc &desc,
                                        Random &rng) {
  std::vector<Buffer> params;
  for (int64_t i = 0; i < desc.num_params; ++i) {
    const ffn_param_desc &p = desc.params[i];
    // A stacked parameter's experts are drawn one after the other, each as
    // a tensor of the parameter's shape: the same draws as one fill.
    Buffer b = makeBuffer(desc.dtype, elementCount(p));
    if (p.rank == 2) {
      double a = 1.0 / std::sqrt(static_cast<double>(p.shape[0]));
      fill(b, desc.dtype, rng, -a, a);
    } else if (std::string(p.name) == "norm_scale") {
      fill(b, desc.dtype, rng, 0.9, 1.1);
    } else {
      fill(b, desc.dtype, rng, -0.1, 0.1);
    }
    params.push_back(std::move(b));
  }
  return params;
}

namespace {
/// Skewed routing: the sign pattern s_i added to every input row, and the
/// router columns aligned with it (docs/numerics.md). Expert 0's logit is
/// then about 4 * 0.75 * sum |w| = 1.5 sqrt(d_model) on average, expert 1's
/// half that, the others' 0 +- 0.7, for inputs U(-1, 1) + 0.75 s.
constexpr double kSkewOffset = 0.75;
constexpr double kSkewFirst = 4.0, kSkewSecond = 2.0;
double skewSign(int64_t i) { return i % 2 == 0 ? 1.0 : -1.0; }
} // namespace

void ffn_ref::shapeRouting(const ffn_kernel_desc &desc,
                           std::vector<Buffer> &params, RoutingData routing) {
  if (desc.kind != FFN_KIND_MOE || routing == RoutingData::Random)
    return;
  int64_t index = -1;
  for (int64_t i = 0; i < desc.num_params; ++i)
    if (std::strcmp(desc.params[i].name, "w_router") == 0)
      index = i;
  if (index < 0)
    return;
  Buffer &w = params[index];
  const int64_t rows = desc.params[index].shape[0];
  const int64_t cols = desc.params[index].shape[1];
  auto set = [&](int64_t i, int64_t e, double v) {
    v = roundTo(desc.dtype, v);
    w.values[i * cols + e] = v;
    store(desc.dtype, w.bytes.data(), i * cols + e, v);
  };
  for (int64_t i = 0; i < rows; ++i) {
    if (routing == RoutingData::Tied) {
      for (int64_t e = 1; e < cols; ++e)
        set(i, e, w.values[i * cols]);
      continue;
    }
    set(i, 0, kSkewFirst * std::fabs(w.values[i * cols]) * skewSign(i));
    if (cols > 1)
      set(i, 1, kSkewSecond * std::fabs(w.values[i * cols + 1]) * skewSign(i));
  }
}

/// [experts, rows, cols] elements of `es` bytes to [experts, cols, rows]:
/// each expert's matrix transposed on its own.
static std::vector<unsigned char> transposed(const void *data, size_t experts,
                                             size_t rows, size_t cols,
                                             size_t es) {
  const auto *in = static_cast<const unsigned char *>(data);
  std::vector<unsigned char> out(experts * rows * cols * es);
  for (size_t e = 0; e < experts; ++e) {
    const size_t base = e * rows * cols;
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = 0; c < cols; ++c)
        std::memcpy(&out[(base + c * rows + r) * es],
                    &in[(base + r * cols + c) * es], es);
  }
  return out;
}

/// Weight matrix `p` as blocks quantized here, through the runtime's
/// pre-quantized entry point; a stacked one as every expert's blocks,
/// stacked, each expert's in the layout asked for.
static ffn_status setQuantized(ffn_kernel *kernel, const ffn_kernel_desc &desc,
                               const ffn_param_desc &p, const Buffer &b,
                               bool outIn) {
  QuantBlocks blocks = ffn_ref::quantizeBlocks(desc, p, b.values.data());
  size_t experts = p.experts > 0 ? p.experts : 1;
  size_t in = p.shape[0], out = p.shape[1];
  size_t groups = blocks.scales.size() / (experts * out);
  Buffer scales = makeBuffer(desc.dtype, blocks.scales.size());
  for (size_t i = 0; i < blocks.scales.size(); ++i)
    store(desc.dtype, scales.bytes.data(), i, blocks.scales[i]);
  std::vector<unsigned char> q(blocks.q.size()), s = scales.bytes,
                                                 z = blocks.zeroPoints;
  std::memcpy(q.data(), blocks.q.data(), q.size());
  ffn_weight_layout layout = FFN_LAYOUT_IN_OUT;
  if (outIn) {
    size_t es = s.size() / blocks.scales.size();
    q = transposed(q.data(), experts, in, out, 1);
    s = transposed(s.data(), experts, groups, out, es);
    if (!z.empty())
      z = transposed(z.data(), experts, groups, out, 1);
    layout = FFN_LAYOUT_OUT_IN;
  }
  return ffn_kernel_set_quantized_param(
      kernel, p.name, q.data(), q.size(), s.data(), s.size(),
      z.empty() ? nullptr : z.data(), z.size(), layout);
}

ffn_status ffn_ref::setParams(ffn_kernel *kernel,
                              const std::vector<Buffer> &params, bool outIn,
                              bool prequantized) {
  const ffn_kernel_desc &desc = *ffn_kernel_descriptor(kernel);
  for (int64_t i = 0; i < desc.num_params; ++i) {
    const ffn_param_desc &p = desc.params[i];
    const Buffer &b = params[i];
    if (prequantized && isQuantized(desc, p)) {
      if (ffn_status s = setQuantized(kernel, desc, p, b, outIn))
        return s;
      continue;
    }
    const void *data = b.bytes.data();
    std::vector<unsigned char> outInData;
    ffn_weight_layout layout = FFN_LAYOUT_IN_OUT;
    if (p.rank == 2 && outIn) {
      // [in, out] -> [out, in], each expert's of a stacked parameter.
      size_t experts = p.experts > 0 ? p.experts : 1;
      size_t in = p.shape[0], out = p.shape[1];
      size_t es = b.bytes.size() / (experts * in * out);
      outInData = transposed(b.bytes.data(), experts, in, out, es);
      data = outInData.data();
      layout = FFN_LAYOUT_OUT_IN;
    }
    if (ffn_status s =
            ffn_kernel_set_param(kernel, p.name, data, b.bytes.size(), layout))
      return s;
  }
  return FFN_OK;
}

void ffn_ref::injectNonFinite(const ffn_kernel_desc &desc, int64_t m,
                              Buffer &x) {
  const double special[] = {NAN, INFINITY, -INFINITY};
  for (int64_t k = 0; k < 3 && k < m; ++k) {
    size_t i = static_cast<size_t>(k * desc.d_model + k % desc.d_model);
    x.values[i] = special[k];
    store(desc.dtype, x.bytes.data(), i, special[k]);
  }
}

Buffer ffn_ref::makeInput(const ffn_kernel_desc &desc, int64_t m, Random &rng,
                          double scale, RoutingData routing) {
  Buffer x = makeBuffer(desc.dtype, static_cast<size_t>(m) * desc.d_model);
  if (desc.kind != FFN_KIND_MOE || routing != RoutingData::Skewed) {
    fill(x, desc.dtype, rng, -scale, scale);
    return x;
  }
  // The same draws as fill, plus the skew pattern.
  for (size_t i = 0; i < x.values.size(); ++i) {
    double v =
        rng.uniform(-scale, scale) +
        kSkewOffset * scale * skewSign(static_cast<int64_t>(i % desc.d_model));
    v = roundTo(desc.dtype, v);
    x.values[i] = v;
    store(desc.dtype, x.bytes.data(), i, v);
  }
  return x;
}

Check ffn_ref::checkOutput(const ffn_kernel_desc &desc, int64_t m,
                           const Buffer &x, const void *y,
                           const std::vector<Buffer> &params,
                           const ForwardOptions &options) {
  size_t n = static_cast<size_t>(m) * desc.d_model;
  Check c;
  c.got.resize(n);
  c.ref.resize(n);
  c.bound.resize(n);
  std::vector<double> &bound = c.bound;
  for (size_t i = 0; i < n; ++i)
    c.got[i] = load(desc.dtype, y, i);
  std::vector<const double *> values, asSet;
  std::vector<std::vector<double>> dequantized;
  c.quantized = desc.weight_quant != FFN_WEIGHTS_DTYPE;
  dequantized.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    asSet.push_back(params[i].values.data());
    if (!c.quantized) {
      values.push_back(params[i].values.data());
      continue;
    }
    dequantized.push_back(
        dequantize(desc, desc.params[i], params[i].values.data()));
    values.push_back(dequantized.back().data());
  }
  c.moe = desc.kind == FFN_KIND_MOE;
  if (c.moe) {
    // Rows whose routing an f32 router may decide otherwise pass if they
    // match any plausible selection.
    Routing routing;
    forward(desc, m, x.values.data(), values, c.ref.data(), bound.data(),
            options, &routing);
    c.result = compare(desc.dtype, c.got, c.ref, bound,
                       static_cast<size_t>(desc.d_model), routing.alternatives);
    c.ambiguousRows = routing.ambiguousRows;
    c.unresolvedRows = routing.unresolvedRows;
    c.tokensPerExpert = routing.tokensPerExpert;
  } else {
    forward(desc, m, x.values.data(), values, c.ref.data(), bound.data(),
            options);
    c.result = compare(desc.dtype, c.got, c.ref, bound);
  }
  if (c.quantized) {
    // Not judged: the reference's own routing of the unquantized FFN.
    std::vector<double> plain(n), plainBound(n);
    forward(desc, m, x.values.data(), asSet, plain.data(), plainBound.data(),
            options);
    double sq = 0, ref2 = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(plain[i]) || !std::isfinite(c.got[i]))
        continue;
      double e = c.got[i] - plain[i];
      c.quantMaxAbs = std::max(c.quantMaxAbs, std::fabs(e));
      sq += e * e;
      ref2 += plain[i] * plain[i];
    }
    c.quantRelRms = ref2 > 0 ? std::sqrt(sq / ref2) : 0;
  }
  return c;
}

/// One ulp of `dtype` at magnitude `a` (finite, at most the dtype's
/// largest): the spacing of the dtype's values in the binade holding a, the
/// subnormal spacing below the normal range.
static double ulpOf(int64_t dtype, double a) {
  int digits = 24, minExponent = -126; // significand bits, smallest normal
  if (dtype == FFN_DTYPE_BF16) {
    digits = 8;
  } else if (dtype == FFN_DTYPE_F16) {
    digits = 11;
    minExponent = -14;
  }
  if (a < std::ldexp(1.0, minExponent))
    return std::ldexp(1.0, minExponent - digits + 1);
  int exponent = 0;
  std::frexp(a, &exponent); // a in [2^(exponent-1), 2^exponent)
  return std::ldexp(1.0, exponent - digits);
}

Comparison
ffn_ref::compareKernels(int64_t dtype, const std::vector<double> &a,
                        const std::vector<double> &b,
                        const std::vector<double> &tolerancePerColumn) {
  Comparison r;
  const size_t columns = tolerancePerColumn.size();
  // Outputs of different shapes cannot agree.
  if (a.size() != b.size() || (columns == 0 && !a.empty())) {
    r.pass = false;
    return r;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    double u = a[i], v = b[i];
    if (!std::isfinite(u) || !std::isfinite(v)) {
      bool same = (std::isnan(u) && std::isnan(v)) || u == v;
      if (same) {
        ++r.nonFiniteMatches;
        continue;
      }
      ++r.nonFiniteMismatches;
      if (r.firstMismatch == SIZE_MAX)
        r.firstMismatch = i;
      r.pass = false;
      continue;
    }
    double diff = std::fabs(u - v);
    double allowed = tolerancePerColumn[i % columns] +
                     ulpOf(dtype, std::max(std::fabs(u), std::fabs(v)));
    if (!(diff <= allowed))
      r.pass = false;
    double ratio = diff / allowed; // allowed >= one subnormal ulp
    r.maxAbs = std::max(r.maxAbs, diff);
    if (ratio > r.maxRatio) {
      r.maxRatio = ratio;
      r.worst = i;
      r.worstAllowed = allowed;
    }
  }
  return r;
}
