//===- Pipeline.cpp - the driver's schedule options -----------------------===//

#include "ffnc/CodeGen/Pipeline.h"

#include "ffn/Target/CPU/Pipelines.h"

#include <thread>

using namespace mlir;

int64_t ffnc::tunedThreads(const ScheduleOptions &options) {
  return options.threads > 0
             ? options.threads
             : std::max(1u, std::thread::hardware_concurrency());
}

void ffnc::buildStrategyPipeline(OpPassManager &pm,
                                 const ScheduleOptions &options) {
  ffn::FfnAttachTargetOptions target;
  target.isa = options.isa;
  target.threads = tunedThreads(options);
  if (options.machine) {
    target.peakGflops = options.machine->peakGflops;
    target.dramGBs = options.machine->dramGBs;
    target.cacheGBs = options.machine->cacheGBs;
    target.syncMicros = options.machine->syncSeconds * 1e6;
  }
  ffn::FfnSelectStrategyOptions select;
  if (options.overrides != ffn::CpuStrategy())
    select.overrides = strategyText(options.overrides);
  ffn::buildCpuStrategyPipeline(pm, target, options.baseline, select);
}

std::string ffnc::strategyText(const ffn::CpuStrategy &knobs) {
  return "#ffn.cpu_strategy<" + ffn::knobsText(knobs) + ">";
}
