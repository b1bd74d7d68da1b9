//===- Target.h - named CPU targets -----------------------------*- C++ -*-===//

#ifndef FFNC_CODEGEN_TARGET_H
#define FFNC_CODEGEN_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ffnc {

/// A validated code generation target. For an NVIDIA target the host part
/// (descriptor, pack functions) is generic x86-64 code and `chip` names the
/// device architecture.
struct TargetInfo {
  std::string name;        ///< "x86-64-avx2", "x86-64-avx512" (host resolved),
                           ///< "nvptx-sm80", ...
  std::string cpu;         ///< LLVM CPU name used for scheduling (host code)
  std::string features;    ///< LLVM feature string (host code)
  std::string triple;      ///< host code's triple
  unsigned vectorBits = 0; ///< widest float vector: 256 or 512 (CPU)
  std::string hostCpu;     ///< set when resolved from "host"
  std::string chip;        ///< "sm_80", "sm_90", "sm_90a": an NVIDIA target
  bool isGpu() const { return !chip.empty(); }
};

/// The names accepted by --target.
std::vector<std::string> targetNames();

/// Resolves a --target value; "host" detects this machine's best ISA.
/// Unknown names and hosts below AVX2 are errors.
llvm::Expected<TargetInfo> resolveTarget(llvm::StringRef name);

/// True if this machine can execute code built for `target`.
bool hostCanRun(const TargetInfo &target);

} // namespace ffnc

#endif // FFNC_CODEGEN_TARGET_H
