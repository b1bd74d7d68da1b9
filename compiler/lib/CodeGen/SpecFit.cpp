//===- SpecFit.cpp - what a target and schedule can build -----------------===//

#include "ffnc/CodeGen/SpecFit.h"

#include "ffn/Target/CPU/CostModel.h"

using namespace ffnc;

bool ffnc::checkSpecsFit(llvm::ArrayRef<FfnSpec> specs,
                         const TargetInfo &target,
                         const ScheduleOptions &schedule,
                         DiagnosticEngine &diags) {
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
    if (dot && spec.dtype != DType::BF16)
      diags.error(spec.loc, "ffn '" + spec.name +
                                "' is not bf16, but --strategy=bf16_dot=1 "
                                "asks for bf16 pair dot products");
    if (spec.isMoe() && target.isGpu())
      diags.error(spec.loc, "ffn '" + spec.name +
                                "' is a mixture of experts (experts = " +
                                std::to_string(spec.experts) +
                                "), and mixtures of experts have no NVIDIA "
                                "kernels yet (CPU targets only)");
    if (spec.isGrouped()) {
      std::string what = "ffn '" + spec.name + "' is a grouped FFN (groups = " +
                         std::to_string(spec.groups) + ")";
      if (fusedMaxM > 0)
        diags.error(spec.loc, what +
                                  ", whose blocks take the two-pass "
                                  "schedule; --strategy=fused_max_m=" +
                                  std::to_string(fusedMaxM) +
                                  " does not apply to it");
      if (target.isGpu())
        diags.error(spec.loc, what + ", and grouped FFNs have no NVIDIA "
                                     "kernels yet (CPU targets only)");
      else if (schedule.baseline)
        diags.error(spec.loc, what + ", which only the packed schedule "
                                     "builds, not --strategy=baseline");
    }
    if (spec.weightQuant == WeightQuant::None)
      continue;
    std::string format = toString(spec.weightQuant).str();
    if (dot || fusedMaxM > 0)
      diags.error(spec.loc,
                  "ffn '" + spec.name + "' has weights = " + format +
                      ", which take the two-pass schedule with widening "
                      "tiles; --strategy=" +
                      (dot ? std::string("bf16_dot=1")
                           : "fused_max_m=" + std::to_string(fusedMaxM)) +
                      " does not apply to them");
    if (target.isGpu())
      diags.error(spec.loc, "ffn '" + spec.name + "' has weights = " + format +
                                ", which the NVIDIA back end does not build "
                                "yet (CPU targets only)");
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
