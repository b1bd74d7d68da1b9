//===- Pipelines.h - the FFN's algorithms as Halide Funcs ------*- C++ -*-===//
//
// One Halide pipeline per PipelineSpec of the protocol: its arguments in the
// protocol's order, its output Func, and the inner Funcs a schedule needs.
// Algorithms only: Schedules.cpp decides loops and vectors. Variables are
// innermost first: x(c, r), h(j, r), a packed weight w(lane, k, panel).
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_HALIDE_GEN_PIPELINES_H
#define FFNC_HALIDE_GEN_PIPELINES_H

#include "HalideProtocol.h"

#include "Halide.h"

#include <map>
#include <string>
#include <vector>

namespace ffnc::halide {

/// The row statistics of a norm, computed once per row.
struct NormStats {
  Halide::Func sum, mean;  ///< undefined for an RMSNorm
  Halide::Func sumSq, inv; ///< sum of squared deviations, 1 / sqrt(var + eps)
};

struct BuiltPipeline {
  PipelineSpec spec;
  Halide::Func output;
  /// The inputs in call order (the output buffer follows them).
  std::vector<Halide::Argument> args;
  std::map<std::string, Halide::ImageParam> buffers;
  Halide::Param<int32_t> p0{"p0"};
  /// The output's variables: column (or lane), row (or k), panel.
  Halide::Var c{"c"}, r{"r"}, q{"q"};
  /// Up/Down: the GEMM accumulators (gate undefined unless gated) and
  /// their reduction over k; the panel width of the output's columns.
  Halide::Func acc, gateAcc;
  Halide::RDom k;
  int panel = 0;
  /// Norm pipelines: the statistics. Whole: the pre-norm's in `norm`, the
  /// post-norm's in `postNorm` (the autoscheduler schedules both).
  NormStats norm, postNorm;
};

/// The algorithm of `spec` (one of pipelinesOf(kernel)), with the buffer
/// conventions of the protocol as constraints on its arguments (mins,
/// extents, strides), so a stub that breaks them fails Halide's checks.
BuiltPipeline buildPipeline(const HalideKernel &kernel,
                            const PipelineSpec &spec);

} // namespace ffnc::halide

#endif // FFNC_HALIDE_GEN_PIPELINES_H
