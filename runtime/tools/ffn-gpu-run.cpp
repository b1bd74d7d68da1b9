//===- ffn-gpu-run.cpp - run device kernels and check them ----------------===//
//
// Loads kernels from a shared library built by `ffnc --target=nvptx-...
// --emit=so`, gives them random parameters (nn.Linear's initialization), runs
// them on the GPU through the runtime for each token count and compares every
// output element with the f64 reference's error bound, as `ffnc run
// --check` does on the CPU. It links only the runtime and the reference (no
// MLIR), so it runs on GPU machines that have neither LLVM nor the CUDA
// toolkit, only the driver.
//
//   ffn-gpu-run kernels.so name... [--tokens=1,16,...] [--seed=N] [--no-check]
//               [--invariance]   (rows shared by runs of different m must be
//                                 bit-identical: batch_invariant kernels)
//               [--routing=random|skewed|tied]  (mixtures of experts: the
//                                 routing the data makes, as `ffnc run`)
//               [--stream]       (x and y in device memory, run on a stream
//                                 with ffn_kernel_run_device, as an
//                                 embedding application does)
//
// Exit status 0 when every check passes, 1 when one fails, 2 on bad usage,
// 3 when no usable GPU or driver is present (the message says which).
//
//===----------------------------------------------------------------------===//

#include "DeviceBuffers.h"
#include "ffn/runtime.h"
#include "ffn_harness.h"
#include "ffn_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using ffn_ref::Random;

std::vector<int64_t> parseList(const char *s) {
  std::vector<int64_t> out;
  while (*s) {
    char *end = nullptr;
    long long v = std::strtoll(s, &end, 10);
    if (end == s || v < 1 || v > (1 << 20))
      return {};
    out.push_back(v);
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',')
      return {};
  }
  return out;
}

/// How the inputs are drawn: U(-scale, scale), and with nonFinite NaN, +Inf
/// and -Inf in rows 0-2 (as ffnc run's --input-scale, --inject-nonfinite).
struct InputOptions {
  double scale = 1.0;
  bool nonFinite = false;
};

int checkKernel(ffn_context *ctx, const char *library, const char *name,
                const std::vector<int64_t> &tokens, uint64_t seed, bool check,
                bool invariance, ffn_ref::RoutingData routing,
                ffn_tools::DeviceBuffers *device, const InputOptions &input) {
  ffn_kernel *k = nullptr;
  if (ffn_status s = ffn_kernel_load_library(ctx, library, name, &k)) {
    std::fprintf(stderr, "ffn-gpu-run: %s: %s\n", ffn_status_string(s),
                 ffn_context_last_error(ctx));
    return 1;
  }
  const ffn_kernel_desc &d = *ffn_kernel_descriptor(k);
  Random rng(seed);
  std::vector<ffn_ref::Buffer> params = ffn_ref::makeParams(d, rng);
  ffn_ref::shapeRouting(d, params, routing);
  if (ffn_status s = ffn_ref::setParams(k, params)) {
    std::fprintf(stderr, "ffn-gpu-run: %s: %s\n", ffn_status_string(s),
                 ffn_context_last_error(ctx));
    ffn_kernel_destroy(k);
    return s == FFN_ERROR_DEVICE ? 3 : 1;
  }
  int status = 0;
  // --invariance: every run takes the first m rows of one input, and the
  // rows two runs share must come out bit for bit the same.
  int64_t maxM = 0;
  for (int64_t m : tokens)
    maxM = std::max(maxM, m);
  ffn_ref::Buffer shared =
      ffn_ref::makeInput(d, invariance ? maxM : 0, rng, input.scale, routing);
  std::vector<unsigned char> first;
  int64_t firstM = 0;
  for (int64_t m : tokens) {
    size_t n = static_cast<size_t>(m) * d.d_model;
    ffn_ref::Buffer x =
        ffn_ref::makeInput(d, invariance ? 0 : m, rng, input.scale, routing);
    if (input.nonFinite)
      ffn_ref::injectNonFinite(d, m, x);
    if (invariance) {
      size_t bytes = n * (d.dtype == FFN_DTYPE_F32 ? 4 : 2);
      x.bytes.assign(shared.bytes.begin(), shared.bytes.begin() + bytes);
      x.values.assign(shared.values.begin(), shared.values.begin() + n);
    }
    std::vector<unsigned char> y(x.bytes.size());
    if (device) {
      std::string why;
      if (ffn_status s = device->run(ctx, k, m, x.bytes.data(), y.data(),
                                     y.size(), why)) {
        std::fprintf(stderr, "ffn-gpu-run: %s\n", why.c_str());
        ffn_kernel_destroy(k);
        return s == FFN_ERROR_DEVICE ? 3 : 1;
      }
    } else if (ffn_status s = ffn_kernel_run(k, m, x.bytes.data(), y.data())) {
      std::fprintf(stderr, "ffn-gpu-run: %s: %s\n", ffn_status_string(s),
                   ffn_context_last_error(ctx));
      ffn_kernel_destroy(k);
      return s == FFN_ERROR_DEVICE ? 3 : 1;
    }
    if (invariance) {
      // Each run against the one before: with ascending token counts every
      // row is compared across all the runs that hold it.
      if (!first.empty()) {
        size_t common = std::min(first.size(), y.size());
        bool same = std::memcmp(first.data(), y.data(), common) == 0;
        std::printf("%s m=%lld: rows shared with m=%lld %s\n", name,
                    static_cast<long long>(m), static_cast<long long>(firstM),
                    same ? "bit-identical: PASS" : "differ: FAIL");
        if (!same)
          status = 1;
      }
      first = y;
      firstM = m;
    }
    if (!check) {
      std::printf("%s m=%lld: ran\n", name, static_cast<long long>(m));
      continue;
    }
    ffn_ref::Check c = ffn_ref::checkOutput(d, m, x, y.data(), params);
    const ffn_ref::Comparison &r = c.result;
    const std::vector<double> &got = c.got, &ref = c.ref;
    std::printf("%s m=%lld: max abs err %.3e, max err/bound %.3g, "
                "non-finite mismatches %zu: %s\n",
                name, static_cast<long long>(m), r.maxAbs, r.maxRatio,
                r.nonFiniteMismatches, r.pass ? "PASS" : "FAIL");
    if (r.nonFiniteMatches)
      std::printf("  non-finite outputs matching the reference: %zu\n",
                  r.nonFiniteMatches);
    if (!r.pass) {
      size_t i = r.worst;
      std::printf("  worst [%zu, %zu]: got %.9g, expected %.9g, allowed "
                  "+-%.3e\n",
                  i / d.d_model, i % d.d_model, got[i], ref[i], r.worstAllowed);
      status = 1;
    }
  }
  ffn_kernel_destroy(k);
  return status;
}

} // namespace

int main(int argc, char **argv) {
  // A line per check as it ends, even into a log file: a check that a time
  // limit kills (Mixtral's host-side reference took minutes) shows how far
  // it got.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const char *library = nullptr;
  std::vector<const char *> names;
  std::vector<int64_t> tokens = {1, 7, 16, 17, 100, 129, 300};
  uint64_t seed = 1;
  bool check = true, invariance = false, stream = false;
  ffn_ref::RoutingData routing = ffn_ref::RoutingData::Random;
  InputOptions input;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--inject-nonfinite") == 0) {
      input.nonFinite = true;
      continue;
    }
    if (std::strcmp(argv[i], "--invariance") == 0) {
      invariance = true; // rows shared between runs must be bit-identical
      continue;
    }
    if (std::strcmp(argv[i], "--stream") == 0) {
      stream = true;
      continue;
    }
    if (std::strcmp(argv[i], "--no-check") == 0) {
      check = false; // only run (for profilers)
      continue;
    }
    if (std::strncmp(argv[i], "--tokens=", 9) == 0) {
      tokens = parseList(argv[i] + 9);
      if (tokens.empty()) {
        std::fprintf(stderr, "ffn-gpu-run: --tokens wants a comma-separated "
                             "list of counts in [1, 1048576]\n");
        return 2;
      }
    } else if (std::strncmp(argv[i], "--input-scale=", 14) == 0) {
      char *end = nullptr;
      input.scale = std::strtod(argv[i] + 14, &end);
      if (end == argv[i] + 14 || *end || !(input.scale > 0) ||
          !std::isfinite(input.scale)) {
        std::fprintf(stderr,
                     "ffn-gpu-run: --input-scale wants a finite "
                     "number above 0, not '%s'\n",
                     argv[i] + 14);
        return 2;
      }
    } else if (std::strncmp(argv[i], "--seed=", 7) == 0) {
      seed = std::strtoull(argv[i] + 7, nullptr, 10);
    } else if (std::strncmp(argv[i], "--routing=", 10) == 0) {
      std::string how = argv[i] + 10;
      if (how == "random") {
        routing = ffn_ref::RoutingData::Random;
      } else if (how == "skewed") {
        routing = ffn_ref::RoutingData::Skewed;
      } else if (how == "tied") {
        routing = ffn_ref::RoutingData::Tied;
      } else {
        std::fprintf(stderr,
                     "ffn-gpu-run: --routing is random, skewed or "
                     "tied, not '%s'\n",
                     how.c_str());
        return 2;
      }
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "ffn-gpu-run: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (!library) {
      library = argv[i];
    } else {
      names.push_back(argv[i]);
    }
  }
  if (!library || names.empty()) {
    std::fprintf(stderr, "usage: ffn-gpu-run kernels.so name... "
                         "[--tokens=1,16,...] [--seed=N] "
                         "[--routing=random|skewed|tied] [--stream] "
                         "[--input-scale=S] [--inject-nonfinite]\n");
    return 2;
  }
  ffn_context *ctx = nullptr;
  if (ffn_context_create(&ctx) != FFN_OK)
    return 1;
  ffn_tools::DeviceBuffers device;
  if (stream) {
    std::string why = device.open();
    if (!why.empty()) {
      std::fprintf(stderr, "ffn-gpu-run: %s: nothing run\n", why.c_str());
      return 3;
    }
  }
  int status = 0;
  for (const char *name : names) {
    int s = checkKernel(ctx, library, name, tokens, seed, check, invariance,
                        routing, stream ? &device : nullptr, input);
    if (s == 3) {
      status = 3;
      break;
    }
    status = std::max(status, s);
  }
  ffn_context_destroy(ctx);
  return status;
}
