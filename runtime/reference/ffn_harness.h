//===- ffn_harness.h - one way to run and check a kernel --------*- C++ -*-===//
//
// What every runner of generated kernels does the same way -- `ffnc run`,
// `ffn-gpu-run` -- so their data and their verdicts agree: seeded
// parameters handed to the runtime, seeded inputs, and the check of an
// output against the independent f64 reference.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_HARNESS_H
#define FFN_HARNESS_H

#include "ffn/runtime.h"
#include "ffn_reference.h"

#include <cstdint>
#include <vector>

namespace ffn_ref {

/// The kernel's parameters, drawn from `rng` in descriptor order: matrices
/// U(-1/sqrt(in), 1/sqrt(in)) as nn.Linear's default init (the router
/// w_router too), norm_scale U(0.9, 1.1), every other vector U(-0.1, 0.1).
/// A stacked parameter holds its experts' tensors, drawn one after the
/// other, each as a tensor of the parameter's shape.
std::vector<Buffer> makeParams(const ffn_kernel_desc &desc, Random &rng);

/// For a mixture of experts, rewrites the router of `params` (from
/// makeParams) for `routing` (RoutingData); does nothing otherwise.
void shapeRouting(const ffn_kernel_desc &desc, std::vector<Buffer> &params,
                  RoutingData routing);

/// Sets every parameter of `kernel` from `params`; with `outIn`, matrices
/// are handed over transposed, as PyTorch stores them ([out, in]; a stacked
/// parameter as [E, out, in], each expert's matrix transposed); with
/// `prequantized`, a quantized kernel's weight matrices are quantized here
/// (quantizeBlocks) and handed over as blocks
/// (ffn_kernel_set_quantized_param; a stacked parameter's experts' blocks
/// stacked, each in the layout asked for). Returns the first failing status
/// (the context's last error says why).
ffn_status setParams(ffn_kernel *kernel, const std::vector<Buffer> &params,
                     bool outIn = false, bool prequantized = false);

/// m rows of input U(-scale, scale); for a mixture of experts with Skewed
/// routing, plus 0.75 scale times the skew pattern (+1 on even columns, -1
/// on odd ones), the same draws.
Buffer makeInput(const ffn_kernel_desc &desc, int64_t m, Random &rng,
                 double scale = 1.0, RoutingData routing = RoutingData::Random);

/// Puts NaN, +Inf and -Inf into rows 0, 1 and 2 of x (as many as it has),
/// one element each (column k % d_model of row k), in its values and bytes:
/// what `--inject-nonfinite` checks propagates as in the reference.
void injectNonFinite(const ffn_kernel_desc &desc, int64_t m, Buffer &x);

/// A kernel's output y (m rows of the kernel's dtype) against the f64
/// reference for input x and `params`. `got` and `ref` receive the values
/// compared (for reporting the worst element), `bound` each element's
/// error bound before the output's rounding (forward's; a mixture's
/// ambiguous rows: the bound of the selection they were judged against).
struct Check {
  Comparison result;
  std::vector<double> got, ref, bound;
  /// Quantized weights: the verdict is against the FFN with the weights the
  /// kernel multiplies by (dequantize); this is how far the output is from
  /// the FFN with the weights as set (what the quantization itself costs):
  /// the largest |y - ref| and the relative RMS error.
  bool quantized = false;
  double quantMaxAbs = 0, quantRelRms = 0;
  /// A mixture of experts: the reference's routing (Routing). Ambiguous rows
  /// pass if they match any of their plausible selections
  /// (result.rowsOnAlternative matched another than the reference's).
  bool moe = false;
  size_t ambiguousRows = 0, unresolvedRows = 0;
  std::vector<int64_t> tokensPerExpert;
};
Check checkOutput(const ffn_kernel_desc &desc, int64_t m, const Buffer &x,
                  const void *y, const std::vector<Buffer> &params,
                  const ForwardOptions &options = {});

/// Two kernels' outputs for the same input, `a` and `b` (rows of
/// tolerancePerColumn.size() elements, as values of the output dtype),
/// against each other rather than against the reference: `ffnc run
/// --oracle`, on rows too many for the f64 reference. Where either is not
/// finite, NaN must meet NaN and Inf the same Inf. Finite elements of
/// column c pass when |a - b| <= tolerancePerColumn[c] plus one ulp of the
/// dtype at max(|a|, |b|), since each output was rounded to the dtype once.
/// The result reads as compare()'s: maxAbs is the largest |a - b|, maxRatio
/// the largest |a - b| / allowed, at element `worst`.
Comparison compareKernels(int64_t dtype, const std::vector<double> &a,
                          const std::vector<double> &b,
                          const std::vector<double> &tolerancePerColumn);

} // namespace ffn_ref

#endif // FFN_HARNESS_H
