//===- FfnDialect.cpp - ffn dialect registration --------------------------===//

#include "ffn/IR/FfnDialect.h"
#include "ffn/IR/FfnAttrs.h"
#include "ffn/IR/FfnOps.h"

using namespace mlir;
using namespace mlir::ffn;

#include "ffn/IR/FfnDialect.cpp.inc"

void FfnDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "ffn/IR/FfnOps.cpp.inc"
      >();
}
