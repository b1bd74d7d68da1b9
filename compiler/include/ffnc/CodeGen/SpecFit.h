//===- SpecFit.h - what a target and schedule can build ---------*- C++ -*-===//
//
// The checks every driver of the back ends (ffnc, the JIT) makes before
// compiling: a spec property that the chosen target or schedule cannot
// build is an error at the spec, never an internal error or a silent
// fallback.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_CODEGEN_SPECFIT_H
#define FFNC_CODEGEN_SPECFIT_H

#include "ffnc/CodeGen/Pipeline.h"
#include "ffnc/CodeGen/Target.h"
#include "ffnc/Frontend/Diagnostics.h"
#include "ffnc/Frontend/Spec.h"

#include "llvm/ADT/ArrayRef.h"

namespace ffnc {

/// What some FFN of the spec cannot take from this target and schedule,
/// reported at the spec: the fused schedule for a batch-invariant FFN, bf16
/// pair tiles for an FFN that is not bf16, block_units for an FFN without
/// blocks, an NVIDIA target for a mixture of experts (CPU kernels only so
/// far), and for quantized weights (built by the CPU's packed schedule only,
/// never dropped silently) an NVIDIA target, the baseline, or either knob.
/// With --backend=halide (schedule.backend), instead: mixtures of experts,
/// grouped FFNs and quantized weights at their FFN, and once (at the first
/// FFN) an NVIDIA target, the baseline, a knob of ffnc's other schedules
/// (fused_max_m, chunk, groups, bf16_dot, sparse_max_m, block_units) or any
/// --strategy with an autoscheduler; an activation_sparsity hint is a
/// warning (the Halide kernel reads every row of W_down).
/// Returns false (the errors reported to `diags`) if any does.
bool checkSpecsFit(llvm::ArrayRef<FfnSpec> specs, const TargetInfo &target,
                   const ScheduleOptions &schedule, DiagnosticEngine &diags);

} // namespace ffnc

#endif // FFNC_CODEGEN_SPECFIT_H
