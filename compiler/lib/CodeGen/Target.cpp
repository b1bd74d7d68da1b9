//===- Target.cpp - named CPU targets -------------------------------------===//

#include "ffnc/CodeGen/Target.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace ffnc;

// Feature sets are spelled out rather than taken from a CPU name, so a
// kernel built for "x86-64-avx512" runs on every AVX-512 machine (Skylake-SP
// onward), and one for "x86-64-avx2" on every Haswell-class machine.
static const char kAvx2Features[] =
    "+sse4.2,+popcnt,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,+lzcnt,+movbe";
static const char kAvx512Features[] =
    "+sse4.2,+popcnt,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,+lzcnt,+movbe,"
    "+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl";

std::vector<std::string> ffnc::targetNames() {
  return {"host",       "x86-64-avx2", "x86-64-avx512",
          "nvptx-sm80", "nvptx-sm90",  "nvptx-sm90a"};
}

static TargetInfo makeTarget(llvm::StringRef name) {
  TargetInfo t;
  t.name = name.str();
  t.triple = "x86_64-unknown-linux-gnu";
  if (name == "x86-64-avx512") {
    t.cpu = "skylake-avx512";
    t.features = kAvx512Features;
    t.vectorBits = 512;
  } else {
    t.cpu = "haswell";
    t.features = kAvx2Features;
    t.vectorBits = 256;
  }
  return t;
}

static bool hostHas(llvm::StringRef feature) {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return features.lookup(feature);
}

llvm::Expected<TargetInfo> ffnc::resolveTarget(llvm::StringRef name) {
  if (name == "x86-64-avx2" || name == "x86-64-avx512")
    return makeTarget(name);
  if (name.starts_with("nvptx-")) {
    std::string chip = llvm::StringSwitch<std::string>(name)
                           .Case("nvptx-sm80", "sm_80")
                           .Case("nvptx-sm90", "sm_90")
                           .Case("nvptx-sm90a", "sm_90a")
                           .Default("");
    if (!chip.empty()) {
      TargetInfo t;
      t.name = name.str();
      t.triple = "x86_64-unknown-linux-gnu";
      t.cpu = "x86-64";
      t.chip = chip;
      return t;
    }
  }
  if (name == "host") {
    llvm::Triple host(llvm::sys::getProcessTriple());
    if (host.getArch() != llvm::Triple::x86_64)
      return llvm::createStringError(
          "--target=host: this machine (" + host.str() +
          ") is not x86-64; ffnc's CPU back end supports x86-64 only");
    bool avx512 = hostHas("avx512f") && hostHas("avx512bw") &&
                  hostHas("avx512dq") && hostHas("avx512vl");
    if (!avx512 && !(hostHas("avx2") && hostHas("fma")))
      return llvm::createStringError(
          "--target=host: this CPU has neither AVX-512 nor AVX2+FMA; ffnc "
          "needs at least x86-64-avx2");
    TargetInfo t = makeTarget(avx512 ? "x86-64-avx512" : "x86-64-avx2");
    t.hostCpu = llvm::sys::getHostCPUName().str();
    return t;
  }
  std::string valid;
  for (const std::string &n : targetNames())
    valid += (valid.empty() ? "" : ", ") + n;
  return llvm::createStringError("unknown target '" + name.str() +
                                 "' (targets: " + valid + ")");
}

bool ffnc::hostCanRun(const TargetInfo &target) {
  if (target.isGpu())
    return false;
  llvm::Triple host(llvm::sys::getProcessTriple());
  if (host.getArch() != llvm::Triple::x86_64)
    return false;
  if (target.vectorBits == 512)
    return hostHas("avx512f") && hostHas("avx512bw") && hostHas("avx512dq") &&
           hostHas("avx512vl");
  return hostHas("avx2") && hostHas("fma") && hostHas("f16c");
}
