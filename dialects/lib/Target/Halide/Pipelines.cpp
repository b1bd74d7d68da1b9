//===- Pipelines.cpp - the Halide back end's pass pipeline ----------------===//

#include "ffn/Target/Halide/Pipelines.h"

#include "ffn/Target/CPU/Pipelines.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void ffn::buildHalidePipeline(OpPassManager &pm,
                              const FfnHalideLowerOptions &options) {
  pm.addPass(createFfnHalideLower(options));
  // The stubs are host code like the CPU back end's kernels: its LLVM
  // lowering and ffn-cpu-kernel-glue (entry points, descriptor) as they are.
  buildCpuToLLVMPipeline(pm);
}

namespace {
struct HalidePipelineOptions
    : public PassPipelineOptions<HalidePipelineOptions> {
  Option<std::string> schedule{
      *this, "schedule",
      llvm::cl::desc("strategy (the ops' #ffn.cpu_strategy) or an "
                     "autoscheduler: mullapudi2016, li2018, adams2019"),
      llvm::cl::init("strategy")};
  Option<int64_t> mEstimate{
      *this, "m-estimate",
      llvm::cl::desc("rows the autoscheduler's estimates assume"),
      llvm::cl::init(64)};
  Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("threads of Halide's pool an autoscheduled kernel "
                     "runs on"),
      llvm::cl::init(1)};
  Option<std::string> testBug{
      *this, "test-bug",
      llvm::cl::desc("tests of the oracle only: drop-last-k-after-row-0 or "
                     "bias-shift"),
      llvm::cl::init("")};
};
} // namespace

void ffn::registerHalidePipelines() {
  PassPipelineRegistration<HalidePipelineOptions>(
      "ffn-halide-pipeline",
      "Lower ffn.ffn to calls of Halide pipelines, then to the LLVM dialect "
      "with the kernel ABI's entry points and descriptors (the Halide back "
      "end's glue module, as ffnc translates it; the pipelines themselves "
      "come from ffnc-halide-gen)",
      [](OpPassManager &pm, const HalidePipelineOptions &options) {
        FfnHalideLowerOptions lower;
        lower.schedule = options.schedule;
        lower.mEstimate = options.mEstimate;
        lower.threads = options.threads;
        lower.testBug = options.testBug;
        buildHalidePipeline(pm, lower);
      });
}
