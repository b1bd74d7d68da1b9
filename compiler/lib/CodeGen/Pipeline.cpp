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
  ffn::FfnSelectStrategyOptions select;
  select.vectorBits = options.vectorBits;
  select.mr = options.mr;
  select.nr = options.nr;
  select.mc = options.mc;
  select.prefetch = options.prefetch;
  select.fusedMaxM = options.fusedMaxM;
  select.chunk = options.chunk;
  select.groups = options.groups;
  select.threads = tunedThreads(options);
  if (options.machine) {
    select.peakGflops = options.machine->peakGflops;
    select.dramGBs = options.machine->dramGBs;
    select.cacheGBs = options.machine->cacheGBs;
    select.syncMicros = options.machine->syncSeconds * 1e6;
  }
  ffn::buildCpuStrategyPipeline(pm, options.baseline, select);
}
