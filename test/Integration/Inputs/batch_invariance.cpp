// Checks that a kernel's output rows do not depend on the batch: runs 1000
// random rows at once, then each of several rows inside batches of
// M = 1, 7, 64 and 1000 (at different positions, among different rows) on
// 1, 2 and 3 threads, and compares the row's output bits.
//
//   batch_invariance <kernels.so> <name>...
#include <ffn/runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

size_t elementBytes(int64_t dtype) { return dtype == FFN_DTYPE_F32 ? 4 : 2; }

/// Random storage values of the dtype, roughly uniform in [-scale, scale].
void fill(std::vector<unsigned char> &out, int64_t dtype, size_t n,
          double scale, std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  out.resize(n * elementBytes(dtype));
  for (size_t i = 0; i < n; ++i) {
    float v = dist(rng);
    if (dtype == FFN_DTYPE_F32) {
      std::memcpy(&out[4 * i], &v, 4);
    } else if (dtype == FFN_DTYPE_BF16) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      uint16_t h = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&out[2 * i], &h, 2);
    } else {
      _Float16 h = static_cast<_Float16>(v);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
}

bool check(ffn_status s, ffn_context *ctx, const char *what) {
  if (s == FFN_OK)
    return true;
  std::printf("%s: %s\n", what, ffn_context_last_error(ctx));
  return false;
}

/// 0: every row identical in every batch; 1: some row differs; 2: error.
int exercise(ffn_context *ctx, const char *library, const char *name) {
  ffn_kernel *k = nullptr;
  if (!check(ffn_kernel_load_library(ctx, library, name, &k), ctx, name))
    return 2;
  const ffn_kernel_desc &d = *ffn_kernel_descriptor(k);
  std::mt19937_64 rng(42);
  for (int64_t i = 0; i < d.num_params; ++i) {
    const ffn_param_desc &p = d.params[i];
    size_t n = p.rank == 2 ? p.shape[0] * p.shape[1] : p.shape[0];
    // A stacked parameter (a grouped FFN's blocks) holds one per block.
    if (p.experts > 0)
      n *= static_cast<size_t>(p.experts);
    std::vector<unsigned char> data;
    fill(data, d.dtype, n, p.rank == 2 ? 0.1 : 0.5, rng);
    if (!check(ffn_kernel_set_param(k, p.name, data.data(), data.size(),
                                    FFN_LAYOUT_IN_OUT),
               ctx, p.name))
      return 2;
  }
  const size_t rowBytes = d.d_model * elementBytes(d.dtype);
  const int64_t full = 1000;
  std::vector<unsigned char> x, y(full * rowBytes);
  fill(x, d.dtype, full * d.d_model, 1.0, rng);
  ffn_context_set_threads(ctx, 2);
  if (!check(ffn_kernel_run(k, full, x.data(), y.data()), ctx, "run"))
    return 2;

  // Rows to follow, each placed at several positions of other batches.
  const int64_t probes[] = {0, 5, 333, 999};
  int result = 0;
  for (int threads : {1, 2, 3}) {
    ffn_context_set_threads(ctx, threads);
    for (int64_t m : {1, 7, 64, 1000}) {
      for (int64_t pos : {int64_t(0), m / 2, m - 1}) {
        // A batch of fresh rows, with the probe rows at `pos`, one at a time.
        std::vector<unsigned char> bx, by(m * rowBytes);
        fill(bx, d.dtype, m * d.d_model, 1.0, rng);
        for (int64_t r : probes) {
          std::memcpy(&bx[pos * rowBytes], &x[r * rowBytes], rowBytes);
          if (!check(ffn_kernel_run(k, m, bx.data(), by.data()), ctx, "run"))
            return 2;
          if (std::memcmp(&by[pos * rowBytes], &y[r * rowBytes], rowBytes)) {
            if (result == 0)
              std::printf("%s: row %lld DIFFERS at M = %lld, position %lld, "
                          "%d threads (%s)\n",
                          name, (long long)r, (long long)m, (long long)pos,
                          threads, d.strategy);
            result = 1;
          }
        }
      }
    }
  }
  if (result == 0)
    std::printf("%s: invariant (M = 1, 7, 64, 1000; 1-3 threads)\n", name);
  ffn_kernel_destroy(k);
  return result;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <kernels.so> <name>...\n", argv[0]);
    return 2;
  }
  ffn_context *ctx = nullptr;
  if (ffn_context_create(&ctx) != FFN_OK)
    return 2;
  int worst = 0;
  for (int i = 2; i < argc; ++i)
    worst = std::max(worst, exercise(ctx, argv[1], argv[i]));
  ffn_context_destroy(ctx);
  return worst;
}
