//===- SpecFit.cpp - what a target and schedule can build -----------------===//

#include "ffnc/CodeGen/SpecFit.h"

#include "ffn/Target/CPU/CostModel.h"

#include <string>
#include <vector>

using namespace ffnc;

/// The --strategy knobs that choose one of ffnc's own kernels (fused,
/// bf16 pair tiles, sparse GEMM 2, K blocks), as typed, when set to anything but
/// "off": the Halide back end builds the two-pass schedule only.
static std::vector<std::string>
nonTwoPassKnobs(const mlir::ffn::CpuStrategy &overrides) {
  std::vector<std::string> knobs;
  auto positive = [&](const char *key, const std::optional<int64_t> &value) {
    if (value.value_or(0) > 0)
      knobs.push_back(std::string(key) + "=" + std::to_string(*value));
  };
  positive("fused_max_m", overrides.fusedMaxM);
  // chunk and groups belong to the fused schedule alone.
  if (overrides.chunk)
    knobs.push_back("chunk=" + std::to_string(*overrides.chunk));
  if (overrides.groups)
    knobs.push_back("groups=" + std::to_string(*overrides.groups));
  if (overrides.bf16Dot.value_or(false))
    knobs.push_back("bf16_dot=1");
  positive("sparse_max_m", overrides.sparseMaxM);
  for (auto [key, knob] : mlir::ffn::kBlockKnobs(overrides))
    positive(key, knob);
  if (overrides.blockUnits)
    knobs.push_back(std::string("block_units=") +
                    (*overrides.blockUnits ? "1" : "0"));
  return knobs;
}

/// checkSpecsFit for --backend=halide, which builds dense, unquantized FFNs
/// on CPU targets with the two-pass strategy or an autoscheduler. The
/// option errors (target, --strategy) are reported once, at the first FFN,
/// so that they carry a location and count like the others.
static bool checkHalideFit(llvm::ArrayRef<FfnSpec> specs,
                           const TargetInfo &target,
                           const ScheduleOptions &schedule,
                           DiagnosticEngine &diags) {
  llvm::SMLoc first = specs.empty() ? llvm::SMLoc() : specs.front().loc;
  if (target.isGpu())
    diags.error(first, "--backend=halide builds CPU kernels; '" + target.name +
                           "' is an NVIDIA target");
  bool autoscheduled = schedule.halideSchedule != "strategy";
  if (autoscheduled &&
      (schedule.baseline || schedule.overrides != mlir::ffn::CpuStrategy()))
    diags.error(first, "--halide-schedule=" + schedule.halideSchedule +
                           " lets the autoscheduler decide every knob; "
                           "--strategy does not apply");
  else if (schedule.baseline)
    diags.error(first, "--strategy=baseline is ffnc's own unscheduled path; "
                       "--backend=halide takes the packed strategy or "
                       "--halide-schedule=<autoscheduler>");
  else
    for (const std::string &knob : nonTwoPassKnobs(schedule.overrides))
      diags.error(first, "--backend=halide runs the two-pass schedule; "
                         "--strategy=" +
                             knob + " does not apply to it");

  for (const FfnSpec &spec : specs) {
    std::string ffn = "ffn '" + spec.name + "'";
    const char *denseOnly = ", which the Halide back end does not build "
                            "(--backend=halide: dense FFNs only)";
    if (spec.isMoe())
      diags.error(spec.loc, ffn + " is a mixture of experts (experts = " +
                                std::to_string(spec.experts) + ")" + denseOnly);
    if (spec.isGrouped())
      diags.error(spec.loc, ffn + " is a grouped FFN (groups = " +
                                std::to_string(spec.groups) + ")" + denseOnly);
    // int8 activations and zero points come only with quantized weights:
    // this one error covers them.
    if (spec.weightQuant != WeightQuant::None)
      diags.error(spec.loc,
                  ffn + " has weights = " + toString(spec.weightQuant).str() +
                      ", which the Halide back end does not build "
                      "(--backend=halide: weights in the dtype "
                      "only)");
    // A hint changes no result, so the kernel is built, but visibly
    // without the sparse GEMM 2 it asks for.
    if (spec.activationSparsity >= 0)
      diags.warning(spec.loc,
                    ffn + ": activation_sparsity is a hint for ffnc's sparse "
                          "GEMM 2, which the Halide back end does not build; "
                          "the kernel reads every row of W_down");
  }
  return !diags.hadError();
}

bool ffnc::checkSpecsFit(llvm::ArrayRef<FfnSpec> specs,
                         const TargetInfo &target,
                         const ScheduleOptions &schedule,
                         DiagnosticEngine &diags) {
  // The checks below concern ffnc's own schedules, which the Halide back
  // end refuses as a whole (quantized weights, the baseline, the knobs).
  if (schedule.backend == Backend::Halide)
    return checkHalideFit(specs, target, schedule, diags);
  int64_t fusedMaxM = schedule.overrides.fusedMaxM.value_or(0);
  bool dot = schedule.overrides.bf16Dot.value_or(false);
  int64_t sparseMaxM = schedule.overrides.sparseMaxM.value_or(0);
  for (const FfnSpec &spec : specs) {
    if (sparseMaxM > 0 && (spec.isMoe() || spec.isGrouped() ||
                           spec.weightQuant != WeightQuant::None))
      diags.error(
          spec.loc,
          "ffn '" + spec.name + "' " +
              (spec.isMoe()       ? "is a mixture of experts"
               : spec.isGrouped() ? "is a grouped FFN"
                                  : "has quantized weights") +
              "; --strategy=sparse_max_m=" + std::to_string(sparseMaxM) +
              " asks for the sparse GEMM 2, which is built for "
              "unquantized dense FFNs only");
    if (fusedMaxM > 0 && spec.batchInvariant)
      diags.error(spec.loc,
                  "ffn '" + spec.name +
                      "' is batch_invariant, but --strategy=fused_max_m=" +
                      std::to_string(fusedMaxM) +
                      " asks for the fused schedule, whose reduction order "
                      "depends on M");
    if (schedule.overrides.blockUnits && !spec.isGrouped())
      diags.error(spec.loc, "ffn '" + spec.name +
                                "' has no blocks (groups), but "
                                "--strategy=block_units asks how a grouped "
                                "FFN's blocks split into work units");
    if (dot && spec.dtype != DType::BF16)
      diags.error(spec.loc, "ffn '" + spec.name +
                                "' is not bf16, but --strategy=bf16_dot=1 "
                                "asks for bf16 pair dot products");
    if (spec.isGrouped()) {
      std::string what = "ffn '" + spec.name + "' is a grouped FFN (groups = " +
                         std::to_string(spec.groups) + ")";
      if (fusedMaxM > 0)
        diags.error(spec.loc, what +
                                  ", whose blocks take the two-pass "
                                  "schedule; --strategy=fused_max_m=" +
                                  std::to_string(fusedMaxM) +
                                  " does not apply to it");
      if (!target.isGpu() && schedule.baseline)
        diags.error(spec.loc, what + ", which only the packed schedule "
                                     "builds, not --strategy=baseline");
    }
    if (spec.weightQuant == WeightQuant::None)
      continue;
    std::string format = toString(spec.weightQuant).str();
    for (auto [key, knob] : mlir::ffn::kBlockKnobs(schedule.overrides))
      if (knob.value_or(0) > 0 && !target.isGpu())
        diags.error(spec.loc, "ffn '" + spec.name + "' has weights = " +
                                  format +
                                  ", whose tiles read K whole (scales per "
                                  "group); --strategy=" + key + "=" +
                                  std::to_string(*knob) +
                                  " does not apply to them");
    if (dot || fusedMaxM > 0)
      diags.error(spec.loc,
                  "ffn '" + spec.name + "' has weights = " + format +
                      ", which take the two-pass schedule with widening "
                      "tiles; --strategy=" +
                      (dot ? std::string("bf16_dot=1")
                           : "fused_max_m=" + std::to_string(fusedMaxM)) +
                      " does not apply to them");
    if (target.isGpu())
      continue;
    else if (schedule.baseline)
      diags.error(spec.loc, "ffn '" + spec.name + "' has weights = " + format +
                                ", which only the packed schedule builds, "
                                "not --strategy=baseline");
    else if (spec.int8Activations &&
             !mlir::ffn::cpuTargetHasFeature(target.name, "avx512vnni"))
      diags.error(spec.loc,
                  "ffn '" + spec.name +
                      "' has activations = int8, whose "
                      "integer dot products need AVX512-VNNI, which target '" +
                      target.name +
                      "' does not have (x86-64-avx512-bf16 has it)");
  }
  return !diags.hadError();
}
