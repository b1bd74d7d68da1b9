//===- Parser.cpp - parser of the .ffn spec language ----------------------===//

#include "ffnc/Frontend/Parser.h"

using namespace ffnc;
using llvm::SMLoc;
using llvm::SMRange;

namespace {

class Parser {
public:
  Parser(llvm::StringRef buffer, DiagnosticEngine &diags)
      : lexer(buffer, diags), diags(diags) {
    consume();
  }

  SpecFile parseFile();

private:
  void consume() {
    if (!tok.is(Token::Newline))
      prevEnd = tok.endLoc();
    tok = lexer.next();
  }
  void skipSeparators() {
    while (tok.is(Token::Newline) || tok.is(Token::Semicolon))
      consume();
  }
  void skipNewlines() {
    while (tok.is(Token::Newline))
      consume();
  }
  /// Reports a syntax error at the current token, unless the lexer already
  /// reported that token as malformed: one mistake, one error.
  void errorAtToken(const llvm::Twine &message) {
    if (!tok.is(Token::Invalid))
      diags.error(tok.loc(), message, tok.range());
  }

  bool parseDecl(FfnDecl &decl);
  bool parseField(FfnDecl &decl);
  /// Skips to the end of the current field: the next separator or '}'.
  void recoverToFieldEnd();
  /// Skips to the next line that starts with 'ffn', or to end of file.
  void recoverToNextDecl();

  /// Sets `e.depth` from its children; reports and returns null when the
  /// tree grows taller than kMaxExprDepth.
  ExprPtr checkDepth(ExprPtr e, llvm::SMLoc where);
  void reportTooDeep(llvm::SMLoc where) {
    diags.error(where, "expression is too long or nested too deeply (more "
                       "than " +
                           llvm::Twine(kMaxExprDepth) + " levels)");
  }

  ExprPtr parseExpr(unsigned depth);
  ExprPtr parseTerm(unsigned depth);
  /// One left-associative precedence level: operands parsed by `operand`,
  /// joined by the operators `a` and `b`.
  ExprPtr parseBinary(unsigned depth, Token::Kind a, Token::Kind b,
                      ExprPtr (Parser::*operand)(unsigned));
  ExprPtr parseUnary(unsigned depth);
  ExprPtr parsePrimary(unsigned depth);
  bool parseCallArgs(Expr &call, unsigned depth);

  Lexer lexer;
  DiagnosticEngine &diags;
  Token tok;
  SMLoc prevEnd;
};

} // namespace

SpecFile Parser::parseFile() {
  SpecFile file;
  skipSeparators();
  while (!tok.is(Token::Eof) && !diags.shouldStop()) {
    if (!tok.isIdentifier("ffn")) {
      errorAtToken("expected 'ffn' to start a block, found " + describe(tok));
      recoverToNextDecl();
      continue;
    }
    FfnDecl decl;
    if (!parseDecl(decl))
      decl.wellFormed = false;
    if (!decl.name.empty())
      file.decls.push_back(std::move(decl));
    skipSeparators();
  }
  return file;
}

bool Parser::parseDecl(FfnDecl &decl) {
  consume(); // 'ffn'
  if (!tok.is(Token::Identifier)) {
    errorAtToken("expected a name after 'ffn', found " + describe(tok));
    recoverToNextDecl();
    return false;
  }
  decl.name = tok.text;
  decl.nameRange = tok.range();
  consume();
  skipNewlines();
  if (!tok.is(Token::LBrace)) {
    errorAtToken("expected '{' after 'ffn " + decl.name + "', found " +
                 describe(tok));
    recoverToNextDecl();
    return false;
  }
  decl.openBrace = tok.loc();
  consume();

  bool ok = true;
  while (!diags.shouldStop()) {
    skipSeparators();
    if (tok.is(Token::RBrace)) {
      consume();
      return ok;
    }
    if (tok.is(Token::Eof)) {
      // Point just past the block's last token rather than at the end of
      // the file, which may be far below after trailing comments.
      diags.error(prevEnd, "unterminated block 'ffn " + decl.name +
                               "': expected '}' before end of file");
      diags.note(decl.openBrace, "block opened here");
      return false;
    }
    if (tok.isIdentifier("ffn")) {
      // A missing '}' before the next block: report it where the next block
      // starts and parse that block normally.
      diags.error(tok.loc(), "unterminated block 'ffn " + decl.name +
                                 "': expected '}' before the next 'ffn'");
      diags.note(decl.openBrace, "block opened here");
      return false;
    }
    if (!parseField(decl)) {
      ok = false;
      recoverToFieldEnd();
    }
  }
  return false;
}

bool Parser::parseField(FfnDecl &decl) {
  if (!tok.is(Token::Identifier)) {
    errorAtToken("expected a field name or '}', found " + describe(tok));
    return false;
  }
  Field field;
  field.name = tok.text;
  field.nameRange = tok.range();
  consume();
  if (!tok.is(Token::Equal)) {
    errorAtToken("expected '=' after field name '" + field.name + "', found " +
                 describe(tok));
    return false;
  }
  consume();
  if (tok.is(Token::Newline) || tok.is(Token::Semicolon) ||
      tok.is(Token::RBrace) || tok.is(Token::Eof)) {
    errorAtToken("expected a value for '" + field.name + "'");
    return false;
  }
  field.value = parseExpr(0);
  if (!field.value)
    return false;
  if (!tok.is(Token::Newline) && !tok.is(Token::Semicolon) &&
      !tok.is(Token::RBrace) && !tok.is(Token::Eof)) {
    errorAtToken("unexpected " + describe(tok) + " after the value of '" +
                 field.name + "'; expected end of line or ';'");
    return false;
  }
  decl.fields.push_back(std::move(field));
  return true;
}

void Parser::recoverToFieldEnd() {
  while (!tok.is(Token::Newline) && !tok.is(Token::Semicolon) &&
         !tok.is(Token::RBrace) && !tok.is(Token::Eof) &&
         !tok.isIdentifier("ffn"))
    consume();
}

void Parser::recoverToNextDecl() {
  bool atLineStart = false;
  while (!tok.is(Token::Eof)) {
    if (atLineStart && tok.isIdentifier("ffn"))
      return;
    atLineStart = tok.is(Token::Newline);
    consume();
  }
}

ExprPtr Parser::checkDepth(ExprPtr e, llvm::SMLoc where) {
  unsigned below = 0;
  if (e->lhs)
    below = std::max(below, e->lhs->depth);
  if (e->rhs)
    below = std::max(below, e->rhs->depth);
  for (const CallArg &arg : e->args)
    below = std::max(below, arg.value->depth);
  e->depth = below + 1;
  if (e->depth > kMaxExprDepth) {
    reportTooDeep(where);
    return nullptr;
  }
  return e;
}

ExprPtr Parser::parseBinary(unsigned depth, Token::Kind a, Token::Kind b,
                            ExprPtr (Parser::*operand)(unsigned)) {
  ExprPtr lhs = (this->*operand)(depth);
  while (lhs && (tok.is(a) || tok.is(b))) {
    char op = tok.text[0];
    SMRange opRange = tok.range();
    consume();
    skipNewlines(); // An operator at the end of a line continues the value.
    ExprPtr rhs = (this->*operand)(depth);
    if (!rhs)
      return nullptr;
    auto bin = std::make_unique<Expr>(Expr::Binary,
                                      SMRange(lhs->range.Start, prevEnd));
    bin->op = op;
    bin->opRange = opRange;
    bin->lhs = std::move(lhs);
    bin->rhs = std::move(rhs);
    lhs = checkDepth(std::move(bin), opRange.Start);
  }
  return lhs;
}

ExprPtr Parser::parseExpr(unsigned depth) {
  return parseBinary(depth, Token::Plus, Token::Minus, &Parser::parseTerm);
}

ExprPtr Parser::parseTerm(unsigned depth) {
  return parseBinary(depth, Token::Star, Token::Slash, &Parser::parseUnary);
}

ExprPtr Parser::parseUnary(unsigned depth) {
  if (depth > kMaxExprDepth) {
    reportTooDeep(tok.loc());
    return nullptr;
  }
  if (tok.is(Token::Minus)) {
    SMLoc start = tok.loc();
    consume();
    ExprPtr operand = parseUnary(depth + 1);
    if (!operand)
      return nullptr;
    auto neg = std::make_unique<Expr>(Expr::Negate, SMRange(start, prevEnd));
    neg->lhs = std::move(operand);
    return checkDepth(std::move(neg), start);
  }
  return parsePrimary(depth);
}

ExprPtr Parser::parsePrimary(unsigned depth) {
  switch (tok.kind) {
  case Token::Integer:
  case Token::Decimal: {
    auto lit = std::make_unique<Expr>(tok.is(Token::Integer) ? Expr::Integer
                                                             : Expr::Decimal,
                                      tok.range(), tok.text);
    consume();
    return lit;
  }
  case Token::Identifier: {
    Token name = tok;
    consume();
    if (!tok.is(Token::LParen))
      return std::make_unique<Expr>(Expr::Name, name.range(), name.text);
    auto call = std::make_unique<Expr>(Expr::Call, name.range(), name.text);
    if (!parseCallArgs(*call, depth + 1))
      return nullptr;
    call->range = SMRange(name.loc(), prevEnd);
    return checkDepth(std::move(call), name.loc());
  }
  case Token::LParen: {
    SMLoc start = tok.loc();
    consume();
    ExprPtr inner = parseExpr(depth + 1);
    if (!inner)
      return nullptr;
    if (!tok.is(Token::RParen)) {
      if (!tok.is(Token::Invalid)) {
        errorAtToken("expected ')' to close the '(', found " + describe(tok));
        diags.note(start, "'(' opened here");
      }
      return nullptr;
    }
    consume();
    inner->range = SMRange(start, prevEnd);
    // Parentheses add a level of parsing recursion, though not a node.
    if (inner->depth + 1 > kMaxExprDepth) {
      reportTooDeep(start);
      return nullptr;
    }
    ++inner->depth;
    return inner;
  }
  default:
    errorAtToken("expected a value, found " + describe(tok));
    return nullptr;
  }
}

bool Parser::parseCallArgs(Expr &call, unsigned depth) {
  SMLoc open = tok.loc();
  consume(); // '('
  if (tok.is(Token::RParen)) {
    consume();
    return true;
  }
  while (true) {
    CallArg arg;
    if (tok.is(Token::Identifier)) {
      // Look one token ahead for `name =` without a second lexer: the name
      // is parsed as an expression and re-read as a keyword if '=' follows.
      Token name = tok;
      ExprPtr value = parseExpr(depth);
      if (!value)
        return false;
      if (tok.is(Token::Equal)) {
        if (value->kind != Expr::Name) {
          errorAtToken("expected ',' or ')' in the arguments of '" + call.text +
                       "', found '='");
          return false;
        }
        arg.name = name.text;
        arg.nameRange = name.range();
        consume();
        value = parseExpr(depth);
        if (!value)
          return false;
      }
      arg.value = std::move(value);
    } else {
      arg.value = parseExpr(depth);
      if (!arg.value)
        return false;
    }
    call.args.push_back(std::move(arg));
    if (tok.is(Token::Comma)) {
      consume();
      continue;
    }
    if (tok.is(Token::RParen)) {
      consume();
      return true;
    }
    if (!tok.is(Token::Invalid)) {
      errorAtToken("expected ',' or ')' in the arguments of '" + call.text +
                   "', found " + describe(tok));
      diags.note(open, "'(' opened here");
    }
    return false;
  }
}

SpecFile ffnc::parseSpec(llvm::StringRef buffer, DiagnosticEngine &diags) {
  return Parser(buffer, diags).parseFile();
}
