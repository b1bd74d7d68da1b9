//===- MLIRGen.h - from resolved specs to the ffn dialect -------*- C++ -*-===//

#ifndef FFNC_MLIRGEN_MLIRGEN_H
#define FFNC_MLIRGEN_MLIRGEN_H

#include "ffnc/Frontend/Spec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace ffnc {

/// Builds one `func.func @<name>` per spec whose body is a single `ffn.ffn`.
/// Arguments are, in order: the input `[?, d_model]`, then the weights the
/// spec has (w_up, w_gate, w_down, b_up, b_gate, b_down, norm_scale,
/// norm_shift), each tagged with an `ffn.param` name. Locations point into
/// the spec file. The caller's context must have the ffn and func dialects
/// loaded (see `loadDialects`).
mlir::OwningOpRef<mlir::ModuleOp> buildModule(mlir::MLIRContext &context,
                                              llvm::ArrayRef<FfnSpec> specs,
                                              const llvm::SourceMgr &sourceMgr);

/// Loads every dialect MLIRGen creates ops or types of.
void loadDialects(mlir::MLIRContext &context);

} // namespace ffnc

#endif // FFNC_MLIRGEN_MLIRGEN_H
