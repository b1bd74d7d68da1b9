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

/// How the per-element error bound of an f32 evaluation is built from the
/// magnitudes summed in each reduction of n terms, sum |t| (docs/numerics.md):
/// WorstCase: gamma_n = n u / (1 - n u), Higham's deterministic bound, valid
///   for any summation order; PROBABILISTIC: lambda sqrt(n) u with lambda = 8
///   (Higham & Mary 2019), which holds for every element of any realistic
///   run with overwhelming probability and is sqrt(n) times tighter.
enum class BoundModel { WorstCase, Probabilistic };

/// y = FFN(x) for `m` rows. `x` is [m, d_model]; params[i] holds parameter i
/// of the descriptor in [in, out] layout (a stacked parameter: all its
/// experts', or a grouped FFN's blocks', tensors, ffn_param_desc); y is
/// [m, d_model]. If `bound` is not null, bound[i] receives the largest error
/// an f32 evaluation of y[i] (ffn/kernel_abi.h's contract: storage values
/// widened exactly, every operation in f32) may have before the output is
/// rounded to the dtype.
/// `activationError` scales each activation's argument by (1 + it): a
/// deliberately wrong reference, for showing that the check catches a
/// kernel that is off by that much (`ffnc run --test-activation-error`).
struct ForwardOptions {
  BoundModel model = BoundModel::Probabilistic;
  double activationError = 0;
};

/// The most selections besides the reference's own that a row of a mixture
/// of experts is judged against (docs/numerics.md): rows with more
/// plausible selections are judged against the likeliest ones and counted.
constexpr size_t kMaxAlternatives = 8;

/// Another selection of experts an f32 router may make for one row, where
/// the logits that decide it are closer than their f32 error bounds, and
/// the row's reference and bound under it.
struct Alternative {
  int64_t row = 0;
  std::vector<int64_t> experts; ///< by descending f64 logit
  std::vector<double> y, bound; ///< d_model each (empty from route())
};

/// How the reference routes the rows of a mixture of experts.
struct Routing {
  int64_t topK = 0;
  /// [m, top_k]: each row's selection by the f64 logits, descending, ties
  /// to the lower expert index.
  std::vector<int64_t> selected;
  /// Tokens each routed expert receives in `selected`.
  std::vector<int64_t> tokensPerExpert;
  /// The other plausible selections of the ambiguous rows, by row.
  std::vector<Alternative> alternatives;
  /// Rows with more than one plausible selection.
  size_t ambiguousRows = 0;
  /// Ambiguous rows with more plausible selections than kMaxAlternatives + 1
  /// (or too many to enumerate): only the likeliest are kept.
  size_t unresolvedRows = 0;
};

/// As above; for a mixture of experts (kind FFN_KIND_MOE) `routing`, if not
/// null, receives the routing, with every ambiguous row's alternatives
/// evaluated (y and bound). Without it only the reference's own selection
/// is evaluated.
void forward(const ffn_kernel_desc &desc, int64_t m, const double *x,
             const std::vector<const double *> &params, double *y,
             double *bound = nullptr, const ForwardOptions &options = {},
             Routing *routing = nullptr);

/// The routing of a mixture of experts alone (no expert FFN is evaluated):
/// the selections, token counts and ambiguity, as forward() finds them;
/// alternatives carry their experts only. Empty for a dense FFN.
Routing route(const ffn_kernel_desc &desc, int64_t m, const double *x,
              const std::vector<const double *> &params,
              const ForwardOptions &options = {});

/// Elements of parameter `p`: all experts' (or blocks') tensors of a stacked
/// one.
size_t elementCount(const ffn_param_desc &p);

/// Whether a kernel with quantized weights quantizes parameter `p`: the
/// FFN weight matrices (each expert's of a stacked one), never vectors or
/// the router (w_router), whose logits are f32 dot products on the values
/// as set.
bool isQuantized(const ffn_kernel_desc &desc, const ffn_param_desc &p);

struct Comparison {
  bool pass = true;
  double maxAbs = 0;
  /// The largest |y - ref| / allowed, over finite elements: <= 1 passes.
  double maxRatio = 0;
  size_t worst = 0;          ///< the element of maxRatio
  double worstAllowed = 0;   ///< its allowed error
  size_t nonFiniteMismatches = 0;
  size_t nonFiniteMatches = 0;
  size_t firstMismatch = SIZE_MAX;
  /// Rows judged against one of their alternatives (a mixture of experts).
  size_t rowsOnAlternative = 0;
};

/// Element i passes when `got` lies between the reference interval's ends
/// rounded to the dtype, roundTo(ref - bound) <= got <= roundTo(ref + bound):
/// rounding is monotone, so a kernel within the bound before its final
/// rounding always lands there, and an output that correctly overflows to
/// +-Inf passes. Where the reference itself is not finite (non-finite
/// inputs) NaN must be NaN and Inf the same Inf.
Comparison compare(int64_t dtype, const std::vector<double> &got,
                   const std::vector<double> &ref,
                   const std::vector<double> &bound);

/// The same, for rows of `rowLength` elements of which some have
/// alternatives (Routing::alternatives): such a row passes when it passes
/// against the reference or against any of its alternatives, all of its
/// elements against the same one. The row is reported against the one
/// that passes with the smallest err/bound (if none passes, the one with
/// the fewest non-finite mismatches, then the smallest err/bound), whose
/// values replace the row's in `ref` and `bound`.
Comparison compare(int64_t dtype, const std::vector<double> &got,
                   std::vector<double> &ref, std::vector<double> &bound,
                   size_t rowLength,
                   const std::vector<Alternative> &alternatives);

/// The activation functions, by their definitions.
double activate(int64_t activation, double v);

// Storage conversions (round to nearest even, NaN and Inf preserved).
uint16_t toBF16(float v);
float fromBF16(uint16_t v);
uint16_t toF16(float v);
float fromF16(uint16_t v);

/// Rounds `v` to the dtype and returns the value the kernel will see.
double roundTo(int64_t dtype, double v);

/// The values a kernel with quantized weights (desc.weight_quant) multiplies
/// by for parameter `p`, whose set values are `w`: each weight matrix
/// (isQuantized; each expert's of a stacked one) quantized and dequantized
/// by the ABI's formula; other parameters as given.
std::vector<double> dequantize(const ffn_kernel_desc &desc,
                               const ffn_param_desc &p, const double *w);

/// A weight matrix [in, out] quantized by the ABI's formula, as blocks:
/// the integers [in, out], the scales [groups, out] (in the dtype's
/// values) and, for int4 with zero points, the zero points [groups, out].
/// A stacked parameter's experts are quantized one at a time and their
/// blocks stacked: [E, in, out], [E, groups, out], [E, groups, out].
struct QuantBlocks {
  std::vector<signed char> q;
  std::vector<double> scales;
  std::vector<unsigned char> zeroPoints;
};
QuantBlocks quantizeBlocks(const ffn_kernel_desc &desc, const ffn_param_desc &p,
                           const double *w);
/// Stores `v` (already representable) into `out` at element `i`.
void store(int64_t dtype, void *out, size_t i, double v);
double load(int64_t dtype, const void *in, size_t i);

/// Seeded test data, the same on every platform (splitmix64), shared by
/// `ffnc run` and `ffn-gpu-run`.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  double uniform(double lo, double hi);

private:
  uint64_t state;
};

/// A tensor in the kernel's dtype and, element for element, the value the
/// kernel sees (exactly, as doubles) for the reference.
struct Buffer {
  std::vector<unsigned char> bytes;
  std::vector<double> values;
};

/// Test data that exercises a mixture of experts' routing (`ffnc run
/// --routing`; docs/numerics.md): Random leaves the router and the input
/// as drawn; Skewed makes expert 0 win almost every token and expert 1 come
/// second (the router's columns 0 and 1 aligned with a pattern added to
/// every input row); Tied makes every routed column of the router equal to
/// column 0, so that all logits tie and experts 0..top_k-1 are selected.
enum class RoutingData { Random, Skewed, Tied };

/// n zero elements of `dtype`.
Buffer makeBuffer(int64_t dtype, size_t n);
/// Every element U(lo, hi), rounded to the dtype.
void fill(Buffer &b, int64_t dtype, Random &rng, double lo, double hi);

} // namespace ffn_ref

#endif // FFN_REFERENCE_H
