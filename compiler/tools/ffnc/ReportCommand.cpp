//===- ReportCommand.cpp - `ffnc report`: one HTML page per spec ----------===//
//
// A self-contained page (inline CSS and SVG, no external resources) with,
// per FFN: the dataflow with its dimensions, the parameter / byte / FLOP
// table, the schedule the compiler picks for each token count with the
// predicted time, and a roofline plot of the machine with the predicted
// points and, with --measure, the measured ones. Every number is computed
// by the functions `ffnc info` prints from, so the two agree. A one-line
// script marks the page as rendered once the browser has laid out its
// plots (a headless browser's DOM then says so; the test suite checks it).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "InfoCommand.h"
#include "Options.h"

#include "ffnc/Analysis/CostModel.h"
#include "ffnc/Analysis/FfnInfo.h"
#include "ffnc/Analysis/MachineProfile.h"
#include "ffnc/CodeGen/Compile.h"

#include "ffn/Target/CPU/CostModel.h"
#include "ffn/runtime.h"
#include "ffn_harness.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

using namespace ffnc;

namespace {

std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// 4722432 -> "4,722,432", as `ffnc info` prints counts.
std::string withCommas(uint64_t value) {
  std::string digits = std::to_string(value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

/// One token count's row: what the compiler picks and what it costs.
struct Point {
  uint64_t m;
  double intensity, predictedMs, predictedGflops;
  bool memoryBound;
  std::string schedule;
  double measuredMs = 0; // 0: not measured
  double benchMs = 0;    // from an ffn-bench output; 0: none
};

/// The dataflow of `spec` as SVG: boxes for the tensors and operations,
/// labelled with their shapes.
std::string dataflow(const FfnSpec &spec) {
  std::vector<std::pair<std::string, std::string>> steps;
  std::string d = std::to_string(spec.dModel), f = std::to_string(spec.dFF);
  steps.push_back({"x", "[M, " + d + "]"});
  if (spec.norm != NormKind::None && spec.normPosition == NormPosition::Pre)
    steps.push_back({toString(spec.norm).str(), "pre, over " + d});
  std::string gemm1 = spec.isGated() ? "x W_gate, x W_up" : "x W_up";
  std::string shape1 = "[" + d + ", " + f + "]";
  if (spec.isGrouped())
    shape1 = std::to_string(spec.groups) + " blocks [" +
             std::to_string(spec.blockDModel()) + ", " +
             std::to_string(spec.blockDFF()) + "]";
  if (spec.isMoe())
    shape1 = std::to_string(spec.totalExperts()) + " experts [" + d + ", " + f +
             "], top " + std::to_string(spec.topK);
  steps.push_back({"GEMM 1: " + gemm1, shape1});
  steps.push_back({spec.isGated() ? toString(spec.gate).str() + " gate"
                                  : toString(spec.activation).str(),
                   "h [M, " + f + "]"});
  steps.push_back(
      {"GEMM 2: h W_down", spec.isGrouped()
                               ? std::to_string(spec.groups) + " blocks [" +
                                     std::to_string(spec.blockDFF()) + ", " +
                                     std::to_string(spec.blockDModel()) + "]"
                               : "[" + f + ", " + d + "]"});
  if (spec.residual)
    steps.push_back({"+ x", "residual"});
  if (spec.norm != NormKind::None && spec.normPosition == NormPosition::Post)
    steps.push_back({toString(spec.norm).str(), "post, over " + d});
  steps.push_back({"y", "[M, " + d + "]"});
  const int box = 180, gap = 20, height = 56;
  int width = static_cast<int>(steps.size()) * (box + gap);
  std::string svg = fmt::format(
      "<svg class=\"dataflow\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} "
      "{}\" xmlns=\"http://www.w3.org/2000/svg\">\n",
      width, height + 8, width, height + 8);
  for (size_t i = 0; i < steps.size(); ++i) {
    int x = static_cast<int>(i) * (box + gap) + 4;
    svg += fmt::format("<rect x=\"{}\" y=\"4\" width=\"{}\" height=\"{}\" "
                       "rx=\"6\"/><text x=\"{}\" y=\"26\">{}</text><text "
                       "class=\"dim\" x=\"{}\" y=\"46\">{}</text>\n",
                       x, box, height, x + box / 2, escape(steps[i].first),
                       x + box / 2, escape(steps[i].second));
    if (i + 1 < steps.size())
      svg +=
          fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n",
                      x + box, 4 + height / 2, x + box + gap, 4 + height / 2);
  }
  return svg + "</svg>\n";
}

/// The roofline of `machine` (log-log: FLOP per byte against GFLOP/s) with
/// the predicted points and the measured ones.
std::string roofline(const MachineModel &machine,
                     const std::vector<Point> &points, uint64_t flops) {
  const double w = 640, h = 360, left = 60, bottom = 40;
  double xMin = 0.1, xMax = 1e4, yMin = 0.1, yMax = machine.peakGflops * 2;
  for (const Point &p : points) {
    xMin = std::min(xMin, p.intensity / 2);
    xMax = std::max(xMax, p.intensity * 2);
    yMin = std::min(yMin, p.predictedGflops / 2);
  }
  auto px = [&](double v) {
    return left + (std::log10(v) - std::log10(xMin)) /
                      (std::log10(xMax) - std::log10(xMin)) * (w - left - 30);
  };
  auto py = [&](double v) {
    return h - bottom -
           (std::log10(v) - std::log10(yMin)) /
               (std::log10(yMax) - std::log10(yMin)) * (h - bottom - 10);
  };
  std::string svg = fmt::format(
      "<svg class=\"roofline\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} "
      "{}\" xmlns=\"http://www.w3.org/2000/svg\">\n",
      w, h, w, h);
  svg +=
      fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" "
                  "y2=\"{}\"/><line class=\"axis\" x1=\"{}\" y1=\"10\" "
                  "x2=\"{}\" y2=\"{}\"/>\n",
                  left, h - bottom, w - 30, h - bottom, left, left, h - bottom);
  // (Decades by multiplication drift: compare with a little slack.)
  for (double v = std::pow(10, std::ceil(std::log10(xMin))); v <= xMax * 1.001;
       v *= 10)
    svg +=
        fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{}\">{:g}</text>\n",
                    px(v), h - bottom + 16, v);
  for (double v = std::pow(10, std::ceil(std::log10(yMin))); v <= yMax * 1.001;
       v *= 10)
    svg +=
        fmt::format("<text class=\"tick\" x=\"{}\" y=\"{:.1f}\">{:g}</text>\n",
                    left - 6, py(v) + 4, v);
  svg += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\">FLOP per byte "
                     "(weights + input + output)</text><text class=\"label\" "
                     "x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\">"
                     "GFLOP/s</text>\n",
                     w / 2, h - 6, h / 2, h / 2);
  // The roofs: memory and cache bandwidth slopes under the compute peak.
  for (auto [gbs, cls] : {std::pair{machine.bandwidthGBs, "memory"},
                          std::pair{machine.cacheBandwidthGBs, "cache"}}) {
    std::string path;
    for (int i = 0; i <= 64; ++i) {
      double x = xMin * std::pow(xMax / xMin, i / 64.0);
      double y = std::clamp(std::min(machine.peakGflops, gbs * x), yMin, yMax);
      path += fmt::format("{}{:.1f},{:.1f} ", i ? "L" : "M", px(x), py(y));
    }
    svg += fmt::format("<path class=\"roof {}\" d=\"{}\"/>\n", cls, path);
  }
  // The legend, top left inside the axes.
  svg += fmt::format(
      "<g class=\"legend\" transform=\"translate({} 16)\"><circle "
      "class=\"predicted\" cx=\"6\" cy=\"0\" r=\"5\"/><text x=\"16\" "
      "y=\"4\">predicted</text><rect class=\"measured\" x=\"1.5\" y=\"11\" "
      "width=\"9\" height=\"9\"/><text x=\"16\" y=\"20\">measured</text>"
      "<path class=\"roof memory\" d=\"M0,32L12,32\"/><text x=\"16\" "
      "y=\"36\">memory roof</text><path class=\"roof cache\" "
      "d=\"M0,48L12,48\"/><text x=\"16\" y=\"52\">cache roof</text>"
      "<polygon class=\"bench\" points=\"6,58 0.5,68 11.5,68\"/><text "
      "x=\"16\" y=\"68\">ffn-bench</text></g>\n",
      left + 10);
  for (const Point &p : points) {
    svg += fmt::format(
        "<circle class=\"predicted\" data-m=\"{}\" cx=\"{:.1f}\" "
        "cy=\"{:.1f}\" r=\"5\"><title>M = {}: predicted "
        "{:.1f} GFLOP/s</title></circle>\n",
        p.m, px(p.intensity), py(p.predictedGflops), p.m, p.predictedGflops);
    if (p.measuredMs > 0) {
      double gflops = double(flops) * double(p.m) / (p.measuredMs * 1e6);
      svg += fmt::format("<rect class=\"measured\" data-m=\"{}\" x=\"{:.1f}\" "
                         "y=\"{:.1f}\" width=\"9\" height=\"9\"><title>M = "
                         "{}: measured {:.1f} GFLOP/s</title></rect>\n",
                         p.m, px(p.intensity) - 4.5,
                         py(std::max(gflops, yMin)) - 4.5, p.m, gflops);
    }
    if (p.benchMs > 0) {
      double gflops = double(flops) * double(p.m) / (p.benchMs * 1e6);
      double x = px(p.intensity), y = py(std::max(gflops, yMin));
      svg += fmt::format("<polygon class=\"bench\" data-m=\"{}\" "
                         "points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\">"
                         "<title>M = {}: ffn-bench {:.1f} GFLOP/s</title>"
                         "</polygon>\n",
                         p.m, x, y - 6, x - 5.5, y + 4, x + 5.5, y + 4, p.m,
                         gflops);
    }
    svg += fmt::format("<text class=\"point\" x=\"{:.1f}\" y=\"{:.1f}\">M = "
                       "{}</text>\n",
                       px(p.intensity) + 8, py(p.predictedGflops) - 8, p.m);
  }
  return svg + "</svg>\n";
}

/// The main table of an ffn-bench output ("| FFN | M | thr | ffnc ms |
/// ..."): ffnc's time per (FFN, M) at `threads` threads.
std::map<std::pair<std::string, uint64_t>, double>
readBench(llvm::StringRef text, unsigned threads) {
  std::map<std::pair<std::string, uint64_t>, double> out;
  bool inTable = false;
  llvm::SmallVector<llvm::StringRef> lines, cells;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line.starts_with("| FFN | M | thr | ffnc ms |")) {
      inTable = true;
      continue;
    }
    if (!line.starts_with("|")) {
      inTable = false;
      continue;
    }
    if (!inTable)
      continue;
    cells.clear();
    line.trim('|').split(cells, '|');
    uint64_t m, thr;
    double ms;
    if (cells.size() < 4 || cells[1].trim().getAsInteger(10, m) ||
        cells[2].trim().getAsInteger(10, thr) ||
        cells[3].trim().getAsDouble(ms) || thr != threads || !(ms > 0))
      continue;
    auto key = std::make_pair(cells[0].trim().str(), m);
    auto it = out.find(key);
    if (it == out.end() || ms < it->second)
      out[key] = ms;
  }
  return out;
}

/// Times each kernel of `specs` at each token count on this machine: the
/// best of up to 20 runs after a warm-up (ms), keyed by (name, m).
std::map<std::pair<std::string, uint64_t>, double>
measure(llvm::ArrayRef<FfnSpec> specs, const llvm::SourceMgr &sm,
        const TargetInfo &target, const ScheduleOptions &schedule,
        llvm::ArrayRef<uint64_t> tokens, unsigned threads) {
  std::map<std::pair<std::string, uint64_t>, double> out;
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("ffnc-report", dir))
    return out;
  llvm::SmallString<128> library(dir);
  llvm::sys::path::append(library, "kernels.so");
  if (llvm::Error err =
          buildSharedLibrary(specs, sm, target, schedule, library)) {
    llvm::consumeError(std::move(err));
    return out;
  }
  ffn_context *ctx = nullptr;
  ffn_context_create(&ctx);
  ffn_context_set_threads(ctx, static_cast<int>(threads));
  for (const FfnSpec &spec : specs) {
    ffn_kernel *k = nullptr;
    if (ffn_kernel_load_library(ctx, library.c_str(), spec.name.c_str(), &k) !=
        FFN_OK)
      continue;
    const ffn_kernel_desc &desc = *ffn_kernel_descriptor(k);
    ffn_ref::Random rng(1);
    std::vector<ffn_ref::Buffer> params = ffn_ref::makeParams(desc, rng);
    if (ffn_ref::setParams(k, params) == FFN_OK)
      for (uint64_t m : tokens) {
        ffn_ref::Buffer x = ffn_ref::makeInput(desc, int64_t(m), rng);
        ffn_ref::Buffer y = ffn_ref::makeBuffer(desc.dtype, m * desc.d_model);
        double best = 1e30;
        for (int r = 0; r <= 20; ++r) {
          auto start = std::chrono::steady_clock::now();
          if (ffn_kernel_run(k, int64_t(m), x.bytes.data(), y.bytes.data()) !=
              FFN_OK)
            break;
          std::chrono::duration<double> t =
              std::chrono::steady_clock::now() - start;
          if (r > 0)
            best = std::min(best, t.count() * 1e3);
        }
        if (best < 1e30)
          out[{spec.name, m}] = best;
      }
    ffn_kernel_destroy(k);
  }
  ffn_context_destroy(ctx);
  llvm::sys::fs::remove(library);
  llvm::sys::fs::remove(dir);
  return out;
}

const char *kStyle =
    R"(body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h2{margin-top:32px;border-bottom:1px solid #ccc}table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}
td.k{text-align:left}svg{display:block;margin:8px 0}
.dataflow rect{fill:#eef4ff;stroke:#4a6fa5}.dataflow text{text-anchor:middle;font-size:12px}
.dataflow text.dim{fill:#555;font-size:11px}.dataflow line{stroke:#4a6fa5;stroke-width:2}
.roofline .axis{stroke:#333}.roofline .roof{fill:none;stroke-width:2}
.roofline .memory{stroke:#c0392b}.roofline .cache{stroke:#e67e22;stroke-dasharray:4 3}
.roofline .predicted{fill:#2e86de}.roofline .measured{fill:#27ae60}
.roofline .bench{fill:#8e44ad}
.roofline text{font-size:11px}.roofline .tick{text-anchor:middle}
.roofline .label{text-anchor:middle;font-size:12px}
)";

} // namespace

int ffnc::reportMain(Session &s) {
  std::vector<uint64_t> tokens(opts::tokenCounts.begin(),
                               opts::tokenCounts.end());
  if (tokens.empty())
    tokens = {1, 16, 128, 2048};
  for (uint64_t m : tokens)
    if (m == 0 || m > 65536)
      return fail("--tokens: token counts must be in [1, 65536]");
  TargetInfo target;
  if (std::optional<int> rc = openTarget(opts::targetName, target))
    return *rc;
  if (target.isGpu())
    return fail("report prices and measures CPU kernels; '" + target.name +
                "' is an NVIDIA target");
  ScheduleOptions options;
  if (std::optional<int> rc =
          resolveSchedule(s, target, opts::threadCount, "--threads", options))
    return *rc;
  if (options.baseline)
    return fail("report --strategy: the baseline has no schedule to report");
  unsigned threads = static_cast<unsigned>(tunedThreads(options));
  if (opts::measureOption && !hostCanRun(target))
    return fail("--measure runs the kernels: this machine cannot run '" +
                target.name + "'");
  MachineProfile machine = s.profile ? *s.profile
                           : opts::measureOption
                               ? measureMachine(target.vectorBits == 512)
                               : nominalMachine(threads);
  MachineModel model = machine.roofline(threads);
  mlir::ffn::MachineAssumptions assumed = machine.assumptions(threads);
  std::map<std::pair<std::string, uint64_t>, double> bench;
  if (!opts::benchFile.empty()) {
    auto text = llvm::MemoryBuffer::getFile(opts::benchFile, /*IsText=*/true);
    if (!text)
      return fail("--bench: cannot read '" + opts::benchFile +
                  "': " + text.getError().message());
    bench = readBench((*text)->getBuffer(), threads);
    bool any = false;
    for (const FfnSpec &spec : s.specs)
      for (uint64_t m : tokens)
        any |= bench.count({spec.name, m}) > 0;
    if (!any)
      llvm::WithColor::warning(llvm::errs(), "ffnc")
          << "--bench: '" << opts::benchFile
          << "' has no row for these FFNs and token counts at " << threads
          << " thread" << (threads == 1 ? "" : "s") << "\n";
  }
  std::map<std::pair<std::string, uint64_t>, double> measured;
  if (opts::measureOption)
    measured = measure(s.specs, s.sourceMgr, target, options, tokens, threads);

  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>ffnc report: {}</title><style>{}</style></head><body>\n"
      "<h1>ffnc report: {}</h1>\n<p class=\"machine\">Target {}, {} "
      "thread{}; machine {}: {:.0f} GFLOP/s peak, {:.1f} GB/s from memory, "
      "{:.1f} GB/s from cache.{}</p>\n",
      escape(opts::inputFile), kStyle, escape(opts::inputFile), target.name,
      threads, threads == 1 ? "" : "s", escape(machine.source),
      model.peakGflops, model.bandwidthGBs, model.cacheBandwidthGBs,
      opts::measureOption ? " Measured points: best of 20 runs on this "
                            "machine, seeded random weights."
                          : "");
  for (const FfnSpec &spec : s.specs) {
    FfnCounts counts = countParameters(spec);
    uint64_t flops = flopsPerToken(spec);
    // The compiler's choice, as ffn-select-strategy and `ffnc info` make it.
    mlir::ffn::CpuStrategy choice =
        chosenStrategy(spec, target.name, options.vectorBits, options.overrides,
                       assumed)
            .strategy;
    MachineModel kernelModel = model;
    if (choice.bf16Dot.value_or(false))
      kernelModel.peakGflops *= 2;
    std::vector<Point> points;
    for (uint64_t m : tokens) {
      Prediction p = predict(spec, m, kernelModel);
      Point pt{m,
               arithmeticIntensity(spec, m),
               p.seconds * 1e3,
               double(flops) * double(m) / p.seconds / 1e9,
               p.memoryBound,
               ""};
      bool fused = !spec.isMoe() && static_cast<int64_t>(m) <= choice.fusedMaxM;
      bool sparse = static_cast<int64_t>(m) <= choice.sparseMaxM.value_or(0);
      pt.schedule = spec.isMoe() ? "mixture (two-pass per expert)"
                    : fused      ? (sparse ? "fused sparse" : "fused")
                                 : (sparse ? "two-pass sparse" : "two-pass");
      if (auto it = measured.find({spec.name, m}); it != measured.end())
        pt.measuredMs = it->second;
      if (auto it = bench.find({spec.name, m}); it != bench.end())
        pt.benchMs = it->second;
      points.push_back(pt);
    }
    html += fmt::format(
        "<section class=\"ffn\" data-name=\"{}\">\n<h2>ffn "
        "{}</h2>\n<p>{}</p>\n",
        escape(spec.name), escape(spec.name),
        escape(mlir::ffn::describeStrategy(
            choice, spec.isGated(), spec.blockDFF(), spec.batchInvariant)));
    html += dataflow(spec);
    html += "<table class=\"counts\">\n";
    auto row = [&](const char *key, const std::string &label,
                   const std::string &value) {
      html += fmt::format("<tr><td class=\"k\">{}</td><td data-key=\"{}\">{}"
                          "</td></tr>\n",
                          label, key, value);
    };
    row("d_model", "d_model", std::to_string(spec.dModel));
    row("d_ff", "d_ff", std::to_string(spec.dFF));
    row("ffn_parameters", "FFN parameters", withCommas(counts.ffnParams()));
    row("total_parameters", "total parameters",
        withCommas(counts.totalParams()));
    row("weight_bytes", "weight bytes", withCommas(weightBytes(spec)));
    row("flops_per_token", "FLOPs per token", withCommas(flops));
    html += "</table>\n<table class=\"schedule\">\n<tr><th>M</th><th>FLOP "
            "per byte</th><th>schedule</th><th>predicted ms</th><th>bound"
            "</th><th>predicted GFLOP/s</th><th>measured ms</th><th>measured "
            "GFLOP/s</th><th>ffn-bench ms</th></tr>\n";
    for (const Point &p : points)
      html += fmt::format(
          "<tr data-m=\"{}\"><td>{}</td><td data-key=\"intensity\">{:.2f}</td>"
          "<td class=\"k\">{}</td><td>{:.3f}</td><td class=\"k\">{}</td><td>"
          "{:.1f}</td><td>{}</td><td>{}</td><td data-key=\"bench\">{}</td>"
          "</tr>\n",
          p.m, p.m, p.intensity, p.schedule, p.predictedMs,
          p.memoryBound ? "memory" : "compute", p.predictedGflops,
          p.measuredMs > 0 ? fmt::format("{:.3f}", p.measuredMs) : "-",
          p.measuredMs > 0 ? fmt::format("{:.1f}", double(flops) * double(p.m) /
                                                       (p.measuredMs * 1e6))
                           : "-",
          p.benchMs > 0 ? fmt::format("{:.3f}", p.benchMs) : "-");
    // The roofs of the kernel's own peak (bf16 pair tiles double it).
    html +=
        "</table>\n" + roofline(kernelModel, points, flops) + "</section>\n";
  }
  // Marks the page once every plot has a laid-out size.
  html += "<script>\naddEventListener('load', function () {\n  var n = 0;\n"
          "  document.querySelectorAll('svg').forEach(function (s) {\n"
          "    var b = s.getBBox();\n    if (b.width > 0 && b.height > 0) "
          "n++;\n  });\n  document.body.setAttribute('data-rendered', "
          "String(n));\n});\n</script>\n</body></html>\n";
  // -o - writes the page to stdout.
  std::string path = opts::outputFile.getNumOccurrences()
                         ? opts::outputFile.getValue()
                         : std::string("report.html");
  if (int rc = writeOutput(path, html))
    return rc;
  if (path != "-")
    llvm::outs() << "wrote " << path << " (" << s.specs.size() << " FFN"
                 << (s.specs.size() == 1 ? "" : "s") << ")\n";
  return 0;
}
