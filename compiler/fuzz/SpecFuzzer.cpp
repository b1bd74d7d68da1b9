//===- SpecFuzzer.cpp - libFuzzer entry point for the front end -----------===//
//
// Feeds arbitrary bytes through everything `ffnc --emit=ffn` and `ffnc info`
// do before code generation. Besides the sanitizers, it checks invariants:
// a spec Sema accepts has dimensions in range, and the ffn dialect built from
// it verifies.
//
//===----------------------------------------------------------------------===//

#include "ffnc/Analysis/FfnInfo.h"
#include "ffnc/Frontend/ASTPrinter.h"
#include "ffnc/Frontend/Sema.h"
#include "ffnc/MLIRGen/MLIRGen.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <cstdlib>

using namespace ffnc;

static mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    auto *c = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    loadDialects(*c);
    return c;
  }();
  return *ctx;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.ffn"),
      llvm::SMLoc());
  llvm::StringRef text =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();

  std::string sink;
  llvm::raw_string_ostream os(sink);
  DiagnosticEngine diags(sourceMgr, os, /*maxErrors=*/20);
  SpecFile ast;
  std::vector<FfnSpec> specs = compileSpecBuffer(text, diags, &ast);
  printAST(ast, specs, sourceMgr, os);
  if (diags.hadError())
    return 0;

  for (const FfnSpec &spec : specs) {
    if (spec.dModel < 1 || spec.dModel > kMaxDimension || spec.dFF < 1 ||
        spec.dFF > kMaxDimension || !(spec.normEps > 0.0))
      std::abort();
    // A mixture's counts are in range; a dense FFN has none of them.
    bool countsOk =
        spec.topK == 0 && spec.sharedExperts == 0 && !spec.routerNormalize;
    if (spec.isMoe())
      countsOk = spec.experts <= kMaxExperts && spec.topK >= 1 &&
                 spec.topK <= spec.experts && spec.sharedExperts >= 0 &&
                 spec.sharedExperts <= kMaxExperts &&
                 !(spec.routerNormalize && spec.router == Router::TopKSoftmax);
    // A grouped FFN's blocks divide both widths, and it is no mixture.
    if (spec.groups < 1 || spec.groups > kMaxGroups ||
        (spec.isGrouped() && (spec.dModel % spec.groups != 0 ||
                              spec.dFF % spec.groups != 0 || spec.isMoe())))
      countsOk = false;
    if (!countsOk)
      std::abort();
    os << summarize(spec) << countParameters(spec).totalParams()
       << weightBytes(spec) << flopsPerToken(spec)
       << arithmeticIntensity(spec, 1) << arithmeticIntensity(spec, 4096);
  }
  mlir::ScopedDiagnosticHandler quiet(
      &context(), [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildModule(context(), specs, sourceMgr);
  if (failed(mlir::verify(*module)))
    std::abort(); // Sema accepted what the dialect rejects: a real bug.
  return 0;
}
