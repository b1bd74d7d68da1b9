//===- Machine.h - measure this machine's FMA peak and bandwidth -*- C++ -*-===//

#ifndef FFN_BENCH_MACHINE_H
#define FFN_BENCH_MACHINE_H

namespace ffn_bench {

/// FMA throughput in GFLOP/s with `threads` threads, each running 16
/// independent chains of 512-bit (or 256-bit) FMAs.
double measurePeakGflops(unsigned threads, bool avx512);

/// Read bandwidth in GB/s with `threads` threads summing a buffer far larger
/// than the last-level cache.
double measureReadBandwidth(unsigned threads);

} // namespace ffn_bench

#endif // FFN_BENCH_MACHINE_H
