//===- Target.cpp - named CPU targets -------------------------------------===//

#include "ffnc/CodeGen/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace ffnc;

namespace {
/// A row of ffn/cpu_targets.def: the feature sets are spelled out rather
/// than taken from a CPU name, so a kernel built for "x86-64-avx512" runs on
/// every AVX-512 machine (Skylake-SP onward), and one for "x86-64-avx2" on
/// every Haswell-class machine.
struct CpuTarget {
  const char *name, *cpu;
  unsigned vectorBits;
  const char *features;
};
} // namespace

static const CpuTarget kCpuTargets[] = {
#define FFN_CPU_TARGET(name, cpu, bits, features) {name, cpu, bits, features},
#include "ffn/cpu_targets.def"
};

static llvm::SmallVector<llvm::StringRef> featuresOf(const CpuTarget &t) {
  llvm::SmallVector<llvm::StringRef> features;
  llvm::StringRef(t.features).split(features, ',');
  return features;
}

static const CpuTarget *findCpuTarget(llvm::StringRef name) {
  for (const CpuTarget &t : kCpuTargets)
    if (name == t.name)
      return &t;
  return nullptr;
}

std::vector<std::string> ffnc::targetNames() {
  std::vector<std::string> names = {"host"};
  for (const CpuTarget &t : kCpuTargets)
    names.push_back(t.name);
  names.insert(names.end(), {"nvptx-sm80", "nvptx-sm90", "nvptx-sm90a"});
  return names;
}

static TargetInfo makeTarget(const CpuTarget &row) {
  TargetInfo t;
  t.name = row.name;
  t.triple = "x86_64-unknown-linux-gnu";
  t.cpu = row.cpu;
  for (llvm::StringRef f : featuresOf(row))
    t.features += (t.features.empty() ? "+" : ",+") + f.str();
  t.vectorBits = row.vectorBits;
  return t;
}

/// The features of `row` that `host` (LLVM's view of this CPU) lacks.
static std::string lacks(const CpuTarget &row,
                         const llvm::StringMap<bool> &host) {
  std::string missing;
  for (llvm::StringRef f : featuresOf(row))
    if (!host.lookup(f))
      missing += (missing.empty() ? "" : ", ") + f.str();
  return missing;
}

llvm::Expected<TargetInfo> ffnc::resolveTarget(llvm::StringRef name) {
  if (const CpuTarget *row = findCpuTarget(name))
    return makeTarget(*row);
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
    // The most capable target this CPU runs.
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    for (const CpuTarget &row : llvm::reverse(kCpuTargets))
      if (lacks(row, features).empty()) {
        TargetInfo t = makeTarget(row);
        t.hostCpu = llvm::sys::getHostCPUName().str();
        return t;
      }
    return llvm::createStringError(
        "--target=host: this CPU lacks " + lacks(kCpuTargets[0], features) +
        "; ffnc needs at least " + kCpuTargets[0].name);
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
  const CpuTarget *row = findCpuTarget(target.name);
  return host.getArch() == llvm::Triple::x86_64 && row &&
         lacks(*row, llvm::sys::getHostCPUFeatures()).empty();
}
