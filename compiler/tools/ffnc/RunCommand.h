//===- RunCommand.h - `ffnc run` --------------------------------*- C++ -*-===//

#ifndef FFNC_TOOLS_RUNCOMMAND_H
#define FFNC_TOOLS_RUNCOMMAND_H

#include "ffnc/CodeGen/Pipeline.h"
#include "ffnc/CodeGen/Target.h"
#include "ffnc/Frontend/Spec.h"

#include "ffn_reference.h"

#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ffnc {

struct RunOptions {
  std::vector<uint64_t> tokens;
  bool check = false;
  uint64_t seed = 1;
  unsigned repeat = 3;
  bool outInLayout = false;     ///< hand weights over as [out, in]
  bool prequantized = false;    ///< quantized weights as blocks
  unsigned threads = 0;         ///< 0: one per core
  double inputScale = 1.0;      ///< multiply the random input by this
  bool injectNonFinite = false; ///< NaN, +Inf, -Inf in the first rows
  bool digest = false;          ///< print a digest of each output
  /// Mixtures of experts: the routing the test data makes.
  ffn_ref::RoutingData routing = ffn_ref::RoutingData::Random;
  /// How --check bounds each element's error (docs/numerics.md).
  ffn_ref::BoundModel boundModel = ffn_ref::BoundModel::Probabilistic;
  /// Test only: the reference's activation arguments are off by this factor
  /// (shows that --check catches a kernel that is).
  double testActivationError = 0;
  /// Test only: grouped FFNs get their blocks' parameters rotated, the
  /// reference the originals (shows that --check tells blocks apart).
  bool testPermuteGroups = false;
  /// Parameters from this safetensors file (empty: seeded random ones),
  /// tensor names by parameter (unmapped: the parameter's own name);
  /// matrices [out, in] with outInLayout, else [in, out].
  std::string weightsFile;
  std::vector<std::pair<std::string, std::string>> weightMap;
  TargetInfo target;
  /// The kernel under test's schedule; its back end is schedule.backend.
  ScheduleOptions schedule;
  /// --oracle: a second back end builds every FFN too (oracleSchedule), and
  /// each run is judged against it (docs/numerics.md): `oracleRows` rows of
  /// both outputs against the f64 reference, then every row of the kernel
  /// under test against the oracle's. None: no oracle.
  std::optional<Backend> oracle;
  unsigned oracleRows = 8;
  ScheduleOptions oracleSchedule;
};

/// Compiles `specs` for `options.target` into a temporary shared library
/// (with an oracle, a second one), loads it through the runtime, runs each
/// FFN on seeded random data for each token count, times it, and with
/// `check` compares every output with the f64 reference, with an oracle
/// with the oracle's output. Returns the process exit status.
int runSpecs(llvm::ArrayRef<FfnSpec> specs, const llvm::SourceMgr &sourceMgr,
             const RunOptions &options);

} // namespace ffnc

#endif // FFNC_TOOLS_RUNCOMMAND_H
