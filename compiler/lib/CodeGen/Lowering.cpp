//===- Lowering.cpp - run the MLIR pipeline -------------------------------===//

#include "ffnc/CodeGen/Backend.h"
#include "ffnc/CodeGen/Pipeline.h"

#include "mlir/Pass/PassManager.h"

using namespace ffnc;

llvm::Error ffnc::lowerModule(mlir::ModuleOp module, Stage stage) {
  mlir::PassManager pm(module.getContext());
  buildFfnToLinalgPipeline(pm);
  if (stage == Stage::LLVMDialect) {
    buildKernelABIPipeline(pm);
    buildKernelToLLVMPipeline(pm);
  }
  if (mlir::failed(pm.run(module)))
    return llvm::createStringError(
        "internal error: lowering the ffn dialect failed (please report "
        "this with the spec)");
  return llvm::Error::success();
}
