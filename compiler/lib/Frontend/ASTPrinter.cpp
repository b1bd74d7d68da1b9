//===- ASTPrinter.cpp - textual dump of a parsed spec ---------------------===//

#include "ffnc/Frontend/ASTPrinter.h"

#include "llvm/Support/Format.h"

using namespace ffnc;

void ffnc::printExpr(const Expr &e, llvm::raw_ostream &os) {
  switch (e.kind) {
  case Expr::Integer:
  case Expr::Decimal:
  case Expr::Name:
    os << e.text;
    return;
  case Expr::Negate:
    os << "-";
    printExpr(*e.lhs, os);
    return;
  case Expr::Binary:
    os << "(";
    printExpr(*e.lhs, os);
    os << " " << e.op << " ";
    printExpr(*e.rhs, os);
    os << ")";
    return;
  case Expr::Call:
    os << e.text << "(";
    llvm::interleaveComma(e.args, os, [&](const CallArg &arg) {
      if (!arg.name.empty())
        os << arg.name << " = ";
      printExpr(*arg.value, os);
    });
    os << ")";
    return;
  }
}

static std::string position(const llvm::SourceMgr &sm, llvm::SMLoc loc) {
  auto [line, col] = sm.getLineAndColumn(loc);
  return (llvm::Twine(line) + ":" + llvm::Twine(col)).str();
}

std::string ffnc::summarize(const FfnSpec &spec) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (spec.isGated())
    os << "gated " << toString(spec.activation) << " (" << toString(spec.gate)
       << ")";
  else
    os << "plain " << toString(spec.activation);
  os << ", d_model=" << spec.dModel << ", d_ff=" << spec.dFF
     << ", bias(up=" << (spec.biasUp ? "on" : "off");
  if (spec.isGated())
    os << ", gate=" << (spec.biasGate ? "on" : "off");
  os << ", down=" << (spec.biasDown ? "on" : "off") << ")";
  os << ", residual=" << (spec.residual ? "on" : "off");
  if (spec.batchInvariant)
    os << ", batch_invariant";
  if (spec.norm == NormKind::None)
    os << ", norm=none";
  else
    os << ", norm=" << toString(spec.norm) << "(" << toString(spec.normPosition)
       << ", eps=" << llvm::format("%g", spec.normEps) << ")";
  os << ", dtype=" << toString(spec.dtype);
  if (spec.isMoe()) {
    os << ", experts=" << spec.experts;
    if (spec.sharedExperts != 0)
      os << ", shared_experts=" << spec.sharedExperts;
    os << ", top_k=" << spec.topK << ", router=" << toString(spec.router);
    if (spec.routerNormalize)
      os << ", normalize";
  }
  if (spec.isGrouped())
    os << ", groups=" << spec.groups;
  return out;
}

void ffnc::printAST(const SpecFile &file, llvm::ArrayRef<FfnSpec> specs,
                    const llvm::SourceMgr &sm, llvm::raw_ostream &os) {
  os << "SpecFile (" << file.decls.size() << " ffn block"
     << (file.decls.size() == 1 ? "" : "s") << ")\n";
  for (const FfnDecl &decl : file.decls) {
    os << "  FfnDecl '" << decl.name << "' <"
       << position(sm, decl.nameRange.Start) << ">\n";
    const FfnSpec *spec = nullptr;
    for (const FfnSpec &s : specs)
      if (s.name == decl.name)
        spec = &s;
    for (const Field &field : decl.fields) {
      os << "    Field " << field.name << " <"
         << position(sm, field.nameRange.Start) << "> = ";
      printExpr(*field.value, os);
      if (spec && field.name == "d_model")
        os << "  => " << spec->dModel;
      if (spec && field.name == "d_ff")
        os << "  => " << spec->dFF;
      if (spec && field.name == "experts")
        os << "  => " << spec->experts;
      if (spec && field.name == "top_k")
        os << "  => " << spec->topK;
      if (spec && field.name == "groups")
        os << "  => " << spec->groups;
      if (spec && field.name == "shared_experts")
        os << "  => " << spec->sharedExperts;
      os << "\n";
    }
    if (spec)
      os << "    Resolved: " << summarize(*spec) << "\n";
  }
}
