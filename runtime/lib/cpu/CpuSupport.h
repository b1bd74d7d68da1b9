//===- CpuSupport.h - can this CPU run a kernel's target? -------*- C++ -*-===//
//
// A kernel compiled for a feature set this CPU lacks would die of SIGILL in
// its first run; the runtime refuses it at load time instead, naming what
// is missing.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_RUNTIME_CPU_CPUSUPPORT_H
#define FFN_RUNTIME_CPU_CPUSUPPORT_H

#include <string>

namespace ffn_rt {

/// Why this CPU cannot run code for the CPU target `target` (ffnc's
/// "x86-64-avx2" or "x86-64-avx512" feature sets), or "" when it can. The
/// environment variable FFN_MAX_CPU_ISA=avx2 makes the runtime treat the CPU
/// as if it had no AVX-512 (to test and to reproduce an AVX2 machine's
/// behaviour on a bigger one).
std::string cpuCannotRun(const std::string &target);

} // namespace ffn_rt

#endif // FFN_RUNTIME_CPU_CPUSUPPORT_H
