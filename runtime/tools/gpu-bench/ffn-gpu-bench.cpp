//===- ffn-gpu-bench.cpp - ffnc's GPU kernels against cuBLASLt ------------===//
//
//   ffn-gpu-bench kernels.so name:M,M,... [name:M,...] [--rounds=7]
//                 [--library=other.so name:M,...]...
//
// `--library=` switches the kernel library for the configurations after it
// (builds of one FFN under different strategies, timed against the same
// baseline in one run).
//
// One process, one stream, the same weights: ffnc's kernel (the runtime's
// ffn_kernel_run_device) against the FFN built from cuBLASLt, interleaved
// round by round, each timing a batch of back-to-back runs between two
// CUDA events; the median of the rounds is reported.
//
// The cuBLASLt FFN (docs/gpu.md, "A fair comparison"): GEMM 1 with its bias
// / GELU(tanh) + bias / ReLU + bias epilogue for plain FFNs; for gated ones
// the faster of (B1) gate and up as two GEMMs and (B2) one GEMM over the
// concatenated [gate | up] weights, each followed by the act(g) * u kernel
// (elementwise.cu); GEMM 2 with its bias and the residual through beta; a
// pre-norm's kernel before GEMM 1, a post-norm's after GEMM 2 (reading its
// output in the dtype, as PyTorch does; elementwise.cu).
// Every GEMM's algorithm is the fastest of up to 16 heuristic candidates
// (32 MiB workspace); the heuristic's first choice is timed too.
//
// Before the table: the device's measured peak (a tuned 8192^3 GEMM in the
// FFN's dtype) and bandwidth (a 1 GiB device-to-device copy), beside the
// nominal 2 x memory clock x bus width. Weights are rotated over enough
// copies (both contenders) that they stream from HBM, not the L2, as they
// would in a model with many layers.
//
// Exit status: 0, 1 (a mismatch between the two beyond the dtype's
// rounding), 2 (usage), 3 (no device, driver or cuBLASLt: nothing run).
//
//===----------------------------------------------------------------------===//

#include "CublasLt.h"
#include "Device.h"
#include "MoeBaseline.h"

#include "ffn/runtime.h"
#include "ffn_harness.h"
#include "ffn_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

extern "C" const unsigned char ffn_bench_elementwise_fatbin[];

using namespace gpu_bench;

namespace {

struct Config {
  const char *library = nullptr;
  std::string name;
  std::string label; ///< the name, and the library when not the first
  std::vector<int64_t> tokens;
};

/// The GEMMs and kernels of one baseline FFN at one M.
struct Baseline {
  std::string variant; ///< "plain", "B1 two GEMMs", "B2 concat"
  std::unique_ptr<LtGemm> up, gate, down;
  CUfunction glu = nullptr;
};

/// One copy of the weights on the device, in the layouts cuBLASLt reads.
struct Weights {
  Buffer wUp, wGate, wDown, wConcat, bUp, bGate, bDown, bConcat;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

const char *actName(int64_t a) {
  switch (a) {
  case FFN_ACT_SILU:
    return "silu";
  case FFN_ACT_GELU:
    return "gelu";
  case FFN_ACT_GELU_TANH:
    return "gelu_tanh";
  case FFN_ACT_RELU:
    return "relu";
  default:
    return nullptr;
  }
}

cudaDataType cudaTypeOf(const ffn_kernel_desc &desc) {
  return desc.dtype == FFN_DTYPE_BF16  ? CUDA_R_16BF
         : desc.dtype == FFN_DTYPE_F16 ? CUDA_R_16F
                                       : CUDA_R_32F;
}

const char *typeNameOf(const ffn_kernel_desc &desc) {
  return desc.dtype == FFN_DTYPE_BF16  ? "bf16"
         : desc.dtype == FFN_DTYPE_F16 ? "f16"
                                       : "f32";
}

/// GEMM 1's cuBLASLt epilogue for a plain FFN (with or without b_up).
LtEpilogue plainEpilogueOf(const ffn_kernel_desc &desc, bool bias) {
  if (desc.activation == FFN_ACT_GELU_TANH)
    return bias ? LtEpilogue::GeluBias : LtEpilogue::Gelu;
  if (desc.activation == FFN_ACT_RELU)
    return bias ? LtEpilogue::ReluBias : LtEpilogue::Relu;
  return bias ? LtEpilogue::Bias : LtEpilogue::None;
}

/// The two outputs against each other: the largest difference, the
/// largest |y| of the baseline, and whether they agree to a few units of
/// the dtype's last place of the largest output (both round h to the
/// dtype, in different orders).
struct Agreement {
  double maxDiff = 0, maxY = 0;
  bool agree = false;
};
Agreement compareOutputs(Device &d, const ffn_kernel_desc &desc, int64_t m,
                         const Buffer &yFfnc, const Buffer &yLt) {
  int64_t eb = desc.dtype == FFN_DTYPE_F32 ? 4 : 2;
  size_t n = size_t(m) * desc.d_model;
  std::vector<unsigned char> hf(n * eb), hl(n * eb);
  d.check(d.MemcpyDtoH(hf.data(), yFfnc.get(), n * eb), "cuMemcpyDtoH");
  d.check(d.MemcpyDtoH(hl.data(), yLt.get(), n * eb), "cuMemcpyDtoH");
  Agreement a;
  for (size_t i = 0; i < n; ++i) {
    double x = ffn_ref::load(desc.dtype, hf.data(), i),
           y = ffn_ref::load(desc.dtype, hl.data(), i);
    a.maxDiff = std::max(a.maxDiff, std::fabs(x - y));
    a.maxY = std::max(a.maxY, std::fabs(y));
  }
  double tolerance = (eb == 4                        ? 1e-5
                      : desc.dtype == FFN_DTYPE_BF16 ? 0.05
                                                     : 0.01) *
                     std::max(a.maxY, 1e-3);
  a.agree = std::isfinite(a.maxDiff) && a.maxDiff <= tolerance;
  return a;
}

/// Runs a batch takes to last about 2 ms, from one run's milliseconds.
int batchFor(double onceMs) {
  return static_cast<int>(
      std::clamp(2.0 / std::max(onceMs, 1e-3), 10.0, 200.0));
}

class Bench {
public:
  Bench(Device &d, Lt &lt, ffn_context *ctx, CUmodule elementwise, int rounds)
      : d(d), lt(lt), ctx(ctx), elementwise(elementwise), rounds(rounds) {}

  double copyGBs = 0;
  int failures = 0;

  /// A 1 GiB device-to-device copy: what the memory streams.
  void measureBandwidth();
  /// The tuned 8192^3 GEMM in `type` (measured once per type): what "% of
  /// peak" is relative to.
  double peakTflops(cudaDataType type);
  void run(const Config &config);

private:
  /// A mixture of experts against MoeBaseline, on `kernels[0]`.
  void runMoe(const ffn_kernel_desc &desc, const Config &config,
              ffn_kernel *kernel,
              const std::vector<ffn_ref::Buffer> &baselineParams,
              ffn_ref::Random &rng);
  CUfunction gluKernel(const ffn_kernel_desc &desc, const char *layout) const;
  Device &d;
  Lt &lt;
  ffn_context *ctx;
  CUmodule elementwise;
  int rounds;
  std::vector<std::pair<cudaDataType, double>> peaks;
  CUevent start = nullptr, stop = nullptr;

  /// Milliseconds per run of `fn(i)` (i: the run's weight copy), over
  /// batches of `batch` runs, median of `rounds` -- one round each time it
  /// is called (the caller interleaves).
  template <typename F> double timeBatch(int batch, int copies, F fn);
};

template <typename F> double Bench::timeBatch(int batch, int copies, F fn) {
  if (!start) {
    d.check(d.EventCreate(&start, 0), "cuEventCreate");
    d.check(d.EventCreate(&stop, 0), "cuEventCreate");
  }
  d.check(d.EventRecord(start, d.stream), "cuEventRecord");
  for (int r = 0; r < batch; ++r)
    fn(r % copies);
  d.check(d.EventRecord(stop, d.stream), "cuEventRecord");
  d.check(d.EventSynchronize(stop), "cuEventSynchronize");
  float ms = 0;
  d.check(d.EventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  return ms / batch;
}

double Bench::peakTflops(cudaDataType type) {
  for (auto &[t, tflops] : peaks)
    if (t == type)
      return tflops;
  const int64_t n = 8192;
  size_t bytes = size_t(n) * n * (type == CUDA_R_32F ? 4 : 2);
  Buffer a(d, bytes), b(d, bytes), c(d, bytes);
  LtGemm g(lt, d, type, n, n, n, LtEpilogue::None, false);
  g.tune(a.raw(), b.raw(), nullptr, nullptr, c.raw(), 3);
  std::vector<double> ms;
  for (int r = 0; r < 5; ++r)
    ms.push_back(timeBatch(3, 1, [&](int) {
      g.run(a.raw(), b.raw(), nullptr, nullptr, c.raw());
    }));
  double tflops = 2.0 * n * n * n / (median(ms) * 1e-3) / 1e12;
  peaks.push_back({type, tflops});
  const char *name = type == CUDA_R_16BF  ? "bf16"
                     : type == CUDA_R_16F ? "f16"
                                          : "f32";
  std::printf("measured peak: %s GEMM 8192^3 %.1f TFLOP/s (cuBLASLt, tuned)\n",
              name, tflops);
  return tflops;
}

void Bench::measureBandwidth() {
  // A copy reads and writes each byte once.
  size_t copyBytes = size_t(1) << 30;
  Buffer from(d, copyBytes), to(d, copyBytes);
  std::vector<double> ms;
  for (int r = 0; r < 5; ++r)
    ms.push_back(timeBatch(3, 1, [&](int) {
      d.check(d.MemcpyDtoDAsync(to.get(), from.get(), copyBytes, d.stream),
              "cuMemcpyDtoDAsync");
    }));
  copyGBs = 2.0 * copyBytes / (median(ms) * 1e-3) / 1e9;
}

void Bench::run(const Config &config) {
  const char *library = config.library;
  const char *name = config.name.c_str();
  ffn_kernel *first = nullptr;
  if (ffn_status s = ffn_kernel_load_library(ctx, library, name, &first)) {
    std::fprintf(stderr, "ffn-gpu-bench: %s: %s\n", ffn_status_string(s),
                 ffn_context_last_error(ctx));
    ++failures;
    return;
  }
  const ffn_kernel_desc &desc = *ffn_kernel_descriptor(first);
  int64_t dm = desc.d_model, dff = desc.d_ff, eb = desc.dtype == 0 ? 4 : 2;
  bool gated = desc.gated != 0;
  const char *act = actName(desc.activation);
  std::string skip;
  if (desc.device != FFN_DEVICE_CUDA)
    skip = "not a device kernel";
  else if (desc.norm != FFN_NORM_NONE && desc.kind == FFN_KIND_MOE)
    skip = "the mixture baseline has no norm kernel";
  else if (desc.kind == FFN_KIND_GROUPED)
    skip = "the baseline is for dense FFNs and mixtures of experts";
  else if (desc.kind == FFN_KIND_MOE && desc.weight_quant != FFN_WEIGHTS_DTYPE)
    skip = "quantized mixtures are not in the mixture baseline yet";
  else if (!act || (!gated && desc.activation == FFN_ACT_SILU) ||
           (!gated && desc.activation == FFN_ACT_GELU))
    skip = "no cuBLASLt epilogue or bench kernel for this activation";
  else if (dff % 8 != 0 || dm % 8 != 0)
    skip = "d_model and d_ff must be multiples of 8 for the baseline";
  if (!skip.empty()) {
    std::printf("%s: skipped (%s)\n", name, skip.c_str());
    ffn_kernel_destroy(first);
    return;
  }
  cudaDataType type = cudaTypeOf(desc);
  const char *typeName = typeNameOf(desc);

  ffn_ref::Random rng(1);
  std::vector<ffn_ref::Buffer> params = ffn_ref::makeParams(desc, rng);
  // Quantized weights: cuBLASLt has no int4/int8 weight-only GEMM, so its
  // FFN multiplies the weights ffnc's kernel multiplies by (the ABI's
  // dequantized values), stored in the dtype; ffnc reads a quarter (int4)
  // or half (int8) of those bytes.
  bool quantized = desc.weight_quant != FFN_WEIGHTS_DTYPE;
  std::vector<ffn_ref::Buffer> baselineParams = params;
  if (quantized)
    for (int64_t i = 0; i < desc.num_params; ++i) {
      const ffn_param_desc &p = desc.params[i];
      if (p.rank != 2)
        continue;
      std::vector<double> w =
          ffn_ref::dequantize(desc, p, params[i].values.data());
      for (size_t j = 0; j < w.size(); ++j)
        ffn_ref::store(desc.dtype, baselineParams[i].bytes.data(), j, w[j]);
    }
  // The baseline's copy of a parameter.
  auto find = [&](const char *p) -> const ffn_ref::Buffer * {
    for (int64_t i = 0; i < desc.num_params; ++i)
      if (std::strcmp(desc.params[i].name, p) == 0)
        return &baselineParams[i];
    return nullptr;
  };
  // The weight bytes a run reads: the parameters, or for quantized weights
  // what ffnc's kernel reads of them (integers, scales, zero points: the
  // packed sizes).
  size_t weightBytes = 0;
  for (int64_t i = 0; i < desc.num_params; ++i)
    weightBytes += quantized ? static_cast<size_t>(desc.params[i].packed_bytes)
                             : params[i].bytes.size();
  // Enough copies that the rotation spans 2.5x the L2 (a mixture's
  // baseline keeps one copy of the experts, and so does ffnc then).
  int copies = desc.kind == FFN_KIND_MOE
                   ? 1
                   : static_cast<int>(std::clamp<double>(
                         std::ceil(2.5 * d.l2Bytes / weightBytes), 1, 16));

  // ffnc: one kernel per copy, each with its own packed, uploaded weights.
  std::vector<ffn_kernel *> kernels = {first};
  for (int i = 1; i < copies; ++i) {
    ffn_kernel *k = nullptr;
    if (ffn_kernel_load_library(ctx, library, name, &k) != FFN_OK) {
      std::fprintf(stderr, "ffn-gpu-bench: %s\n", ffn_context_last_error(ctx));
      std::exit(3);
    }
    kernels.push_back(k);
  }
  for (ffn_kernel *k : kernels)
    if (ffn_status s = ffn_ref::setParams(k, params)) {
      std::fprintf(stderr, "ffn-gpu-bench: %s: %s\n", ffn_status_string(s),
                   ffn_context_last_error(ctx));
      std::exit(3);
    }
  if (desc.kind == FFN_KIND_MOE) {
    runMoe(desc, config, first, baselineParams, rng);
    ffn_kernel_destroy(first);
    return;
  }

  // cuBLASLt: the same weights, as stored ([in, out] row-major).
  auto upload = [&](const std::vector<unsigned char> &host) {
    Buffer b(d, host.size());
    d.check(d.MemcpyHtoD(b.get(), host.data(), host.size()), "cuMemcpyHtoD");
    return b;
  };
  const ffn_ref::Buffer *wUp = find("w_up"), *wGate = find("w_gate"),
                        *wDown = find("w_down"), *bUp = find("b_up"),
                        *bGate = find("b_gate"), *bDown = find("b_down");
  std::vector<unsigned char> concat, concatBias;
  if (gated) {
    // [gate | up] per input row, and the biases alike.
    size_t row = size_t(dff) * eb;
    for (int64_t r = 0; r < dm; ++r) {
      concat.insert(concat.end(), wGate->bytes.begin() + r * row,
                    wGate->bytes.begin() + (r + 1) * row);
      concat.insert(concat.end(), wUp->bytes.begin() + r * row,
                    wUp->bytes.begin() + (r + 1) * row);
    }
    if (bUp && bGate) {
      concatBias = bGate->bytes;
      concatBias.insert(concatBias.end(), bUp->bytes.begin(), bUp->bytes.end());
    }
  }
  std::vector<Weights> w(copies);
  for (Weights &c : w) {
    c.wUp = upload(wUp->bytes);
    c.wDown = upload(wDown->bytes);
    if (gated) {
      c.wGate = upload(wGate->bytes);
      c.wConcat = upload(concat);
      if (!concatBias.empty())
        c.bConcat = upload(concatBias);
    }
    if (bUp)
      c.bUp = upload(bUp->bytes);
    if (bGate)
      c.bGate = upload(bGate->bytes);
    if (bDown)
      c.bDown = upload(bDown->bytes);
  }

  int64_t maxM = *std::max_element(config.tokens.begin(), config.tokens.end());
  ffn_ref::Buffer x = ffn_ref::makeInput(desc, maxM, rng);
  Buffer xDev = upload(x.bytes), yFfnc(d, x.bytes.size()),
         yLt(d, x.bytes.size());
  Buffer g(d, size_t(maxM) * dff * eb * 2), u(d, size_t(maxM) * dff * eb),
      h(d, size_t(maxM) * dff * eb);

  // The norm: its kernel, parameters and the row it reads or writes (a
  // pre-norm's GEMM 1 input, a post-norm's GEMM 2 output).
  bool preNorm = desc.norm != FFN_NORM_NONE && desc.norm_position == FFN_NORM_PRE;
  bool postNorm =
      desc.norm != FFN_NORM_NONE && desc.norm_position == FFN_NORM_POST;
  CUfunction normFn = nullptr;
  Buffer normScale, normShift, normed;
  if (preNorm || postNorm) {
    std::string kernel = std::string("ffn_bench_") +
                         (desc.norm == FFN_NORM_LAYERNORM ? "layernorm_"
                                                          : "rmsnorm_") +
                         typeNameOf(desc);
    d.check(d.ModuleGetFunction(&normFn, elementwise, kernel.c_str()),
            "cuModuleGetFunction");
    normScale = upload(find("norm_scale")->bytes);
    if (const ffn_ref::Buffer *shift = find("norm_shift"))
      normShift = upload(shift->bytes);
    normed = Buffer(d, x.bytes.size());
  }
  // GEMM 1 reads the normed x with a pre-norm; GEMM 2 writes the row the
  // post-norm reads.
  void *in = preNorm ? normed.raw() : xDev.raw();
  void *z = postNorm ? normed.raw() : yLt.raw();
  auto launchNorm = [&](void *from, void *to, int64_t m) {
    void *scale = normScale.raw(), *shift = normShift.raw();
    long long width = dm;
    float eps = static_cast<float>(desc.norm_eps);
    void *args[] = {&from, &to, &scale, &shift, &width, &eps};
    d.check(d.LaunchKernel(normFn, static_cast<unsigned>(m), 1, 1, 256, 1, 1,
                           0, d.stream, args, nullptr),
            "cuLaunchKernel (norm)");
  };

  CUfunction gluSeparate = nullptr, gluConcat = nullptr;
  if (gated) {
    gluSeparate = gluKernel(desc, "separate");
    gluConcat = gluKernel(desc, "concat");
  }
  bool residual = desc.residual != 0;
  LtEpilogue plainEpilogue = plainEpilogueOf(desc, bUp != nullptr);
  LtEpilogue upLinear = bUp ? LtEpilogue::Bias : LtEpilogue::None;
  LtEpilogue gateLinear = bGate ? LtEpilogue::Bias : LtEpilogue::None;
  // One GEMM over [gate | up] needs both biases or neither: with one, the
  // concatenated baseline is not built (B1 alone).
  bool concatenated = gated && bool(bUp) == bool(bGate);
  LtEpilogue downEpilogue = bDown ? LtEpilogue::Bias : LtEpilogue::None;

  for (int64_t m : config.tokens) {
    // The baselines at this M, tuned on copy 0.
    const void *bu = bUp ? w[0].bUp.raw() : nullptr;
    const void *bg = bGate ? w[0].bGate.raw() : nullptr;
    const void *bd = bDown ? w[0].bDown.raw() : nullptr;
    auto down = std::make_unique<LtGemm>(lt, d, type, m, dff, dm, downEpilogue,
                                         residual);
    down->tune(h.raw(), w[0].wDown.raw(), bd, xDev.raw(), z, 5);
    auto launchGlu = [&](CUfunction f, bool concatenated) {
      long long rows = m, width = dff;
      void *gp = g.raw(), *up = u.raw(), *hp = h.raw();
      void *separateArgs[] = {&gp, &up, &hp, &rows, &width};
      void *concatArgs[] = {&gp, &hp, &rows, &width};
      long long threads = rows * (width / (16 / eb));
      unsigned blocks = static_cast<unsigned>((threads + 255) / 256);
      d.check(d.LaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, d.stream,
                             concatenated ? concatArgs : separateArgs, nullptr),
              "cuLaunchKernel (act(g) * u)");
    };
    std::unique_ptr<LtGemm> up1, gate1, concat1;
    if (gated) {
      up1 = std::make_unique<LtGemm>(lt, d, type, m, dm, dff, upLinear, false);
      up1->tune(in, w[0].wUp.raw(), bu, nullptr, u.raw(), 5);
      gate1 =
          std::make_unique<LtGemm>(lt, d, type, m, dm, dff, gateLinear, false);
      gate1->tune(in, w[0].wGate.raw(), bg, nullptr, g.raw(), 5);
      if (concatenated) {
        concat1 = std::make_unique<LtGemm>(lt, d, type, m, dm, 2 * dff,
                                           upLinear, false);
        concat1->tune(in, w[0].wConcat.raw(),
                      bUp ? w[0].bConcat.raw() : nullptr, nullptr, g.raw(), 5);
      }
    } else {
      up1 = std::make_unique<LtGemm>(lt, d, type, m, dm, dff, plainEpilogue,
                                     false);
      up1->tune(in, w[0].wUp.raw(), bu, nullptr, h.raw(), 5);
    }
    // One FFN of the baseline on weight copy i.
    auto baseline = [&](int variant, bool heuristic) {
      return [&, variant, heuristic](int i) {
        const Weights &c = w[i];
        const void *cbu = bUp ? c.bUp.raw() : nullptr;
        const void *cbg = bGate ? c.bGate.raw() : nullptr;
        if (preNorm)
          launchNorm(xDev.raw(), in, m);
        if (!gated) {
          up1->run(in, c.wUp.raw(), cbu, nullptr, h.raw(), heuristic);
        } else if (variant == 1) {
          gate1->run(in, c.wGate.raw(), cbg, nullptr, g.raw(), heuristic);
          up1->run(in, c.wUp.raw(), cbu, nullptr, u.raw(), heuristic);
          launchGlu(gluSeparate, false);
        } else {
          concat1->run(in, c.wConcat.raw(), bUp ? c.bConcat.raw() : nullptr,
                       nullptr, g.raw(), heuristic);
          launchGlu(gluConcat, true);
        }
        down->run(h.raw(), c.wDown.raw(), bDown ? c.bDown.raw() : nullptr,
                  xDev.raw(), z, heuristic);
        if (postNorm)
          launchNorm(z, yLt.raw(), m);
      };
    };
    auto ffnc = [&](int i) {
      if (ffn_kernel_run_device(kernels[i], m, xDev.raw(), yFfnc.raw(),
                                d.stream) != FFN_OK) {
        std::fprintf(stderr, "ffn-gpu-bench: %s\n",
                     ffn_context_last_error(ctx));
        std::exit(3);
      }
    };
    // A batch long enough to time (about 2 ms), from one warm-up run each.
    int batch = batchFor(timeBatch(3, copies, ffnc));
    std::vector<double> tF, tB1, tB2, tH;
    int variants = concatenated ? 2 : 1;
    for (int r = 0; r < rounds; ++r) {
      tF.push_back(timeBatch(batch, copies, ffnc));
      tB1.push_back(timeBatch(batch, copies, baseline(1, false)));
      if (variants == 2)
        tB2.push_back(timeBatch(batch, copies, baseline(2, false)));
      tH.push_back(timeBatch(batch, copies, baseline(1, true)));
    }
    double f = median(tF), b1 = median(tB1),
           b2 = tB2.empty() ? 1e30 : median(tB2), heuristic = median(tH);
    double best = std::min(b1, b2);
    std::string variant = !gated     ? "GEMM+epilogue, GEMM"
                          : b1 <= b2 ? "B1: 2 GEMMs + act*mul"
                                     : "B2: concat GEMM + act*mul";
    if (preNorm || postNorm)
      variant = (preNorm ? "norm, " : "") + variant + (postNorm ? ", norm" : "");

    // The two results, one run each on copy 0, against each other.
    ffnc(0);
    baseline(b1 <= b2 ? 1 : 2, false)(0);
    d.check(d.StreamSynchronize(d.stream), "cuStreamSynchronize");
    Agreement a = compareOutputs(d, desc, m, yFfnc, yLt);
    if (!a.agree)
      ++failures;

    double flops = 2.0 * m * (gated ? 3.0 : 2.0) * dm * dff;
    double tflops = flops / (f * 1e-3) / 1e12;
    double peak = peakTflops(type);
    std::string dtypeText = typeName;
    if (quantized)
      dtypeText += desc.weight_quant == FFN_WEIGHTS_INT8 ? " (int8 weights)"
                                                         : " (int4 weights)";
    std::printf("| %s | %s | %lld | %.1f | %.1f | %.0f%% | %.0f | %.1f | %s "
                "| %.1f | %.2fx | %.2fx | %.2e (max|y| %.2e) %s |\n",
                config.label.c_str(), dtypeText.c_str(),
                static_cast<long long>(m), f * 1e3, tflops, 100 * tflops / peak,
                weightBytes / (f * 1e-3) / 1e9, best * 1e3, variant.c_str(),
                heuristic * 1e3, best / f, heuristic / f, a.maxDiff, a.maxY,
                a.agree ? "" : "MISMATCH");
    std::fflush(stdout);
  }
  for (ffn_kernel *k : kernels)
    ffn_kernel_destroy(k);
}

CUfunction Bench::gluKernel(const ffn_kernel_desc &desc,
                            const char *layout) const {
  CUfunction f = nullptr;
  std::string kernel = std::string("ffn_bench_glu_") +
                       actName(desc.activation) + "_" + typeNameOf(desc) + "_" +
                       layout;
  d.check(d.ModuleGetFunction(&f, elementwise, kernel.c_str()),
          "cuModuleGetFunction");
  return f;
}

void Bench::runMoe(const ffn_kernel_desc &desc, const Config &config,
                   ffn_kernel *kernel,
                   const std::vector<ffn_ref::Buffer> &baselineParams,
                   ffn_ref::Random &rng) {
  bool gated = desc.gated != 0, hasBias = false;
  for (int64_t i = 0; i < desc.num_params; ++i)
    hasBias |= std::strcmp(desc.params[i].name, "b_up") == 0;
  MoeBaseline base(d, lt, elementwise, desc, baselineParams,
                   gated ? gluKernel(desc, "separate") : nullptr,
                   plainEpilogueOf(desc, hasBias));
  int64_t maxM = *std::max_element(config.tokens.begin(), config.tokens.end());
  ffn_ref::Buffer x = ffn_ref::makeInput(desc, maxM, rng);
  Buffer xDev(d, x.bytes.size()), yFfnc(d, x.bytes.size()),
      yLt(d, x.bytes.size());
  d.check(d.MemcpyHtoD(xDev.get(), x.bytes.data(), x.bytes.size()),
          "cuMemcpyHtoD");
  for (int64_t m : config.tokens) {
    base.prepare(m, x, xDev.raw());
    auto ffnc = [&](int) {
      if (ffn_kernel_run_device(kernel, m, xDev.raw(), yFfnc.raw(), d.stream) !=
          FFN_OK) {
        std::fprintf(stderr, "ffn-gpu-bench: %s\n",
                     ffn_context_last_error(ctx));
        std::exit(3);
      }
    };
    auto baseline = [&](bool heuristic) {
      return
          [&, heuristic](int) { base.run(xDev.raw(), yLt.raw(), heuristic); };
    };
    int batch = batchFor(timeBatch(3, 1, ffnc));
    std::vector<double> tF, tB, tH;
    for (int r = 0; r < rounds; ++r) {
      tF.push_back(timeBatch(batch, 1, ffnc));
      tB.push_back(timeBatch(batch, 1, baseline(false)));
      tH.push_back(timeBatch(batch, 1, baseline(true)));
    }
    double f = median(tF), b = median(tB), heuristic = median(tH);
    ffnc(0);
    baseline(false)(0);
    d.check(d.StreamSynchronize(d.stream), "cuStreamSynchronize");
    // Both route in f32 (ffnc) and f64 (the baseline's host routing): a
    // row whose top k is a near tie may take other experts in each.
    Agreement a = compareOutputs(d, desc, m, yFfnc, yLt);
    if (!a.agree)
      ++failures;
    double flops = 2.0 * m * (desc.top_k + desc.shared_experts) *
                   (gated ? 3.0 : 2.0) * desc.d_model * desc.d_ff;
    double tflops = flops / (f * 1e-3) / 1e12;
    double peak = peakTflops(cudaTypeOf(desc));
    std::string variant = "per-expert GEMMs on gathered rows (" +
                          std::to_string(base.activeExperts()) + " experts)";
    // The weight bytes are the experts that took rows (the decode
    // roofline's bytes per token at m = 1).
    std::printf("| %s | %s | %lld | %.1f | %.1f | %.0f%% | %.0f | %.1f | %s "
                "| %.1f | %.2fx | %.2fx | %.2e (max|y| %.2e) %s |\n",
                config.label.c_str(), typeNameOf(desc),
                static_cast<long long>(m), f * 1e3, tflops, 100 * tflops / peak,
                base.activeWeightBytes() / (f * 1e-3) / 1e9, b * 1e3,
                variant.c_str(), heuristic * 1e3, b / f, heuristic / f,
                a.maxDiff, a.maxY, a.agree ? "" : "MISMATCH");
    std::fflush(stdout);
  }
}

bool parseConfig(const char *arg, Config &c) {
  const char *colon = std::strchr(arg, ':');
  if (!colon || colon == arg)
    return false;
  c.name.assign(arg, colon);
  for (const char *s = colon + 1; *s;) {
    char *end = nullptr;
    long long v = std::strtoll(s, &end, 10);
    if (end == s || v < 1 || v > (1 << 20) || (*end && *end != ','))
      return false;
    c.tokens.push_back(v);
    s = *end ? end + 1 : end;
  }
  return !c.tokens.empty();
}

} // namespace

int main(int argc, char **argv) {
  // The library named first, and the one the configurations after a
  // --library= option take.
  const char *first = nullptr, *library = nullptr;
  std::vector<Config> configs;
  int rounds = 7;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) {
      rounds = std::atoi(argv[i] + 9);
      if (rounds < 1 || rounds > 101) {
        std::fprintf(stderr, "ffn-gpu-bench: --rounds must be in [1, 101]\n");
        return 2;
      }
    } else if (std::strncmp(argv[i], "--library=", 10) == 0 && first) {
      library = argv[i] + 10;
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "ffn-gpu-bench: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (!first) {
      first = library = argv[i];
    } else {
      Config c;
      if (!parseConfig(argv[i], c)) {
        std::fprintf(stderr,
                     "ffn-gpu-bench: '%s' is not name:M[,M...] (M in [1, "
                     "1048576])\n",
                     argv[i]);
        return 2;
      }
      c.library = library;
      c.label = c.name;
      if (std::strcmp(library, first) != 0)
        c.label += std::string(" [") + library + "]";
      configs.push_back(c);
    }
  }
  if (!library || configs.empty()) {
    std::fprintf(stderr, "usage: ffn-gpu-bench kernels.so name:M[,M...] ... "
                         "[--rounds=N]\n");
    return 2;
  }
  Device d;
  std::string error;
  if (!d.open(error)) {
    std::fprintf(stderr, "ffn-gpu-bench: %s: nothing run\n", error.c_str());
    return 3;
  }
  Lt lt;
  if (!lt.open(error)) {
    std::fprintf(stderr, "ffn-gpu-bench: %s: nothing run\n", error.c_str());
    return 3;
  }
  CUmodule elementwise = nullptr;
  d.check(d.ModuleLoadData(&elementwise, ffn_bench_elementwise_fatbin),
          "cuModuleLoadData (the act(g) * u kernels)");
  ffn_context *ctx = nullptr;
  if (ffn_context_create(&ctx) != FFN_OK) {
    std::fprintf(stderr, "ffn-gpu-bench: cannot create a runtime context\n");
    return 3;
  }
  Bench bench(d, lt, ctx, elementwise, rounds);
  std::printf("device: %s, %d SMs, sm_%d%d, %.0f MHz, L2 %.0f MiB; "
              "cuBLASLt %zu (%s)\n",
              d.name.c_str(), d.sms, d.smMajor, d.smMinor, d.smClockKHz / 1e3,
              d.l2Bytes / (1 << 20), lt.GetVersion(), lt.path.c_str());
  bench.measureBandwidth();
  std::printf("measured bandwidth: copy %.0f GB/s (nominal HBM %.0f GB/s)\n",
              bench.copyGBs, d.nominalGBs());
  // Before the table: the peaks each row's "% of peak" divides by.
  for (cudaDataType t : {CUDA_R_16BF, CUDA_R_16F, CUDA_R_32F})
    bench.peakTflops(t);
  std::printf("\n");
  std::printf("| FFN | dtype | M | ffnc us | TFLOP/s | %% of peak | weight "
              "GB/s | cuBLASLt us | baseline | heuristic-first us | "
              "cuBLASLt / ffnc | heuristic / ffnc | max diff |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Config &c : configs)
    bench.run(c);
  ffn_context_destroy(ctx);
  return bench.failures ? 1 : 0;
}
