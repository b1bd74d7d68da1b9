//===- ffn-bench.cpp - ffnc against oneDNN, side by side ------------------===//
//
// Measures this machine's FMA peak (and bf16 dot-product peak) and read
// bandwidth, compiles the FFNs of bench.ffn with ffnc for the host, and
// times each (config, M, threads) with ffnc and with oneDNN interleaved in
// one process, best of several runs each, in f32 and in bf16 (oneDNN's bf16
// matmuls with the same post-ops). Prints per row: time, GFLOP/s, % of
// peak, weight GB/s, % of the roofline bound min(peak, intensity x
// bandwidth), the ratio to oneDNN, the cost model's prediction, and ffnc's
// error against the f64 reference; then LLaMA-7B's decode rate per dtype;
// then the mixtures of experts against oneDNN run per expert (MoeBench.h);
// then a ReLU FFN at decode with mostly-zero activations, sparse GEMM 2
// against dense and oneDNN (SparseBench.h); then the grouped FFNs against
// their dense equivalents of equal FLOPs (GroupedBench.h); then the dense
// FFNs against ffnc's Halide back end, scheduled from the strategy and by
// Halide's autoscheduler (HalideBench.h), or one line saying this build has
// no Halide back end.
//
//===----------------------------------------------------------------------===//

#include "BenchTiming.h"
#include "GroupedBench.h"
#include "HalideBench.h"
#include "MoeBench.h"
#include "OneDnnFfn.h"
#include "SparseBench.h"

#include "ffnc/Analysis/CostModel.h"
#include "ffnc/Analysis/FfnInfo.h"
#include "ffnc/Analysis/MachineProbe.h"
#include "ffnc/Analysis/MachineProfile.h"
#include "ffnc/CodeGen/Compile.h"
#include "ffnc/Frontend/Sema.h"

#include "ffn/Target/CPU/CostModel.h"
#include "ffn/runtime.h"
#include "ffn_harness.h"
#include "ffn_reference.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <unistd.h>

namespace cl = llvm::cl;
using namespace ffnc;

namespace {

cl::OptionCategory benchCategory("ffn-bench options");
cl::opt<bool> quick("quick",
                    cl::desc("Only the small configs (M <= 16), one pass"),
                    cl::cat(benchCategory));
cl::opt<double> seconds("seconds",
                        cl::desc("Time budget per (config, implementation)"),
                        cl::init(0.5), cl::cat(benchCategory));
cl::opt<std::string> specPath("spec",
                              cl::desc("The bench specs (default: built in)"),
                              cl::init(FFN_BENCH_SPEC), cl::cat(benchCategory));
cl::opt<std::string> halideAutoscheduler(
    "halide-autoscheduler",
    cl::desc("The Halide table's autoscheduled column: mullapudi2016 (the "
             "default, the fastest to run), li2018, adams2019 (seconds per "
             "FFN), or none"),
    cl::init("mullapudi2016"), cl::cat(benchCategory));

struct Config {
  std::string name;
  int64_t m;
};

} // namespace

using ffn_bench::idle;
using ffn_bench::kIdleGap;
using ffn_bench::now;

int main(int argc, char **argv) {
  // `ffn-bench --gpu kernels.so name:M,...`: the GPU table is
  // ffn-gpu-bench's (beside this binary), which needs neither MLIR nor
  // oneDNN and so also runs from the GPU bundle (scripts/gpu-bundle.sh).
  if (argc > 1 && std::string(argv[1]) == "--gpu") {
    llvm::SmallString<256> tool(llvm::sys::path::parent_path(
        llvm::sys::fs::getMainExecutable(argv[0], (void *)&main)));
    llvm::sys::path::append(tool, "ffn-gpu-bench");
    std::vector<char *> args = {tool.data()};
    args.insert(args.end(), argv + 2, argv + argc);
    args.push_back(nullptr);
    execv(tool.c_str(), args.data());
    fmt::print(stderr,
               "ffn-bench --gpu: cannot run {} (built where the CUDA "
               "toolkit's nvcc and cublasLt.h are)\n",
               tool.str().str());
    return 2;
  }
  // Both libraries' workers wait the same way: they spin for about 100 us
  // after their work (ffnc's pool: ThreadPool::kSpinSeconds; GNU OpenMP:
  // GOMP_SPINCOUNT polls, each a pause of about 25 ns on Zen 4, instead of
  // its default 300000), then sleep. The timing loop leaves a gap longer
  // than that between runs, so neither library's spinning workers take the
  // cores of the other's run. GNU OpenMP reads its environment when it is
  // loaded, before main: set it and start again.
  if (!getenv("GOMP_SPINCOUNT") && !getenv("OMP_WAIT_POLICY")) {
    setenv("GOMP_SPINCOUNT", "4000", 1);
    execv("/proc/self/exe", argv);
  }
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(benchCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "ffn-bench: ffnc against oneDNN, side by side\n");
  // Checked before the machine is measured, not after minutes of tables.
  const std::string &autoscheduler = halideAutoscheduler.getValue();
  if (autoscheduler != "mullapudi2016" && autoscheduler != "li2018" &&
      autoscheduler != "adams2019" && autoscheduler != "none") {
    fmt::print(stderr,
               "ffn-bench: --halide-autoscheduler={}: expected "
               "mullapudi2016, li2018, adams2019 or none\n",
               autoscheduler);
    return 1;
  }

  llvm::Expected<TargetInfo> target = resolveTarget("host");
  if (!target) {
    fmt::print(stderr, "ffn-bench: {}\n", llvm::toString(target.takeError()));
    return 1;
  }
  bool avx512 = target->vectorBits == 512;
  // Measured as `ffnc probe` does; the kernels are tuned for these figures.
  MachineProfile mc = measureMachine(avx512);
  fmt::print("machine: {} ({}), {} cores; FMA peak {:.1f} GFLOP/s (1 thread), "
             "{:.1f} ({} threads); read bandwidth from memory {:.1f} GB/s (1 "
             "thread), {:.1f} ({} threads), from cache {:.1f}, {:.1f}\n",
             target->hostCpu, target->name, mc.cores, mc.peak1, mc.peakAll,
             mc.cores, mc.dram1, mc.dramAll, mc.cores, mc.cache1, mc.cacheAll);
  fmt::print("thread pool hand-off {:.2f} us ({} threads)\n", mc.syncMicros,
             mc.cores);
  // The compute peak of kernels whose tiles multiply bf16 pairs.
  std::map<unsigned, double> dotPeak = {
      {1u, measureBf16DotGflops(1)}, {mc.cores, measureBf16DotGflops(mc.cores)}};
  if (dotPeak[1] > 0)
    fmt::print("bf16 dot-product peak (vdpbf16ps) {:.1f} GFLOP/s (1 thread), "
               "{:.1f} ({} threads)\n",
               dotPeak[1], dotPeak[mc.cores], mc.cores);
  // And of the integer-dot tiles (int8 activations).
  std::map<unsigned, double> int8Peak = {
      {1u, measureInt8DotGops(1)}, {mc.cores, measureInt8DotGops(mc.cores)}};
  if (int8Peak[1] > 0)
    fmt::print("int8 dot-product peak (vpdpbusd) {:.1f} GOP/s (1 thread), "
               "{:.1f} ({} threads)\n",
               int8Peak[1], int8Peak[mc.cores], mc.cores);

  // Compile the bench specs for this machine.
  auto buffer = llvm::MemoryBuffer::getFile(specPath);
  if (!buffer) {
    fmt::print(stderr, "ffn-bench: cannot open {}\n", specPath.getValue());
    return 1;
  }
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  DiagnosticEngine diags(sm, llvm::errs());
  std::vector<FfnSpec> specs = compileSpecBuffer(
      sm.getMemoryBuffer(sm.getMainFileID())->getBuffer(), diags);
  if (diags.hadError())
    return 1;
  // Integer dot products need VNNI: without it those FFNs are left out,
  // and said so.
  bool vnni = mlir::ffn::cpuTargetHasFeature(target->name, "avx512vnni");
  if (!vnni) {
    specs.erase(std::remove_if(specs.begin(), specs.end(),
                               [](const FfnSpec &s) {
                                 return s.int8Activations;
                               }),
                specs.end());
    fmt::print("no AVX512-VNNI on {}: the int8-activation rows are left out\n",
               target->name);
  }
  // One library per thread count, each tuned for it (--kernel-threads):
  // the cost model picks each token count's schedule for the threads. A
  // second one of the same specs declared batch_invariant prices that
  // property where it changes the schedule.
  std::vector<FfnSpec> invariantSpecs = specs;
  for (FfnSpec &spec : invariantSpecs)
    spec.batchInvariant = true;
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("ffn-bench", dir);
  // `list` compiled into library `name` of `dir`, tuned for `threads` with
  // `overrides`, then `tweak` applied to the schedule (the Halide table
  // chooses its back end so; empty on failure, said on stderr).
  auto compileWith = [&](const std::vector<FfnSpec> &list, unsigned threads,
                         const mlir::ffn::CpuStrategy &overrides,
                         const std::function<void(ScheduleOptions &)> &tweak,
                         const std::string &name) -> std::string {
    llvm::SmallString<128> library(dir);
    llvm::sys::path::append(library, name);
    ScheduleOptions schedule;
    schedule.isa = target->name;
    schedule.vectorBits = target->vectorBits;
    schedule.threads = threads;
    schedule.machine = mc.assumptions(threads);
    schedule.overrides = overrides;
    if (tweak)
      tweak(schedule);
    if (llvm::Error err =
            buildSharedLibrary(list, sm, *target, schedule, library)) {
      fmt::print(stderr, "ffn-bench: {}\n", llvm::toString(std::move(err)));
      return std::string();
    }
    return std::string(library);
  };
  auto compile = [&](const std::vector<FfnSpec> &list, unsigned threads,
                     const mlir::ffn::CpuStrategy &overrides,
                     const std::string &name) {
    return compileWith(list, threads, overrides, nullptr, name);
  };
  std::map<std::pair<unsigned, bool>, std::string> libraries;
  for (unsigned threads : {1u, mc.cores}) {
    for (bool invariant : {false, true}) {
      double compileStart = now();
      std::string library =
          compile(invariant ? invariantSpecs : specs, threads, {},
                  "bench" + std::to_string(threads) +
                      (invariant ? "-inv" : "") + ".so");
      if (library.empty())
        return 1;
      if (!invariant)
        fmt::print("compiled {} FFNs for {} thread{} in {:.2f} s\n",
                   specs.size(), threads, threads == 1 ? "" : "s",
                   now() - compileStart);
      libraries[{threads, invariant}] = library;
    }
  }
  // The activation-sparsity FFNs once more with the dense GEMM 2
  // (sparse_max_m = 0) and with the sparse one for every m <= 8, the cost
  // model's choice's two baselines.
  std::vector<FfnSpec> sparseSpecs;
  for (const FfnSpec &spec : specs)
    if (spec.activationSparsity >= 0)
      sparseSpecs.push_back(spec);
  std::map<std::pair<unsigned, int64_t>, std::string> sparseLibraries;
  for (unsigned threads : {1u, mc.cores}) {
    for (int64_t bound : {int64_t(0), int64_t(8)}) {
      if (sparseSpecs.empty())
        break;
      mlir::ffn::CpuStrategy overrides;
      overrides.sparseMaxM = bound;
      std::string library = compile(sparseSpecs, threads, overrides,
                                    "sparse" + std::to_string(threads) + "-" +
                                        std::to_string(bound) + ".so");
      if (library.empty())
        return 1;
      sparseLibraries[{threads, bound}] = library;
    }
  }
  // The grouped FFNs beside their dense equivalents, both as the cost model
  // schedules them, and the dense equivalents once more two-pass
  // (fused_max_m = 0): the only schedule grouped kernels have, so that
  // library must hold no grouped FFN.
  std::vector<FfnSpec> groupedSpecs, denseEquivalents;
  for (const FfnSpec &spec : specs)
    if (spec.isGrouped()) {
      groupedSpecs.push_back(spec);
      denseEquivalents.push_back(ffn_bench::denseEquivalent(spec));
    }
  std::vector<FfnSpec> groupedAndDense = groupedSpecs;
  groupedAndDense.insert(groupedAndDense.end(), denseEquivalents.begin(),
                         denseEquivalents.end());
  std::map<unsigned, ffn_bench::GroupedLibraries> groupedLibraries;
  for (unsigned threads : {1u, mc.cores}) {
    if (groupedSpecs.empty())
      break;
    ffn_bench::GroupedLibraries &libs = groupedLibraries[threads];
    libs.chosen = compile(groupedAndDense, threads, {},
                          "grouped" + std::to_string(threads) + ".so");
    mlir::ffn::CpuStrategy twoPass;
    twoPass.fusedMaxM = 0;
    libs.twoPass =
        compile(denseEquivalents, threads, twoPass,
                "grouped" + std::to_string(threads) + "-two-pass.so");
    mlir::ffn::CpuStrategy units;
    units.blockUnits = true;
    libs.blockUnits =
        compile(groupedSpecs, threads, units,
                "grouped" + std::to_string(threads) + "-block-units.so");
    units.blockUnits = false;
    libs.panelUnits =
        compile(groupedSpecs, threads, units,
                "grouped" + std::to_string(threads) + "-panel-units.so");
    if (libs.chosen.empty() || libs.twoPass.empty() ||
        libs.blockUnits.empty() || libs.panelUnits.empty())
      return 1;
  }

  std::vector<Config> configs;
  for (const char *suffix : {"", "_bf16"})
    for (Config c : std::vector<Config>{{"bert_base_gelu", 1},
                                        {"bert_base_gelu", 8},
                                        {"bert_base_gelu", 128},
                                        {"bert_base_gelu", 2048},
                                        {"llama7b_swiglu", 1},
                                        {"llama7b_swiglu", 16},
                                        {"llama7b_swiglu", 256},
                                        {"transformer_base_relu", 64}}) {
      c.name += suffix;
      configs.push_back(c);
    }
  // f16 (no oneDNN peer here): decode and one compute-bound size.
  configs.push_back({"llama7b_swiglu_f16", 1});
  configs.push_back({"llama7b_swiglu_f16", 256});
  // Weight-only int8 / int4 (bf16 activations): decode against the memory
  // roofline, and one compute-bound size.
  // With int8 activations too (integer dot products), where the target
  // has VNNI.
  std::vector<const char *> quantized = {"llama7b_swiglu_int8",
                                         "llama7b_swiglu_int4"};
  if (vnni) {
    quantized.push_back("llama7b_swiglu_int8_a8");
    quantized.push_back("llama7b_swiglu_int4_a8");
  }
  for (const char *name : quantized) {
    configs.push_back({name, 1});
    configs.push_back({name, 16});
    configs.push_back({name, 256});
  }
  // LLaMA-7B's MLP at M = 1 per dtype and thread count: decode's rate.
  std::vector<std::string> decode;
  if (quick)
    configs.erase(std::remove_if(configs.begin(), configs.end(),
                                 [](const Config &c) { return c.m > 16; }),
                  configs.end());

  ffn_context *ctx = nullptr;
  ffn_context_create(&ctx);
  int failures = 0;
  fmt::print("\n| FFN | M | thr | ffnc ms | GFLOP/s | % peak | weight GB/s "
             "| % roofline | oneDNN ms | oneDNN GFLOP/s | ffnc / oneDNN "
             "| predicted ms | schedule | batch-invariant time | err/bound "
             "|\n");
  fmt::print(
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (unsigned threads : {1u, mc.cores}) {
    ffn_context_set_threads(ctx, static_cast<int>(threads));
    ffn_bench::setOneDnnThreads(static_cast<int>(threads));
    MachineModel model = mc.roofline(threads);
    double peak = model.peakGflops, bw = model.bandwidthGBs,
           cacheBw = model.cacheBandwidthGBs;
    const std::string &library = libraries[{threads, false}];
    const std::string &invariantLibrary = libraries[{threads, true}];
    for (const Config &c : configs) {
      const FfnSpec *spec = nullptr;
      for (const FfnSpec &s : specs)
        if (s.name == c.name)
          spec = &s;
      // A --spec file may hold only some of the configs. A grouped FFN has
      // no oneDNN peer (its dense FFN would compute another function); it
      // is measured in its own table.
      if (!spec || spec->isGrouped())
        continue;
      ffn_kernel *kernel = nullptr, *invariant = nullptr;
      if (ffn_kernel_load_library(ctx, library.c_str(), c.name.c_str(),
                                  &kernel) != FFN_OK ||
          ffn_kernel_load_library(ctx, invariantLibrary.c_str(),
                                  c.name.c_str(), &invariant) != FFN_OK) {
        fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
        return 1;
      }
      const ffn_kernel_desc &desc = *ffn_kernel_descriptor(kernel);
      bool bf16 = desc.dtype == FFN_DTYPE_BF16;
      // oneDNN's f16 matmul needs AVX512-FP16 or AMX-FP16, which these
      // machines lack: f16 rows are ffnc's alone, for the decode rate.
      // Quantized weights likewise (oneDNN's int8 matmuls quantize the
      // activations too: another contract).
      bool peer = desc.dtype != FFN_DTYPE_F16 &&
                  desc.weight_quant == FFN_WEIGHTS_DTYPE;
      std::string dtypeName = desc.dtype == FFN_DTYPE_F32    ? "f32"
                              : desc.dtype == FFN_DTYPE_BF16 ? "bf16"
                                                             : "f16";
      if (desc.weight_quant != FFN_WEIGHTS_DTYPE)
        dtypeName =
            (desc.weight_quant == FFN_WEIGHTS_INT8      ? "int8 ("
             : desc.weight_quant == FFN_WEIGHTS_INT4_ZP ? "int4 zp ("
                                                        : "int4 (") +
            (desc.operand_rounding == FFN_DTYPE_INT8 ? std::string("int8")
                                                     : dtypeName) +
            " activations)";
      size_t elementBytes = desc.dtype == FFN_DTYPE_F32 ? 4 : 2;
      // Pair tiles (vdpbf16ps) round the matmuls' inputs to bf16; their
      // compute peak is the dot product's.
      bool pairTiles = desc.operand_rounding == FFN_DTYPE_BF16;
      // Integer-dot tiles' peak is vpdpbusd's.
      bool intDot = desc.operand_rounding == FFN_DTYPE_INT8;
      double kernelPeak = intDot      ? int8Peak[threads]
                          : pairTiles ? dotPeak[threads]
                                      : 0;
      // The run harness's seeded parameters and input (as `ffnc run`
      // draws them), the same bytes for both implementations.
      ffn_ref::Random rng(17);
      std::vector<ffn_ref::Buffer> params = ffn_ref::makeParams(desc, rng);
      for (ffn_kernel *k : {kernel, invariant})
        if (ffn_ref::setParams(k, params) != FFN_OK) {
          fmt::print(stderr, "ffn-bench: {}\n", ffn_context_last_error(ctx));
          return 1;
        }
      std::vector<const void *> dnnlWeights;
      for (const ffn_ref::Buffer &p : params)
        dnnlWeights.push_back(p.bytes.data());
      ffn_bench::OneDnnFfn::Config dc{
          spec->dModel,
          spec->dFF,
          c.m,
          spec->isGated(),
          spec->activation == Activation::Relu ? "relu" : "gelu",
          spec->biasUp,
          bf16};
      std::unique_ptr<ffn_bench::OneDnnFfn> dnnl;
      if (peer)
        dnnl = std::make_unique<ffn_bench::OneDnnFfn>(dc, dnnlWeights);

      ffn_ref::Buffer input = ffn_ref::makeInput(desc, c.m, rng);
      const void *x = input.bytes.data();
      std::vector<unsigned char> y(c.m * spec->dModel * elementBytes),
          yd(y.size());
      // The schedule the kernel's bucket for this M runs, from the kernel
      // itself: phase 4 of ffnc's CPU kernels is the fused schedule's chunk
      // groups (ffn-lower-packed), empty outside its bucket. The
      // batch-invariant kernel differs only where this is fused.
      bool fused =
          desc.cpu->num_phases > 4 && desc.cpu->phase_units(4, c.m) > 0;
      std::vector<unsigned char> yi(y.size());
      // Interleaved: ffnc, oneDNN, [ffnc batch-invariant], ... best of each.
      double bestF = INFINITY, bestD = INFINITY, bestI = INFINITY, spentF = 0,
             spentD = 0;
      for (int r = 0; r < 200 && (r < 4 || spentF + spentD < 2 * seconds);
           ++r) {
        double t0 = now();
        ffn_kernel_run(kernel, c.m, x, y.data());
        double t1 = now();
        idle(kIdleGap);
        double t1d = now();
        if (dnnl)
          dnnl->run(x, yd.data());
        double t2 = now();
        idle(kIdleGap);
        double ti = 0;
        if (fused) {
          double t0i = now();
          ffn_kernel_run(invariant, c.m, x, yi.data());
          ti = now() - t0i;
          idle(kIdleGap);
        }
        if (r > 0) { // the first round is warm-up
          bestF = std::min(bestF, t1 - t0);
          bestD = std::min(bestD, t2 - t1d);
          bestI = std::min(bestI, ti);
        }
        spentF += t1 - t0;
        spentD += t2 - t1d;
        if (quick && r >= 3)
          break;
      }

      // ffnc's numerics on the first rows against the f64 reference (the
      // harness's check, as `ffnc run --check`).
      int64_t rows = std::min<int64_t>(c.m, 2);
      ffn_ref::Comparison cmp =
          ffn_ref::checkOutput(desc, rows, input, y.data(), params).result;
      if (!cmp.pass)
        ++failures;

      double flops = double(flopsPerToken(*spec)) * c.m;
      double wbytes = double(weightBytes(*spec));
      double bytes = wbytes + 2.0 * c.m * spec->dModel * elementBytes;
      double rowPeak = kernelPeak > 0 ? kernelPeak : peak;
      // Interleaving keeps both libraries' weights live, so they stay in
      // cache between runs only if both fit in the buffer the cache probe
      // measured; otherwise the roofline is the memory bandwidth (rows a
      // large L3 partly holds can beat it).
      bool resident = 2 * wbytes <= double(kCacheProbeBytes);
      double weightBw = resident ? cacheBw : bw;
      double bound = std::min(rowPeak, flops / bytes * weightBw); // GFLOP/s
      double gf = flops / bestF / 1e9, gd = flops / bestD / 1e9;
      // The roofline ffnc info uses, with this machine's measurements and
      // the bandwidth the weights are read at here.
      double predicted =
          predict(*spec, c.m, MachineModel{rowPeak, bw, weightBw}).seconds;
      // The batch-invariant kernel's cost; where the default is two-pass it
      // is the same kernel.
      std::string invariantCost =
          fused ? fmt::format("{:.2f}x", bestI / bestF) : "1 (same)";
      std::string peerColumns =
          peer ? fmt::format("{:.3f} | {:.1f} | {:.2f}x", bestD * 1e3, gd,
                             bestD / bestF)
               : std::string("- | - | -");
      fmt::print("| {} | {} | {} | {:.3f} | {:.1f} | {:.0f}% | {:.1f} | "
                 "{:.0f}% | {} | {:.3f} | {} | {} | {:.2g}{} |\n",
                 c.name, c.m, threads, bestF * 1e3, gf, 100 * gf / rowPeak,
                 wbytes / bestF / 1e9, 100 * gf / bound, peerColumns,
                 predicted * 1e3, fused ? "fused" : "two-pass", invariantCost,
                 cmp.maxRatio, cmp.pass ? "" : " FAIL");
      std::fflush(stdout);
      if (c.m == 1 && c.name.rfind("llama7b_swiglu", 0) == 0)
        decode.push_back(fmt::format(
            "  {} ({} thread{}): {:.2f} ms = {:.0f} tokens/s per layer, "
            "{:.1f} tokens/s through 32 layers; {:.1f} GB/s of weights, "
            "{:.0f}% of the measured read bandwidth{}",
            dtypeName, threads, threads == 1 ? "" : "s", bestF * 1e3,
            1 / bestF, 1 / (32 * bestF), wbytes / bestF / 1e9,
            100 * wbytes / bestF / 1e9 / bw,
            peer ? fmt::format("; oneDNN {:.2f} ms", bestD * 1e3) : ""));
      ffn_kernel_destroy(kernel);
      ffn_kernel_destroy(invariant);
    }
  }
  // Mixtures of experts: ffnc's kernel against oneDNN per expert.
  std::vector<std::string> moeDecode;
  fmt::print("\n| MoE | M | thr | ffnc ms | GFLOP/s | experts read | "
             "expert GB/s | % bandwidth | oneDNN per expert ms | oneDNN / "
             "ffnc | max diff / max |y| |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|\n");
  ffn_bench::MoeBenchOptions moeOptions;
  moeOptions.tokens = quick ? std::vector<int64_t>{1}
                            : std::vector<int64_t>{1, 16, 256};
  moeOptions.seconds = seconds;
  moeOptions.quick = quick;
  for (unsigned threads : {1u, mc.cores}) {
    ffn_context_set_threads(ctx, static_cast<int>(threads));
    ffn_bench::setOneDnnThreads(static_cast<int>(threads));
    for (const FfnSpec &spec : specs)
      if (spec.isMoe())
        failures += ffn_bench::benchMoe(spec, libraries[{threads, false}], ctx,
                                        threads, mc.roofline(threads),
                                        moeOptions, moeDecode);
  }
  // Activation sparsity at decode.
  fmt::print("\n| ReLU FFN | M | thr | nonzero per row | W_down rows listed | "
             "ffnc ms | schedule | dense ms | dense / ffnc | always-sparse ms "
             "| oneDNN ms | oneDNN / ffnc | GB/s read | % bandwidth | "
             "bit-identical |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  ffn_bench::SparseBenchOptions sparseOptions;
  sparseOptions.tokens =
      quick ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2, 4, 8};
  sparseOptions.nonzero =
      quick ? std::vector<double>{0.1} : std::vector<double>{0.5, 0.1};
  sparseOptions.seconds = seconds;
  sparseOptions.quick = quick;
  for (unsigned threads : {1u, mc.cores}) {
    ffn_context_set_threads(ctx, static_cast<int>(threads));
    ffn_bench::setOneDnnThreads(static_cast<int>(threads));
    for (const FfnSpec &spec : sparseSpecs)
      failures += ffn_bench::benchSparse(
          spec,
          {libraries[{threads, false}], sparseLibraries[{threads, 0}],
           sparseLibraries[{threads, 8}]},
          ctx, threads, mc.roofline(threads), sparseOptions);
  }
  // Grouped FFNs at the speed of their dense equivalents per FLOP.
  fmt::print("\n| grouped FFN | G | M | thr | units | ffnc ms | GFLOP/s | "
             "dense-eq ms | dense-eq schedule | per-FLOP vs dense-eq | "
             "dense-eq two-pass ms | per-FLOP vs two-pass | other units ms | "
             "other / ffnc | weight GB/s | % bandwidth | err/bound |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
             "---|\n");
  ffn_bench::GroupedBenchOptions groupedOptions;
  groupedOptions.tokens =
      quick ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 16, 256};
  groupedOptions.seconds = seconds;
  groupedOptions.quick = quick;
  ffn_bench::GroupedSummary groupedSummary;
  for (unsigned threads : {1u, mc.cores}) {
    ffn_context_set_threads(ctx, static_cast<int>(threads));
    for (const FfnSpec &spec : groupedSpecs)
      failures += ffn_bench::benchGrouped(spec, groupedLibraries[threads], ctx,
                                          threads, mc.roofline(threads),
                                          groupedOptions, groupedSummary);
  }
  ffn_bench::printGroupedSummary(groupedSummary);
  // The dense configs against the Halide back end. Its libraries are built
  // here, after the other tables, only when this build has the back end;
  // with --quick only the decode rows (M = 1), as the tables above, since
  // every distinct M costs an autoscheduled library per thread count.
  ffn_bench::HalideBenchOptions halideOptions;
  halideOptions.autoscheduler = autoscheduler;
  halideOptions.seconds = seconds;
  halideOptions.quick = quick;
  std::vector<ffn_bench::HalideRow> halideRows;
  for (const Config &c : configs)
    if (!quick || c.m == 1)
      halideRows.push_back({c.name, c.m});
  std::map<unsigned, std::string> ffncLibraries;
  for (unsigned threads : {1u, mc.cores})
    ffncLibraries[threads] = libraries[{threads, false}];
  std::vector<std::string> halideLibraries;
  failures += ffn_bench::benchHalide(
      specs, halideRows, *target, sm, ffncLibraries,
      [&](const std::vector<FfnSpec> &list, unsigned threads,
          const std::function<void(ScheduleOptions &)> &tweak,
          const std::string &name) {
        return compileWith(list, threads, {}, tweak, name);
      },
      ctx, halideOptions, halideLibraries);
  ffn_context_destroy(ctx);
  for (const std::string &library : halideLibraries)
    llvm::sys::fs::remove(library);
  for (auto &[key, library] : sparseLibraries)
    llvm::sys::fs::remove(library);
  for (auto &[threads, libs] : groupedLibraries) {
    llvm::sys::fs::remove(libs.chosen);
    llvm::sys::fs::remove(libs.twoPass);
  }
  for (auto &[threads, library] : libraries)
    llvm::sys::fs::remove(library);
  llvm::sys::fs::remove(dir);
  fmt::print("\nLLaMA-7B MLP decode (M = 1, the MLP only):\n");
  for (const std::string &line : decode)
    fmt::print("{}\n", line);
  fmt::print("\nMixture-of-experts decode (M = 1, the block only):\n");
  for (const std::string &line : moeDecode)
    fmt::print("{}\n", line);
  fmt::print("\n{} numerics failures\n", failures);
  return failures ? 1 : 0;
}
