//===- InfoCommand.cpp - `ffnc info` --------------------------------------===//

#include "InfoCommand.h"

#include "Commands.h"
#include "GpuInfo.h"
#include "Options.h"

#include "ffnc/CodeGen/StrategyOptions.h"

#include "ffnc/Analysis/FfnInfo.h"

#include "ffn/Target/CPU/CostModel.h"

#include <fmt/format.h>

using namespace ffnc;

/// 4722432 -> "4,722,432": parameter counts are read by people.
static std::string grouped(uint64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

static std::string humanBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 4) {
    v /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes)
                   : fmt::format("{:.1f} {}", v, units[unit]);
}

static std::string biasList(const FfnSpec &spec) {
  std::vector<std::string> on;
  if (spec.biasUp)
    on.push_back("up");
  if (spec.hasBiasGate())
    on.push_back("gate");
  if (spec.biasDown)
    on.push_back("down");
  if (on.empty())
    return "none";
  return fmt::format("{}", fmt::join(on, ", "));
}

SpecChoice ffnc::chosenStrategy(const FfnSpec &spec, llvm::StringRef target,
                                int64_t vectorBits,
                                mlir::ffn::CpuStrategy overrides,
                                const mlir::ffn::MachineAssumptions &assumed) {
  mlir::ffn::FfnShape shape{spec.blockDModel(), spec.blockDFF(), spec.isGated(),
                            static_cast<int64_t>(byteWidth(spec.dtype))};
  shape.blocks = spec.groups;
  shape.bf16Dot = spec.dtype == DType::BF16 &&
                  spec.weightQuant == WeightQuant::None &&
                  mlir::ffn::cpuTargetHasFeature(target.str(), "avx512bf16");
  if (spec.weightQuant != WeightQuant::None)
    shape.weightBits = spec.weightQuant == WeightQuant::Int8 ? 8 : 4;
  shape.intDot = spec.int8Activations;
  shape.zeroActivations = spec.activation == Activation::Relu &&
                          spec.weightQuant == WeightQuant::None &&
                          !spec.isMoe() && !spec.isGrouped();
  if (spec.activationSparsity >= 0)
    shape.nonzeroShare = 1 - spec.activationSparsity;
  // As ffn-select-strategy does: no fused bucket for these.
  if (spec.batchInvariant || spec.isMoe())
    overrides.fusedMaxM = 0;
  return {shape,
          mlir::ffn::chooseStrategy(vectorBits, shape, overrides, assumed)};
}

std::string ffnc::renderInfo(llvm::ArrayRef<FfnSpec> specs,
                             llvm::ArrayRef<uint64_t> tokenCounts,
                             const llvm::SourceMgr &sm,
                             const InfoSchedule *schedule) {
  std::string out;
  for (const FfnSpec &spec : specs) {
    unsigned id = sm.FindBufferContainingLoc(spec.loc);
    std::string where = "";
    if (id != 0) {
      auto [line, col] = sm.getLineAndColumn(spec.loc, id);
      where = fmt::format(
          "{}:{}", sm.getMemoryBuffer(id)->getBufferIdentifier().str(), line);
    }
    FfnCounts counts = countParameters(spec);
    std::string family =
        spec.isGated()
            ? fmt::format("gated, {} ({} gate)", toString(spec.gate).str(),
                          toString(spec.activation).str())
            : fmt::format("plain, {}", toString(spec.activation).str());
    std::string norm =
        spec.norm == NormKind::None
            ? std::string("none")
            : fmt::format("{} ({}, eps = {:g})", toString(spec.norm).str(),
                          toString(spec.normPosition).str(), spec.normEps);

    out += fmt::format("ffn {}  ({})\n", spec.name, where);
    out += fmt::format("  {:<22}{}\n", "family", family);
    out += fmt::format("  {:<22}{}\n", "d_model", spec.dModel);
    out += fmt::format("  {:<22}{}\n", "d_ff", spec.dFF);
    if (spec.isGrouped())
      out += fmt::format("  {:<22}{} (blocks of d_model {}, d_ff {}; "
                         "block-diagonal weights)\n",
                         "groups", spec.groups, spec.blockDModel(),
                         spec.blockDFF());
    out += fmt::format("  {:<22}{}\n", "biases", biasList(spec));
    out +=
        fmt::format("  {:<22}{}\n", "residual", spec.residual ? "yes" : "no");
    out += fmt::format("  {:<22}{}\n", "norm", norm);
    out += fmt::format("  {:<22}{} (accumulate f32)\n", "dtype",
                       toString(spec.dtype).str());
    if (spec.weightQuant != WeightQuant::None)
      out += fmt::format("  {:<22}{}, one {} scale{} per {} input rows of a "
                         "column\n",
                         "weights", toString(spec.weightQuant).str(),
                         toString(spec.dtype).str(),
                         spec.zeroPoints ? " and zero point" : "",
                         spec.quantGroup);
    if (spec.int8Activations)
      out += fmt::format("  {:<22}int8 per row and group of {} (f32 scale): "
                         "integer dot products\n",
                         "matmul inputs", spec.quantGroup);
    if (spec.isMoe()) {
      out += fmt::format("  {:<22}{} routed{}\n", "experts", spec.experts,
                         spec.sharedExperts == 0
                             ? std::string()
                             : fmt::format(" + {} shared", spec.sharedExperts));
      out += fmt::format("  {:<22}{}\n", "top_k", spec.topK);
      out +=
          fmt::format("  {:<22}{}{}\n", "router", toString(spec.router).str(),
                      spec.routerNormalize ? ", normalize = true" : "");
      FfnCounts expert = countExpertParameters(spec);
      out += fmt::format("  {:<22}{} each (matrices {}, biases {})\n",
                         "expert parameters", grouped(expert.ffnParams()),
                         grouped(expert.matrixWeights),
                         grouped(expert.biasParams));
      out += fmt::format(
          "  {:<22}{} (matrices {}, biases {}, router {})\n", "FFN parameters",
          grouped(counts.ffnParams()), grouped(counts.matrixWeights),
          grouped(counts.biasParams), grouped(counts.routerParams));
    } else {
      out += fmt::format("  {:<22}{} (matrices {}, biases {})\n",
                         "FFN parameters", grouped(counts.ffnParams()),
                         grouped(counts.matrixWeights),
                         grouped(counts.biasParams));
    }
    if (counts.normParams != 0)
      out += fmt::format("  {:<22}{}\n", "norm parameters",
                         grouped(counts.normParams));
    out += fmt::format("  {:<22}{}\n", "total parameters",
                       grouped(counts.totalParams()));
    // A mixture's token runs the router, the norm and these experts.
    std::string experts =
        spec.isMoe() ? fmt::format("{} expert{}", spec.activeExperts(),
                                   spec.activeExperts() == 1 ? "" : "s")
                     : std::string();
    if (spec.isMoe())
      out += fmt::format("  {:<22}{} per token (router, {}{})\n",
                         "active parameters",
                         grouped(countActiveParameters(spec).totalParams()),
                         counts.normParams != 0 ? "norm, " : "", experts);
    uint64_t bytes = weightBytes(spec);
    out += fmt::format("  {:<22}{} ({})\n", "weight bytes", grouped(bytes),
                       humanBytes(bytes));
    if (spec.isMoe()) {
      uint64_t active = weightBytesRead(spec, 1);
      out += fmt::format("  {:<22}{} ({}) per token at decode\n",
                         "active weight bytes", grouped(active),
                         humanBytes(active));
      out += fmt::format(
          "  {:<22}{} (router {}, {} x {})\n", "FLOPs per token",
          grouped(flopsPerToken(spec)), grouped(2 * counts.routerParams),
          experts, grouped(2 * countExpertParameters(spec).matrixWeights));
      // The intensities below assume the M rows spread over as many routed
      // experts as they can: the most weight traffic.
      out += fmt::format(
          "  {:<22}router, {}{}min({}, M x {}) routed experts\n",
          "weights read at M", counts.normParams != 0 ? "norm, " : "",
          spec.sharedExperts == 0
              ? std::string()
              : fmt::format("{} shared expert{}, ", spec.sharedExperts,
                            spec.sharedExperts == 1 ? "" : "s"),
          spec.experts, spec.topK);
    } else {
      out += fmt::format("  {:<22}{}\n", "FLOPs per token",
                         grouped(flopsPerToken(spec)));
    }
    if (!schedule) {
      out += fmt::format("  arithmetic intensity (FLOP per byte of weights + "
                         "input + output):\n");
      for (uint64_t m : tokenCounts)
        out += fmt::format("    M = {:<6} {:>10.2f}\n", m,
                           arithmeticIntensity(spec, m));
      out += "\n";
      continue;
    }
    if (!schedule->gpuChip.empty()) {
      out += renderGpuSchedule(spec, schedule->target, schedule->gpuChip,
                               schedule->gpuOverrides, tokenCounts);
      continue;
    }
    // Exactly the compiler's choice: the same shape, overrides and machine
    // (given the same --machine).
    mlir::ffn::MachineAssumptions assumed =
        schedule->machine.assumptions(schedule->threads);
    MachineModel model = schedule->machine.roofline(schedule->threads);
    auto [shape, choice] =
        chosenStrategy(spec, schedule->target, schedule->vectorBits,
                       schedule->overrides, assumed);
    if (!schedule->backend.empty())
      out += fmt::format("  {:<22}{}\n", "back end", schedule->backend);
    out += fmt::format("  {:<22}{}: {}\n", "schedule", schedule->target,
                       mlir::ffn::describeStrategy(choice, spec.isGated(),
                                                   spec.blockDFF(),
                                                   spec.batchInvariant));
    // A grouped FFN's work units, which decide the threads' split.
    if (spec.isGrouped())
      out += fmt::format(
          "  {:<22}{}\n", "work units",
          choice.blockUnits.value_or(false)
              ? "blocks: each block's GEMM 1 and GEMM 2 back to back in one "
                "thread (block_units)"
              : "panels x blocks per GEMM, a barrier between the GEMMs "
                "(block_units = false)");
    // A vdpbf16ps does the work of two FMAs: pair tiles' compute peak is
    // twice the f32 one (measured on Zen 4: 234.0 vs 117.2 GFLOP/s).
    bool pairTiles = choice.bf16Dot.value_or(false);
    MachineModel kernelModel = model;
    if (pairTiles)
      kernelModel.peakGflops *= 2;
    out += fmt::format(
        "  arithmetic intensity (FLOP per byte of weights + input + output) "
        "and predicted time\n  ({} thread{}; machine {}: {:.0f} GFLOP/s peak{}, "
        "{:.1f} GB/s from memory, {:.1f} GB/s from cache):\n",
        schedule->threads, schedule->threads == 1 ? "" : "s",
        schedule->machine.source, model.peakGflops,
        pairTiles ? fmt::format(" ({:.0f} with bf16 pair tiles)",
                                kernelModel.peakGflops)
                  : std::string(),
        model.bandwidthGBs, model.cacheBandwidthGBs);
    for (uint64_t m : tokenCounts) {
      Prediction p = predict(spec, m, kernelModel);
      // The schedule this M's bucket runs, and at decode sizes how the
      // cost model priced the fused schedule against the two-pass one.
      bool fused = static_cast<int64_t>(m) <= choice.fusedMaxM;
      bool sparse = static_cast<int64_t>(m) <= choice.sparseMaxM.value_or(0);
      std::string priced;
      if (spec.isGrouped()) {
        priced = " (the only schedule built for a grouped FFN)";
      } else if (m <= static_cast<uint64_t>(mlir::ffn::kFusedMaxM)) {
        // Without a bucket, chunk and groups are 0: the model's defaults.
        mlir::ffn::SchedulePrices prices = mlir::ffn::priceSchedules(
            shape, choice, static_cast<int64_t>(m), assumed);
        priced = fmt::format(" (fused priced {:.3f}x two-pass)",
                             prices.fused / prices.twoPass);
      }
      out += fmt::format("    M = {:<6} {:>10.2f}  {:>10.3f} ms  {:<14}{}{}\n",
                         m, arithmeticIntensity(spec, m), p.seconds * 1e3,
                         p.memoryBound ? "memory-bound" : "compute-bound",
                         fused ? (sparse ? "fused sparse" : "fused")
                               : (sparse ? "two-pass sparse" : "two-pass"),
                         priced);
    }
    out += "\n";
  }
  return out;
}

int ffnc::infoMain(Session &s) {
  std::vector<uint64_t> tokens(opts::tokenCounts.begin(),
                               opts::tokenCounts.end());
  if (tokens.empty())
    tokens = {1, 16, 128, 2048};
  for (uint64_t m : tokens)
    if (m == 0)
      return fail("--tokens: token counts must be at least 1");
  if (opts::targetName.getNumOccurrences() == 0) {
    if (opts::strategyOption.getNumOccurrences())
      return fail("info --strategy prices a schedule for a target: give "
                  "--target too (e.g. --target=host)");
    llvm::outs() << renderInfo(s.specs, tokens, s.sourceMgr);
    return 0;
  }
  // With a target: what the compiler picks and what it should cost.
  TargetInfo target;
  if (std::optional<int> rc = openTarget(opts::targetName, target))
    return *rc;
  ScheduleOptions options;
  if (std::optional<int> rc =
          resolveSchedule(s, target, opts::threadCount, "--threads", options))
    return *rc;
  if (options.baseline)
    return fail("info --strategy: the baseline has no schedule to report");
  if (target.isGpu()) {
    // The GPU cost model prices for the chip's device, not this machine.
    if (opts::measureOption || s.profile)
      return fail(std::string(opts::measureOption ? "--measure" : "--machine") +
                  " describes a CPU; an NVIDIA target is priced for its "
                  "chip's device (docs/gpu.md)");
    InfoSchedule gpu;
    gpu.target = target.name;
    gpu.gpuChip = target.chip;
    gpu.gpuOverrides = options.gpuOverrides;
    llvm::outs() << renderInfo(s.specs, tokens, s.sourceMgr, &gpu);
    return 0;
  }
  unsigned threads = static_cast<unsigned>(tunedThreads(options));
  InfoSchedule schedule;
  schedule.target = target.name;
  schedule.vectorBits = target.vectorBits;
  schedule.overrides = options.overrides;
  if (options.backend == Backend::Halide) {
    // The Halide back end builds the two-pass schedule only: the cost
    // model chooses the other knobs for it, as when it compiles
    // (checkSpecsFit has refused any other value of these).
    schedule.overrides.fusedMaxM = 0;
    schedule.overrides.bf16Dot = false;
    schedule.overrides.sparseMaxM = 0;
    schedule.backend = "halide (ffnc-halide-gen), the schedule from the "
                       "strategy below";
  }
  schedule.threads = threads;
  std::optional<MachineProfile> profile = s.profile;
  if (opts::measureOption) {
    if (opts::targetName != "host")
      return fail("--measure needs --target=host");
    if (profile)
      return fail("--measure and --machine both give the machine; use one");
    profile = measureMachine(target.vectorBits == 512);
  }
  // Nominal (ffn/Target/CPU/CostModel.h): per core one 512-bit (or two
  // 256-bit) FMAs per cycle at 3.5 GHz and 60 GB/s from cache; 20 GB/s of
  // memory bandwidth for the whole process.
  schedule.machine = profile ? *profile : nominalMachine(threads);
  llvm::outs() << renderInfo(s.specs, tokens, s.sourceMgr, &schedule);
  return 0;
}
