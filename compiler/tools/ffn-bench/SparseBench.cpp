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

int ffn_bench::benchSparse(const FfnSpec &spec, const std::string &library,
                           const std::string &denseLibrary, ffn_context *ctx,
                           unsigned threads, const MachineModel &model,
                           const SparseBenchOptions &options) {
  ffn_kernel *sparse = nullptr, *dense = nullptr;
  if (ffn_kernel_load_library(ctx, library.c_str(), spec.name.c_str(),
                              &sparse) != FFN_OK ||
      ffn_kernel_load_library(ctx, denseLibrary.c_str(), spec.name.c_str(),
                              &dense) != FFN_OK) {
    fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
    return 1;
  }
  const ffn_kernel_desc &desc = *ffn_kernel_descriptor(sparse);
  int64_t d = spec.dModel, f = spec.dFF;
  int up = paramIndex(desc, "w_up"), bias = paramIndex(desc, "b_up");
  bool bf16 = desc.dtype == FFN_DTYPE_BF16;
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
      // What the data makes: nonzeros per row, and the rows of W_down some
      // row needs (what the sparse GEMM 2 reads).
      int64_t nonzero = 0, needed = 0;
      for (int64_t j = 0; j < f; ++j) {
        bool any = false;
        for (int64_t r = 0; r < m; ++r) {
          bool nz = pre[r * f + j] + b > 0;
          nonzero += nz;
          any |= nz;
        }
        needed += any;
      }
      double rowShare = double(nonzero) / double(m * f);
      double neededShare = double(needed) / double(f);

      for (ffn_kernel *k : {sparse, dense})
        if (ffn_ref::setParams(k, params) != FFN_OK) {
          fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
          return failures + 1;
        }
      std::vector<const void *> weights;
      for (const ffn_ref::Buffer &p : params)
        weights.push_back(p.bytes.data());
      OneDnnFfn dnnl({d, f, m, false, "relu", spec.biasUp, bf16}, weights);

      const void *x = input.bytes.data();
      std::vector<unsigned char> ys(m * d * elementBytes), yd(ys.size()),
          yo(ys.size());
      double bestS = INFINITY, bestD = INFINITY, bestO = INFINITY, spent = 0;
      for (int r = 0; r < 400 && (r < 4 || spent < 3 * options.seconds); ++r) {
        double t0 = now();
        ffn_kernel_run(sparse, m, x, ys.data());
        double t1 = now();
        idle(kIdleGap);
        double t2 = now();
        ffn_kernel_run(dense, m, x, yd.data());
        double t3 = now();
        idle(kIdleGap);
        double t4 = now();
        dnnl.run(x, yo.data());
        double t5 = now();
        idle(kIdleGap);
        if (r > 0) {
          bestS = std::min(bestS, t1 - t0);
          bestD = std::min(bestD, t3 - t2);
          bestO = std::min(bestO, t5 - t4);
        }
        spent += (t1 - t0) + (t3 - t2) + (t5 - t4);
        if (options.quick && r >= 3)
          break;
      }
      // The sparse GEMM 2 must give the dense one's bits, and both the
      // reference's values.
      bool identical = std::memcmp(ys.data(), yd.data(), ys.size()) == 0;
      ffn_ref::Comparison cmp =
          ffn_ref::checkOutput(desc, std::min<int64_t>(m, 2), input, ys.data(),
                               params)
              .result;
      if (!identical || !cmp.pass)
        ++failures;
      // Bytes the sparse kernel reads: W_up whole, W_down's needed rows.
      double read = upBytes + neededShare * downBytes;
      double gbs = read / bestS / 1e9;
      fmt::print("| {} | {} | {} | {:.0f}% | {:.0f}% | {:.3f} | {:.3f} | "
                 "{:.2f}x | {:.3f} | {:.2f}x | {:.1f} | {:.0f}% | {}{} |\n",
                 spec.name, m, threads, 100 * rowShare, 100 * neededShare,
                 bestS * 1e3, bestD * 1e3, bestD / bestS, bestO * 1e3,
                 bestO / bestS, gbs, 100 * gbs / model.bandwidthGBs,
                 identical ? "yes" : "NO", cmp.pass ? "" : " FAIL");
      std::fflush(stdout);
    }
  }
  ffn_kernel_destroy(sparse);
  ffn_kernel_destroy(dense);
  return failures;
}
