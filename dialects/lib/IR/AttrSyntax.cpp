//===- AttrSyntax.cpp - shared pieces of the attributes' text -------------===//

#include "AttrSyntax.h"

#include "llvm/ADT/StringSet.h"

#include <charconv>

using namespace mlir;

std::string ffn::floatLiteral(double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".ni") == std::string::npos) { // not nan/inf
    size_t e = text.find('e');
    text.insert(e == std::string::npos ? text.size() : e, ".0");
  }
  return text;
}

ParseResult ffn::parseKeyValueList(
    AsmParser &parser,
    function_ref<ParseResult(StringRef key, SMLoc loc)> parseValue) {
  if (parser.parseLess())
    return failure();
  if (succeeded(parser.parseOptionalGreater()))
    return success();
  llvm::StringSet<> seen;
  do {
    SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (failed(parser.parseOptionalKeyword(&key)))
      return parser.emitError(loc, "expected key = value");
    if (!seen.insert(key).second)
      return parser.emitError(loc) << "'" << key << "' is given twice";
    if (parser.parseEqual() || parseValue(key, loc))
      return failure();
  } while (succeeded(parser.parseOptionalComma()));
  return parser.parseGreater();
}
