// The runtime shared by many threads (ffn/runtime.h, "Threads"):
//   stress   N threads x R runs of one kernel with random M, every output
//            compared bit for bit with a serial run of the same input;
//   params   runs in flight while the main thread swaps a parameter back and
//            forth: every output is exactly the old or the new parameter's;
//   threads  ffn_context_set_threads while runs are in flight;
//   errors   each thread reads its own last error;
//   lifetime the context destroyed before its kernels, which still run;
//   soak     create / set_param / run / destroy interleavings (LSan checks
//            that nothing leaks).
//
//   concurrency <kernels.so> <kernel> <threads> <runs per thread>
#include <ffn/runtime.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Case {
  int64_t m;
  std::vector<float> x, y;
};

const char *library;
const char *kernelName;

bool ok(ffn_status s, ffn_context *ctx, const char *what) {
  if (s == FFN_OK)
    return true;
  std::printf("%s failed: %s\n", what, ffn_context_last_error(ctx));
  return false;
}

std::vector<float> randomValues(size_t n, float scale, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float &f : v)
    f = dist(rng);
  return v;
}

/// Sets every parameter of `k` from `seed`; returns the values by index.
std::vector<std::vector<float>> setParams(ffn_kernel *k, ffn_context *ctx,
                                          unsigned seed) {
  const ffn_kernel_desc &d = *ffn_kernel_descriptor(k);
  std::mt19937 rng(seed);
  std::vector<std::vector<float>> values;
  for (int64_t i = 0; i < d.num_params; ++i) {
    const ffn_param_desc &p = d.params[i];
    size_t n = p.rank == 2 ? p.shape[0] * p.shape[1] : p.shape[0];
    values.push_back(randomValues(n, p.rank == 2 ? 0.06f : 0.1f, rng));
    ok(ffn_kernel_set_param(k, p.name, values.back().data(), n * 4,
                            FFN_LAYOUT_IN_OUT),
       ctx, "set_param");
  }
  return values;
}

ffn_kernel *load(ffn_context *ctx) {
  ffn_kernel *k = nullptr;
  return ok(ffn_kernel_load_library(ctx, library, kernelName, &k), ctx, "load")
             ? k
             : nullptr;
}

std::vector<Case> makeCases(ffn_kernel *k, ffn_context *ctx, int count) {
  const ffn_kernel_desc &d = *ffn_kernel_descriptor(k);
  std::mt19937 rng(7);
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i) {
    Case c;
    c.m = 1 + rng() % 64;
    c.x = randomValues(c.m * d.d_model, 1.0f, rng);
    c.y.resize(c.x.size());
    ok(ffn_kernel_run(k, c.m, c.x.data(), c.y.data()), ctx, "serial run");
    cases.push_back(std::move(c));
  }
  return cases;
}

/// Each of `threads` threads runs `runs` random cases and counts outputs
/// that match none of `expected` (one serial output per parameter set).
long hammer(ffn_kernel *k, const std::vector<Case> &cases,
            const std::vector<std::vector<Case>> &alternatives, int threads,
            int runs, std::atomic<bool> *stop = nullptr) {
  std::atomic<long> bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      std::vector<float> y;
      // `runs` runs, or with `stop` until it is set.
      for (int r = 0; stop ? !stop->load() : r < runs; ++r) {
        size_t i = rng() % cases.size();
        const Case &c = cases[i];
        y.assign(c.y.size(), -1.0f);
        if (ffn_kernel_run(k, c.m, c.x.data(), y.data()) != FFN_OK) {
          ++bad;
          continue;
        }
        bool match = false;
        for (const std::vector<Case> &alt : alternatives)
          match |= std::memcmp(y.data(), alt[i].y.data(), y.size() * 4) == 0;
        if (!match)
          ++bad;
      }
    });
  for (std::thread &t : pool)
    t.join();
  return bad.load();
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <kernels.so> <kernel> <threads> <runs>\n",
                 argv[0]);
    return 2;
  }
  library = argv[1];
  kernelName = argv[2];
  int threads = std::atoi(argv[3]), runs = std::atoi(argv[4]);
  int failures = 0;

  ffn_context *ctx = nullptr;
  if (ffn_context_create(&ctx) != FFN_OK)
    return 2;
  ffn_kernel *k = load(ctx);
  if (!k)
    return 2;
  setParams(k, ctx, 1);
  std::vector<Case> cases = makeCases(k, ctx, 24);

  // stress: same bits as the serial runs, whatever runs alongside.
  long bad = hammer(k, cases, {cases}, threads, runs);
  std::printf("stress: %d threads x %d runs, %ld mismatches\n", threads, runs,
              bad);
  failures += bad != 0;

  // A second kernel of the same context, run at the same time.
  ffn_kernel *k2 = load(ctx);
  setParams(k2, ctx, 1);
  std::thread other([&] { bad = hammer(k2, cases, {cases}, 2, runs); });
  long bad1 = hammer(k, cases, {cases}, 2, runs);
  other.join();
  std::printf("two kernels of one context: %ld mismatches\n", bad + bad1);
  failures += bad + bad1 != 0;

  // params: swap w_down between two values while runs are in flight; each
  // output must be exactly the old or the new one's (makeCases draws the
  // same inputs each time).
  const ffn_kernel_desc &d = *ffn_kernel_descriptor(k);
  size_t downBytes = 4 * d.d_ff * d.d_model;
  std::mt19937 downRng(2);
  std::vector<float> downA = setParams(k, ctx, 1)[d.gated ? 2 : 1];
  std::vector<float> downB = randomValues(downA.size(), 0.06f, downRng);
  ok(ffn_kernel_set_param(k, "w_down", downB.data(), downBytes,
                          FFN_LAYOUT_IN_OUT),
     ctx, "set w_down");
  std::vector<Case> cases2 = makeCases(k, ctx, 24);
  std::atomic<bool> stop{false};
  std::thread runners(
      [&] { bad = hammer(k, cases, {cases, cases2}, threads, 0, &stop); });
  for (int swap = 0; swap < 200; ++swap)
    ok(ffn_kernel_set_param(k, "w_down",
                            (swap % 2 ? downB : downA).data(), downBytes,
                            FFN_LAYOUT_IN_OUT),
       ctx, "swap w_down");
  stop = true;
  runners.join();
  std::printf("set_param during runs: %ld torn or failed outputs\n", bad);
  failures += bad != 0;
  setParams(k, ctx, 1);

  // threads: resize the pool while runs are in flight.
  stop = false;
  std::thread resizer([&] {
    for (int i = 0; !stop; ++i)
      ffn_context_set_threads(ctx, 1 + i % 3);
  });
  bad = hammer(k, cases, {cases}, threads, runs / 4 + 1);
  stop = true;
  resizer.join();
  std::printf("set_threads during runs: %ld mismatches\n", bad);
  failures += bad != 0;

  // errors: each thread sees its own message.
  std::atomic<int> wrong{0};
  std::vector<std::thread> errs;
  for (int t = 0; t < 4; ++t)
    errs.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        ffn_kernel_run(k, -(t + 1), cases[0].x.data(), cases[0].y.data());
        std::string want = "m must be at least 1, got " + std::to_string(-(t + 1));
        if (!std::strstr(ffn_context_last_error(ctx), want.c_str()))
          ++wrong;
      }
    });
  for (std::thread &t : errs)
    t.join();
  std::printf("per-thread errors: %d wrong\n", wrong.load());
  failures += wrong != 0;

  // lifetime: the context goes first; its kernels still run.
  ffn_context_destroy(ctx);
  std::vector<float> y(cases[0].y.size());
  bool alive = ffn_kernel_run(k2, cases[0].m, cases[0].x.data(), y.data()) ==
                   FFN_OK &&
               std::memcmp(y.data(), cases[0].y.data(), y.size() * 4) == 0;
  std::printf("kernel after its context was destroyed: %s\n",
              alive ? "runs" : "FAILED");
  failures += !alive;
  ffn_kernel_destroy(k2);
  ffn_kernel_destroy(k); // frees the context

  // soak: interleavings, in every order.
  int soakBad = 0;
  for (int i = 0; i < 60; ++i) {
    ffn_context *c = nullptr;
    ffn_context_create(&c);
    ffn_context_set_threads(c, 1 + i % 3);
    ffn_kernel *a = load(c), *b = load(c);
    setParams(a, c, 1);
    if (i % 2)
      setParams(b, c, 1);
    std::vector<float> out(cases[i % 24].y.size());
    soakBad += ffn_kernel_run(a, cases[i % 24].m, cases[i % 24].x.data(),
                              out.data()) != FFN_OK;
    soakBad += ffn_kernel_run(b, 1, cases[0].x.data(), out.data()) !=
               (i % 2 ? FFN_OK : FFN_ERROR_NOT_READY);
    switch (i % 3) {
    case 0:
      ffn_context_destroy(c);
      ffn_kernel_destroy(a);
      ffn_kernel_destroy(b);
      break;
    case 1:
      ffn_kernel_destroy(b);
      ffn_context_destroy(c);
      ffn_kernel_destroy(a);
      break;
    default:
      ffn_kernel_destroy(a);
      ffn_kernel_destroy(b);
      ffn_context_destroy(c);
    }
  }
  std::printf("soak: %d unexpected statuses\n", soakBad);
  failures += soakBad != 0;
  std::printf("%s\n", failures ? "FAILED" : "done");
  return failures ? 1 : 0;
}
