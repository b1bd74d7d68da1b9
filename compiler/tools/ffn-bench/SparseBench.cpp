//===- SparseBench.cpp - activation sparsity at decode --------------------===//

#include "SparseBench.h"

#include "BenchTiming.h"
#include "OneDnnFfn.h"

#include "ffnc/Analysis/FfnInfo.h"

#include "ffn_harness.h"
#include "ffn_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

using namespace ffnc;

namespace {

/// z with P(N(0, 1) > z) = p, by bisection (p in (0, 1)).
double upperQuantile(double p) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 100; ++i) {
    double mid = (lo + hi) / 2;
    if (0.5 * std::erfc(mid / std::sqrt(2.0)) > p)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

/// The index of parameter `name` in the descriptor (-1: none).
int paramIndex(const ffn_kernel_desc &desc, const char *name) {
  for (int i = 0; i < desc.num_params; ++i)
    if (std::strcmp(desc.params[i].name, name) == 0)
      return i;
  return -1;
}

} // namespace

int ffn_bench::benchSparse(const FfnSpec &spec,
                           const SparseLibraries &libraries, ffn_context *ctx,
                           unsigned threads, const MachineModel &model,
                           const SparseBenchOptions &options) {
  ffn_kernel *chosen = nullptr, *dense = nullptr, *always = nullptr;
  if (ffn_kernel_load_library(ctx, libraries.chosen.c_str(), spec.name.c_str(),
                              &chosen) != FFN_OK ||
      ffn_kernel_load_library(ctx, libraries.dense.c_str(), spec.name.c_str(),
                              &dense) != FFN_OK ||
      ffn_kernel_load_library(ctx, libraries.always.c_str(), spec.name.c_str(),
                              &always) != FFN_OK) {
    fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
    return 1;
  }
  const ffn_kernel_desc &desc = *ffn_kernel_descriptor(chosen);
  // The cost model's sparse bucket, from the kernel's schedule text.
  int64_t sparseMaxM = 0;
  std::string schedule =
      desc.strategy ? std::string(desc.strategy) : std::string();
  if (size_t at = schedule.find(": GEMM 2 skips"); at != std::string::npos) {
    size_t le = schedule.rfind("m <= ", at);
    if (le != std::string::npos)
      sparseMaxM = std::stoll(schedule.substr(le + 5, at - le - 5));
  }
  int64_t d = spec.dModel, f = spec.dFF;
  int up = paramIndex(desc, "w_up"), bias = paramIndex(desc, "b_up");
  bool bf16 = desc.dtype == FFN_DTYPE_BF16;
  // The kernel lists pairs of rows with bf16 pair tiles.
  bool pairs = desc.operand_rounding == FFN_DTYPE_BF16;
  size_t elementBytes = desc.dtype == FFN_DTYPE_F32 ? 4 : 2;
  double upBytes = double(d) * f * elementBytes, downBytes = upBytes;
  int failures = 0;
  for (int64_t m : options.tokens) {
    for (double share : options.nonzero) {
      ffn_ref::Random rng(17);
      std::vector<ffn_ref::Buffer> params = ffn_ref::makeParams(desc, rng);
      ffn_ref::Buffer input = ffn_ref::makeInput(desc, m, rng);
      // The pre-activations x W_up, and one b_up for every column that
      // leaves `share` of them positive (they are near normal: sums of d
      // independent products).
      std::vector<double> pre(m * f, 0.0);
      const std::vector<double> &w = params[up].values;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t k = 0; k < d; ++k) {
          double a = input.values[r * d + k];
          const double *row = &w[k * f];
          double *out = &pre[r * f];
          for (int64_t j = 0; j < f; ++j)
            out[j] += a * row[j];
        }
      double sq = 0;
      for (double v : pre)
        sq += v * v;
      double sigma = std::sqrt(sq / double(pre.size()));
      unsigned char scratch[4];
      ffn_ref::store(desc.dtype, scratch, 0, -sigma * upperQuantile(share));
      double b = ffn_ref::load(desc.dtype, scratch, 0);
      for (int64_t j = 0; j < f; ++j) {
        ffn_ref::store(desc.dtype, params[bias].bytes.data(), j, b);
        params[bias].values[j] = b;
      }
      // What the data makes: nonzeros per row, and the panel rows of
      // W_down (pairs with pair tiles) some row needs: what the sparse GEMM
      // 2 lists and reads.
      int64_t nonzero = 0, needed = 0, unit = pairs ? 2 : 1;
      for (int64_t j = 0; j < f; ++j)
        for (int64_t r = 0; r < m; ++r)
          nonzero += pre[r * f + j] + b > 0;
      for (int64_t j = 0; j < f; j += unit) {
        bool any = false;
        for (int64_t i = j; i < std::min(j + unit, f); ++i)
          for (int64_t r = 0; r < m; ++r)
            any |= pre[r * f + i] + b > 0;
        needed += any;
      }
      double rowShare = double(nonzero) / double(m * f);
      double neededShare = double(needed) / double((f + unit - 1) / unit);

      for (ffn_kernel *k : {chosen, dense, always})
        if (ffn_ref::setParams(k, params) != FFN_OK) {
          fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
          return failures + 1;
        }
      std::vector<const void *> weights;
      for (const ffn_ref::Buffer &p : params)
        weights.push_back(p.bytes.data());
      OneDnnFfn dnnl({d, f, m, false, "relu", spec.biasUp, bf16}, weights);

      const void *x = input.bytes.data();
      size_t bytes = m * d * elementBytes;
      std::vector<unsigned char> ys(bytes), yd(bytes), ya(bytes), yo(bytes);
      // Interleaved, best of each: the cost model's kernel, dense,
      // always-sparse, oneDNN.
      std::vector<double> best =
          bestInterleaved({[&] { ffn_kernel_run(chosen, m, x, ys.data()); },
                           [&] { ffn_kernel_run(dense, m, x, yd.data()); },
                           [&] { ffn_kernel_run(always, m, x, ya.data()); },
                           [&] { dnnl.run(x, yo.data()); }},
                          4 * options.seconds, 400, options.quick);
      // The sparse GEMM 2 must give the dense one's bits where both run the
      // same schedule, and all the reference's values. The chosen and the
      // dense library share the cost model's fused bucket; the
      // always-sparse one has none when that bucket is smaller than its
      // sparse one (a slow measured hand-off makes the model pick fused
      // schedules), and a fused run sums in another order than a two-pass
      // one: then only the reference judges it.
      auto fusedAt = [&](ffn_kernel *k) {
        const ffn_kernel_desc &kd = *ffn_kernel_descriptor(k);
        return kd.cpu && kd.cpu->num_phases > 4 &&
               kd.cpu->phase_units(4, m) > 0;
      };
      bool alwaysComparable = fusedAt(always) == fusedAt(dense);
      bool identical =
          std::memcmp(ys.data(), yd.data(), bytes) == 0 &&
          (!alwaysComparable || std::memcmp(ya.data(), yd.data(), bytes) == 0);
      int64_t checkRows = std::min<int64_t>(m, 2);
      ffn_ref::Comparison cmp =
          ffn_ref::checkOutput(desc, checkRows, input, ys.data(), params)
              .result;
      ffn_ref::Comparison cmpAlways =
          ffn_ref::checkOutput(desc, checkRows, input, ya.data(), params)
              .result;
      cmp.pass &= cmpAlways.pass;
      if (!identical || !cmp.pass)
        ++failures;
      // Bytes the kernel reads: W_up whole, W_down's listed rows when it
      // runs the sparse GEMM 2.
      bool sparse = m <= sparseMaxM;
      double read = upBytes + (sparse ? neededShare : 1.0) * downBytes;
      double gbs = read / best[0] / 1e9;
      fmt::print("| {} | {} | {} | {:.0f}% | {:.0f}% | {:.3f} | {} | {:.3f} | "
                 "{:.2f}x | {:.3f} | {:.3f} | {:.2f}x | {:.1f} | {:.0f}% | "
                 "{}{} |\n",
                 spec.name, m, threads, 100 * rowShare, 100 * neededShare,
                 best[0] * 1e3, sparse ? "sparse" : "dense", best[1] * 1e3,
                 best[1] / best[0], best[2] * 1e3, best[3] * 1e3,
                 best[3] / best[0], gbs, 100 * gbs / model.bandwidthGBs,
                 identical ? alwaysComparable ? "yes"
                                              : "yes (always-sparse "
                                                "on another schedule)"
                           : "NO",
                 cmp.pass ? "" : " FAIL");
      std::fflush(stdout);
    }
  }
  ffn_kernel_destroy(chosen);
  ffn_kernel_destroy(dense);
  ffn_kernel_destroy(always);
  return failures;
}
