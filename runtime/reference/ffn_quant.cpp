//===- ffn_quant.cpp - the weights a weight-quantized kernel uses ---------===//
//
// ffn_weight_quant's formula (kernel_abi.h), evaluated in f32 as the pack
// function does: the reference must multiply by exactly the dequantized
// weights s q, so that its check measures the kernel and not the
// quantization. Written from the ABI's text, not from the compiler.
//
//===----------------------------------------------------------------------===//

#include "ffn_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ffn_ref {

namespace {
/// One [rows, cols] matrix's blocks.
QuantBlocks quantizeMatrix(const ffn_kernel_desc &d, const ffn_param_desc &p,
                           const double *w) {
  int64_t rows = p.shape[0], cols = p.shape[1];
  const int64_t group = d.quant_group;
  int64_t groups = (rows + group - 1) / group;
  QuantBlocks b;
  b.q.assign(rows * cols, 0);
  b.scales.assign(groups * cols, 0.0);
  bool zp = d.weight_quant == FFN_WEIGHTS_INT4_ZP;
  if (zp)
    b.zeroPoints.assign(groups * cols, 0);
  const float qmax = d.weight_quant == FFN_WEIGHTS_INT8 ? 127.0f : 7.0f;
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t g = 0; g < groups; ++g) {
      int64_t k0 = g * group, k1 = std::min(rows, k0 + group);
      float s, z = 0.0f;
      if (zp) {
        // Asymmetric: [min(w, 0), max(w, 0)] onto q in [0, 15].
        float lo = 0.0f, hi = 0.0f;
        for (int64_t k = k0; k < k1; ++k) {
          float v = static_cast<float>(w[k * cols + c]);
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        s = static_cast<float>(roundTo(d.dtype, (hi - lo) / 15.0f));
        if (s != 0.0f)
          z = std::clamp(std::nearbyint(-lo / s), 0.0f, 15.0f);
      } else {
        float amax = 0.0f;
        for (int64_t k = k0; k < k1; ++k)
          amax = std::max(amax, std::fabs(static_cast<float>(w[k * cols + c])));
        s = static_cast<float>(roundTo(d.dtype, amax / qmax));
      }
      b.scales[g * cols + c] = s;
      if (zp)
        b.zeroPoints[g * cols + c] = static_cast<unsigned char>(z);
      for (int64_t k = k0; k < k1; ++k) {
        float q = 0.0f;
        if (s != 0.0f) {
          float r = std::nearbyint(static_cast<float>(w[k * cols + c]) / s);
          q = zp ? std::clamp(r + z, 0.0f, 15.0f) : std::clamp(r, -qmax, qmax);
        }
        b.q[k * cols + c] = static_cast<signed char>(q);
      }
    }
  }
  return b;
}
} // namespace

QuantBlocks quantizeBlocks(const ffn_kernel_desc &d, const ffn_param_desc &p,
                           const double *w) {
  if (p.experts <= 0)
    return quantizeMatrix(d, p, w);
  // A stacked parameter: each expert's matrix on its own, blocks stacked.
  const size_t size = static_cast<size_t>(p.shape[0] * p.shape[1]);
  QuantBlocks all;
  for (int64_t e = 0; e < p.experts; ++e) {
    QuantBlocks b = quantizeMatrix(d, p, w + e * size);
    all.q.insert(all.q.end(), b.q.begin(), b.q.end());
    all.scales.insert(all.scales.end(), b.scales.begin(), b.scales.end());
    all.zeroPoints.insert(all.zeroPoints.end(), b.zeroPoints.begin(),
                          b.zeroPoints.end());
  }
  return all;
}

std::vector<double> dequantize(const ffn_kernel_desc &d,
                               const ffn_param_desc &p, const double *w) {
  std::vector<double> out(w, w + elementCount(p));
  if (!isQuantized(d, p))
    return out;
  const int64_t rows = p.shape[0], cols = p.shape[1];
  const int64_t groups = (rows + d.quant_group - 1) / d.quant_group;
  const int64_t experts = p.experts > 0 ? p.experts : 1;
  QuantBlocks b = quantizeBlocks(d, p, w);
  bool zp = d.weight_quant == FFN_WEIGHTS_INT4_ZP;
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t k = 0; k < rows; ++k)
      for (int64_t c = 0; c < cols; ++c) {
        size_t gi =
            static_cast<size_t>((e * groups + k / d.quant_group) * cols + c);
        size_t wi = static_cast<size_t>((e * rows + k) * cols + c);
        double z = zp ? b.zeroPoints[gi] : 0.0;
        out[wi] = b.scales[gi] * (b.q[wi] - z);
      }
  return out;
}

} // namespace ffn_ref
