//===- Options.h - ffnc's command line --------------------------*- C++ -*-===//
//
// Every subcommand and option of ffnc, defined once in Options.cpp; each
// command's file reads the ones it takes.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_TOOLS_OPTIONS_H
#define FFNC_TOOLS_OPTIONS_H

#include "ffnc/CodeGen/Pipeline.h"

#include "ffn_reference.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace ffnc::opts {

extern llvm::cl::OptionCategory ffncCategory;
extern llvm::cl::SubCommand infoCommand, runCommand, probeCommand,
    reportCommand;

enum class EmitKind {
  AST,
  Ffn,
  Linalg,
  Tiled,
  Gpu,
  Ptx,
  Cubin,
  Halide,
  LLVM,
  Asm,
  Obj,
  SharedLib
};

/// --halide-schedule's values, ScheduleOptions::halideSchedule's names.
enum class HalideScheduleKind { Strategy, Mullapudi2016, Li2018, Adams2019 };
/// The hidden --test-halide-bug's values, ScheduleOptions::testHalideBug's
/// names.
enum class HalideBugKind { None, DropLastKAfterRow0, BiasShift };

/// The name ScheduleOptions and the generator use for each.
const char *halideScheduleName(HalideScheduleKind kind);
const char *halideBugName(HalideBugKind kind);

// The commands that read a spec.
extern llvm::cl::opt<std::string> inputFile, onlyFfn, targetName,
    strategyOption, machineFile;
extern llvm::cl::opt<bool> batchInvariantOption;
extern llvm::cl::opt<unsigned> maxErrors;
// The code generator: compilation, run, info.
extern llvm::cl::opt<ffnc::Backend> backendOption;
extern llvm::cl::opt<HalideScheduleKind> halideScheduleOption;
extern llvm::cl::opt<unsigned> halideMEstimate;
extern llvm::cl::opt<HalideBugKind> testHalideBug;
// Compilation (no subcommand).
extern llvm::cl::opt<EmitKind> emit;
extern llvm::cl::opt<std::string> outputFile, headerFile;
extern llvm::cl::opt<bool> printLocations;
extern llvm::cl::opt<unsigned> kernelThreads;
// info and run.
extern llvm::cl::list<uint64_t> tokenCounts;
extern llvm::cl::opt<unsigned> threadCount;
extern llvm::cl::opt<bool> measureOption;
// run.
extern llvm::cl::opt<bool> checkResults, outInLayout, injectNonFinite,
    prequantized, printDigest, testPermuteGroups;
extern llvm::cl::opt<ffn_ref::BoundModel> checkBound;
extern llvm::cl::opt<ffn_ref::RoutingData> routingData;
extern llvm::cl::opt<double> testActivationError, inputScale;
extern llvm::cl::opt<std::string> weightsFile, benchFile;
extern llvm::cl::list<std::string> weightMap;
extern llvm::cl::opt<uint64_t> seed;
extern llvm::cl::opt<unsigned> repeat;
extern llvm::cl::opt<ffnc::Backend> oracleOption;
extern llvm::cl::opt<unsigned> oracleRows;

} // namespace ffnc::opts

#endif // FFNC_TOOLS_OPTIONS_H
