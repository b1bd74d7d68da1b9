//===- FfnOps.h - ffn dialect operations ------------------------*- C++ -*-===//
#ifndef FFN_IR_FFNOPS_H
#define FFN_IR_FFNOPS_H

#include "ffn/IR/FfnAttrs.h"
#include "ffn/IR/FfnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "ffn/IR/FfnOps.h.inc"

namespace mlir::ffn {

/// The kernel contract of a lowering of `op`: the model from the op, the
/// rest as the lowering decided (see #ffn.kernel_abi). `packLayout` names
/// a packing other than ffnc's own ("": ffnc's).
KernelAbiAttr buildKernelAbi(FfnOp op, Type operandType,
                             ArrayRef<Attribute> params,
                             std::optional<int64_t> workspacePerRow,
                             ArrayAttr phaseUnits, DenseI64ArrayAttr bucketMaxM,
                             StringRef strategy, StringAttr deviceModule = {},
                             ArrayAttr launches = {},
                             StringRef packLayout = "");

/// One #ffn.kernel_param: `name`, of logical shape `logical`, read by the
/// kernel as `packed` after the pack function `pack` ("" = none); with
/// `experts` > 0 one expert's shape and packing of a stacked parameter.
KernelParamAttr buildKernelParam(MLIRContext *ctx, StringRef name,
                                 ArrayRef<int64_t> logical, MemRefType packed,
                                 StringRef pack, StringRef packQuantized = "",
                                 int64_t experts = 0);

/// The empty CPU kernel `name` before `before`, in the calling convention
/// the runtime's CPU executor calls (ffn/kernel_abi.h): the input [m,
/// d_model] of `storage`, the parameters as the kernel reads them, the
/// output [m, d_model], the workspace (bytes), then the phase and the
/// [begin, end) of its work units; each argument named by `ffn.param`.
func::FuncOp buildPhasedKernel(OpBuilder &b, Operation *before, StringRef name,
                               Type storage, int64_t dModel,
                               ArrayRef<Type> paramTypes,
                               ArrayRef<StringRef> paramNames);

} // namespace mlir::ffn

#endif // FFN_IR_FFNOPS_H
