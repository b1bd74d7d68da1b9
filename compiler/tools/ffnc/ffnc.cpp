//===- ffnc.cpp - the ffnc compiler driver --------------------------------===//
//
//   ffnc [options] <spec.ffn>         compile; --emit picks the stage printed
//   ffnc info [options] <spec.ffn>    sizes, FLOPs and intensity of each FFN
//   ffnc run [options] <spec.ffn>     run, time and check on this machine
//   ffnc probe [-o file]              measure this machine for the cost models
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Options.h"

#include "ffnc/CodeGen/HalideBackend.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>

#include <unistd.h>

using namespace ffnc;
namespace cl = llvm::cl;

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // A reader that goes away (`ffnc spec | head`) ends ffnc quietly with
  // status 74 (EX_IOERR) instead of a SIGPIPE death. _exit, not exit: exit
  // would flush stdout into the closed pipe again.
  std::signal(SIGPIPE, [](int) { _exit(74); });
  cl::HideUnrelatedOptions(opts::ffncCategory);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "ffnc " << FFNC_VERSION << " (LLVM/MLIR " << LLVM_VERSION_STRING
       << ")\n";
    // The Halide back end is a separate executable (docs/halide.md): say
    // which one this ffnc would run, or why there is none.
    const HalideBackendStatus &halide = halideBackendStatus();
    if (halide.available)
      os << "Halide back end: " << halide.version << "\n";
    else
      os << "Halide back end: not built (" << halide.whyNot << ")\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "ffnc: a compiler for Transformer feed-forward networks\n\n"
      "  ffnc [options] <spec.ffn>        compile a spec; --emit picks the "
      "stage\n"
      "  ffnc info [options] <spec.ffn>   report sizes, FLOPs and "
      "intensity\n"
      "  ffnc run [options] <spec.ffn>    run on this machine, time, "
      "--check\n"
      "  ffnc report [-o page.html] <spec> an HTML page: dataflow, sizes, "
      "schedule, roofline\n"
      "  ffnc probe [-o file]             measure this machine for "
      "--machine\n\n"
      "The spec language is described in docs/dsl.md.\n");

  if (opts::probeCommand)
    return probeMain();
  Session session;
  if (std::optional<int> rc = openSession(session))
    return *rc;
  if (opts::infoCommand)
    return infoMain(session);
  if (opts::runCommand)
    return runMain(session);
  if (opts::reportCommand)
    return reportMain(session);
  return compileMain(session);
}
