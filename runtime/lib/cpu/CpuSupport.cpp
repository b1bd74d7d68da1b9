//===- CpuSupport.cpp - can this CPU run a kernel's target? ---------------===//
//
// CPUID and XGETBV directly: a feature counts only if the CPU has it and the
// OS saves its registers (the AVX and AVX-512 state bits of XCR0).
//
//===----------------------------------------------------------------------===//

#include "CpuSupport.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

using namespace ffn_rt;

namespace {
struct Feature {
  const char *name;
  bool present;
};

#if defined(__x86_64__)
uint64_t xcr0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

/// The features of ffnc's x86 targets, as this CPU and OS provide them.
std::vector<Feature> x86Features(bool avx512) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  __get_cpuid(1, &a, &b, &c, &d);
  unsigned leaf1c = c;
  bool osxsave = leaf1c & (1u << 27);
  uint64_t xcr = osxsave ? xcr0() : 0;
  bool avxState = (xcr & 0x6) == 0x6;   // SSE and AVX registers
  bool zmmState = (xcr & 0xe0) == 0xe0; // opmask, upper ZMM, ZMM16-31
  unsigned leaf7b = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
    leaf7b = b;
  unsigned ext1c = 0;
  if (__get_cpuid(0x80000001, &a, &b, &c, &d))
    ext1c = c;
  std::vector<Feature> f = {
      {"sse4.2", bool(leaf1c & (1u << 20))},
      {"popcnt", bool(leaf1c & (1u << 23))},
      {"avx", bool(leaf1c & (1u << 28)) && avxState},
      {"avx2", bool(leaf7b & (1u << 5)) && avxState},
      {"fma", bool(leaf1c & (1u << 12)) && avxState},
      {"f16c", bool(leaf1c & (1u << 29)) && avxState},
      {"bmi", bool(leaf7b & (1u << 3))},
      {"bmi2", bool(leaf7b & (1u << 8))},
      {"lzcnt", bool(ext1c & (1u << 5))},
      {"movbe", bool(leaf1c & (1u << 22))},
  };
  if (avx512) {
    const char *cap = std::getenv("FFN_MAX_CPU_ISA");
    bool capped = cap && std::strcmp(cap, "avx2") == 0;
    for (auto [name, bit] : {std::pair{"avx512f", 16},
                             {"avx512dq", 17},
                             {"avx512cd", 28},
                             {"avx512bw", 30},
                             {"avx512vl", 31}})
      f.push_back({name, !capped && bool(leaf7b & (1u << bit)) && zmmState});
  }
  return f;
}
#endif
} // namespace

std::string ffn_rt::cpuCannotRun(const std::string &target) {
  bool avx512 = target == "x86-64-avx512";
  if (!avx512 && target != "x86-64-avx2")
    return "it is not one of this runtime's CPU targets (x86-64-avx2, "
           "x86-64-avx512)";
#if defined(__x86_64__)
  std::string missing;
  for (const Feature &f : x86Features(avx512))
    if (!f.present)
      missing += (missing.empty() ? "" : ", ") + std::string(f.name);
  if (missing.empty())
    return "";
  const char *cap = std::getenv("FFN_MAX_CPU_ISA");
  return "this CPU lacks " + missing +
         (avx512 && cap && std::strcmp(cap, "avx2") == 0
              ? " (FFN_MAX_CPU_ISA=avx2)"
              : "");
#else
  return "this machine is not x86-64";
#endif
}
