//===- ASTPrinter.h - textual dump of a parsed spec -------------*- C++ -*-===//

#ifndef FFNC_FRONTEND_ASTPRINTER_H
#define FFNC_FRONTEND_ASTPRINTER_H

#include "ffnc/Frontend/AST.h"
#include "ffnc/Frontend/Spec.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace ffnc {

/// Prints an expression the way it was written, with every binary operation
/// parenthesized so the parse (precedence, associativity) is visible.
void printExpr(const Expr &e, llvm::raw_ostream &os);

/// `--emit=ast`: every block and field as parsed, with source positions and
/// the evaluated dimensions and expert counts, followed by what Sema
/// resolved it to.
void printAST(const SpecFile &file, llvm::ArrayRef<FfnSpec> specs,
              const llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os);

/// One line summary of a resolved spec: "gated silu (swiglu), d_model=..."
std::string summarize(const FfnSpec &spec);

} // namespace ffnc

#endif // FFNC_FRONTEND_ASTPRINTER_H
