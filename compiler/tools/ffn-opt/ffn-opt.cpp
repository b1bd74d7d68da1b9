//===- ffn-opt.cpp - mlir-opt with the ffn dialect and passes -------------===//
//
// Runs any registered pass or pipeline over .mlir files containing the ffn
// dialect next to the upstream dialects ffnc lowers through.
//
//===----------------------------------------------------------------------===//

#include "ffn/Conversion/Passes.h"
#include "ffn/IR/FfnDialect.h"
#include "ffn/Target/CPU/Pipelines.h"
#include "ffn/Target/GPU/Passes.h"
#include "ffn/Target/GPU/Pipelines.h"
#include "ffn/Target/Halide/Passes.h"
#include "ffn/Target/Halide/Pipelines.h"
#include "ffn/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::ffn::registerFfnPasses();
  mlir::ffn::registerFfnConversionPasses();
  mlir::ffn::registerFfnCpuPasses();
  mlir::ffn::registerFfnGpuPasses();
  mlir::ffn::registerFfnHalidePasses();
  mlir::ffn::registerCpuPipelines();
  mlir::ffn::registerGpuPipelines();
  mlir::ffn::registerHalidePipelines();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary (ffn-gpu-pipeline) serializes through LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::ffn::FfnDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "ffn-opt: the ffn dialect's optimizer driver\n", registry));
}
