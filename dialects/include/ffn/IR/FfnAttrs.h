//===- FfnAttrs.h - ffn dialect attributes ----------------------*- C++ -*-===//
#ifndef FFN_IR_FFNATTRS_H
#define FFN_IR_FFNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "ffn/IR/FfnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ffn/IR/FfnAttrs.h.inc"

#endif // FFN_IR_FFNATTRS_H
