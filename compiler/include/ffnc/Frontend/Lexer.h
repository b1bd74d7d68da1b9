//===- Lexer.h - tokens of the .ffn spec language ---------------*- C++ -*-===//

#ifndef FFNC_FRONTEND_LEXER_H
#define FFNC_FRONTEND_LEXER_H

#include "ffnc/Frontend/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

namespace ffnc {

struct Token {
  enum Kind {
    Eof,
    Newline, ///< Ends a field; not produced inside parentheses.
    Identifier,
    Integer, ///< 123
    Decimal, ///< 0.5, 1e-12, 2.5E3
    LBrace,
    RBrace,
    LParen,
    RParen,
    Equal,
    Comma,
    Semicolon,
    Plus,
    Minus,
    Star,
    Slash,
    Invalid, ///< Already diagnosed by the lexer.
  };

  Kind kind = Eof;
  llvm::StringRef text;

  bool is(Kind k) const { return kind == k; }
  bool isIdentifier(llvm::StringRef name) const {
    return kind == Identifier && text == name;
  }
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(text.data()); }
  llvm::SMLoc endLoc() const {
    return llvm::SMLoc::getFromPointer(text.data() + text.size());
  }
  llvm::SMRange range() const { return {loc(), endLoc()}; }
};

/// A human-readable description of a token for diagnostics: "'}'",
/// "identifier 'gelu'", "end of file".
std::string describe(const Token &token);

/// Splits a spec buffer into tokens. Comments are `//` or `#` to the end of
/// the line and `/* ... */`. Newlines end fields, except inside parentheses.
class Lexer {
public:
  Lexer(llvm::StringRef buffer, DiagnosticEngine &diags)
      : buffer(buffer), cur(buffer.begin()), diags(diags) {}

  Token next();

private:
  Token make(Token::Kind kind, const char *start) {
    return Token{kind, llvm::StringRef(start, cur - start)};
  }
  Token lexNumber(const char *start);
  Token lexIdentifier(const char *start);
  /// Skips blanks and comments; returns false on an unterminated comment.
  void skipBlanksAndComments(bool &sawNewline, const char *&newlineAt);

  llvm::StringRef buffer;
  const char *cur;
  DiagnosticEngine &diags;
  int parenDepth = 0;
};

} // namespace ffnc

#endif // FFNC_FRONTEND_LEXER_H
