//===- HalideBackend.h - is the Halide back end here? ----------*- C++ -*-===//
//
// The Halide back end runs as a separate executable, ffnc-halide-gen (it
// links Halide 14 and its LLVM 14, which cannot share a process image with
// ffnc's LLVM 22 headers). Whether this ffnc has one, and what it offers,
// is a question about that executable.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_CODEGEN_HALIDEBACKEND_H
#define FFNC_CODEGEN_HALIDEBACKEND_H

#include <string>
#include <vector>

namespace ffnc {

struct HalideBackendStatus {
  bool available = false;
  /// The generator's path (where it was looked for, when unavailable).
  std::string generator;
  /// Its `--version` line ("ffnc-halide-gen protocol 1, Halide 14.0.0 ...").
  std::string version;
  /// Why it is unavailable, for the user.
  std::string whyNot;
  /// The autoschedulers whose plugins the generator found.
  std::vector<std::string> autoschedulers;
};

/// Found at the first of: $FFNC_HALIDE_GEN; beside the running executable;
/// the build tree's bin/. Its `--version` is run once per process and
/// cached.
const HalideBackendStatus &halideBackendStatus();

} // namespace ffnc

#endif // FFNC_CODEGEN_HALIDEBACKEND_H
