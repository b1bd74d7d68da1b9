//===- Parser.h - parser of the .ffn spec language --------------*- C++ -*-===//
//
// Grammar (docs/dsl.md has the full description):
//
//   file    := sep* (ffn-decl sep*)* EOF
//   ffn-decl:= 'ffn' IDENT '{' (sep | field)* '}'
//   field   := IDENT '=' expr (sep | before '}')
//   sep     := NEWLINE | ';'
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := '-' unary | primary
//   primary := INTEGER | DECIMAL | IDENT | IDENT '(' args? ')' | '(' expr ')'
//   args    := arg (',' arg)*
//   arg     := (IDENT '=')? expr
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_FRONTEND_PARSER_H
#define FFNC_FRONTEND_PARSER_H

#include "ffnc/Frontend/AST.h"
#include "ffnc/Frontend/Diagnostics.h"
#include "ffnc/Frontend/Lexer.h"

namespace ffnc {

/// Parses one spec buffer. Syntax errors are reported to `diags`; the parser
/// recovers at the end of the field or block and keeps going, so several
/// errors are reported in one run.
SpecFile parseSpec(llvm::StringRef buffer, DiagnosticEngine &diags);

/// Tallest expression tree accepted (parentheses, unary minus, calls and
/// chains of binary operators all add a level). Far beyond any real spec and
/// low enough that no recursive walk of the tree (parse, evaluation,
/// printing, destruction) can exhaust the stack on hostile input.
constexpr unsigned kMaxExprDepth = 256;

} // namespace ffnc

#endif // FFNC_FRONTEND_PARSER_H
