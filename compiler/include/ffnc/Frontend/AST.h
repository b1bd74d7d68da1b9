//===- AST.h - syntax tree of a .ffn spec -----------------------*- C++ -*-===//
//
// The parser keeps every field value as a generic expression; Sema decides
// what each field means (an integer expression for dimensions, a bare name
// for an activation, a call with named arguments for a norm).
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_FRONTEND_AST_H
#define FFNC_FRONTEND_AST_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <memory>
#include <vector>

namespace ffnc {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

/// One argument of a call: `256` or `eps = 1e-5`.
struct CallArg {
  llvm::StringRef name; ///< Empty for a positional argument.
  llvm::SMRange nameRange;
  ExprPtr value;
};

struct Expr {
  enum Kind {
    Integer, ///< 4096
    Decimal, ///< 1e-12, 0.5
    Name,    ///< d_model, gelu, true
    Negate,  ///< -x
    Binary,  ///< x + y, x - y, x * y, x / y
    Call,    ///< round_up(x, 256), layernorm(eps = 1e-5)
  };

  Kind kind;
  llvm::SMRange range;   ///< The whole expression, for carets.
  llvm::StringRef text;  ///< Literal text, name, or callee.
  char op = 0;           ///< '+', '-', '*', '/' for Binary.
  llvm::SMRange opRange; ///< The operator token of a Binary.
  ExprPtr lhs, rhs;      ///< Binary operands; Negate uses lhs.
  std::vector<CallArg> args;
  /// Height of the tree below this node (a literal is 1). Every recursive
  /// walk of an expression is bounded by it; see kMaxExprDepth.
  unsigned depth = 1;

  Expr(Kind kind, llvm::SMRange range, llvm::StringRef text = {})
      : kind(kind), range(range), text(text) {}
  llvm::SMLoc loc() const { return range.Start; }
};

/// `name = value` inside an ffn block.
struct Field {
  llvm::StringRef name;
  llvm::SMRange nameRange;
  ExprPtr value;
};

/// `ffn name { fields }`.
struct FfnDecl {
  llvm::StringRef name;
  llvm::SMRange nameRange;
  llvm::SMLoc openBrace;
  std::vector<Field> fields;
  /// False if the block had syntax errors: Sema then reports only what the
  /// parser could not, to avoid cascades ("missing d_ff" after a typo).
  bool wellFormed = true;

  const Field *find(llvm::StringRef field) const {
    for (const Field &f : fields)
      if (f.name == field)
        return &f;
    return nullptr;
  }
};

struct SpecFile {
  std::vector<FfnDecl> decls;
};

} // namespace ffnc

#endif // FFNC_FRONTEND_AST_H
