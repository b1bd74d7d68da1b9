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

std::vector<double> dequantize(const ffn_kernel_desc &d,
                               const ffn_param_desc &p, const double *w) {
  int64_t rows = p.shape[0], cols = p.rank == 2 ? p.shape[1] : 1;
  std::vector<double> out(w, w + rows * cols);
  if (d.weight_quant == FFN_WEIGHTS_DTYPE || p.rank != 2)
    return out;
  const float qmax = d.weight_quant == FFN_WEIGHTS_INT8 ? 127.0f : 7.0f;
  const int64_t group = d.quant_group;
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t k0 = 0; k0 < rows; k0 += group) {
      int64_t k1 = std::min(rows, k0 + group);
      if (d.weight_quant == FFN_WEIGHTS_INT4_ZP) {
        // Asymmetric: [min(w, 0), max(w, 0)] onto q in [0, 15].
        float lo = 0.0f, hi = 0.0f;
        for (int64_t k = k0; k < k1; ++k) {
          float v = static_cast<float>(w[k * cols + c]);
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        float s = static_cast<float>(roundTo(d.dtype, (hi - lo) / 15.0f));
        float z = s == 0.0f ? 0.0f
                            : std::clamp(std::nearbyint(-lo / s), 0.0f, 15.0f);
        for (int64_t k = k0; k < k1; ++k) {
          float q = 0.0f;
          if (s != 0.0f)
            q = std::clamp(
                std::nearbyint(static_cast<float>(w[k * cols + c]) / s) + z,
                0.0f, 15.0f);
          out[k * cols + c] = static_cast<double>(s) * (q - z);
        }
        continue;
      }
      float amax = 0.0f;
      for (int64_t k = k0; k < k1; ++k)
        amax = std::max(amax, std::fabs(static_cast<float>(w[k * cols + c])));
      float s = static_cast<float>(roundTo(d.dtype, amax / qmax));
      for (int64_t k = k0; k < k1; ++k) {
        float q = 0.0f;
        if (s != 0.0f)
          q = std::clamp(
              std::nearbyint(static_cast<float>(w[k * cols + c]) / s), -qmax,
              qmax);
        out[k * cols + c] = static_cast<double>(s) * q;
      }
    }
  }
  return out;
}

} // namespace ffn_ref
