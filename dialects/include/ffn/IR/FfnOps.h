//===- FfnOps.h - ffn dialect operations ------------------------*- C++ -*-===//
#ifndef FFN_IR_FFNOPS_H
#define FFN_IR_FFNOPS_H

#include "ffn/IR/FfnAttrs.h"
#include "ffn/IR/FfnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "ffn/IR/FfnOps.h.inc"

#endif // FFN_IR_FFNOPS_H
