//===- MachineProbe.h - measure this machine's peak and bandwidth -*- C++
//-*-===//

#ifndef FFNC_ANALYSIS_MACHINEPROBE_H
#define FFNC_ANALYSIS_MACHINEPROBE_H

#include <cstddef>

namespace ffnc {

/// FMA throughput in GFLOP/s with `threads` threads, each running 16
/// independent chains of 512-bit (or 256-bit) FMAs.
double measurePeakGflops(unsigned threads, bool avx512);

/// bf16 dot-product throughput (vdpbf16ps, 16 chains of 512 bits) in
/// GFLOP/s with `threads` threads, counting each pair's multiply and add;
/// 0 on a CPU without avx512bf16.
double measureBf16DotGflops(unsigned threads);

/// int8 dot-product throughput (VNNI vpdpbusd, 16 chains of 512 bits) in
/// GOP/s with `threads` threads, counting each byte product and its add; 0
/// on a CPU without avx512vnni.
double measureInt8DotGops(unsigned threads);

/// Read bandwidth in GB/s with `threads` threads summing a buffer far larger
/// than the last-level cache, the better of one stream and several read side
/// by side per thread.
double measureReadBandwidth(unsigned threads);

/// The buffer measureCacheReadBandwidth reads: 8 MiB in all.
constexpr size_t kCacheProbeBytes = size_t(8) << 20;

/// Read bandwidth in GB/s with `threads` threads summing a
/// kCacheProbeBytes buffer that stays in the last-level cache.
double measureCacheReadBandwidth(unsigned threads);

/// Median microseconds of one hand-off of the runtime's thread pool with
/// `threads` threads: a loop of one empty unit per thread, back to back.
double measureSyncMicros(unsigned threads);

} // namespace ffnc

#endif // FFNC_ANALYSIS_MACHINEPROBE_H
