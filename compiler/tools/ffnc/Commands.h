//===- Commands.h - ffnc's commands -----------------------------*- C++ -*-===//
//
// One function per command, each in its own file, over the shared option
// resolution of Session.h. Each returns the process's exit status.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_TOOLS_COMMANDS_H
#define FFNC_TOOLS_COMMANDS_H

#include "Session.h"

namespace ffnc {

/// `ffnc [options] <spec.ffn>` (CompileCommand.cpp).
int compileMain(Session &session);
/// `ffnc info` (InfoCommand.cpp).
int infoMain(Session &session);
/// `ffnc run` (RunCommand.cpp).
int runMain(Session &session);
/// `ffnc report` (ReportCommand.cpp).
int reportMain(Session &session);
/// `ffnc probe` (ProbeCommand.cpp).
int probeMain();

} // namespace ffnc

#endif // FFNC_TOOLS_COMMANDS_H
