//===- Sema.cpp - meaning and checks of a parsed spec ---------------------===//

#include "ffnc/Frontend/Sema.h"

#include "ffnc/Frontend/Parser.h"
#include "ffnc/Frontend/Rational.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstdlib>

using namespace ffnc;
using llvm::SMRange;
using llvm::StringRef;

namespace {

const StringRef kIntFields[] = {"d_model", "d_ff"};
/// Integer fields that are counts, not dimensions: expressions cannot use
/// them (no dimension or count is derived from an expert count).
const StringRef kCountFields[] = {"experts", "top_k", "shared_experts",
                                  "groups"};
/// The fields that only mean something in a mixture of experts.
const StringRef kMoeOnlyFields[] = {"top_k", "shared_experts", "router",
                                    "normalize"};
const StringRef kFunctions[] = {"round_up", "ceil_div", "min", "max"};
const StringRef kBools[] = {"true", "false"};
const StringRef kNormArgs[] = {"eps", "position"};

std::string describeExpr(const Expr &e) {
  switch (e.kind) {
  case Expr::Integer:
  case Expr::Decimal:
    return ("number '" + e.text + "'").str();
  case Expr::Name:
    return ("'" + e.text + "'").str();
  case Expr::Call:
    return ("a call to '" + e.text + "'").str();
  case Expr::Negate:
  case Expr::Binary:
    return "an arithmetic expression";
  }
  return "a value";
}

/// The gate variant that applies `a`, to turn "gate = gelu" into a hint.
std::optional<StringRef> gateFor(Activation a) {
  switch (a) {
  case Activation::Sigmoid:
    return StringRef("glu");
  case Activation::Relu:
    return StringRef("reglu");
  case Activation::Gelu:
    return StringRef("geglu");
  case Activation::Silu:
    return StringRef("swiglu");
  case Activation::Identity:
    return StringRef("bilinear");
  case Activation::GeluTanh:
    return std::nullopt;
  }
  return std::nullopt;
}

/// Other frameworks' names for our activations (Hugging Face's ACT2FN,
/// PyTorch), so a spec ported from a config gets a direct fix-it.
std::optional<StringRef> activationAlias(StringRef word) {
  return llvm::StringSwitch<std::optional<StringRef>>(word.lower())
      .Case("swish", StringRef("silu"))
      .Cases({"gelu_new", "gelu_pytorch_tanh", "gelu_fast", "approx_gelu"},
             StringRef("gelu_tanh"))
      .Cases({"linear", "none"}, StringRef("identity"))
      .Default(std::nullopt);
}

class DeclSema {
public:
  DeclSema(const FfnDecl &decl, DiagnosticEngine &diags)
      : decl(decl), diags(diags) {}

  /// Returns the spec if the block has no errors.
  std::optional<FfnSpec> run();

  // One handler per field (kFieldTable below names them).
  void handleDimension(const Field &field);
  void handleActivation(const Field &field);
  void handleGate(const Field &field);
  void handleBias(const Field &field) { biasAll = evalBool(field); }
  void handleBiasUp(const Field &field) { biasUp = evalBool(field); }
  void handleBiasGate(const Field &field) { biasGate = evalBool(field); }
  void handleBiasDown(const Field &field) { biasDown = evalBool(field); }
  void handleResidual(const Field &field) {
    if (std::optional<bool> b = evalBool(field))
      spec.residual = *b;
  }
  void handleBatchInvariant(const Field &field) {
    if (std::optional<bool> b = evalBool(field))
      spec.batchInvariant = *b;
  }
  void handleDropout(const Field &field);
  void handleActivationSparsity(const Field &field);
  /// The field's number if it is in [0, 1) (else null, and an error at it;
  /// `what` names the number expected).
  std::optional<double> evalFraction(const Field &field, StringRef what);
  void checkActivationSparsity();
  void handleNorm(const Field &field);
  void handleDType(const Field &field);
  void handleWeights(const Field &field);
  void handleExperts(const Field &field) {
    if (std::optional<int64_t> v = evalCount(field, 1, kMaxExperts))
      spec.experts = *v;
  }
  void handleTopK(const Field &field) {
    // The upper bound is `experts`, which may come later in the block:
    // checkMixture compares them.
    if (std::optional<int64_t> v = evalCount(field, 1, std::nullopt))
      spec.topK = *v;
  }
  void handleSharedExperts(const Field &field) {
    if (std::optional<int64_t> v = evalCount(field, 0, kMaxExperts))
      spec.sharedExperts = *v;
  }
  void handleRouter(const Field &field);
  void handleGroups(const Field &field) {
    if (std::optional<int64_t> v = evalCount(field, 1, kMaxGroups))
      spec.groups = *v;
  }
  void handleShare(const Field &field) {
    if (std::optional<StringRef> word =
            expectName(field, "an ffn block name")) {
      spec.share = word->str();
      spec.shareRange = field.value->range;
    }
  }
  void handleNormalize(const Field &field) {
    if (std::optional<bool> b = evalBool(field))
      spec.routerNormalize = *b;
  }

private:
  void error(const Expr &e, const llvm::Twine &msg,
             std::optional<StringRef> fix = std::nullopt) {
    diags.error(e.loc(), msg, e.range, fix);
    ok = false;
  }
  void errorWithSuggestion(const Expr &e, const llvm::Twine &msg,
                           StringRef word,
                           llvm::ArrayRef<StringRef> candidates) {
    if (std::optional<StringRef> best = closestMatch(word, candidates))
      error(e, msg + "; did you mean '" + *best + "'?", *best);
    else
      error(e, msg);
  }

  std::optional<int64_t> evalDimension(const Field &field);
  std::optional<int64_t> evalCount(const Field &field, int64_t min,
                                   std::optional<int64_t> max);
  std::optional<Rational> eval(const Expr &e);
  std::optional<Rational> evalCall(const Expr &e);
  std::optional<bool> evalBool(const Field &field);
  std::optional<StringRef> expectName(const Field &field, StringRef what);
  std::optional<double> evalNumber(const Expr &e, StringRef what);
  void checkCombination();
  void checkMixture();
  void checkGroups();

  const FfnDecl &decl;
  DiagnosticEngine &diags;
  FfnSpec spec;
  bool ok = true;
  llvm::StringMap<const Field *> seen;
  llvm::StringMap<int64_t> dims;
  const Field *currentField = nullptr;
  std::optional<bool> biasAll, biasUp, biasGate, biasDown;
  /// Fields an unknown field was probably meant to be: not also reported
  /// as missing.
  llvm::StringSet<> misspelled;
};

/// The spec's fields, one row each: its handler, whether it is required,
/// and its row of docs/dsl.md's field table (value, default, notes), which
/// test/Frontend/field-table.test compares with this. Adding a field is
/// adding a row and its handler.
struct FieldRule {
  StringRef name;
  void (DeclSema::*handle)(const Field &);
  bool required;
  StringRef value, defaultValue, notes;
};

const FieldRule kFieldTable[] = {
    {"d_model", &DeclSema::handleDimension, true, "integer expression",
     "required", "1 … 262144"},
    {"d_ff", &DeclSema::handleDimension, true, "integer expression", "required",
     "1 … 262144"},
    {"activation", &DeclSema::handleActivation, false,
     "`relu` `gelu` `gelu_tanh` `silu` `sigmoid` `identity`", "—",
     "plain FFNs; `gelu` is the exact (erf) form, `gelu_tanh` the tanh "
     "approximation (GPT-2)"},
    {"gate", &DeclSema::handleGate, false,
     "`glu` `reglu` `geglu` `swiglu` `bilinear`", "—",
     "gated FFNs; exactly one of `activation` / `gate`"},
    {"bias", &DeclSema::handleBias, false, "`true` / `false`", "`true`",
     "sets all biases (as `nn.Linear`'s default)"},
    {"bias_up", &DeclSema::handleBiasUp, false, "`true` / `false`", "`bias`",
     "b1 (plain) or bu (gated)"},
    {"bias_gate", &DeclSema::handleBiasGate, false, "`true` / `false`",
     "`bias`", "bg; gated FFNs only"},
    {"bias_down", &DeclSema::handleBiasDown, false, "`true` / `false`",
     "`bias`", "b2 (plain) or bd (gated)"},
    {"residual", &DeclSema::handleResidual, false, "`true` / `false`",
     "`false`", ""},
    {"norm", &DeclSema::handleNorm, false,
     "`none`, `layernorm(...)`, `rmsnorm(...)`", "`none`",
     "named arguments `eps` (0 < eps < 1; default 1e-5 for layernorm, 1e-6 "
     "for rmsnorm) and `position` (`pre` default, or `post`); `layernorm` "
     "alone means all defaults"},
    {"dtype", &DeclSema::handleDType, false, "`f32` `bf16` `f16`", "`f32`",
     "storage type of input, weights and output"},
    {"weights", &DeclSema::handleWeights, false,
     "`dtype`, `int8(...)`, `int4(...)`", "`dtype`",
     "weight-only quantization: symmetric, one scale (in `dtype`) per "
     "`group` input rows of each output column; named arguments `group` "
     "(even, 2 … 65536; default 128 for int8, 32 for int4) and "
     "`activations` (`dtype` default: activations stay in `dtype`; `int8`: "
     "the matmuls' inputs quantized per row and group too, for integer dot "
     "products; group a multiple of 16) and, for int4, `zero_points` "
     "(`false` default; `true`: asymmetric, one zero point per group and "
     "column)"},
    {"batch_invariant", &DeclSema::handleBatchInvariant, false,
     "`true` / `false`", "`false`",
     "a row's output bits do not depend on M, the rows batched with it or "
     "the thread count: every M reduces each row in one order (never the "
     "fused small-M schedule; cost in the README)"},
    {"experts", &DeclSema::handleExperts, false, "integer expression", "—",
     "a mixture of experts: this many routed expert FFNs of the block's "
     "family, width and biases, 1 … 256; needs `top_k` (see Mixture of "
     "experts)"},
    {"top_k", &DeclSema::handleTopK, false, "integer expression",
     "required with `experts`",
     "routed experts each token runs, 1 … `experts`"},
    {"router", &DeclSema::handleRouter, false, "`softmax_topk` `topk_softmax`",
     "`softmax_topk`",
     "how the selected experts are weighted: `softmax_topk` takes the "
     "softmax over all routed experts' logits, then the k largest; "
     "`topk_softmax` the k largest logits, then the softmax over them"},
    {"normalize", &DeclSema::handleNormalize, false, "`true` / `false`",
     "`false`",
     "`softmax_topk` only: the k selected weights divided by their sum "
     "(Hugging Face's `norm_topk_prob`)"},
    {"shared_experts", &DeclSema::handleSharedExperts, false,
     "integer expression", "`0`",
     "always-on expert FFNs with weight 1, besides the routed ones, 0 … 256"},
    {"groups", &DeclSema::handleGroups, false, "integer expression", "`1`",
     "a grouped (block-diagonal) FFN: d_model and d_ff split into this many "
     "independent blocks, each an FFN of width d_model/groups and "
     "d_ff/groups; 1 … 1024, dividing both (see Grouped FFNs)"},
    {"share", &DeclSema::handleShare, false, "an ffn block's name", "—",
     "this block uses that block's parameters, packed once: same "
     "parameters, dtype, weight format and batch_invariant (see Shared "
     "weights)"},
    {"activation_sparsity", &DeclSema::handleActivationSparsity, false,
     "number in [0, 1)", "—",
     "ReLU / ReGLU FFNs: the share of hidden activations that are exactly "
     "zero at decode, from profiling the model; changes no result, lets the "
     "cost model choose the sparse GEMM 2 (see Activation sparsity)"},
    {"dropout", &DeclSema::handleDropout, false, "number in [0, 1)", "—",
     "accepted for specs copied from training configs, and ignored with a "
     "note: dropout is the identity at inference"},
};

const FieldRule *findField(StringRef name) {
  for (const FieldRule &rule : kFieldTable)
    if (rule.name == name)
      return &rule;
  return nullptr;
}

llvm::SmallVector<StringRef> fieldNames() {
  llvm::SmallVector<StringRef> names;
  for (const FieldRule &rule : kFieldTable)
    names.push_back(rule.name);
  return names;
}

std::optional<FfnSpec> DeclSema::run() {
  spec.name = decl.name.str();
  spec.loc = decl.nameRange.Start;
  for (const Field &field : decl.fields) {
    if (diags.shouldStop())
      return std::nullopt;
    const FieldRule *rule = findField(field.name);
    if (!rule) {
      std::string msg = ("unknown field '" + field.name + "'").str();
      llvm::SmallVector<StringRef> names = fieldNames();
      if (std::optional<StringRef> best = closestMatch(field.name, names)) {
        diags.error(field.nameRange.Start,
                    msg + "; did you mean '" + *best + "'?", field.nameRange,
                    *best);
        misspelled.insert(*best);
      } else
        diags.error(field.nameRange.Start,
                    msg + " (fields: " + llvm::join(names, ", ") + ")",
                    field.nameRange);
      ok = false;
      continue;
    }
    auto [it, inserted] = seen.try_emplace(field.name, &field);
    if (!inserted) {
      diags.error(field.nameRange.Start, "duplicate field '" + field.name + "'",
                  field.nameRange);
      diags.note(it->second->nameRange.Start, "first set here",
                 it->second->nameRange);
      ok = false;
      continue;
    }
    currentField = &field;
    (this->*rule->handle)(field);
  }
  if (diags.shouldStop())
    return std::nullopt;
  checkCombination();
  if (!ok)
    return std::nullopt;
  return spec;
}

void DeclSema::handleDimension(const Field &field) {
  if (std::optional<int64_t> v = evalDimension(field)) {
    dims[field.name] = *v;
    (field.name == "d_model" ? spec.dModel : spec.dFF) = *v;
  }
}

void DeclSema::handleActivation(const Field &field) {
  std::optional<StringRef> word = expectName(field, "an activation");
  if (!word)
    return;
  if (std::optional<Activation> a = parseActivation(*word)) {
    spec.activation = *a;
  } else if (parseGate(*word)) {
    error(*field.value, "'" + *word +
                            "' is a gated variant, not an activation; "
                            "write 'gate = " +
                            *word + "'");
  } else if (std::optional<StringRef> alias = activationAlias(*word)) {
    error(*field.value,
          "unknown activation '" + *word + "'; did you mean '" + *alias + "'?",
          *alias);
  } else {
    errorWithSuggestion(*field.value, "unknown activation '" + *word + "'",
                        *word, activationNames());
  }
}

void DeclSema::handleGate(const Field &field) {
  std::optional<StringRef> word = expectName(field, "a gate variant");
  if (!word)
    return;
  if (std::optional<Gate> g = parseGate(*word)) {
    spec.gate = *g;
  } else if (std::optional<Activation> a = parseActivation(*word)) {
    std::optional<StringRef> gate = gateFor(*a);
    if (gate)
      error(*field.value,
            "'" + *word +
                "' is an activation, not a gate variant; the "
                "gated variant applying it is '" +
                *gate + "'",
            *gate);
    else
      error(*field.value, "'" + *word +
                              "' is an activation, not a gate variant "
                              "(gates: glu, reglu, geglu, swiglu, "
                              "bilinear)");
  } else {
    errorWithSuggestion(*field.value, "unknown gate variant '" + *word + "'",
                        *word, gateNames());
  }
}

std::optional<double> DeclSema::evalFraction(const Field &field,
                                             StringRef what) {
  std::optional<double> p = evalNumber(*field.value, what);
  if (p && !(*p >= 0.0 && *p < 1.0)) {
    error(*field.value, field.name + " must be in [0, 1)");
    return std::nullopt;
  }
  return p;
}

void DeclSema::handleActivationSparsity(const Field &field) {
  if (std::optional<double> p = evalFraction(field, "a share"))
    spec.activationSparsity = *p;
}

void DeclSema::checkActivationSparsity() {
  const Field *field = seen.lookup("activation_sparsity");
  if (!field || spec.activationSparsity < 0)
    return;
  std::string why;
  if (spec.activation != Activation::Relu)
    why = "needs an activation that makes exact zeros (relu, or gate = "
          "reglu); this FFN's is " +
          toString(spec.activation).str();
  else if (spec.weightQuant != WeightQuant::None)
    why = "is for unquantized weights: the sparse GEMM 2 is not built for "
          "quantized ones";
  else if (spec.isMoe())
    why = "is for dense FFNs: the sparse GEMM 2 is not built for experts";
  else if (spec.isGrouped())
    why = "is for dense FFNs: the sparse GEMM 2 is not built for grouped "
          "ones";
  if (why.empty())
    return;
  diags.error(field->nameRange.Start, "activation_sparsity " + why,
              field->nameRange);
  ok = false;
}

void DeclSema::handleDropout(const Field &field) {
  if (!evalFraction(field, "a probability"))
    return;
  diags.note(field.nameRange.Start,
             "'dropout' is ignored: dropout is the identity at inference",
             field.nameRange);
}

std::optional<int64_t> DeclSema::evalDimension(const Field &field) {
  std::optional<Rational> v = eval(*field.value);
  if (!v)
    return std::nullopt;
  if (!v->isInteger()) {
    error(*field.value, field.name + " evaluates to " + v->str() +
                            ", which is not a whole number; round it with "
                            "round_up(..., N)");
    return std::nullopt;
  }
  if (v->num <= 0) {
    error(*field.value,
          field.name + " must be positive, got " + llvm::Twine(v->num));
    return std::nullopt;
  }
  if (v->num > kMaxDimension) {
    error(*field.value, field.name + " = " + llvm::Twine(v->num) +
                            " is larger than the largest supported "
                            "dimension, " +
                            llvm::Twine(kMaxDimension));
    return std::nullopt;
  }
  return v->num;
}

std::optional<int64_t> DeclSema::evalCount(const Field &field, int64_t min,
                                           std::optional<int64_t> max) {
  std::optional<Rational> v = eval(*field.value);
  if (!v)
    return std::nullopt;
  if (!v->isInteger()) {
    error(*field.value, field.name + " evaluates to " + v->str() +
                            ", which is not a whole number");
    return std::nullopt;
  }
  if (v->num < min) {
    // experts = 0 is most likely meant as "no mixture".
    error(*field.value,
          field.name + " must be at least " + llvm::Twine(min) + ", got " +
              llvm::Twine(v->num) +
              (field.name == "experts" ? "; leave 'experts' out for a dense FFN"
               : field.name == "groups" ? "; leave 'groups' out for a dense FFN"
                                        : ""));
    return std::nullopt;
  }
  if (max && v->num > *max) {
    error(*field.value, field.name + " = " + llvm::Twine(v->num) +
                            " is more than the largest supported count, " +
                            llvm::Twine(*max));
    return std::nullopt;
  }
  return v->num;
}

std::optional<Rational> DeclSema::eval(const Expr &e) {
  switch (e.kind) {
  case Expr::Integer: {
    int64_t value;
    if (e.text.getAsInteger(10, value)) {
      error(e, "integer literal '" + e.text + "' is too large");
      return std::nullopt;
    }
    return Rational::integer(value);
  }
  case Expr::Decimal: {
    std::optional<Rational> r = Rational::parseDecimal(e.text);
    if (!r)
      error(e, "number '" + e.text +
                   "' is too large or too precise for a dimension");
    return r;
  }
  case Expr::Name: {
    auto it = dims.find(e.text);
    if (it != dims.end())
      return Rational::integer(it->second);
    if (currentField && e.text == currentField->name) {
      error(e, "'" + e.text + "' refers to itself");
    } else if (llvm::is_contained(kIntFields, e.text)) {
      if (decl.find(e.text))
        error(e, "'" + e.text +
                     "' is used before it is defined; define it "
                     "on an earlier line");
      else
        error(e, "'" + e.text + "' is not defined in ffn '" + decl.name + "'");
    } else if (llvm::is_contained(kCountFields, e.text)) {
      error(e, "'" + e.text +
                   "' cannot be used in an expression; only d_model and "
                   "d_ff can");
    } else if (findField(e.text)) {
      error(e, "'" + e.text +
                   "' is not a number; only d_model and d_ff can "
                   "be used in a dimension");
    } else {
      llvm::SmallVector<StringRef, 2> known;
      for (StringRef f : kIntFields)
        if (dims.count(f))
          known.push_back(f);
      errorWithSuggestion(e, "use of undefined name '" + e.text + "'", e.text,
                          known);
    }
    return std::nullopt;
  }
  case Expr::Negate: {
    std::optional<Rational> v = eval(*e.lhs);
    if (!v)
      return std::nullopt;
    return negate(*v); // Cannot overflow: |num| <= INT64_MAX.
  }
  case Expr::Binary: {
    std::optional<Rational> a = eval(*e.lhs);
    std::optional<Rational> b = eval(*e.rhs);
    if (!a || !b)
      return std::nullopt;
    if (e.op == '/' && b->num == 0) {
      diags.error(e.opRange.Start, "division by zero", e.rhs->range);
      ok = false;
      return std::nullopt;
    }
    std::optional<Rational> r;
    switch (e.op) {
    case '+':
      r = add(*a, *b);
      break;
    case '-':
      r = sub(*a, *b);
      break;
    case '*':
      r = mul(*a, *b);
      break;
    default:
      r = div(*a, *b);
      break;
    }
    if (!r) {
      diags.error(e.opRange.Start,
                  "integer overflow: the result does not fit in 64 bits",
                  e.range);
      ok = false;
    }
    return r;
  }
  case Expr::Call:
    return evalCall(e);
  }
  return std::nullopt;
}

std::optional<Rational> DeclSema::evalCall(const Expr &e) {
  if (!llvm::is_contained(kFunctions, e.text)) {
    std::string msg = ("unknown function '" + e.text + "'").str();
    if (std::optional<StringRef> best = closestMatch(e.text, kFunctions))
      diags.error(e.loc(), msg + "; did you mean '" + *best + "'?",
                  SMRange(e.loc(), llvm::SMLoc::getFromPointer(e.text.data() +
                                                               e.text.size())),
                  *best);
    else
      diags.error(e.loc(), msg + " (functions: round_up, ceil_div, min, max)",
                  e.range);
    ok = false;
    return std::nullopt;
  }
  bool variadic = e.text == "min" || e.text == "max";
  if ((variadic && e.args.size() < 2) || (!variadic && e.args.size() != 2)) {
    error(e, "'" + e.text + "' takes " + (variadic ? "at least " : "") +
                 "2 arguments, got " + llvm::Twine(e.args.size()));
    return std::nullopt;
  }
  llvm::SmallVector<Rational, 4> values;
  for (const CallArg &arg : e.args) {
    if (!arg.name.empty()) {
      diags.error(arg.nameRange.Start,
                  "'" + e.text + "' takes no named arguments", arg.nameRange);
      ok = false;
      return std::nullopt;
    }
    std::optional<Rational> v = eval(*arg.value);
    if (!v)
      return std::nullopt;
    values.push_back(*v);
  }
  if (variadic) {
    Rational best = values[0];
    for (Rational v : llvm::ArrayRef(values).drop_front()) {
      // Compare a/b with c/d as a*d vs c*b in 128 bits: cannot overflow.
      __int128 lhs = static_cast<__int128>(v.num) * best.den;
      __int128 rhs = static_cast<__int128>(best.num) * v.den;
      if (e.text == "min" ? lhs < rhs : lhs > rhs)
        best = v;
    }
    return best;
  }
  const Expr &divisor = *e.args[1].value;
  if (values[1].num <= 0) {
    error(divisor, "the second argument of '" + e.text +
                       "' must be positive, got " + values[1].str());
    return std::nullopt;
  }
  std::optional<Rational> r;
  if (e.text == "round_up") {
    if (!values[1].isInteger()) {
      error(divisor, "the multiple in 'round_up' must be a whole number, "
                     "got " +
                         values[1].str());
      return std::nullopt;
    }
    r = roundUp(values[0], values[1].num);
  } else {
    r = ceilDiv(values[0], values[1]);
  }
  if (!r)
    error(e, "integer overflow: the result does not fit in 64 bits");
  return r;
}

std::optional<StringRef> DeclSema::expectName(const Field &field,
                                              StringRef what) {
  if (field.value->kind != Expr::Name) {
    error(*field.value, "expected " + what + " for '" + field.name +
                            "', found " + describeExpr(*field.value));
    return std::nullopt;
  }
  return field.value->text;
}

std::optional<bool> DeclSema::evalBool(const Field &field) {
  std::optional<StringRef> word = expectName(field, "true or false");
  if (!word)
    return std::nullopt;
  if (*word == "true")
    return true;
  if (*word == "false")
    return false;
  errorWithSuggestion(*field.value,
                      "expected true or false for '" + field.name +
                          "', found '" + *word + "'",
                      *word, kBools);
  return std::nullopt;
}

std::optional<double> DeclSema::evalNumber(const Expr &e, StringRef what) {
  if (e.kind == Expr::Negate) {
    std::optional<double> v = evalNumber(*e.lhs, what);
    if (v)
      return -*v;
    return std::nullopt;
  }
  if (e.kind != Expr::Integer && e.kind != Expr::Decimal) {
    error(e, "expected " + what + " (a number), found " + describeExpr(e));
    return std::nullopt;
  }
  // The lexer guarantees the text is a well-formed decimal literal.
  return std::strtod(e.text.str().c_str(), nullptr);
}

void DeclSema::handleNorm(const Field &field) {
  const Expr &value = *field.value;
  if (value.kind != Expr::Name && value.kind != Expr::Call) {
    error(value, "expected none, layernorm(...) or rmsnorm(...) for 'norm', "
                 "found " +
                     describeExpr(value));
    return;
  }
  std::optional<NormKind> kind = parseNormKind(value.text);
  if (!kind || (value.kind == Expr::Call && *kind == NormKind::None)) {
    std::string msg = ("unknown norm '" + value.text + "'").str();
    SMRange nameRange(value.loc(), llvm::SMLoc::getFromPointer(
                                       value.text.data() + value.text.size()));
    if (std::optional<StringRef> best =
            closestMatch(value.text, normKindNames()))
      diags.error(value.loc(), msg + "; did you mean '" + *best + "'?",
                  nameRange, *best);
    else
      diags.error(value.loc(), msg + " (norms: none, layernorm, rmsnorm)",
                  nameRange);
    ok = false;
    return;
  }
  spec.norm = *kind;
  // PyTorch's LayerNorm default; RMSNorm as in LLaMA.
  spec.normEps = *kind == NormKind::RMSNorm ? 1e-6 : 1e-5;
  llvm::StringMap<const CallArg *> given;
  for (const CallArg &arg : value.args) {
    if (arg.name.empty()) {
      error(*arg.value, "arguments of '" + value.text +
                            "' are named: write 'eps = ...' or "
                            "'position = pre|post'");
      continue;
    }
    if (!llvm::is_contained(kNormArgs, arg.name)) {
      std::string msg =
          ("unknown argument '" + arg.name + "' of '" + value.text + "'").str();
      if (std::optional<StringRef> best = closestMatch(arg.name, kNormArgs))
        diags.error(arg.nameRange.Start,
                    msg + "; did you mean '" + *best + "'?", arg.nameRange,
                    *best);
      else
        diags.error(arg.nameRange.Start, msg + " (arguments: eps, position)",
                    arg.nameRange);
      ok = false;
      continue;
    }
    auto [it, inserted] = given.try_emplace(arg.name, &arg);
    if (!inserted) {
      diags.error(arg.nameRange.Start, "duplicate argument '" + arg.name + "'",
                  arg.nameRange);
      diags.note(it->second->nameRange.Start, "first given here",
                 it->second->nameRange);
      ok = false;
      continue;
    }
    if (arg.name == "eps") {
      std::optional<double> eps = evalNumber(*arg.value, "eps");
      if (!eps)
        continue;
      if (!(*eps > 0.0 && *eps < 1.0)) {
        error(*arg.value, "eps must be a small positive number in (0, 1)");
        continue;
      }
      spec.normEps = *eps;
    } else {
      const Expr &pos = *arg.value;
      if (pos.kind != Expr::Name) {
        error(pos, "expected pre or post for 'position', found " +
                       describeExpr(pos));
        continue;
      }
      if (std::optional<NormPosition> p = parseNormPosition(pos.text)) {
        spec.normPosition = *p;
      } else {
        const StringRef positions[] = {"pre", "post"};
        errorWithSuggestion(pos,
                            "expected pre or post for 'position', found '" +
                                pos.text + "'",
                            pos.text, positions);
      }
    }
  }
}

void DeclSema::handleDType(const Field &field) {
  std::optional<StringRef> word = expectName(field, "a dtype");
  if (!word)
    return;
  if (std::optional<DType> d = parseDType(*word)) {
    spec.dtype = *d;
    return;
  }
  // Other frameworks' spellings map to ours directly.
  std::optional<StringRef> alias =
      llvm::StringSwitch<std::optional<StringRef>>(StringRef(word->lower()))
          .Cases({"fp32", "float32", "float", "float32_t"}, StringRef("f32"))
          .Cases({"fp16", "float16", "half", "float16_t"}, StringRef("f16"))
          .Cases({"bfloat16", "bfloat", "bfloat16_t"}, StringRef("bf16"))
          .Default(std::nullopt);
  if (alias) {
    error(*field.value,
          "unknown dtype '" + *word + "'; did you mean '" + *alias + "'?",
          *alias);
    return;
  }
  errorWithSuggestion(*field.value,
                      "unknown dtype '" + *word + "' (dtypes: f32, bf16, f16)",
                      *word, dtypeNames());
}

void DeclSema::handleWeights(const Field &field) {
  const Expr &value = *field.value;
  const StringRef kinds[] = {"dtype", "int8", "int4"};
  if (value.kind != Expr::Name && value.kind != Expr::Call) {
    error(value, "expected dtype, int8(...) or int4(...) for 'weights', "
                 "found " +
                     describeExpr(value));
    return;
  }
  std::optional<WeightQuant> quant =
      llvm::StringSwitch<std::optional<WeightQuant>>(value.text)
          .Case("dtype", WeightQuant::None)
          .Case("int8", WeightQuant::Int8)
          .Case("int4", WeightQuant::Int4)
          .Default(std::nullopt);
  if (quant && value.kind == Expr::Call && *quant == WeightQuant::None) {
    error(value, "'dtype' takes no arguments: the weights are stored in the "
                 "spec's dtype");
    return;
  }
  if (!quant) {
    SMRange nameRange(value.loc(), llvm::SMLoc::getFromPointer(
                                       value.text.data() + value.text.size()));
    std::string msg = ("unknown weight format '" + value.text + "'").str();
    if (std::optional<StringRef> best = closestMatch(value.text, kinds))
      diags.error(value.loc(), msg + "; did you mean '" + *best + "'?",
                  nameRange, *best);
    else
      diags.error(value.loc(), msg + " (formats: dtype, int8, int4)",
                  nameRange);
    ok = false;
    return;
  }
  spec.weightQuant = *quant;
  if (*quant == WeightQuant::None)
    return;
  // Common choices of weight-only quantizers: per-128-row groups for int8,
  // 32 for int4 (finer, as 4 bits need).
  spec.quantGroup = *quant == WeightQuant::Int8 ? 128 : 32;
  bool seenGroup = false, seenActivations = false, seenZeroPoints = false;
  const Expr *groupValue = nullptr;
  for (const CallArg &arg : value.args) {
    if (arg.name != "group" && arg.name != "activations" &&
        arg.name != "zero_points") {
      if (arg.name.empty())
        error(*arg.value, "arguments of '" + value.text +
                              "' are named: write 'group = ...'");
      else
        diags.error(arg.nameRange.Start,
                    "unknown argument '" + arg.name + "' of '" + value.text +
                        "' (arguments: group, activations, zero_points)",
                    arg.nameRange);
      ok = false;
      continue;
    }
    bool &seen = arg.name == "group"         ? seenGroup
                 : arg.name == "activations" ? seenActivations
                                             : seenZeroPoints;
    if (seen) {
      diags.error(arg.nameRange.Start,
                  "duplicate argument '" + arg.name + "'", arg.nameRange);
      ok = false;
      continue;
    }
    seen = true;
    if (arg.name == "activations") {
      const Expr &a = *arg.value;
      if (a.kind == Expr::Name && (a.text == "int8" || a.text == "dtype")) {
        spec.int8Activations = a.text == "int8";
        continue;
      }
      error(a, "expected 'dtype' or 'int8' for 'activations', found " +
                   describeExpr(a));
      continue;
    }
    if (arg.name == "zero_points") {
      const Expr &z = *arg.value;
      if (z.kind == Expr::Name && (z.text == "true" || z.text == "false")) {
        spec.zeroPoints = z.text == "true";
        if (spec.zeroPoints && *quant != WeightQuant::Int4)
          error(z, "zero points are for int4 weights (int8 is symmetric)");
        continue;
      }
      error(z, "expected 'true' or 'false' for 'zero_points', found " +
                   describeExpr(z));
      continue;
    }
    groupValue = arg.value.get();
    std::optional<Rational> v = eval(*arg.value);
    if (!v)
      continue;
    if (!v->isInteger() || v->num < 2 || v->num > 65536 || v->num % 2 != 0) {
      error(*arg.value,
            "group must be an even integer in [2, 65536], got " + v->str());
      continue;
    }
    spec.quantGroup = v->num;
  }
  // Integer dot products take whole 16-byte vectors of a group's
  // quantized activations.
  if (spec.int8Activations && spec.quantGroup % 16 != 0)
    error(groupValue ? *groupValue : value,
          "activations = int8 needs a group that is a multiple of 16, got " +
              std::to_string(spec.quantGroup));
}

void DeclSema::handleRouter(const Field &field) {
  std::optional<StringRef> word = expectName(field, "a router");
  if (!word)
    return;
  if (std::optional<Router> r = parseRouter(*word)) {
    spec.router = *r;
    return;
  }
  errorWithSuggestion(*field.value,
                      "unknown router '" + *word + "' (routers: " +
                          llvm::join(routerNames(), ", ") + ")",
                      *word, routerNames());
}

/// The mixture-of-experts fields against each other, whatever their order:
/// the routing fields need `experts`, `experts` needs `top_k`, and top_k
/// can be at most `experts`.
void DeclSema::checkMixture() {
  const Field *experts = seen.lookup("experts");
  if (!experts) {
    // A misspelled 'experts', or one dropped for a syntax error, was
    // reported already; its dependants are not errors of their own.
    if (misspelled.contains("experts") || !decl.wellFormed)
      return;
    // In source order; a duplicate was reported as such.
    for (const Field &f : decl.fields)
      if (llvm::is_contained(kMoeOnlyFields, f.name) &&
          seen.lookup(f.name) == &f) {
        diags.error(f.nameRange.Start,
                    "'" + f.name +
                        "' needs 'experts = N': it only applies to a "
                        "mixture of experts",
                    f.nameRange);
        ok = false;
      }
    return;
  }
  const Field *topK = seen.lookup("top_k");
  if (!topK) {
    if (spec.isMoe() && decl.wellFormed && !misspelled.contains("top_k")) {
      diags.error(experts->nameRange.Start,
                  "experts = " + llvm::Twine(spec.experts) +
                      " needs 'top_k', the number of routed experts each "
                      "token runs",
                  experts->nameRange);
      ok = false;
    }
  } else if (spec.isMoe() && spec.topK > spec.experts) {
    error(*topK->value, "top_k = " + llvm::Twine(spec.topK) +
                            " exceeds experts = " + llvm::Twine(spec.experts));
    diags.note(experts->nameRange.Start, "experts set here",
               experts->nameRange);
  }
  const Field *normalize = seen.lookup("normalize");
  if (normalize && spec.routerNormalize && spec.router == Router::TopKSoftmax) {
    const Field *router = seen.lookup("router");
    error(*normalize->value,
          "normalize = true applies to router = softmax_topk only: "
          "topk_softmax's weights already sum to 1");
    diags.note(router->nameRange.Start, "router set here", router->nameRange);
  }
}

/// `groups` against the widths it splits and the structures it excludes,
/// whatever the fields' order.
void DeclSema::checkGroups() {
  const Field *groups = seen.lookup("groups");
  if (!groups || !spec.isGrouped())
    return;
  for (StringRef dim : {"d_model", "d_ff"}) {
    const Field *field = seen.lookup(dim);
    auto value = dims.find(dim);
    // A width that failed to evaluate was reported already.
    if (!field || value == dims.end() || value->second % spec.groups == 0)
      continue;
    error(*groups->value,
          "groups = " + llvm::Twine(spec.groups) + " does not divide " + dim +
              " = " + llvm::Twine(value->second) + ": each block has " + dim +
              " / groups " + (dim == "d_model" ? "columns" : "hidden units"));
    diags.note(field->nameRange.Start,
               dim +
                   " set here; round it with "
                   "round_up(..., " +
                   llvm::Twine(spec.groups) + ")",
               field->nameRange);
  }
  if (const Field *experts = seen.lookup("experts"); experts && spec.isMoe()) {
    error(*groups->value, "'groups' cannot be combined with 'experts': a "
                          "mixture's experts are dense FFNs");
    diags.note(experts->nameRange.Start, "experts set here",
               experts->nameRange);
  }
}

void DeclSema::checkCombination() {
  const Field *activation = seen.lookup("activation");
  const Field *gate = seen.lookup("gate");
  if (activation && gate) {
    diags.error(
        activation->nameRange.Start,
        "'activation' cannot be combined with 'gate = " + gate->value->text +
            "': the gate variant already fixes "
            "the activation; remove one of them",
        activation->nameRange);
    diags.note(gate->nameRange.Start, "gate set here", gate->nameRange);
    ok = false;
  }
  if (spec.isGated())
    spec.activation = gateActivation(spec.gate);
  if (const Field *bg = seen.lookup("bias_gate");
      bg && gate == nullptr && activation != nullptr) {
    diags.error(bg->nameRange.Start,
                "'bias_gate' only applies to a gated FFN (one with 'gate = "
                "...')",
                bg->nameRange);
    ok = false;
  }

  // Defaults: biases on, as nn.Linear; 'bias' sets all three, the specific
  // fields override it in either order.
  bool all = biasAll.value_or(true);
  spec.biasUp = biasUp.value_or(all);
  spec.biasGate = biasGate.value_or(all);
  spec.biasDown = biasDown.value_or(all);

  checkMixture();
  checkGroups();
  checkActivationSparsity();

  // Missing fields are reported only for blocks that parsed cleanly: a field
  // with a syntax error was dropped and is not really missing.
  if (!decl.wellFormed)
    return;
  for (const FieldRule &rule : kFieldTable) {
    StringRef required = rule.name;
    if (!rule.required || seen.count(required) || misspelled.contains(required))
      continue;
    diags.error(decl.nameRange.Start,
                "ffn '" + decl.name + "' is missing required field '" +
                    required + "'",
                decl.nameRange);
    ok = false;
  }
  if (!activation && !gate && !misspelled.contains("activation") &&
      !misspelled.contains("gate")) {
    diags.error(decl.nameRange.Start,
                "ffn '" + decl.name +
                    "' needs an 'activation' (plain FFN) or a 'gate' (gated "
                    "FFN)",
                decl.nameRange);
    ok = false;
  }
}

} // namespace

/// Why `spec` cannot use the parameters of `owner` (empty: it can): they
/// must be the same tensors, stored and packed the same way.
static std::string sharingMismatch(const FfnSpec &spec, const FfnSpec &owner) {
  if (spec.dtype != owner.dtype)
    return "its dtype is " + toString(spec.dtype).str() + ", '" + owner.name +
           "''s " + toString(owner.dtype).str();
  if (spec.weightQuant != owner.weightQuant ||
      spec.quantGroup != owner.quantGroup ||
      spec.int8Activations != owner.int8Activations ||
      spec.zeroPoints != owner.zeroPoints)
    return "its weights are stored differently (weights = ...)";
  if (spec.groups != owner.groups)
    return "it has groups = " + std::to_string(spec.groups) + ", '" +
           owner.name + "' groups = " + std::to_string(owner.groups);
  if (spec.batchInvariant != owner.batchInvariant)
    return "one is batch_invariant and the other not (their kernels pack "
           "W_down differently)";
  std::vector<ParamInfo> mine = kernelParams(spec),
                         theirs = kernelParams(owner);
  auto shape = [](const ParamInfo &p) {
    std::string s = "[";
    if (p.experts)
      s += std::to_string(p.experts) + ", ";
    s += std::to_string(p.rows);
    if (p.cols)
      s += ", " + std::to_string(p.cols);
    return s + "]";
  };
  auto has = [](const std::vector<ParamInfo> &params, const std::string &n) {
    return llvm::any_of(params,
                        [&](const ParamInfo &p) { return p.name == n; });
  };
  for (const ParamInfo &p : mine)
    if (!has(theirs, p.name))
      return "this block has '" + p.name + "', which '" + owner.name +
             "' has not";
  for (const ParamInfo &p : theirs)
    if (!has(mine, p.name))
      return "'" + owner.name + "' has '" + p.name +
             "', which this block has not";
  // The same names, in the one order kernelParams gives.
  for (size_t i = 0; i < mine.size(); ++i) {
    if (shape(mine[i]) != shape(theirs[i]))
      return "'" + mine[i].name + "' is " + shape(mine[i]) + " here and " +
             shape(theirs[i]) + " in '" + owner.name + "'";
  }
  return "";
}

void ffnc::checkSharing(const std::vector<FfnSpec> &specs,
                        const llvm::StringMap<const FfnDecl *> &decls,
                        DiagnosticEngine &diags) {
  for (const FfnSpec &spec : specs) {
    if (spec.share.empty())
      continue;
    llvm::SMLoc at = spec.shareRange.Start;
    if (spec.share == spec.name) {
      diags.error(at, "ffn '" + spec.name + "' cannot share its own weights",
                  spec.shareRange);
      continue;
    }
    const FfnSpec *owner = nullptr;
    for (const FfnSpec &s : specs)
      if (s.name == spec.share)
        owner = &s;
    if (!owner) {
      // A block that failed its own checks was reported already.
      if (!decls.count(spec.share))
        diags.error(at,
                    "share = " + spec.share +
                        ": no ffn block of that name "
                        "in this file",
                    spec.shareRange);
      continue;
    }
    const FfnDecl *ownerDecl = decls.lookup(spec.share);
    if (!owner->share.empty()) {
      diags.error(at,
                  "'" + owner->name + "' uses the weights of '" + owner->share +
                      "' itself: share = " + owner->share,
                  spec.shareRange);
      diags.note(owner->shareRange.Start, "'" + owner->name + "' shares here",
                 owner->shareRange);
      continue;
    }
    std::string why = sharingMismatch(spec, *owner);
    if (why.empty())
      continue;
    diags.error(at,
                "ffn '" + spec.name + "' cannot use the weights of '" +
                    owner->name + "': " + why,
                spec.shareRange);
    diags.note(ownerDecl->nameRange.Start, "'" + owner->name + "' is here",
               ownerDecl->nameRange);
  }
}

std::vector<FfnSpec> ffnc::analyzeSpec(const SpecFile &file,
                                       DiagnosticEngine &diags) {
  std::vector<FfnSpec> specs;
  llvm::StringMap<const FfnDecl *> names;
  for (const FfnDecl &decl : file.decls) {
    if (diags.shouldStop())
      break;
    auto [it, inserted] = names.try_emplace(decl.name, &decl);
    if (!inserted) {
      diags.error(decl.nameRange.Start,
                  "duplicate ffn name '" + decl.name + "'", decl.nameRange);
      diags.note(it->second->nameRange.Start, "first defined here",
                 it->second->nameRange);
    }
    std::optional<FfnSpec> spec = DeclSema(decl, diags).run();
    if (spec && inserted && decl.wellFormed)
      specs.push_back(std::move(*spec));
  }
  checkSharing(specs, names, diags);
  return specs;
}

std::vector<FfnSpec> ffnc::compileSpecBuffer(llvm::StringRef buffer,
                                             DiagnosticEngine &diags,
                                             SpecFile *astOut) {
  SpecFile file = parseSpec(buffer, diags);
  std::vector<FfnSpec> specs = analyzeSpec(file, diags);
  if (astOut)
    *astOut = std::move(file);
  return specs;
}

std::string ffnc::specFieldTable() {
  std::string out;
  for (const FieldRule &rule : kFieldTable)
    out +=
        ("| `" + rule.name + "` | " + rule.value + " | " + rule.defaultValue +
         " |" + (rule.notes.empty() ? " |" : " " + rule.notes + " |") + "\n")
            .str();
  return out;
}
