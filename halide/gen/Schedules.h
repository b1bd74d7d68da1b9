//===- Schedules.h - loops and vectors for the FFN's pipelines -*- C++ -*-===//
//
// Strategy mode maps ffnc's cost-model knobs onto Halide schedules
// (docs/halide.md, "strategy -> schedule"); auto mode hands the whole
// FFN to one of Halide's autoscheduler plugins.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_HALIDE_GEN_SCHEDULES_H
#define FFNC_HALIDE_GEN_SCHEDULES_H

#include "Pipelines.h"

#include <string>
#include <vector>

namespace ffnc::halide {

/// Schedules `p` (a pipeline of `kernel`). Auto mode: returns the
/// autoscheduler's schedule source (for --stmt); strategy mode: "".
std::string schedulePipeline(BuiltPipeline &p, const HalideKernel &kernel,
                             const Halide::Target &target);

/// The autoschedulers whose plugin files this build's Halide ships,
/// sorted ("adams2019", "li2018", "mullapudi2016").
std::vector<std::string> availableAutoschedulers();

/// Loads autoscheduler `name`'s plugin once per process; false with
/// `error` if its file is missing.
bool loadAutoscheduler(const std::string &name, std::string &error);

} // namespace ffnc::halide

#endif // FFNC_HALIDE_GEN_SCHEDULES_H
