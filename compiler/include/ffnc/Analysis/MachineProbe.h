//===- MachineProbe.h - measure this machine's peak and bandwidth -*- C++
//-*-===//

#ifndef FFNC_ANALYSIS_MACHINEPROBE_H
#define FFNC_ANALYSIS_MACHINEPROBE_H

namespace ffnc {

/// FMA throughput in GFLOP/s with `threads` threads, each running 16
/// independent chains of 512-bit (or 256-bit) FMAs.
double measurePeakGflops(unsigned threads, bool avx512);

/// Read bandwidth in GB/s with `threads` threads summing a buffer far larger
/// than the last-level cache.
double measureReadBandwidth(unsigned threads);

/// Read bandwidth in GB/s with `threads` threads summing an 8 MiB buffer
/// that stays in the last-level cache.
double measureCacheReadBandwidth(unsigned threads);

} // namespace ffnc

#endif // FFNC_ANALYSIS_MACHINEPROBE_H
