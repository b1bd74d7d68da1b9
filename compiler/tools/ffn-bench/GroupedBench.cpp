//===- GroupedBench.cpp - grouped FFNs against dense equivalents ----------===//

#include "GroupedBench.h"

#include "BenchTiming.h"

#include "ffnc/Analysis/FfnInfo.h"

#include "ffn_harness.h"
#include "ffn_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace ffnc;

ffnc::FfnSpec ffn_bench::denseEquivalent(const FfnSpec &spec) {
  FfnSpec eq = spec;
  eq.groups = 1;
  eq.dFF = spec.dFF / spec.groups;
  eq.name = spec.name + "_dense_eq";
  // A grouped spec can only share a grouped block's parameters, whose
  // shapes the dense equivalent does not have.
  eq.share.clear();
  eq.shareRange = llvm::SMRange();
  return eq;
}

int ffn_bench::benchGrouped(const FfnSpec &spec,
                            const GroupedLibraries &libraries, ffn_context *ctx,
                            unsigned threads, const MachineModel &model,
                            const GroupedBenchOptions &options,
                            GroupedSummary &summary) {
  FfnSpec eq = denseEquivalent(spec);
  // The ratios are per FLOP only if both kernels do the same work per
  // token; a mismatch is a bug in denseEquivalent or in flopsPerToken, and
  // the row would mislead.
  uint64_t flopsGrouped = flopsPerToken(spec), flopsDense = flopsPerToken(eq);
  if (flopsGrouped != flopsDense) {
    fmt::print("| {} | {} | - | {} | ERROR: {} FLOPs per token, its dense "
               "equivalent {} |\n",
               spec.name, spec.groups, threads, flopsGrouped, flopsDense);
    return 1;
  }
  ffn_kernel *grouped = nullptr, *dense = nullptr, *twoPass = nullptr,
             *other = nullptr;
  auto destroy = [&] {
    for (ffn_kernel *k : {grouped, dense, twoPass, other})
      if (k)
        ffn_kernel_destroy(k);
  };
  if (ffn_kernel_load_library(ctx, libraries.chosen.c_str(), spec.name.c_str(),
                              &grouped) != FFN_OK ||
      ffn_kernel_load_library(ctx, libraries.chosen.c_str(), eq.name.c_str(),
                              &dense) != FFN_OK ||
      ffn_kernel_load_library(ctx, libraries.twoPass.c_str(), eq.name.c_str(),
                              &twoPass) != FFN_OK) {
    fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
    destroy();
    return 1;
  }
  const ffn_kernel_desc &desc = *ffn_kernel_descriptor(grouped);
  // Phase 4 of a grouped kernel is the blocks-as-units phase (GroupedPhases
  // .cpp), empty with panels x blocks: the other split is the other library.
  bool blockUnits = desc.cpu && desc.cpu->num_phases > 4 &&
                    desc.cpu->phase_units(4, 1) > 0;
  const std::string &otherLibrary =
      blockUnits ? libraries.panelUnits : libraries.blockUnits;
  if (ffn_kernel_load_library(ctx, otherLibrary.c_str(), spec.name.c_str(),
                              &other) != FFN_OK) {
    fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
    destroy();
    return 1;
  }
  const ffn_kernel_desc &denseDesc = *ffn_kernel_descriptor(dense);
  // Each kernel's parameters as the run harness draws them for its shapes
  // (the grouped blocks' scale is 1/sqrt(d / G), the dense one's 1/sqrt(d),
  // so the values cannot be shared); the two dense kernels get the same.
  ffn_ref::Random rng(17);
  std::vector<ffn_ref::Buffer> params = ffn_ref::makeParams(desc, rng);
  {
    // The dense draw only needs to live until packed: at LLaMA-7B's size in
    // f32 its f64 copies are hundreds of MB.
    std::vector<ffn_ref::Buffer> denseParams =
        ffn_ref::makeParams(denseDesc, rng);
    if (ffn_ref::setParams(grouped, params) != FFN_OK ||
        ffn_ref::setParams(other, params) != FFN_OK ||
        ffn_ref::setParams(dense, denseParams) != FFN_OK ||
        ffn_ref::setParams(twoPass, denseParams) != FFN_OK) {
      fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
      destroy();
      return 1;
    }
  }
  size_t elementBytes = desc.dtype == FFN_DTYPE_F32 ? 4 : 2;
  double wbytes = double(weightBytes(spec));
  int failures = 0;
  for (int64_t m : options.tokens) {
    // One input for all three: both descriptors have d_model columns in
    // the same dtype.
    ffn_ref::Buffer input = ffn_ref::makeInput(desc, m, rng);
    const void *x = input.bytes.data();
    size_t bytes = m * spec.dModel * elementBytes;
    std::vector<unsigned char> yg(bytes), yd(bytes), yt(bytes), yo(bytes);
    // Interleaved, best of each: grouped, dense equivalent, its two-pass
    // schedule, the grouped FFN with the other unit split.
    std::vector<double> best =
        bestInterleaved({[&] { ffn_kernel_run(grouped, m, x, yg.data()); },
                         [&] { ffn_kernel_run(dense, m, x, yd.data()); },
                         [&] { ffn_kernel_run(twoPass, m, x, yt.data()); },
                         [&] { ffn_kernel_run(other, m, x, yo.data()); }},
                        4 * options.seconds, 200, options.quick);
    // The grouped kernel's numerics on the first rows against the f64
    // reference. The dense equivalents are dense FFNs, which the main
    // table checks. Both unit splits run the same tiles: the other one's
    // output must be the same bytes.
    ffn_ref::Comparison cmp =
        ffn_ref::checkOutput(desc, std::min<int64_t>(m, 2), input, yg.data(),
                             params)
            .result;
    bool sameBits = yo == yg;
    if (!cmp.pass || !sameBits)
      ++failures;
    // Phase 4 of ffnc's CPU kernels is the fused schedule, empty outside
    // its bucket (as the main table reads it).
    bool fused = denseDesc.cpu && denseDesc.cpu->num_phases > 4 &&
                 denseDesc.cpu->phase_units(4, m) > 0;
    double flops = double(flopsGrouped) * m;
    // Equal FLOPs, so the time ratio is the per-FLOP speed ratio.
    double vsDense = best[1] / best[0], vsTwoPass = best[2] / best[0];
    double vsOther = best[3] / best[0];
    double gbs = wbytes / best[0] / 1e9;
    fmt::print("| {} | {} | {} | {} | {} | {:.3f} | {:.1f} | {:.3f} | {} | "
               "{:.2f} | {:.3f} | {:.2f} | {:.3f} | {:.2f}{} | {:.1f} | "
               "{:.0f}% | {:.2g}{} |\n",
               spec.name, spec.groups, m, threads,
               blockUnits ? "blocks" : "panels", best[0] * 1e3,
               flops / best[0] / 1e9, best[1] * 1e3,
               fused ? "fused" : "two-pass", vsDense, best[2] * 1e3, vsTwoPass,
               best[3] * 1e3, vsOther, sameBits ? "" : " DIFFERENT BITS", gbs,
               100 * gbs / model.bandwidthGBs, cmp.maxRatio,
               cmp.pass ? "" : " FAIL");
    std::fflush(stdout);
    std::string where = fmt::format("{}, M = {}, {} thread{}", spec.name, m,
                                    threads, threads == 1 ? "" : "s");
    if (vsDense < summary.minVsDense) {
      summary.minVsDense = vsDense;
      summary.whereDense = where;
    }
    if (vsTwoPass < summary.minVsTwoPass) {
      summary.minVsTwoPass = vsTwoPass;
      summary.whereTwoPass = where;
    }
    if (vsOther < summary.minVsOtherUnits) {
      summary.minVsOtherUnits = vsOther;
      summary.whereOtherUnits = where;
    }
  }
  destroy();
  return failures;
}

void ffn_bench::printGroupedSummary(const GroupedSummary &summary) {
  if (summary.whereDense.empty())
    return;
  fmt::print("grouped per-FLOP speed vs dense equivalent: min {:.2f} ({})\n",
             summary.minVsDense, summary.whereDense);
  fmt::print("grouped per-FLOP speed vs dense equivalent, two-pass: min {:.2f} "
             "({})\n",
             summary.minVsTwoPass, summary.whereTwoPass);
  fmt::print("grouped, the cost model's unit split vs the other one: min "
             "{:.2f} ({})\n",
             summary.minVsOtherUnits, summary.whereOtherUnits);
}
