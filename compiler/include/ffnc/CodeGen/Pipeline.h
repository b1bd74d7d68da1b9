//===- Pipeline.h - ffn dialect to LLVM -------------------------*- C++ -*-===//

#ifndef FFNC_CODEGEN_PIPELINE_H
#define FFNC_CODEGEN_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace ffnc {

/// ffn.ffn on tensors -> linalg on tensors (`--emit=linalg`).
void buildFfnToLinalgPipeline(mlir::OpPassManager &pm);

/// linalg on tensors -> kernel functions with their final memref calling
/// convention (the signature the ABI glue reads).
void buildKernelABIPipeline(mlir::OpPassManager &pm);

/// Kernel functions -> LLVM dialect: bufferization, loops, polynomial math,
/// LLVM conversion.
void buildKernelToLLVMPipeline(mlir::OpPassManager &pm);

/// Both, and registration as `ffn-cpu-pipeline` for ffn-opt.
void buildCPUPipeline(mlir::OpPassManager &pm);
void registerCPUPipeline();

} // namespace ffnc

#endif // FFNC_CODEGEN_PIPELINE_H
