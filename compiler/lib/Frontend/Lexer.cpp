//===- Lexer.cpp - tokens of the .ffn spec language -----------------------===//

#include "ffnc/Frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

using namespace ffnc;

std::string ffnc::describe(const Token &token) {
  switch (token.kind) {
  case Token::Eof:
    return "end of file";
  case Token::Newline:
    return "end of line";
  case Token::Identifier:
    return ("'" + token.text + "'").str();
  case Token::Integer:
  case Token::Decimal:
    return ("number '" + token.text + "'").str();
  default:
    return ("'" + token.text + "'").str();
  }
}

static bool isIdentStart(char c) { return llvm::isAlpha(c) || c == '_'; }
static bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_'; }

void Lexer::skipBlanksAndComments(bool &sawNewline, const char *&newlineAt) {
  const char *end = buffer.end();
  while (cur != end) {
    char c = *cur;
    if (c == '\n') {
      if (!sawNewline)
        newlineAt = cur;
      sawNewline = true;
      ++cur;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++cur;
    } else if (c == '#' || (c == '/' && cur + 1 != end && cur[1] == '/')) {
      while (cur != end && *cur != '\n')
        ++cur;
    } else if (c == '/' && cur + 1 != end && cur[1] == '*') {
      const char *start = cur;
      cur += 2;
      while (cur != end && !(*cur == '*' && cur + 1 != end && cur[1] == '/')) {
        if (*cur == '\n' && !sawNewline) {
          newlineAt = cur;
          sawNewline = true;
        }
        ++cur;
      }
      if (cur == end) {
        diags.error(llvm::SMLoc::getFromPointer(start),
                    "unterminated '/*' comment",
                    {llvm::SMLoc::getFromPointer(start),
                     llvm::SMLoc::getFromPointer(start + 2)});
        return;
      }
      cur += 2;
    } else {
      return;
    }
  }
}

Token Lexer::next() {
  bool sawNewline = false;
  const char *newlineAt = nullptr;
  skipBlanksAndComments(sawNewline, newlineAt);
  // A run of newlines and comments is one Newline token; inside parentheses
  // a line break is just whitespace, so long calls can wrap.
  if (sawNewline && parenDepth == 0)
    return Token{Token::Newline, llvm::StringRef(newlineAt, 1)};

  if (cur == buffer.end())
    return Token{Token::Eof, llvm::StringRef(buffer.end(), 0)};

  const char *start = cur;
  char c = *cur++;
  switch (c) {
  case '{':
    parenDepth = 0;
    return make(Token::LBrace, start);
  case '}':
    parenDepth = 0;
    return make(Token::RBrace, start);
  case '(':
    ++parenDepth;
    return make(Token::LParen, start);
  case ')':
    if (parenDepth > 0)
      --parenDepth;
    return make(Token::RParen, start);
  case '=':
    return make(Token::Equal, start);
  case ',':
    return make(Token::Comma, start);
  case ';':
    return make(Token::Semicolon, start);
  case '+':
    return make(Token::Plus, start);
  case '-':
    return make(Token::Minus, start);
  case '*':
    return make(Token::Star, start);
  case '/':
    return make(Token::Slash, start);
  default:
    break;
  }
  if (llvm::isDigit(c))
    return lexNumber(start);
  if (isIdentStart(c))
    return lexIdentifier(start);

  // Anything else is reported once and skipped; a UTF-8 sequence counts as
  // one character so the caret points at it.
  auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x80)
    while (cur != buffer.end() &&
           (static_cast<unsigned char>(*cur) & 0xC0) == 0x80)
      ++cur;
  std::string shown;
  if (llvm::isPrint(c))
    shown = ("'" + llvm::Twine(c) + "'").str();
  else
    shown = "byte 0x" + llvm::utohexstr(byte, /*LowerCase=*/true);
  diags.error(
      llvm::SMLoc::getFromPointer(start),
      "unexpected character " + shown + " in spec",
      {llvm::SMLoc::getFromPointer(start), llvm::SMLoc::getFromPointer(cur)});
  return make(Token::Invalid, start);
}

Token Lexer::lexNumber(const char *start) {
  const char *end = buffer.end();
  bool isDecimal = false;
  while (cur != end && llvm::isDigit(*cur))
    ++cur;
  if (cur != end && *cur == '.' && cur + 1 != end && llvm::isDigit(cur[1])) {
    isDecimal = true;
    ++cur;
    while (cur != end && llvm::isDigit(*cur))
      ++cur;
  }
  if (cur != end && (*cur == 'e' || *cur == 'E')) {
    const char *exp = cur + 1;
    if (exp != end && (*exp == '+' || *exp == '-'))
      ++exp;
    if (exp != end && llvm::isDigit(*exp)) {
      isDecimal = true;
      cur = exp;
      while (cur != end && llvm::isDigit(*cur))
        ++cur;
    }
  }
  if (cur != end && (isIdentChar(*cur) || *cur == '.')) {
    const char *suffix = cur;
    while (cur != end && (isIdentChar(*cur) || *cur == '.'))
      ++cur;
    diags.error(
        llvm::SMLoc::getFromPointer(suffix),
        "invalid suffix '" + llvm::StringRef(suffix, cur - suffix) +
            "' on number",
        {llvm::SMLoc::getFromPointer(start), llvm::SMLoc::getFromPointer(cur)});
    return make(Token::Invalid, start);
  }
  return make(isDecimal ? Token::Decimal : Token::Integer, start);
}

Token Lexer::lexIdentifier(const char *start) {
  while (cur != buffer.end() && isIdentChar(*cur))
    ++cur;
  return make(Token::Identifier, start);
}
