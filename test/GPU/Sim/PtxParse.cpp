//===- PtxParse.cpp - PTX text into the interpreter's form ----------------===//
//
// A tokenizer and a statement parser for the PTX that LLVM's NVPTX back end
// prints: module directives, variables, kernels (.entry) with their
// parameters, register declarations, labels and instructions. Anything the
// interpreter could not run faithfully (calls, local memory, textures) is
// refused here with its line rather than misread later.
//
//===----------------------------------------------------------------------===//

#include "PtxModule.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace ptxsim {

Type parseType(const std::string &s) {
  static const std::map<std::string, Type> types = {
      {"b8", Type::B8},     {"u8", Type::U8},       {"s8", Type::S8},
      {"b16", Type::B16},   {"u16", Type::U16},     {"s16", Type::S16},
      {"b32", Type::B32},   {"u32", Type::U32},     {"s32", Type::S32},
      {"b64", Type::B64},   {"u64", Type::U64},     {"s64", Type::S64},
      {"f16", Type::F16},   {"bf16", Type::BF16},   {"f32", Type::F32},
      {"f64", Type::F64},   {"f16x2", Type::F16x2}, {"bf16x2", Type::BF16x2},
      {"tf32", Type::TF32}, {"pred", Type::Pred},   {"e4m3", Type::E4M3},
      {"e5m2", Type::E5M2}, {"s4", Type::S4},       {"u4", Type::U4}};
  auto it = types.find(s);
  return it == types.end() ? Type::None : it->second;
}

unsigned typeBytes(Type t) {
  switch (t) {
  case Type::B8:
  case Type::U8:
  case Type::S8:
  case Type::E4M3:
  case Type::E5M2:
    return 1;
  case Type::B16:
  case Type::U16:
  case Type::S16:
  case Type::F16:
  case Type::BF16:
    return 2;
  case Type::B64:
  case Type::U64:
  case Type::S64:
  case Type::F64:
    return 8;
  case Type::None:
  case Type::Pred:
    return 0;
  default:
    return 4;
  }
}

namespace {

struct Token {
  std::string text;
  int line;
};

bool identChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '%' || c == '.';
}

std::vector<Token> tokenize(const std::string &s) {
  std::vector<Token> out;
  int line = 1;
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n')
        ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      i += 2;
      while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/')) {
        line += s[i] == '\n';
        ++i;
      }
      i += 2;
    } else if (c == '"') {
      size_t j = s.find('"', i + 1);
      j = j == std::string::npos ? s.size() : j + 1;
      out.push_back({s.substr(i, j - i), line});
      i = j;
    } else if (identChar(c)) {
      // "::" belongs to the name (fence.proxy.async.shared::cta); a single
      // ':' ends a label.
      size_t j = i;
      while (j < s.size() &&
             (identChar(s[j]) ||
              (s[j] == ':' && j + 1 < s.size() && s[j + 1] == ':' &&
               j + 2 < s.size() && identChar(s[j + 2])))) {
        j += s[j] == ':' ? 2 : 1;
      }
      out.push_back({s.substr(i, j - i), line});
      i = j;
    } else {
      out.push_back({std::string(1, c), line});
      ++i;
    }
  }
  return out;
}

bool parseNumber(const std::string &t, int64_t &value) {
  if (t.empty() || !std::isdigit(static_cast<unsigned char>(t[0])))
    return false;
  std::string s = t;
  if (!s.empty() && (s.back() == 'U' || s.back() == 'u'))
    s.pop_back();
  char *end = nullptr;
  if (s.size() == 10 && (s[1] == 'f' || s[1] == 'F') && s[0] == '0') {
    value = static_cast<int64_t>(std::strtoull(s.c_str() + 2, &end, 16));
  } else if (s.size() == 18 && (s[1] == 'd' || s[1] == 'D') && s[0] == '0') {
    value = static_cast<int64_t>(std::strtoull(s.c_str() + 2, &end, 16));
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    value = static_cast<int64_t>(std::strtoull(s.c_str() + 2, &end, 16));
  } else {
    value = static_cast<int64_t>(std::strtoull(s.c_str(), &end, 10));
  }
  return end && *end == '\0';
}

const std::map<std::string, Special> &specials() {
  static const std::map<std::string, Special> m = {
      {"%tid.x", Special::TidX},
      {"%tid.y", Special::TidY},
      {"%tid.z", Special::TidZ},
      {"%ntid.x", Special::NtidX},
      {"%ntid.y", Special::NtidY},
      {"%ntid.z", Special::NtidZ},
      {"%ctaid.x", Special::CtaidX},
      {"%ctaid.y", Special::CtaidY},
      {"%ctaid.z", Special::CtaidZ},
      {"%nctaid.x", Special::NctaidX},
      {"%nctaid.y", Special::NctaidY},
      {"%nctaid.z", Special::NctaidZ},
      {"%laneid", Special::LaneId},
      {"%warpid", Special::WarpId},
      {"%dynamic_smem_size", Special::DynSmem}};
  return m;
}

uint64_t flagOf(const std::string &mod) {
  static const std::map<std::string, Flag> flags = {
#define PTXSIM_FLAG_ENTRY(name) {#name, F_##name},
      PTXSIM_FLAGS(PTXSIM_FLAG_ENTRY)
#undef PTXSIM_FLAG_ENTRY
  };
  auto it = flags.find(mod);
  return it == flags.end() ? 0 : 1ull << it->second;
}

class Parser {
public:
  Parser(std::vector<Token> tokens, std::string path, Module &module)
      : toks(std::move(tokens)), path(std::move(path)), module(module) {}

  std::string run() {
    while (pos < toks.size() && error.empty())
      topLevel();
    return error;
  }

private:
  std::vector<Token> toks;
  size_t pos = 0;
  std::string path;
  Module &module;
  std::string error;

  // Per-kernel state.
  Kernel *kernel = nullptr;
  std::map<std::string, int> symbols;
  // Registers and labels belong to the { } block that declares them and
  // are visible in the blocks inside it: LLVM prints each inline-asm
  // statement as a block, and two of them (two mbarrier wait loops) declare
  // the same register and label names.
  struct Scope {
    int parent; // -1 for the kernel body
    std::map<std::string, int> regs, labels;
  };
  std::vector<Scope> scopes; // every block of the kernel, by id
  int scope = 0;             // the innermost open block
  int registers = 0;         // registers allocated so far
  // The kernel's dynamic shared symbols, placed when the kernel ends, and
  // the largest alignment they ask for.
  std::vector<int> dynamicSymbols;
  uint64_t dynamicAlign = 16;

  const std::string &peek(size_t ahead = 0) const {
    static const std::string end;
    return pos + ahead < toks.size() ? toks[pos + ahead].text : end;
  }
  int line() const {
    return pos < toks.size() ? toks[pos].line
           : toks.empty()    ? 0
                             : toks.back().line;
  }
  void fail(const std::string &what) {
    if (error.empty())
      error = path + ":" + std::to_string(line()) + ": " + what;
    pos = toks.size();
  }
  bool accept(const char *t) {
    if (peek() == t) {
      ++pos;
      return true;
    }
    return false;
  }
  void expect(const char *t) {
    if (!accept(t))
      fail(std::string("expected '") + t + "', found '" + peek() + "'");
  }
  void skipLine() {
    int l = line();
    while (pos < toks.size() && toks[pos].line == l)
      ++pos;
  }
  void skipStatement() {
    while (pos < toks.size() && peek() != ";")
      ++pos;
    accept(";");
  }

  void topLevel() {
    const std::string &t = peek();
    if (t == ".version" || t == ".target" || t == ".address_size") {
      skipLine();
    } else if (t == ".visible" || t == ".weak" || t == ".extern") {
      if (peek(1) == ".func" || (t == ".extern" && peek(1) == ".func"))
        return fail("function declarations are not supported");
      ++pos;
    } else if (t == ".entry") {
      ++pos;
      entry();
    } else if (t == ".func") {
      fail("device functions (.func) are not supported");
    } else if (t == ".shared" || t == ".global" || t == ".const") {
      Variable v;
      if (variable(v, pos > 0 && toks[pos - 1].text == ".extern"))
        module.variables.push_back(std::move(v));
    } else if (t == ".file" || t == ".loc" || t == ".section") {
      skipLine();
    } else {
      fail("unexpected '" + t + "' at module scope");
    }
  }

  /// [.extern] .shared|.global|.const [.align N] .type name[[N]] [= {...}];
  bool variable(Variable &v, bool external) {
    v.space = peek().substr(1);
    ++pos;
    Type type = Type::B8;
    while (peek().size() > 1 && peek()[0] == '.') {
      if (accept(".align")) {
        int64_t a = 0;
        if (!parseNumber(peek(), a))
          return fail("bad alignment"), false;
        v.align = static_cast<unsigned>(a);
        ++pos;
        continue;
      }
      Type t = parseType(peek().substr(1));
      if (t == Type::None)
        return fail("unsupported variable qualifier '" + peek() + "'"), false;
      type = t;
      ++pos;
    }
    v.name = peek();
    ++pos;
    uint64_t count = 1;
    if (accept("[")) {
      if (accept("]")) {
        v.dynamic = true;
        count = 0;
      } else {
        int64_t n = 0;
        if (!parseNumber(peek(), n))
          return fail("bad array size"), false;
        ++pos;
        count = static_cast<uint64_t>(n);
        expect("]");
      }
    }
    unsigned elem = typeBytes(type) ? typeBytes(type) : 1;
    v.size = count * elem;
    if (v.dynamic && !external)
      return fail("an unsized variable must be .extern"), false;
    if (accept("=")) {
      expect("{");
      while (error.empty() && !accept("}")) {
        int64_t n = 0;
        bool neg = accept("-");
        if (!parseNumber(peek(), n))
          return fail("bad initializer '" + peek() + "'"), false;
        ++pos;
        if (neg)
          n = -n;
        for (unsigned b = 0; b < elem; ++b)
          v.init.push_back(
              static_cast<uint8_t>(static_cast<uint64_t>(n) >> (8 * b)));
        accept(",");
      }
    }
    expect(";");
    return error.empty();
  }

  void entry() {
    Kernel k;
    k.name = peek();
    ++pos;
    kernel = &module.kernels[k.name];
    *kernel = std::move(k);
    symbols.clear();
    scopes.assign(1, Scope{-1, {}, {}});
    scope = 0;
    registers = 0;
    dynamicSymbols.clear();
    dynamicAlign = 16;
    // Module-scope variables are visible in every kernel.
    for (Variable &v : module.variables)
      addVariable(v);
    expect("(");
    while (error.empty() && !accept(")")) {
      param();
      accept(",");
    }
    // Performance directives (.maxntid, .reqntid, .minnctapersm, ...).
    while (error.empty() && peek() != "{") {
      if (peek().empty())
        return fail("missing kernel body");
      ++pos;
    }
    expect("{");
    body();
    finishKernel();
  }

  void param() {
    expect(".param");
    Param p;
    unsigned align = 0, size = 0;
    uint64_t count = 1;
    while (error.empty() && peek().size() > 1 && peek()[0] == '.') {
      if (accept(".align")) {
        int64_t a = 0;
        parseNumber(peek(), a);
        ++pos;
        align = static_cast<unsigned>(a);
      } else if (accept(".ptr") || accept(".global") || accept(".shared") ||
                 accept(".const") || accept(".local")) {
      } else {
        Type t = parseType(peek().substr(1));
        if (t == Type::None)
          return fail("unsupported parameter qualifier '" + peek() + "'");
        size = typeBytes(t);
        ++pos;
      }
    }
    p.name = peek();
    ++pos;
    if (accept("[")) {
      int64_t n = 0;
      parseNumber(peek(), n);
      ++pos;
      count = static_cast<uint64_t>(n);
      expect("]");
    }
    p.size = static_cast<unsigned>(size * count);
    align = std::max(align, size);
    kernel->paramBytes = (kernel->paramBytes + align - 1) / align * align;
    p.offset = kernel->paramBytes;
    kernel->paramBytes += p.size;
    symbols[p.name] = static_cast<int>(kernel->symbols.size());
    kernel->symbols.push_back({Symbol::Param, p.offset});
    kernel->params.push_back(p);
  }

  void addVariable(Variable &v) {
    Symbol s;
    if (v.space == "shared") {
      s.kind = Symbol::Shared;
      if (v.dynamic) {
        // Placed after every static variable once the kernel is read.
        dynamicSymbols.push_back(static_cast<int>(kernel->symbols.size()));
        dynamicAlign = std::max<uint64_t>(dynamicAlign, v.align);
      } else {
        uint64_t a = v.align ? v.align : 1;
        kernel->staticShared = (kernel->staticShared + a - 1) / a * a;
        s.value = kernel->staticShared;
        kernel->staticShared += v.size;
      }
    } else {
      s.kind = Symbol::Global;
      if (!v.address) {
        // Module constants live as long as the simulator.
        uint8_t *mem = new uint8_t[v.size ? v.size : 1]();
        std::memcpy(mem, v.init.data(),
                    std::min<size_t>(v.init.size(), v.size));
        v.address = reinterpret_cast<uint64_t>(mem);
      }
      s.value = v.address;
    }
    symbols[v.name] = static_cast<int>(kernel->symbols.size());
    kernel->symbols.push_back(s);
  }

  void finishKernel() {
    // Dynamic shared memory follows the static variables, at the largest
    // alignment any dynamic declaration asks for.
    kernel->staticShared =
        (kernel->staticShared + dynamicAlign - 1) / dynamicAlign * dynamicAlign;
    for (int i : dynamicSymbols)
      kernel->symbols[i].value = kernel->staticShared;
    kernel->registers = registers;
    kernel = nullptr;
  }

  /// The register `name` names in the current block, or -1.
  int findReg(const std::string &name) const {
    for (int s = scope; s >= 0; s = scopes[s].parent) {
      auto it = scopes[s].regs.find(name);
      if (it != scopes[s].regs.end())
        return it->second;
    }
    return -1;
  }

  /// A register declared in the current block.
  int declare(const std::string &name) {
    auto [it, inserted] = scopes[scope].regs.emplace(name, registers);
    registers += inserted;
    return it->second;
  }

  /// The register `name` names; one not declared belongs to the kernel.
  int reg(const std::string &name) {
    int r = findReg(name);
    if (r >= 0)
      return r;
    auto [it, inserted] = scopes[0].regs.emplace(name, registers);
    registers += inserted;
    return it->second;
  }

  void declareRegs() {
    // .reg .type %r<N>;  or  .reg .type a, b;
    ++pos;
    while (error.empty() && peek().size() > 1 && peek()[0] == '.')
      ++pos;
    while (error.empty() && peek() != ";") {
      std::string name = peek();
      ++pos;
      if (accept("<")) {
        int64_t n = 0;
        parseNumber(peek(), n);
        ++pos;
        expect(">");
        for (int64_t i = 0; i < n; ++i)
          declare(name + std::to_string(i));
      } else {
        declare(name);
      }
      accept(",");
    }
    expect(";");
  }

  void body() {
    int depth = 1;
    while (error.empty() && depth > 0) {
      const std::string &t = peek();
      if (t.empty())
        return fail("unterminated kernel body");
      if (t == "{") {
        ++depth;
        ++pos;
        scopes.push_back(Scope{scope, {}, {}});
        scope = static_cast<int>(scopes.size()) - 1;
      } else if (t == "}") {
        --depth;
        ++pos;
        scope = std::max(0, scopes[scope].parent);
      } else if (t == ".reg") {
        declareRegs();
      } else if (t == ".shared") {
        Variable v;
        if (variable(v, false))
          addVariable(v);
      } else if (t == ".local") {
        fail("local memory (.local) is not supported: the kernels must not "
             "spill");
      } else if (t == ".pragma") {
        skipStatement();
      } else if (peek(1) == ":" && t[0] != '.' && t[0] != '@') {
        scopes[scope].labels[t] = static_cast<int>(kernel->code.size());
        pos += 2;
      } else {
        instruction();
      }
    }
    // Resolve branch targets now that every label is known.
    for (size_t i = 0; i < kernel->code.size(); ++i) {
      Instr &in = kernel->code[i];
      if (in.opcode != "bra")
        continue;
      Operand &o = in.operands.at(0);
      const auto &[from, name] = unresolved[i];
      o.imm = -1;
      for (int s = from; s >= 0 && o.imm < 0; s = scopes[s].parent) {
        auto it = scopes[s].labels.find(name);
        if (it != scopes[s].labels.end())
          o.imm = it->second;
      }
      if (o.imm < 0) {
        error = path + ":" + std::to_string(in.line) + ": unknown label '" +
                name + "'";
        return;
      }
      o.kind = Operand::Label;
    }
    unresolved.clear();
  }

  // bra instruction -> the block it is in and its label
  std::map<size_t, std::pair<int, std::string>> unresolved;

  void instruction() {
    Instr in;
    in.line = line();
    if (accept("@")) {
      in.guardNegated = accept("!");
      in.guard = reg(peek());
      ++pos;
    }
    std::string op = peek();
    ++pos;
    size_t dot = op.find('.');
    in.opcode = op.substr(0, dot);
    while (dot != std::string::npos) {
      size_t next = op.find('.', dot + 1);
      std::string mod =
          op.substr(dot + 1, next == std::string::npos ? std::string::npos
                                                       : next - dot - 1);
      Type t = parseType(mod);
      if (t != Type::None)
        in.types.push_back(t);
      // A CTA's own shared memory: a shared::cluster address of a
      // one-CTA cluster is its shared::cta address.
      bool shared = mod == "shared::cta" || mod == "shared::cluster";
      in.flags |= flagOf(shared ? "shared" : mod);
      in.mods.push_back(mod);
      dot = next;
    }
    if (in.opcode == "call")
      return fail("calls are not supported");
    if (in.opcode == "tex" || in.opcode == "suld" || in.opcode == "sust")
      return fail("textures and surfaces are not supported");
    while (error.empty() && peek() != ";") {
      if (peek().empty())
        return fail("unterminated instruction");
      Operand o = operand();
      if (in.opcode == "bra" && in.operands.empty())
        unresolved[kernel->code.size()] = {scope, lastName};
      in.operands.push_back(std::move(o));
      if (!accept(","))
        accept("|"); // setp's second destination is not supported (see below)
    }
    expect(";");
    kernel->code.push_back(std::move(in));
  }

  std::string lastName;

  Operand operand() {
    Operand o;
    const std::string t = peek();
    if (t == "{") {
      ++pos;
      o.kind = Operand::Vector;
      while (error.empty() && !accept("}")) {
        o.elements.push_back(operand());
        accept(",");
      }
      return o;
    }
    if (t == "[") {
      ++pos;
      o.kind = Operand::Address;
      std::string base = peek();
      int64_t n = 0;
      if (parseNumber(base, n)) {
        o.imm = n;
      } else {
        ++pos;
        auto sym = symbols.find(base);
        if (sym != symbols.end() && findReg(base) < 0)
          o.symbol = sym->second;
        else
          o.reg = reg(base);
      }
      if (accept("+")) {
        bool neg = accept("-");
        if (!parseNumber(peek(), n))
          fail("bad address offset '" + peek() + "'");
        ++pos;
        o.imm = neg ? -n : n;
      } else if (o.kind == Operand::Address && peek() != "]") {
        if (parseNumber(peek(), n))
          ++pos;
      }
      // [tensorMap, {c0, c1, ...}] (cp.async.bulk.tensor): the
      // coordinates ride along as the address's elements.
      if (accept(",")) {
        Operand coords = operand();
        if (coords.kind != Operand::Vector)
          fail("expected tensor coordinates, found '" + peek() + "'");
        o.elements = std::move(coords.elements);
      }
      expect("]");
      return o;
    }
    if (t == "-" || t == "!") {
      ++pos;
      int64_t n = 0;
      if (t == "-" && parseNumber(peek(), n)) {
        ++pos;
        o.kind = Operand::Imm;
        o.imm = -n;
        return o;
      }
      fail("unsupported operand '" + t + peek() + "'");
      return o;
    }
    int64_t n = 0;
    if (parseNumber(t, n)) {
      ++pos;
      o.kind = Operand::Imm;
      o.imm = n;
      return o;
    }
    ++pos;
    lastName = t;
    if (t == "_") {
      o.kind = Operand::Sink;
      return o;
    }
    auto sp = specials().find(t);
    if (sp != specials().end()) {
      o.kind = Operand::Special;
      o.special = sp->second;
      return o;
    }
    if (t[0] == '%') {
      o.kind = Operand::Reg;
      o.reg = reg(t);
      return o;
    }
    if (int r = findReg(t); r >= 0) {
      o.kind = Operand::Reg;
      o.reg = r;
      return o;
    }
    auto sym = symbols.find(t);
    if (sym != symbols.end()) {
      o.kind = Operand::Symbol;
      o.symbol = sym->second;
      return o;
    }
    // A branch target (resolved at the end of the body) or an error the
    // interpreter reports if it is ever used as a value.
    o.kind = Operand::Label;
    o.imm = -1;
    return o;
  }
};

} // namespace

std::string parse(const std::string &text, const std::string &path,
                  Module &module) {
  Parser p(tokenize(text), path, module);
  return p.run();
}

} // namespace ptxsim
