//===- HalideBench.cpp - ffnc against its Halide back end -----------------===//

#include "HalideBench.h"

#include "BenchTiming.h"

#include "ffnc/CodeGen/HalideBackend.h"
#include "ffnc/CodeGen/SpecFit.h"
#include "ffnc/Frontend/Diagnostics.h"

#include "ffn_harness.h"
#include "ffn_reference.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

using namespace ffnc;

namespace {

/// The message of the first diagnostic of `kind` ("error", "warning") in
/// `text`, as SourceMgr renders it (`file:line:col: kind: message`, then the
/// source line and a caret); empty if there is none.
std::string firstMessage(const std::string &text, const std::string &kind) {
  std::string tag = kind + ": ";
  size_t at = text.find(tag);
  if (at == std::string::npos)
    return std::string();
  at += tag.size();
  size_t end = text.find('\n', at);
  return text.substr(at, end == std::string::npos ? end : end - at);
}

/// How Halide spells its autoschedulers (the plugins' names are lower
/// case).
std::string displayName(const std::string &autoscheduler) {
  if (autoscheduler == "mullapudi2016")
    return "Mullapudi2016";
  if (autoscheduler == "li2018")
    return "Li2018";
  if (autoscheduler == "adams2019")
    return "Adams2019";
  return autoscheduler;
}

/// One Halide variant's ratios to ffnc across the rows. The ratio is the
/// Halide kernel's time over ffnc's, as the main table's "ffnc / oneDNN":
/// above 1 where ffnc is faster.
struct RatioSummary {
  double logSum = 0;
  int count = 0;
  double min = INFINITY;
  std::string where;

  void add(double ratio, const std::string &row) {
    logSum += std::log(ratio);
    ++count;
    if (ratio < min) {
      min = ratio;
      where = row;
    }
  }
};

} // namespace

int ffn_bench::benchHalide(const std::vector<FfnSpec> &specs,
                           const std::vector<HalideRow> &rows,
                           const TargetInfo &target, llvm::SourceMgr &sm,
                           const std::map<unsigned, std::string> &ffncLibraries,
                           const CompileLibrary &compile, ffn_context *ctx,
                           const HalideBenchOptions &options,
                           std::vector<std::string> &built) {
  // Never silence: a build without the back end says so where the table
  // would be, so a bench log without Halide rows explains itself.
  const HalideBackendStatus &status = halideBackendStatus();
  if (!status.available) {
    fmt::print("\nHalide back end not built ({}): no Halide rows\n",
               status.whyNot);
    return 0;
  }
  fmt::print("\nHalide back end: {}\n", status.version);

  // Which rows' FFNs the Halide back end builds, by the check ffnc makes
  // before compiling with --backend=halide, so the reasons are its
  // messages. Each refused FFN is listed once, however many rows it has.
  ScheduleOptions fitSchedule;
  fitSchedule.backend = Backend::Halide;
  fitSchedule.isa = target.name;
  fitSchedule.vectorBits = target.vectorBits;
  std::map<std::string, FfnSpec> fitting;
  std::set<std::string> judged;
  std::vector<HalideRow> timed;
  for (const HalideRow &row : rows) {
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const FfnSpec &s) {
      return s.name == row.name;
    });
    // A --spec file may hold only some of the configs.
    if (spec == specs.end())
      continue;
    if (judged.insert(row.name).second) {
      std::string text;
      llvm::raw_string_ostream os(text);
      DiagnosticEngine diags(sm, os);
      bool fits = checkSpecsFit(llvm::ArrayRef<FfnSpec>(*spec), target,
                                fitSchedule, diags);
      os.flush();
      if (!fits) {
        // The messages start with the FFN's name, which the line already
        // gives.
        std::string reason = firstMessage(text, "error");
        std::string named = "ffn '" + row.name + "' ";
        if (reason.rfind(named, 0) == 0)
          reason.erase(0, named.size());
        if (reason.empty())
          reason = "refused by the Halide back end's spec check";
        fmt::print("Halide: left out {} ({})\n", row.name, reason);
      } else {
        // A warning (a hint the Halide back end does not use) is part of
        // what the row measures.
        if (std::string warning = firstMessage(text, "warning");
            !warning.empty())
          fmt::print("Halide: warning: {}\n", warning);
        FfnSpec copy = *spec;
        // The Halide libraries hold only the rows' FFNs, so a `share` could
        // name one they lack; the bench sets every kernel's parameters
        // itself.
        copy.share.clear();
        copy.shareRange = llvm::SMRange();
        fitting.emplace(row.name, std::move(copy));
      }
    }
    if (fitting.count(row.name))
      timed.push_back(row);
  }
  if (timed.empty()) {
    fmt::print("Halide: the Halide back end builds none of the rows' FFNs: "
               "no Halide rows\n");
    return 0;
  }

  // The autoscheduler, if this Halide ships its plugin; otherwise the
  // column stays empty and the summary says why.
  const std::string &chosen = options.autoscheduler;
  bool autoBuilt =
      chosen != "none" &&
      std::find(status.autoschedulers.begin(), status.autoschedulers.end(),
                chosen) != status.autoschedulers.end();
  std::set<int64_t> tokenCounts;
  for (const HalideRow &row : timed)
    tokenCounts.insert(row.m);

  int failures = 0;
  std::map<unsigned, std::string> strategyLibraries;
  std::map<std::pair<unsigned, int64_t>, std::string> autoLibraries;
  for (const auto &entry : ffncLibraries) {
    unsigned threads = entry.first;
    std::string plural = threads == 1 ? "" : "s";
    // halide<thr>.so: every timed FFN with the schedule derived from the
    // cost model's strategy for `threads` (the back end forces the
    // two-pass knobs itself).
    std::vector<FfnSpec> list;
    for (const auto &[name, spec] : fitting)
      list.push_back(spec);
    double start = now();
    std::string library = compile(
        list, threads,
        [](ScheduleOptions &schedule) {
          schedule.backend = Backend::Halide;
          schedule.halideSchedule = "strategy";
        },
        "halide" + std::to_string(threads) + ".so");
    double strategySeconds = now() - start;
    if (library.empty()) {
      fmt::print("Halide: halide{}.so did not build (stderr says why): no "
                 "Halide column for {} thread{}\n",
                 threads, threads, plural);
      ++failures;
    } else {
      built.push_back(library);
      strategyLibraries[threads] = library;
      fmt::print("Halide: compiled {} FFNs for {} thread{} in {:.2f} s "
                 "(strategy schedule)\n",
                 list.size(), threads, plural, strategySeconds);
    }
    if (!autoBuilt)
      continue;
    // halide-auto<thr>-m<M>.so: the autoscheduler plans for one M (its
    // estimate), so each M gets its own library of the FFNs timed at it.
    start = now();
    size_t autoCount = 0;
    for (int64_t m : tokenCounts) {
      std::vector<FfnSpec> atM;
      std::set<std::string> added;
      for (const HalideRow &row : timed)
        if (row.m == m && added.insert(row.name).second)
          atM.push_back(fitting.at(row.name));
      std::string name = fmt::format("halide-auto{}-m{}.so", threads, m);
      std::string autoLibrary = compile(
          atM, threads,
          [&](ScheduleOptions &schedule) {
            schedule.backend = Backend::Halide;
            schedule.halideSchedule = chosen;
            schedule.halideMEstimate = m;
          },
          name);
      if (autoLibrary.empty()) {
        fmt::print("Halide: {} did not build (stderr says why): no "
                   "Halide-auto column at M = {} for {} thread{}\n",
                   name, m, threads, plural);
        ++failures;
        continue;
      }
      built.push_back(autoLibrary);
      autoLibraries[{threads, m}] = autoLibrary;
      ++autoCount;
    }
    if (autoCount)
      fmt::print("Halide: compiled {} autoscheduled librar{} for {} thread{} "
                 "({}, one per M) in {:.2f} s\n",
                 autoCount, autoCount == 1 ? "y" : "ies", threads, plural,
                 displayName(chosen), now() - start);
  }

  // The pools differ: the timings compare kernels, not thread pools, only
  // as far as the note says.
  fmt::print("note: ffnc and Halide (strategy schedule) run on ffnc's "
             "runtime thread pool, sized per row (ffn_context_set_threads); "
             "Halide-auto runs on Halide's own pool, one per library, its "
             "size (the row's thr) fixed when the library was compiled, and "
             "its schedule planned for the row's M; every run is followed by "
             "the same idle gap as in the other tables\n");
  fmt::print("\n| FFN | M | thr | ffnc ms | Halide ms | ffnc / Halide | "
             "Halide-auto ms | ffnc / Halide-auto | Halide err/bound |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|\n");
  RatioSummary strategySummary, autoSummary;
  for (const auto &[threads, ffncLibrary] : ffncLibraries) {
    ffn_context_set_threads(ctx, static_cast<int>(threads));
    for (const HalideRow &row : timed) {
      auto strategyIt = strategyLibraries.find(threads);
      auto autoIt = autoLibraries.find({threads, row.m});
      if (strategyIt == strategyLibraries.end() &&
          autoIt == autoLibraries.end())
        continue;
      // 0: ffnc, 1: Halide (strategy), 2: Halide-auto; a Halide library
      // that did not build leaves its kernel null and its columns "-".
      ffn_kernel *kernels[3] = {nullptr, nullptr, nullptr};
      auto destroy = [&] {
        for (ffn_kernel *k : kernels)
          if (k)
            ffn_kernel_destroy(k);
      };
      auto load = [&](const std::string &library, ffn_kernel **kernel) {
        return ffn_kernel_load_library(ctx, library.c_str(), row.name.c_str(),
                                       kernel) == FFN_OK;
      };
      bool loaded =
          load(ffncLibrary, &kernels[0]) &&
          (strategyIt == strategyLibraries.end() ||
           load(strategyIt->second, &kernels[1])) &&
          (autoIt == autoLibraries.end() || load(autoIt->second, &kernels[2]));
      // The run harness's seeded parameters and input, as the main table
      // draws them, the same bytes for all three kernels: their
      // descriptors list the same parameters (the ABI is the back ends').
      const ffn_kernel_desc *desc =
          kernels[0] ? ffn_kernel_descriptor(kernels[0]) : nullptr;
      ffn_ref::Random rng(17);
      std::vector<ffn_ref::Buffer> params;
      if (loaded) {
        params = ffn_ref::makeParams(*desc, rng);
        for (ffn_kernel *k : kernels)
          if (k && ffn_ref::setParams(k, params) != FFN_OK)
            loaded = false;
      }
      if (!loaded) {
        fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
        fmt::print("| {} | {} | {} | ERROR: a kernel does not load or take "
                   "the parameters (stderr says why) |\n",
                   row.name, row.m, threads);
        ++failures;
        destroy();
        continue;
      }
      ffn_ref::Buffer input = ffn_ref::makeInput(*desc, row.m, rng);
      const void *x = input.bytes.data();
      size_t elementBytes = desc->dtype == FFN_DTYPE_F32 ? 4 : 2;
      size_t bytes = row.m * fitting.at(row.name).dModel * elementBytes;
      std::vector<unsigned char> ys[3] = {std::vector<unsigned char>(bytes),
                                          std::vector<unsigned char>(bytes),
                                          std::vector<unsigned char>(bytes)};
      int present = 0;
      for (ffn_kernel *k : kernels)
        present += k != nullptr;
      // Interleaved, best of each: ffnc, Halide, Halide-auto (whose
      // warm-up round also starts Halide's thread pool).
      std::vector<std::function<void()>> runs(3);
      for (int i = 0; i < 3; ++i)
        if (kernels[i])
          runs[i] = [&, i] {
            ffn_kernel_run(kernels[i], row.m, x, ys[i].data());
          };
      std::vector<double> best =
          bestInterleaved(runs, present * options.seconds, 200, options.quick);

      // Each Halide kernel's numerics on the first rows against the f64
      // reference (ffnc's are the main table's). Either failing is a
      // failure of the bench.
      int64_t checkRows = std::min<int64_t>(row.m, 2);
      std::string errColumn;
      bool pass = true;
      for (int i : {1, 2}) {
        if (!kernels[i])
          continue;
        ffn_ref::Comparison cmp =
            ffn_ref::checkOutput(*ffn_kernel_descriptor(kernels[i]), checkRows,
                                 input, ys[i].data(), params)
                .result;
        pass &= cmp.pass;
        if (i == 2)
          errColumn += errColumn.empty() ? "auto " : "; auto ";
        errColumn +=
            fmt::format("{:.2g}{}", cmp.maxRatio, cmp.pass ? "" : " FAIL");
      }
      if (!pass)
        ++failures;
      auto msColumn = [&](int i) {
        return kernels[i] ? fmt::format("{:.3f}", best[i] * 1e3)
                          : std::string("-");
      };
      auto ratioColumn = [&](int i) {
        return kernels[i] ? fmt::format("{:.2f}x", best[i] / best[0])
                          : std::string("-");
      };
      fmt::print("| {} | {} | {} | {:.3f} | {} | {} | {} | {} | {} |\n",
                 row.name, row.m, threads, best[0] * 1e3, msColumn(1),
                 ratioColumn(1), msColumn(2), ratioColumn(2), errColumn);
      std::fflush(stdout);
      std::string where = fmt::format("{}, M = {}, {} thread{}", row.name,
                                      row.m, threads, threads == 1 ? "" : "s");
      if (kernels[1])
        strategySummary.add(best[1] / best[0], where);
      if (kernels[2])
        autoSummary.add(best[2] / best[0], where);
      destroy();
    }
  }

  if (strategySummary.count)
    fmt::print("Halide (strategy schedule) vs ffnc: geomean ffnc/Halide "
               "{:.2f}, min {:.2f} ({})\n",
               std::exp(strategySummary.logSum / strategySummary.count),
               strategySummary.min, strategySummary.where);
  else
    fmt::print("Halide (strategy schedule) vs ffnc: no rows\n");
  if (autoSummary.count)
    fmt::print("Halide-auto ({}) vs ffnc: geomean ffnc/Halide-auto {:.2f}, "
               "min {:.2f} ({})\n",
               displayName(chosen),
               std::exp(autoSummary.logSum / autoSummary.count),
               autoSummary.min, autoSummary.where);
  else
    fmt::print("Halide-auto vs ffnc: no rows\n");
  std::string shipped = status.autoschedulers.empty()
                            ? std::string("none")
                            : llvm::join(status.autoschedulers, ", ");
  if (chosen == "none")
    fmt::print("Halide autoscheduler: none (--halide-autoscheduler=none; "
               "this Halide ships {})\n",
               shipped);
  else if (!autoBuilt)
    fmt::print("Halide autoscheduler: {}, which this Halide does not ship "
               "(it ships {}): no Halide-auto column\n",
               displayName(chosen), shipped);
  else
    fmt::print("Halide autoscheduler: {} (this Halide ships {})\n",
               displayName(chosen), shipped);
  return failures;
}
