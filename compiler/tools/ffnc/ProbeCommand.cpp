//===- ProbeCommand.cpp - `ffnc probe` ------------------------------------===//

#include "Commands.h"
#include "Options.h"

#include <fmt/format.h>

using namespace ffnc;

int ffnc::probeMain() {
  TargetInfo host;
  if (std::optional<int> rc = openTarget("host", host))
    return *rc;
  MachineProfile measured = measureMachine(host.vectorBits == 512);
  return writeOutput(
      opts::outputFile,
      printMachineProfile(
          measured, fmt::format("{} ({}), measured", host.hostCpu, host.name)));
}
