//===- Options.cpp - ffnc's command line ----------------------------------===//

#include "Options.h"

#include "ffnc/Frontend/Sema.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace cl = llvm::cl;

namespace ffnc::opts {

cl::OptionCategory ffncCategory("ffnc options");

cl::SubCommand
    infoCommand("info",
                "Print dimensions, parameter count, weight bytes, FLOPs per "
                "token and arithmetic intensity of each FFN");
cl::SubCommand
    runCommand("run",
               "Compile for this machine, run each FFN on seeded random data "
               "through the runtime, time it, and with --check compare it with "
               "the f64 reference");
cl::SubCommand reportCommand(
    "report",
    "Write one self-contained HTML page (-o, default report.html) with each "
    "FFN's dataflow, sizes, the schedule per token count and a roofline plot "
    "of the predicted (and with --measure, measured) points");
cl::SubCommand
    probeCommand("probe",
                 "Measure this machine (FMA peak, read bandwidths, the thread "
                 "pool's hand-off) and print the machine profile that "
                 "--machine reads");

// For test/Frontend/field-table.test: docs/dsl.md's field table must be
// the one Sema checks with.
cl::opt<bool> printSpecFields(
    "print-spec-fields",
    cl::desc("Print the spec fields' table (as in docs/dsl.md) and exit"),
    cl::Hidden, cl::ValueDisallowed, cl::cat(ffncCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::callback([](const bool &) {
      llvm::outs() << ffnc::specFieldTable();
      llvm::outs().flush();
      std::exit(0);
    }));

// Options of the commands that read a spec.
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<spec.ffn>"),
                               cl::Required, cl::cat(ffncCategory),
                               cl::sub(cl::SubCommand::getTopLevel()),
                               cl::sub(infoCommand), cl::sub(runCommand),
                               cl::sub(reportCommand));
cl::opt<std::string>
    onlyFfn("ffn", cl::desc("Process only the ffn block with this name"),
            cl::value_desc("name"), cl::cat(ffncCategory),
            cl::sub(cl::SubCommand::getAll()));
cl::opt<std::string>
    targetName("target",
               cl::desc("Code generation target: host (default), x86-64-avx2, "
                        "x86-64-avx512, x86-64-avx512-bf16, nvptx-sm80, "
                        "nvptx-sm90, nvptx-sm90a"),
               cl::value_desc("name"), cl::init("host"), cl::cat(ffncCategory),
               cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand),
               cl::sub(infoCommand), cl::sub(reportCommand));
cl::opt<std::string> strategyOption(
    "strategy",
    cl::desc("Override the CPU schedule: 'baseline' (unpacked loops), or "
             "any of mr=N,nr=N,mc=N,kc=N,kc_tall=N,nc=N,prefetch=0|1,"
             "fused_max_m=N,chunk=N,groups=N,bf16_dot=0|1,sparse_max_m=N,"
             "block_units=0|1 (register tile rows/columns, cache block rows, "
             "K block rows for blocks of 2-12 tiles and for taller ones (0: "
             "whole K), weight columns per panel group of a K-blocked block, "
             "weight-stream prefetch, "
             "largest m "
             "of the fused d_ff-chunked schedule (0: never), its chunk width "
             "and work units, bf16 pair dot products instead of widening to "
             "f32, largest m whose GEMM 2 skips W_down rows of zero "
             "activations (0: never), a grouped FFN's blocks as work units "
             "(each block's two GEMMs in one thread) or panels x blocks); "
             "for an NVIDIA target any of sms=N,"
             "bounds=[M,...],block_m=N,block_n=N,stages=N,warp_stages=N,"
             "split_k=N,"
             "mma=mma_sync (#ffn.gpu_strategy's knobs, docs/gpu.md)"),
    cl::value_desc("spec"), cl::cat(ffncCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand),
    cl::sub(infoCommand), cl::sub(reportCommand));
cl::opt<bool> batchInvariantOption(
    "batch-invariant",
    cl::desc("Make every FFN batch-invariant, as `batch_invariant = true` in "
             "its spec does: a row's output bits do not depend on M or on "
             "the rows run with it"),
    cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()),
    cl::sub(runCommand), cl::sub(infoCommand), cl::sub(reportCommand));
cl::opt<std::string> machineFile(
    "machine",
    cl::desc("Price the schedules (and, in info, predict) for the machine "
             "described by this profile (`ffnc probe -o FILE`) instead of "
             "the nominal one"),
    cl::value_desc("file"), cl::cat(ffncCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand),
    cl::sub(infoCommand), cl::sub(reportCommand));
cl::opt<unsigned>
    maxErrors("max-errors",
              cl::desc("Stop after this many errors (default 20; 0: no limit)"),
              cl::init(20), cl::cat(ffncCategory),
              cl::sub(cl::SubCommand::getTopLevel()), cl::sub(infoCommand),
              cl::sub(runCommand), cl::sub(reportCommand));

// The code generator.
const char *halideScheduleName(HalideScheduleKind kind) {
  switch (kind) {
  case HalideScheduleKind::Mullapudi2016:
    return "mullapudi2016";
  case HalideScheduleKind::Li2018:
    return "li2018";
  case HalideScheduleKind::Adams2019:
    return "adams2019";
  default:
    return "strategy";
  }
}

const char *halideBugName(HalideBugKind kind) {
  switch (kind) {
  case HalideBugKind::DropLastKAfterRow0:
    return "drop-last-k-after-row-0";
  case HalideBugKind::BiasShift:
    return "bias-shift";
  default:
    return "";
  }
}

cl::opt<Backend> backendOption(
    "backend", cl::desc("Who generates the CPU kernels (docs/halide.md)"),
    cl::init(Backend::Ffnc),
    cl::values(clEnumValN(Backend::Ffnc, "ffnc",
                          "ffnc's own MLIR lowering (default)"),
               clEnumValN(Backend::Halide, "halide",
                          "Halide 14, through ffnc-halide-gen: dense FFNs, "
                          "the same kernel ABI")),
    cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()),
    cl::sub(runCommand), cl::sub(infoCommand));
cl::opt<HalideScheduleKind> halideScheduleOption(
    "halide-schedule",
    cl::desc("With --backend=halide: how the Halide kernels are scheduled"),
    cl::init(HalideScheduleKind::Strategy),
    cl::values(
        clEnumValN(HalideScheduleKind::Strategy, "strategy",
                   "from the strategy ffnc's cost model picks: two passes "
                   "over packed weights, phases on ffnc's thread pool "
                   "(default)"),
        clEnumValN(HalideScheduleKind::Mullapudi2016, "mullapudi2016",
                   "Halide's Mullapudi2016 autoscheduler: one pipeline on "
                   "unpacked weights and Halide's thread pool"),
        clEnumValN(HalideScheduleKind::Li2018, "li2018",
                   "Halide's Li2018 autoscheduler, likewise"),
        clEnumValN(HalideScheduleKind::Adams2019, "adams2019",
                   "Halide's Adams2019 autoscheduler, likewise (seconds per "
                   "FFN to schedule)")),
    cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()),
    cl::sub(runCommand));
cl::opt<unsigned> halideMEstimate(
    "halide-m-estimate",
    cl::desc("With an autoscheduler (--halide-schedule): the token count M "
             "its estimates assume (default 64)"),
    cl::value_desc("M"), cl::init(64), cl::cat(ffncCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand));
// Only for the oracle's own tests (test/Integration/halide-oracle.test): a
// deliberate bug in the Halide kernels, to show that the oracle catches it.
cl::opt<HalideBugKind> testHalideBug(
    "test-halide-bug",
    cl::desc("Testing the oracle: build the Halide kernels with this bug"),
    cl::init(HalideBugKind::None),
    cl::values(clEnumValN(HalideBugKind::DropLastKAfterRow0,
                          "drop-last-k-after-row-0",
                          "GEMM 2 leaves out the last term of d_ff in every "
                          "row but the first"),
               clEnumValN(HalideBugKind::BiasShift, "bias-shift",
                          "b_down is read one column off")),
    cl::Hidden, cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()),
    cl::sub(runCommand));

// Compilation (no subcommand).
cl::opt<EmitKind> emit(
    "emit", cl::desc("Stage to print"), cl::init(EmitKind::Ffn),
    cl::values(
        clEnumValN(EmitKind::AST, "ast",
                   "the parsed spec, with evaluated dimensions"),
        clEnumValN(EmitKind::Ffn, "ffn",
                   "the ffn dialect (one func per ffn block) with the "
                   "chosen #ffn.cpu_strategy"),
        clEnumValN(EmitKind::Linalg, "linalg",
                   "after lowering the ffn dialect: packed vector loops "
                   "(scheduled) or linalg on tensors (baseline)"),
        clEnumValN(EmitKind::Tiled, "tiled",
                   "every kernel with its final memref calling convention"),
        clEnumValN(EmitKind::Gpu, "gpu",
                   "NVIDIA targets: the gpu-dialect kernels, host pack "
                   "functions and launch plan"),
        clEnumValN(EmitKind::Ptx, "ptx", "NVIDIA targets: the PTX"),
        clEnumValN(EmitKind::Cubin, "cubin",
                   "NVIDIA targets: one FFN's cubin (needs -o; ptxas from "
                   "the CUDA toolkit)"),
        clEnumValN(EmitKind::Halide, "halide",
                   "--backend=halide: the pipelines and schedules ffnc asks "
                   "ffnc-halide-gen for"),
        clEnumValN(EmitKind::LLVM, "llvm",
                   "optimized LLVM IR with the kernel ABI glue"),
        clEnumValN(EmitKind::Asm, "asm", "x86-64 assembly"),
        clEnumValN(EmitKind::Obj, "obj",
                   "a relocatable object (needs -o); link it with the "
                   "--header into your app"),
        clEnumValN(EmitKind::SharedLib, "so",
                   "a shared library for ffn_kernel_load_library (needs "
                   "-o)")),
    cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<std::string> outputFile(
    "o", cl::desc("Output file ('-' for stdout); written only on success"),
    cl::value_desc("file"), cl::init("-"), cl::cat(ffncCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(probeCommand),
    cl::sub(reportCommand));

cl::opt<std::string>
    headerFile("header",
               cl::desc("Also write the C header declaring the kernels (with "
                        "--emit=obj or --emit=so)"),
               cl::value_desc("file"), cl::cat(ffncCategory),
               cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<bool> printLocations(
    "print-locations",
    cl::desc("Print source locations (spec file:line:col) in MLIR output"),
    cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()));

// info and run.
cl::list<uint64_t> tokenCounts(
    "tokens",
    cl::desc("Token counts M: info prints the arithmetic intensity at each "
             "(default 1,16,128,2048); run runs each (default 17)"),
    cl::value_desc("M,M,..."), cl::CommaSeparated, cl::cat(ffncCategory),
    cl::sub(infoCommand), cl::sub(runCommand), cl::sub(reportCommand));

cl::opt<std::string> benchFile(
    "bench",
    cl::desc("report: also plot ffnc's times from this ffn-bench output (its "
             "main table's rows for these FFNs at --threads)"),
    cl::value_desc("file"), cl::cat(ffncCategory), cl::sub(reportCommand));
cl::opt<bool> measureOption(
    "measure",
    cl::desc("With --target=host: measure this machine (as `ffnc probe` "
             "does, a few seconds) and use it for the choice and the "
             "predictions; report also times the kernels"),
    cl::cat(ffncCategory), cl::sub(infoCommand), cl::sub(reportCommand));

// run.
cl::opt<bool> checkResults(
    "check",
    cl::desc("Compare every output with the f64 reference; exit 1 if any "
             "is outside its error bound (docs/numerics.md)"),
    cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<ffn_ref::BoundModel> checkBound(
    "check-bound",
    cl::desc("How --check bounds each element's error from the magnitudes "
             "summed (docs/numerics.md)"),
    cl::init(ffn_ref::BoundModel::Probabilistic),
    cl::values(clEnumValN(ffn_ref::BoundModel::Probabilistic, "probabilistic",
                          "8 sqrt(n) u per sum of n terms (default)"),
               clEnumValN(ffn_ref::BoundModel::WorstCase, "worst-case",
                          "gamma_n = n u / (1 - n u), guaranteed for any "
                          "rounding")),
    cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<double> testActivationError(
    "test-activation-error",
    cl::desc("Testing the check: offset the reference's activation "
             "arguments by this relative amount"),
    cl::init(0.0), cl::Hidden, cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<std::string> weightsFile(
    "weights",
    cl::desc("Set the parameters from this safetensors file (tensors named "
             "as the parameters, or as --map says); with --out-in its "
             "matrices are [out, in], as nn.Linear stores them"),
    cl::value_desc("file.safetensors"), cl::cat(ffncCategory),
    cl::sub(runCommand));
cl::list<std::string> weightMap(
    "map",
    cl::desc("With --weights: the tensor of a parameter, e.g. "
             "w_up=model.layers.0.mlp.up_proj.weight (comma-separated)"),
    cl::value_desc("param=tensor"), cl::CommaSeparated, cl::cat(ffncCategory),
    cl::sub(runCommand));
cl::opt<bool> testPermuteGroups(
    "test-permute-groups",
    cl::desc("Testing the check: hand a grouped FFN's kernel its blocks' "
             "parameters rotated by one block"),
    cl::Hidden, cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random data (default 1)"),
                       cl::init(1), cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("Timed runs after one warm-up (default 3)"),
                         cl::init(3), cl::cat(ffncCategory),
                         cl::sub(runCommand));
cl::opt<Backend> oracleOption(
    "oracle",
    cl::desc("Also build each FFN with another back end and compare the two "
             "kernels on every row, after checking both on --oracle-rows "
             "rows against the f64 reference (docs/numerics.md); exit 1 on "
             "a failure"),
    cl::values(clEnumValN(Backend::Halide, "halide",
                          "the Halide back end, its schedule from the "
                          "strategy")),
    cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<unsigned> oracleRows(
    "oracle-rows",
    cl::desc("With --oracle: the rows of both outputs checked against the "
             "f64 reference (default 8: the first, the last and seeded "
             "others; with --inject-nonfinite also the rows it changes)"),
    cl::value_desc("N"), cl::init(8), cl::cat(ffncCategory),
    cl::sub(runCommand));
cl::opt<unsigned> threadCount(
    "threads",
    cl::desc("Threads the kernels run on (default 0: one per core, the "
             "runtime's default); the cost model picks each token count's "
             "schedule for it, and run uses it"),
    cl::init(0), cl::cat(ffncCategory), cl::sub(infoCommand),
    cl::sub(runCommand), cl::sub(reportCommand));
// The same for compiling (LLVM already has a top-level --threads).
cl::opt<unsigned> kernelThreads(
    "kernel-threads",
    cl::desc("Threads the kernels will run on (default 0: one per core of "
             "this machine); the cost model picks each token count's "
             "schedule for it"),
    cl::init(0), cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<bool> outInLayout(
    "out-in",
    cl::desc("Hand weights to the runtime in PyTorch's [out, in] layout"),
    cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<bool> prequantized(
    "prequantized",
    cl::desc("Quantized kernels: quantize the weights here and hand them over "
             "as blocks (ffn_kernel_set_quantized_param)"),
    cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<double> inputScale(
    "input-scale",
    cl::desc("Scale of the random input, uniform in [-s, s] (default 1)"),
    cl::init(1.0), cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<ffn_ref::RoutingData> routingData(
    "routing",
    cl::desc("Mixtures of experts: the routing the data makes "
             "(docs/numerics.md)"),
    cl::init(ffn_ref::RoutingData::Random),
    cl::values(clEnumValN(ffn_ref::RoutingData::Random, "random",
                          "router and input as drawn (default)"),
               clEnumValN(ffn_ref::RoutingData::Skewed, "skewed",
                          "expert 0 wins almost every token, expert 1 mostly "
                          "comes second"),
               clEnumValN(ffn_ref::RoutingData::Tied, "tied",
                          "every routed column of the router equal: all logits "
                          "tie and experts 0..top_k-1 are selected")),
    cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<bool> injectNonFinite(
    "inject-nonfinite",
    cl::desc("Put NaN, +Inf and -Inf into the first three input rows"),
    cl::cat(ffncCategory), cl::sub(runCommand));
cl::opt<bool> printDigest(
    "digest",
    cl::desc("Print a 64-bit FNV-1a digest of each run's output bytes, to "
             "compare schedules, thread counts or builds bit for bit"),
    cl::cat(ffncCategory), cl::sub(runCommand));

} // namespace ffnc::opts
