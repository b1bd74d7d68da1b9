//===- Pipeline.cpp - the driver's schedule options -----------------------===//

#include "ffnc/CodeGen/Pipeline.h"

#include "ffn/IR/FfnAttrs.h"
#include "ffn/IR/FfnDialect.h"
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
  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.getOrLoadDialect<ffn::FfnDialect>();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << Attribute(ffn::CpuStrategyAttr::get(&context, knobs));
  return text;
}
