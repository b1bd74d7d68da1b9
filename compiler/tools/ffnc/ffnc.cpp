//===- ffnc.cpp - the ffnc compiler driver --------------------------------===//
//
//   ffnc [options] <spec.ffn>         compile; --emit picks the stage printed
//   ffnc info [options] <spec.ffn>    sizes, FLOPs and intensity of each FFN
//
//===----------------------------------------------------------------------===//

#include "InfoCommand.h"

#include "ffnc/Frontend/ASTPrinter.h"
#include "ffnc/Frontend/Sema.h"
#include "ffnc/MLIRGen/MLIRGen.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

using namespace ffnc;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory ffncCategory("ffnc options");

cl::SubCommand infoCommand(
    "info", "Print dimensions, parameter count, weight bytes, FLOPs per "
            "token and arithmetic intensity of each FFN");

enum class EmitKind { AST, Ffn };

// Options of every subcommand.
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<spec.ffn>"),
                               cl::Required, cl::cat(ffncCategory),
                               cl::sub(cl::SubCommand::getAll()));
cl::opt<std::string>
    onlyFfn("ffn", cl::desc("Process only the ffn block with this name"),
            cl::value_desc("name"), cl::cat(ffncCategory),
            cl::sub(cl::SubCommand::getAll()));
cl::opt<unsigned> maxErrors(
    "max-errors",
    cl::desc("Stop after this many errors (default 20; 0: no limit)"),
    cl::init(20), cl::cat(ffncCategory), cl::sub(cl::SubCommand::getAll()));

// Compilation (no subcommand).
cl::opt<EmitKind> emit(
    "emit", cl::desc("Stage to print"), cl::init(EmitKind::Ffn),
    cl::values(clEnumValN(EmitKind::AST, "ast",
                          "the parsed spec, with evaluated dimensions"),
               clEnumValN(EmitKind::Ffn, "ffn",
                          "the ffn dialect (one func per ffn block)")),
    cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<std::string> outputFile(
    "o", cl::desc("Output file ('-' for stdout); written only on success"),
    cl::value_desc("file"), cl::init("-"), cl::cat(ffncCategory),
    cl::sub(cl::SubCommand::getTopLevel()));

cl::opt<bool> printLocations(
    "print-locations",
    cl::desc("Print source locations (spec file:line:col) in MLIR output"),
    cl::cat(ffncCategory), cl::sub(cl::SubCommand::getTopLevel()));

// info.
cl::list<uint64_t> tokenCounts(
    "tokens",
    cl::desc("Token counts M for the arithmetic intensity column "
             "(default 1,16,128,2048)"),
    cl::value_desc("M,M,..."), cl::CommaSeparated, cl::cat(ffncCategory),
    cl::sub(infoCommand));

/// Spec files larger than this are refused outright: a real spec is a few
/// hundred bytes, and the limit bounds the work done on hostile input.
constexpr uint64_t kMaxSpecBytes = 16u << 20;

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "ffnc") << message << "\n";
  return 1;
}

/// Writes `text` to the output file through a temporary file that is renamed
/// into place, so a failed run never leaves a half-written output behind.
int writeOutput(llvm::StringRef text) {
  llvm::Error err = llvm::writeToOutput(
      outputFile, [&](llvm::raw_ostream &os) -> llvm::Error {
        os << text;
        return llvm::Error::success();
      });
  if (err)
    return fail("cannot write '" + outputFile + "': " +
                llvm::toString(std::move(err)));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(ffncCategory);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "ffnc " << FFNC_VERSION << " (LLVM/MLIR " << LLVM_VERSION_STRING
       << ")\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "ffnc: a compiler for Transformer feed-forward networks\n\n"
      "  ffnc [options] <spec.ffn>        compile a spec; --emit picks the "
      "stage\n"
      "  ffnc info [options] <spec.ffn>   report sizes, FLOPs and "
      "intensity\n\n"
      "The spec language is described in docs/dsl.md.\n");

  auto bufferOrErr = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (std::error_code ec = bufferOrErr.getError())
    return fail("cannot open '" + inputFile + "': " + ec.message());
  if ((*bufferOrErr)->getBufferSize() > kMaxSpecBytes)
    return fail("'" + inputFile + "' is " +
                llvm::Twine((*bufferOrErr)->getBufferSize()) +
                " bytes; specs larger than 16 MiB are not accepted");

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*bufferOrErr), llvm::SMLoc());
  llvm::StringRef text =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();

  DiagnosticEngine diags(sourceMgr, llvm::errs(), maxErrors);
  SpecFile ast;
  std::vector<FfnSpec> specs = compileSpecBuffer(text, diags, &ast);
  if (diags.hadError()) {
    unsigned n = diags.errorCount();
    llvm::errs() << n << (n == 1 ? " error" : " errors") << " generated.\n";
    return 1;
  }
  if (ast.decls.empty())
    diags.warning(llvm::SMLoc::getFromPointer(text.begin()),
                  "no 'ffn' blocks in '" + inputFile + "'");

  if (!onlyFfn.empty()) {
    std::vector<FfnSpec> selected;
    for (FfnSpec &spec : specs)
      if (spec.name == onlyFfn)
        selected.push_back(std::move(spec));
    if (selected.empty()) {
      llvm::SmallVector<llvm::StringRef> names;
      for (const FfnSpec &spec : specs)
        names.push_back(spec.name);
      std::string hint;
      if (auto best = closestMatch(onlyFfn, names))
        hint = ("; did you mean '" + *best + "'?").str();
      return fail("no ffn block named '" + onlyFfn + "' in '" + inputFile +
                  "'" + hint);
    }
    specs = std::move(selected);
  }

  if (infoCommand) {
    std::vector<uint64_t> tokens(tokenCounts.begin(), tokenCounts.end());
    if (tokens.empty())
      tokens = {1, 16, 128, 2048};
    for (uint64_t m : tokens)
      if (m == 0)
        return fail("--tokens: token counts must be at least 1");
    llvm::outs() << renderInfo(specs, tokens, sourceMgr);
    return 0;
  }

  std::string rendered;
  llvm::raw_string_ostream os(rendered);
  switch (emit) {
  case EmitKind::AST:
    printAST(ast, specs, sourceMgr, os);
    break;
  case EmitKind::Ffn: {
    mlir::MLIRContext context;
    loadDialects(context);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        buildModule(context, specs, sourceMgr);
    if (failed(mlir::verify(*module)))
      return fail("internal error: the generated ffn dialect does not "
                  "verify (please report this with the spec)");
    mlir::OpPrintingFlags flags;
    if (printLocations)
      flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    module->print(os, flags);
    os << "\n";
    break;
  }
  }
  return writeOutput(rendered);
}
