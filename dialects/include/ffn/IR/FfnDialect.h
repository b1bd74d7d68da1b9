//===- FfnDialect.h - ffn dialect -------------------------------*- C++ -*-===//
#ifndef FFN_IR_FFNDIALECT_H
#define FFN_IR_FFNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ffn/IR/FfnDialect.h.inc"

#endif // FFN_IR_FFNDIALECT_H
