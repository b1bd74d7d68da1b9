//===- MachineProbe.cpp - measure this machine's peak and bandwidth -------===//

#include "ffnc/Analysis/MachineProbe.h"

#include "ThreadPool.h" // the runtime's, measured as kernels use it

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace ffnc {

namespace {

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Runs `work` on `threads` threads started together; returns wall seconds.
template <typename Work> double together(unsigned threads, Work work) {
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (!go.load())
        ;
      work(t);
    });
  while (ready.load() != threads)
    ;
  double start = seconds();
  go = true;
  for (std::thread &t : pool)
    t.join();
  return seconds() - start;
}

// One instruction `op src1, src2, acc_i` on 16 independent accumulators
// zmm0..zmm15, from zmm30 and zmm31: enough chains to hide any of these
// instructions' latency.
#define FFN_CHAINS_512(op)                                                     \
  op " %%zmm30, %%zmm31, %%zmm0\n\t" op " %%zmm30, %%zmm31, %%zmm1\n\t" op      \
     " %%zmm30, %%zmm31, %%zmm2\n\t" op " %%zmm30, %%zmm31, %%zmm3\n\t" op     \
     " %%zmm30, %%zmm31, %%zmm4\n\t" op " %%zmm30, %%zmm31, %%zmm5\n\t" op     \
     " %%zmm30, %%zmm31, %%zmm6\n\t" op " %%zmm30, %%zmm31, %%zmm7\n\t" op     \
     " %%zmm30, %%zmm31, %%zmm8\n\t" op " %%zmm30, %%zmm31, %%zmm9\n\t" op     \
     " %%zmm30, %%zmm31, %%zmm10\n\t" op " %%zmm30, %%zmm31, %%zmm11\n\t" op   \
     " %%zmm30, %%zmm31, %%zmm12\n\t" op " %%zmm30, %%zmm31, %%zmm13\n\t" op   \
     " %%zmm30, %%zmm31, %%zmm14\n\t" op " %%zmm30, %%zmm31, %%zmm15\n\t"
#define FFN_CHAIN_CLOBBERS                                                     \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",       \
      "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

__attribute__((target("avx512f"))) void fmaLoop512(long iterations) {
  __asm__ volatile("vxorps %%xmm0, %%xmm0, %%xmm0" ::: "xmm0");
  for (long i = 0; i < iterations; ++i)
    __asm__ volatile(FFN_CHAINS_512("vfmadd231ps")::: FFN_CHAIN_CLOBBERS);
}

/// vdpbf16ps: each instruction 16 lanes x 2 products and sums (64 flops).
__attribute__((target("avx512f,avx512bf16"))) void dotLoop512(long iterations) {
  __asm__ volatile("vxorps %%xmm0, %%xmm0, %%xmm0" ::: "xmm0");
  for (long i = 0; i < iterations; ++i)
    __asm__ volatile(FFN_CHAINS_512("vdpbf16ps")::: FFN_CHAIN_CLOBBERS);
}

/// vpdpbusd: each instruction 16 lanes x 4 byte products and sums (128
/// integer operations).
__attribute__((target("avx512f,avx512vnni"))) void vnniLoop512(
    long iterations) {
  __asm__ volatile("vpxord %%zmm0, %%zmm0, %%zmm0" ::: "xmm0");
  for (long i = 0; i < iterations; ++i)
    __asm__ volatile(FFN_CHAINS_512("vpdpbusd")::: FFN_CHAIN_CLOBBERS);
}

__attribute__((target("avx2,fma"))) void fmaLoop256(long iterations) {
  for (long i = 0; i < iterations; ++i)
    __asm__ volatile("vfmadd231ps %%ymm14, %%ymm15, %%ymm0\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm1\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm2\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm3\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm4\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm5\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm6\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm7\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm8\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm9\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm10\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm11\n\t" ::
                         : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
                           "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11");
}

/// How many parts of its share each thread reads at once. A GEMM's weight
/// walk reads several panel rows side by side, and one sequential stream
/// leaves memory parallelism unused: on an Emerald Rapids VM one stream read
/// 10.4-11.6 GB/s (one thread) and 18.9-20.6 (two), eight streams 12.8-14.1
/// and 22.7-26.1, while ffnc's MoE decode read the selected experts' bytes
/// at 13.4 and 27.9 GB/s -- above the one-stream figure it was judged by.
constexpr int kStreams = 8;

/// Sums n floats at p, as `Streams` contiguous parts read side by side, a
/// 64-byte line of each in turn (Streams = 1: one sequential pass). The
/// count is a template argument so that the accumulators stay in registers.
template <int Streams>
__attribute__((target("avx2"))) double sumBuffer(const float *p, size_t n) {
  __m256 acc[Streams];
  for (__m256 &a : acc)
    a = _mm256_setzero_ps();
  const size_t per = n / Streams / 16 * 16;
  for (size_t i = 0; i < per; i += 16)
    for (int s = 0; s < Streams; ++s) {
      const float *line = p + s * per + i;
      acc[s] = _mm256_add_ps(acc[s], _mm256_loadu_ps(line));
      acc[s] = _mm256_add_ps(acc[s], _mm256_loadu_ps(line + 8));
    }
  __m256 total = acc[0];
  for (int s = 1; s < Streams; ++s)
    total = _mm256_add_ps(total, acc[s]);
  float out[8];
  _mm256_storeu_ps(out, total);
  double sum = 0;
  for (float v : out)
    sum += v;
  return sum;
}

/// Best GB/s over `reps` runs (the first `warmups` untimed) of `threads`
/// threads each summing its share of a `bytes` buffer `passes` times, read
/// as one stream and as kStreams streams, runs of both alternating: the
/// better is what a kernel's loads can get.
double readBandwidth(unsigned threads, size_t bytes, int passes, int reps,
                     int warmups) {
  const size_t n = bytes / sizeof(float);
  float *buffer = static_cast<float *>(std::aligned_alloc(64, bytes));
  if (!buffer)
    return 0;
  std::memset(buffer, 0, bytes); // fault the pages in outside the timing
  std::atomic<double> sink{0};
  double best = 0;
  for (int rep = 0; rep < reps; ++rep) {
    for (int streams : {1, kStreams}) {
      double t = together(threads, [&](unsigned i) {
        size_t per = n / threads;
        double s = 0;
        for (int pass = 0; pass < passes; ++pass) {
          s += streams == 1 ? sumBuffer<1>(buffer + i * per, per)
                            : sumBuffer<kStreams>(buffer + i * per, per);
          // Each pass must read the buffer again, not reuse the last sum.
          __asm__ volatile("" : "+x"(s)::"memory");
        }
        double old = sink.load();
        while (!sink.compare_exchange_weak(old, old + s))
          ;
      });
      if (rep >= warmups)
        best = std::max(best, passes * double(bytes) / t / 1e9);
    }
  }
  std::free(buffer);
  return best;
}

} // namespace

double measurePeakGflops(unsigned threads, bool avx512) {
  const long iterations = 20000000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double t = together(threads, [&](unsigned) {
      if (avx512)
        fmaLoop512(iterations);
      else
        fmaLoop256(iterations);
    });
    double flops = threads * static_cast<double>(iterations) *
                   (avx512 ? 16 * 32 : 12 * 16);
    best = std::max(best, flops / t / 1e9);
  }
  return best;
}

/// The best of three runs of one of the 16-chain loops on `threads`
/// threads, in billions of operations per second; `ops` per instruction.
static double chainLoopRate(unsigned threads, void (*loop)(long), double ops) {
  const long iterations = 20000000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double t = together(threads, [&](unsigned) { loop(iterations); });
    best = std::max(best, threads * double(iterations) * 16 * ops / t / 1e9);
  }
  return best;
}

double measureBf16DotGflops(unsigned threads) {
  if (!__builtin_cpu_supports("avx512bf16"))
    return 0;
  return chainLoopRate(threads, dotLoop512, 64);
}

double measureInt8DotGops(unsigned threads) {
  if (!__builtin_cpu_supports("avx512vnni"))
    return 0;
  return chainLoopRate(threads, vnniLoop512, 128);
}

double measureReadBandwidth(unsigned threads) {
  // 1 GiB: several times any last-level cache these machines have.
  return readBandwidth(threads, size_t(1) << 30, /*passes=*/1, /*reps=*/3,
                       /*warmups=*/0);
}

double measureCacheReadBandwidth(unsigned threads) {
  // Past every core's L2, inside the last-level cache of the machines ffnc
  // targets -- where BERT-sized weights live between runs. The first rep
  // brings the buffer into the cache.
  return readBandwidth(threads, kCacheProbeBytes, /*passes=*/16, /*reps=*/4,
                       /*warmups=*/1);
}

double measureSyncMicros(unsigned threads) {
  if (threads <= 1)
    return 0;
  ffn_rt::ThreadPool pool(threads);
  std::atomic<int64_t> sink{0};
  const std::function<void(int64_t, int64_t)> body = [&](int64_t begin,
                                                         int64_t end) {
    sink.fetch_add(end - begin, std::memory_order_relaxed);
  };
  // Back to back, as the phases of one run follow each other; the first
  // loops start the workers and are not counted.
  std::vector<double> times;
  for (int i = 0; i < 2100; ++i) {
    double start = seconds();
    pool.parallelFor(threads, body);
    if (i >= 100)
      times.push_back(seconds() - start);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  return times[times.size() / 2] * 1e6;
}

} // namespace ffnc
