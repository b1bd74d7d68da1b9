//===- ffn_harness.cpp - one way to run and check a kernel ----------------===//

#include "ffn_harness.h"

#include <cmath>
#include <cstring>
#include <string>

using namespace ffn_ref;

std::vector<Buffer> ffn_ref::makeParams(const ffn_kernel_desc &desc,
                                        Random &rng) {
  std::vector<Buffer> params;
  for (int64_t i = 0; i < desc.num_params; ++i) {
    const ffn_param_desc &p = desc.params[i];
    size_t n = p.rank == 2 ? p.shape[0] * p.shape[1] : p.shape[0];
    Buffer b = makeBuffer(desc.dtype, n);
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

/// [rows, cols] elements of `es` bytes to [cols, rows].
static std::vector<unsigned char> transposed(const void *data, size_t rows,
                                             size_t cols, size_t es) {
  const auto *in = static_cast<const unsigned char *>(data);
  std::vector<unsigned char> out(rows * cols * es);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c)
      std::memcpy(&out[(c * rows + r) * es], &in[(r * cols + c) * es], es);
  return out;
}

/// Weight matrix `p` as blocks quantized here, through the runtime's
/// pre-quantized entry point.
static ffn_status setQuantized(ffn_kernel *kernel, const ffn_kernel_desc &desc,
                               const ffn_param_desc &p, const Buffer &b,
                               bool outIn) {
  QuantBlocks blocks = ffn_ref::quantizeBlocks(desc, p, b.values.data());
  size_t in = p.shape[0], out = p.shape[1];
  size_t groups = blocks.scales.size() / out;
  Buffer scales = makeBuffer(desc.dtype, blocks.scales.size());
  for (size_t i = 0; i < blocks.scales.size(); ++i)
    store(desc.dtype, scales.bytes.data(), i, blocks.scales[i]);
  std::vector<unsigned char> q(blocks.q.size()), s = scales.bytes,
                                                 z = blocks.zeroPoints;
  std::memcpy(q.data(), blocks.q.data(), q.size());
  ffn_weight_layout layout = FFN_LAYOUT_IN_OUT;
  if (outIn) {
    size_t es = s.size() / blocks.scales.size();
    q = transposed(q.data(), in, out, 1);
    s = transposed(s.data(), groups, out, es);
    if (!z.empty())
      z = transposed(z.data(), groups, out, 1);
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
    if (prequantized && p.rank == 2 && desc.weight_quant != FFN_WEIGHTS_DTYPE) {
      if (ffn_status s = setQuantized(kernel, desc, p, b, outIn))
        return s;
      continue;
    }
    const void *data = b.bytes.data();
    std::vector<unsigned char> transposed;
    ffn_weight_layout layout = FFN_LAYOUT_IN_OUT;
    if (p.rank == 2 && outIn) {
      // [in, out] -> [out, in]
      size_t in = p.shape[0], out = p.shape[1];
      size_t es = b.bytes.size() / (in * out);
      transposed.resize(b.bytes.size());
      for (size_t r = 0; r < in; ++r)
        for (size_t c = 0; c < out; ++c)
          std::memcpy(&transposed[(c * in + r) * es],
                      &b.bytes[(r * out + c) * es], es);
      data = transposed.data();
      layout = FFN_LAYOUT_OUT_IN;
    }
    if (ffn_status s =
            ffn_kernel_set_param(kernel, p.name, data, b.bytes.size(), layout))
      return s;
  }
  return FFN_OK;
}

Buffer ffn_ref::makeInput(const ffn_kernel_desc &desc, int64_t m, Random &rng,
                          double scale) {
  Buffer x = makeBuffer(desc.dtype, static_cast<size_t>(m) * desc.d_model);
  fill(x, desc.dtype, rng, -scale, scale);
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
  std::vector<double> bound(n);
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
  forward(desc, m, x.values.data(), values, c.ref.data(), bound.data(),
          options);
  c.result = compare(desc.dtype, c.got, c.ref, bound);
  if (c.quantized) {
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
