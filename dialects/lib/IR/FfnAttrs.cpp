//===- FfnAttrs.cpp - ffn dialect attributes ------------------------------===//

#include "ffn/IR/FfnAttrs.h"
#include "ffn/IR/FfnDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ffn;

#include "ffn/IR/FfnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ffn/IR/FfnAttrs.cpp.inc"

LogicalResult NormAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               NormKind kind, NormPosition position,
                               FloatAttr eps) {
  if (!eps)
    return emitError() << "norm needs an eps";
  double value = eps.getValueAsDouble();
  // eps guards a division by sqrt(variance + eps): zero, negative or
  // non-finite values make the kernel produce Inf/NaN on constant rows.
  if (!(value > 0.0) || !std::isfinite(value))
    return emitError() << "norm eps must be positive and finite, got "
                       << value;
  return success();
}

void FfnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ffn/IR/FfnAttrs.cpp.inc"
      >();
}
