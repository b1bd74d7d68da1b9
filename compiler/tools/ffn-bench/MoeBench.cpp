//===- MoeBench.cpp - a mixture of experts against oneDNN per expert ------===//

#include "MoeBench.h"

#include "BenchTiming.h"
#include "OneDnnFfn.h"

#include "ffnc/Analysis/FfnInfo.h"

#include "ffn_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

using namespace ffnc;

namespace ffn_bench {
namespace {

/// n bf16 values U(-scale, scale), fast: the expert weights of a Mixtral
/// are 1.4 G values, too many for the harness's f64 copies.
std::vector<uint16_t> randomBf16(size_t n, double scale, uint64_t seed) {
  std::vector<uint16_t> out(n);
  ffn_ref::Random rng(seed);
  for (uint16_t &v : out)
    v = ffn_ref::toBF16(static_cast<float>(rng.uniform(-scale, scale)));
  return out;
}

/// The eager baseline: the router and top-k per token (f32, the kernel's
/// order of summation, so both pick the same experts), each expert's rows
/// gathered, its FFN run by oneDNN on them, the weighted outputs summed
/// back per token in the selection order.
class PerExpertMoe {
public:
  PerExpertMoe(const FfnSpec &spec, int64_t m, const uint16_t *x,
               const std::vector<const uint16_t *> &up,
               const std::vector<const uint16_t *> &gate,
               const std::vector<const uint16_t *> &down,
               const uint16_t *router)
      : spec(spec), m(m), router(router) {
    int64_t d = spec.dModel;
    route(x);
    // One oneDNN FFN per expert with rows, for its row count (the counts of
    // this input; built outside the timed runs).
    for (int64_t e = 0; e < spec.experts; ++e) {
      int64_t rows = static_cast<int64_t>(rowsOf[e].size());
      if (rows == 0) {
        experts.emplace_back();
        continue;
      }
      OneDnnFfn::Config c{d, spec.dFF, rows, true, "", false, true};
      experts.push_back(std::make_unique<OneDnnFfn>(
          c, std::vector<const void *>{up[e], gate[e], down[e]}));
      inputs.emplace_back(rows * d);
      outputs.emplace_back(rows * d);
    }
  }

  /// y = MoE(x), timed as a whole: routing, gathers, experts, the sum.
  void run(const uint16_t *x, uint16_t *y) {
    int64_t d = spec.dModel;
    route(x);
    std::fill(acc.begin(), acc.end(), 0.0f);
    size_t slot = 0;
    for (int64_t e = 0; e < spec.experts; ++e) {
      if (!experts[e])
        continue;
      std::vector<uint16_t> &in = inputs[slot], &out = outputs[slot];
      ++slot;
      for (size_t i = 0; i < rowsOf[e].size(); ++i)
        std::memcpy(&in[i * d], x + rowsOf[e][i] * d, d * 2);
      experts[e]->run(in.data(), out.data());
      for (size_t i = 0; i < rowsOf[e].size(); ++i) {
        int64_t r = rowsOf[e][i];
        float g = gainOf[e][i];
        float *a = &acc[r * d];
        for (int64_t j = 0; j < d; ++j)
          a[j] += g * ffn_ref::fromBF16(out[i * d + j]);
      }
    }
    for (int64_t i = 0; i < m * d; ++i)
      y[i] = ffn_ref::toBF16(acc[i]);
  }

  /// Experts with at least one row.
  int64_t expertsUsed() const {
    return std::count_if(rowsOf.begin(), rowsOf.end(),
                         [](const std::vector<int64_t> &r) { return !r.empty(); });
  }

private:
  /// Each token's top k (ties to the lower index) and topk_softmax or
  /// softmax_topk weights, as lists of rows per expert.
  void route(const uint16_t *x) {
    int64_t d = spec.dModel, e = spec.experts, k = spec.topK;
    rowsOf.assign(e, {});
    gainOf.assign(e, {});
    acc.resize(m * d);
    std::vector<float> logits(e);
    std::vector<int64_t> order(e);
    for (int64_t r = 0; r < m; ++r) {
      std::fill(logits.begin(), logits.end(), 0.0f);
      for (int64_t i = 0; i < d; ++i) {
        float a = ffn_ref::fromBF16(x[r * d + i]);
        for (int64_t j = 0; j < e; ++j)
          logits[j] += a * ffn_ref::fromBF16(router[i * e + j]);
      }
      // The k largest, in order; ties to the lower index.
      std::vector<char> taken(e, 0);
      for (int64_t j = 0; j < k; ++j) {
        int64_t best = -1;
        for (int64_t c = 0; c < e; ++c)
          if (!taken[c] && (best < 0 || logits[c] > logits[best]))
            best = c;
        taken[best] = 1;
        order[j] = best;
      }
      float top = logits[order[0]], sum = 0;
      std::vector<float> g(k);
      for (int64_t j = 0; j < k; ++j)
        sum += g[j] = std::exp(logits[order[j]] - top);
      if (spec.router == Router::SoftmaxTopK) {
        sum = 0;
        for (int64_t j = 0; j < e; ++j)
          sum += std::exp(logits[j] - top);
      }
      float picked = 0;
      for (int64_t j = 0; j < k; ++j)
        picked += g[j] /= sum;
      for (int64_t j = 0; j < k; ++j) {
        if (spec.router == Router::SoftmaxTopK && spec.routerNormalize)
          g[j] /= picked;
        rowsOf[order[j]].push_back(r);
        gainOf[order[j]].push_back(g[j]);
      }
    }
  }

  const FfnSpec &spec;
  int64_t m;
  const uint16_t *router;
  std::vector<std::vector<int64_t>> rowsOf;
  std::vector<std::vector<float>> gainOf;
  std::vector<std::unique_ptr<OneDnnFfn>> experts;
  std::vector<std::vector<uint16_t>> inputs, outputs;
  std::vector<float> acc;
};

} // namespace

int benchMoe(const FfnSpec &spec, const std::string &library, ffn_context *ctx,
             unsigned threads, const MachineModel &model,
             const MoeBenchOptions &options, std::vector<std::string> &summary) {
  int64_t d = spec.dModel, f = spec.dFF, e = spec.experts;
  // The baseline is what frameworks run for Mixtral-style blocks: SwiGLU
  // experts, no biases, no shared experts, bf16.
  if (!spec.isGated() || spec.biasUp || spec.biasDown || spec.sharedExperts ||
      spec.dtype != DType::BF16 || spec.weightQuant != WeightQuant::None ||
      spec.norm != NormKind::None || spec.residual) {
    fmt::print("ffn-bench: {} is not a bf16 SwiGLU mixture without biases, "
               "norm or shared experts: no per-expert baseline\n",
               spec.name);
    return 1;
  }
  ffn_kernel *kernel = nullptr;
  if (ffn_kernel_load_library(ctx, library.c_str(), spec.name.c_str(),
                              &kernel) != FFN_OK) {
    fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
    return 1;
  }
  // Stacked [E, in, out] weights, as nn.Linear's init; the router [d, E].
  double s1 = 1 / std::sqrt(double(d)), s2 = 1 / std::sqrt(double(f));
  size_t per = size_t(d) * size_t(f);
  std::vector<uint16_t> up = randomBf16(e * per, s1, 1),
                        gate = randomBf16(e * per, s1, 2),
                        down = randomBf16(e * per, s2, 3),
                        router = randomBf16(size_t(d) * e, s1, 4);
  for (auto [name, data] : {std::pair{"w_up", &up}, std::pair{"w_gate", &gate},
                            std::pair{"w_down", &down},
                            std::pair{"w_router", &router}})
    if (ffn_kernel_set_param(kernel, name, data->data(), data->size() * 2,
                             FFN_LAYOUT_IN_OUT) != FFN_OK) {
      fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
      ffn_kernel_destroy(kernel);
      return 1;
    }
  std::vector<const uint16_t *> ups, gates, downs;
  for (int64_t i = 0; i < e; ++i) {
    ups.push_back(&up[i * per]);
    gates.push_back(&gate[i * per]);
    downs.push_back(&down[i * per]);
  }

  int mismatches = 0;
  uint64_t expertBytes = 3 * per * 2;
  for (int64_t m : options.tokens) {
    std::vector<uint16_t> x = randomBf16(size_t(m) * d, 1.0, 100 + m);
    PerExpertMoe baseline(spec, m, x.data(), ups, gates, downs, router.data());
    std::vector<uint16_t> y(x.size()), yb(x.size());
    std::vector<double> best =
        bestInterleaved({[&] { ffn_kernel_run(kernel, m, x.data(), y.data()); },
                         [&] { baseline.run(x.data(), yb.data()); }},
                        2 * options.seconds, 100, options.quick);
    double bestF = best[0], bestB = best[1];
    // The two agree up to bf16 rounding (oneDNN keeps the hidden layer in
    // bf16); a routing or expert mix-up is far beyond.
    double maxY = 0, maxDiff = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      double a = ffn_ref::fromBF16(y[i]), b = ffn_ref::fromBF16(yb[i]);
      maxY = std::max(maxY, std::fabs(b));
      maxDiff = std::max(maxDiff, std::fabs(a - b));
    }
    double rel = maxY > 0 ? maxDiff / maxY : maxDiff;
    bool agree = rel < 0.05;
    mismatches += !agree;
    // Bytes the run must read: the router and each selected expert's
    // weights once.
    int64_t used = baseline.expertsUsed();
    double bytes = double(used) * expertBytes + double(d) * e * 2;
    double flops = double(flopsPerToken(spec)) * m;
    fmt::print("| {} | {} | {} | {:.3f} | {:.1f} | {} of {} | {:.1f} | {:.0f}% "
               "| {:.3f} | {:.2f}x | {:.2g}{} |\n",
               spec.name, m, threads, bestF * 1e3, flops / bestF / 1e9, used, e,
               bytes / bestF / 1e9,
               100 * bytes / bestF / 1e9 / model.bandwidthGBs, bestB * 1e3,
               bestB / bestF, rel, agree ? "" : " MISMATCH");
    std::fflush(stdout);
    if (m == 1)
      summary.push_back(fmt::format(
          "  {} ({} thread{}): {:.2f} ms; {:.1f} MB per token (router + {} "
          "experts); {:.1f} GB/s, {:.0f}% of the measured read bandwidth "
          "({:.1f} GB/s: the roofline bound is {:.2f} ms); oneDNN per expert "
          "{:.2f} ms",
          spec.name, threads, threads == 1 ? "" : "s", bestF * 1e3, bytes / 1e6,
          used, bytes / bestF / 1e9,
          100 * bytes / bestF / 1e9 / model.bandwidthGBs, model.bandwidthGBs,
          bytes / model.bandwidthGBs / 1e6, bestB * 1e3));
  }
  ffn_kernel_destroy(kernel);
  return mismatches;
}

} // namespace ffn_bench
