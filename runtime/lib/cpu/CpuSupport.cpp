//===- CpuSupport.cpp - can this CPU run a kernel's target? ---------------===//
//
// CPUID and XGETBV directly: a feature counts only if the CPU has it and the
// OS saves its registers (the AVX and AVX-512 state bits of XCR0). The
// targets and their features are ffn/cpu_targets.def's, as ffnc compiled
// for them.
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

using namespace ffn_rt;

namespace {
struct CpuTarget {
  const char *name;
  const char *features; ///< LLVM's names, comma-separated
};

const CpuTarget kCpuTargets[] = {
#define FFN_CPU_TARGET(name, cpu, bits, features) {name, features},
#include "ffn/cpu_targets.def"
};

/// FFN_MAX_CPU_ISA=avx2: the CPU is treated as having no AVX-512.
bool cappedToAvx2() {
  const char *cap = std::getenv("FFN_MAX_CPU_ISA");
  return cap && std::strcmp(cap, "avx2") == 0;
}

#if defined(__x86_64__)
enum class State { None, Avx, Zmm };

/// Where CPUID reports a feature, and which register state it needs.
struct FeatureBit {
  const char *name;
  unsigned leaf, subleaf;
  int reg; ///< 0 = EAX, 1 = EBX, 2 = ECX
  unsigned bit;
  State state;
};

const FeatureBit kFeatureBits[] = {
    {"sse4.2", 1, 0, 2, 20, State::None},
    {"popcnt", 1, 0, 2, 23, State::None},
    {"movbe", 1, 0, 2, 22, State::None},
    {"avx", 1, 0, 2, 28, State::Avx},
    {"fma", 1, 0, 2, 12, State::Avx},
    {"f16c", 1, 0, 2, 29, State::Avx},
    {"avx2", 7, 0, 1, 5, State::Avx},
    {"bmi", 7, 0, 1, 3, State::None},
    {"bmi2", 7, 0, 1, 8, State::None},
    {"lzcnt", 0x80000001, 0, 2, 5, State::None},
    {"avx512f", 7, 0, 1, 16, State::Zmm},
    {"avx512dq", 7, 0, 1, 17, State::Zmm},
    {"avx512cd", 7, 0, 1, 28, State::Zmm},
    {"avx512bw", 7, 0, 1, 30, State::Zmm},
    {"avx512vl", 7, 0, 1, 31, State::Zmm},
    {"avx512bf16", 7, 1, 0, 5, State::Zmm},
    {"avx512vnni", 7, 0, 2, 11, State::Zmm},
};

uint64_t xcr0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

/// Which register states the OS saves (XCR0, when OSXSAVE says it may be
/// read): the AVX (SSE + YMM) and the AVX-512 (opmask, upper ZMM0-15,
/// ZMM16-31) state. `capped`: AVX-512 counts as absent.
struct OsState {
  bool avx, zmm;
};

OsState osState(bool capped) {
  unsigned a, b, c, d;
  __get_cpuid(1, &a, &b, &c, &d);
  uint64_t xcr = (c & (1u << 27)) ? xcr0() : 0; // OSXSAVE
  bool avx = (xcr & 0x6) == 0x6;
  return {avx, avx && (xcr & 0xe0) == 0xe0 && !capped};
}

/// Whether this CPU and OS provide `feature`; false for one this runtime
/// does not know.
bool hasFeature(const std::string &feature, OsState os) {
  for (const FeatureBit &f : kFeatureBits) {
    if (feature != f.name)
      continue;
    unsigned r[4] = {0, 0, 0, 0};
    if (!__get_cpuid_count(f.leaf, f.subleaf, &r[0], &r[1], &r[2], &r[3]) ||
        !(r[f.reg] & (1u << f.bit)))
      return false;
    return f.state == State::None || (f.state == State::Avx && os.avx) ||
           (f.state == State::Zmm && os.zmm);
  }
  return false;
}
#endif
} // namespace

std::string ffn_rt::cpuCannotRun(const std::string &target) {
  const CpuTarget *row = nullptr;
  std::string names;
  for (const CpuTarget &t : kCpuTargets) {
    names += (names.empty() ? "" : ", ") + std::string(t.name);
    if (target == t.name)
      row = &t;
  }
  if (!row)
    return "it is not one of this runtime's CPU targets (" + names + ")";
#if defined(__x86_64__)
  bool capped = cappedToAvx2();
  OsState os = osState(capped);
  std::string missing, features = row->features;
  for (size_t begin = 0; begin <= features.size();) {
    size_t end = features.find(',', begin);
    if (end == std::string::npos)
      end = features.size();
    std::string feature = features.substr(begin, end - begin);
    if (!hasFeature(feature, os))
      missing += (missing.empty() ? "" : ", ") + feature;
    begin = end + 1;
  }
  if (missing.empty())
    return "";
  return "this CPU lacks " + missing +
         (capped && missing.find("avx512") != std::string::npos
              ? " (FFN_MAX_CPU_ISA=avx2)"
              : "");
#else
  return "this machine is not x86-64";
#endif
}
