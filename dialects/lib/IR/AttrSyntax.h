//===- AttrSyntax.h - shared pieces of the attributes' text -----*- C++ -*-===//
//
// The `key = value, ...` lists of #ffn.target and #ffn.cpu_strategy, and the
// float literals their printers and #ffn.norm's write.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_IR_ATTRSYNTAX_H
#define FFN_IR_ATTRSYNTAX_H

#include "mlir/IR/OpImplementation.h"

#include <string>

namespace mlir::ffn {

/// The shortest decimal that reads back as the same double, with the '.'
/// MLIR's float literals need (1e-12 -> 1.0e-12, 2 -> 2.0).
std::string floatLiteral(double value);

/// Parses `<` [key `=` value (`,` key `=` value)*] `>`: `parseValue` reads
/// the value of each key (it is called after the `=`, with the key's
/// location) and reports unknown keys; a key given twice is an error here.
ParseResult parseKeyValueList(
    AsmParser &parser,
    function_ref<ParseResult(StringRef key, SMLoc loc)> parseValue);

} // namespace mlir::ffn

#endif // FFN_IR_ATTRSYNTAX_H
