//===- PtxExec.cpp - the PTX interpreter: scheduling and scalar code ------===//
//
// Each thread runs on its own until it reaches a warp-collective
// instruction, a block barrier or its end (independent thread scheduling);
// a warp's collective runs once all its live lanes wait at the same one, a
// barrier releases once every live thread of the block waits at it, and no
// progress at all is a reported deadlock. Registers hold raw bits (64 per
// register); each instruction reads them at the width its type names.
//
//===----------------------------------------------------------------------===//

#include "PtxExec.h"
#include "PtxFloat.h"
#include "PtxSim.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>

namespace ptxsim {
namespace {

std::vector<std::unique_ptr<Module>> modules;
std::map<std::string, const Kernel *> kernels;
std::map<uint64_t, uint64_t> allocations; // base -> bytes
std::string lastError;

enum Code {
  OpUnknown,
  OpMov,
  OpLd,
  OpSt,
  OpCvta,
  OpCvt,
  OpAdd,
  OpSub,
  OpMul,
  OpMad,
  OpFma,
  OpDiv,
  OpRem,
  OpNeg,
  OpAbs,
  OpMin,
  OpMax,
  OpAnd,
  OpOr,
  OpXor,
  OpNot,
  OpShl,
  OpShr,
  OpSetp,
  OpSelp,
  OpBra,
  OpRet,
  OpBar,
  OpNop,
  OpCpAsync,
  OpCpCommit,
  OpCpWait,
  OpCpWaitAll,
  OpMbarrier,
  OpCpBulk,
  OpWarp,
  OpAtom,
  OpEx2,
  OpLg2,
  OpRcp,
  OpSqrt,
  OpRsqrt,
  OpTanh,
  OpSin,
  OpCos,
  OpPrmt,
  OpBfe,
  OpBfi,
  OpLop3,
  OpShf,
  OpPopc,
  OpClz,
  OpBrev,
  OpCopysign,
  OpTestp
};

int codeOf(const Instr &in) {
  static const std::map<std::string, int> codes = {{"mov", OpMov},
                                                   {"ld", OpLd},
                                                   {"ldu", OpLd},
                                                   {"st", OpSt},
                                                   {"cvta", OpCvta},
                                                   {"cvt", OpCvt},
                                                   {"add", OpAdd},
                                                   {"sub", OpSub},
                                                   {"mul", OpMul},
                                                   {"mad", OpMad},
                                                   {"fma", OpFma},
                                                   {"div", OpDiv},
                                                   {"rem", OpRem},
                                                   {"neg", OpNeg},
                                                   {"abs", OpAbs},
                                                   {"min", OpMin},
                                                   {"max", OpMax},
                                                   {"and", OpAnd},
                                                   {"or", OpOr},
                                                   {"xor", OpXor},
                                                   {"not", OpNot},
                                                   {"shl", OpShl},
                                                   {"shr", OpShr},
                                                   {"setp", OpSetp},
                                                   {"selp", OpSelp},
                                                   {"bra", OpBra},
                                                   {"ret", OpRet},
                                                   {"exit", OpRet},
                                                   {"bar", OpBar},
                                                   {"barrier", OpBar},
                                                   {"membar", OpNop},
                                                   {"fence", OpNop},
                                                   {"prefetch", OpNop},
                                                   {"prefetchu", OpNop},
                                                   {"pmevent", OpNop},
                                                   {"nanosleep", OpNop},
                                                   {"setmaxnreg", OpNop},
                                                   {"griddepcontrol", OpNop},
                                                   {"atom", OpAtom},
                                                   {"red", OpAtom},
                                                   {"ex2", OpEx2},
                                                   {"lg2", OpLg2},
                                                   {"rcp", OpRcp},
                                                   {"sqrt", OpSqrt},
                                                   {"rsqrt", OpRsqrt},
                                                   {"tanh", OpTanh},
                                                   {"sin", OpSin},
                                                   {"cos", OpCos},
                                                   {"prmt", OpPrmt},
                                                   {"bfe", OpBfe},
                                                   {"bfi", OpBfi},
                                                   {"lop3", OpLop3},
                                                   {"shf", OpShf},
                                                   {"popc", OpPopc},
                                                   {"clz", OpClz},
                                                   {"brev", OpBrev},
                                                   {"copysign", OpCopysign},
                                                   {"testp", OpTestp},
                                                   {"mma", OpWarp},
                                                   {"ldmatrix", OpWarp},
                                                   {"stmatrix", OpWarp},
                                                   {"shfl", OpWarp},
                                                   {"vote", OpWarp},
                                                   {"wgmma", OpWarp},
                                                   {"redux", OpWarp}};
  if (in.opcode == "bar" && in.has(F_warp))
    return OpWarp;
  if (in.opcode == "wgmma" && in.has(F_fence))
    return OpNop; // registers and shared memory are ordered here anyway
  if (in.opcode == "mbarrier")
    return isModelledMbarrier(in) ? OpMbarrier : OpUnknown;
  if (in.opcode == "cp" && in.has(F_async) && in.has("bulk"))
    return isModelledBulkCopy(in) ? OpCpBulk : OpUnknown;
  if (in.opcode == "cp" && in.has(F_async)) {
    if (in.has(F_commit_group))
      return OpCpCommit;
    if (in.has(F_wait_group))
      return OpCpWait;
    if (in.has(F_wait_all))
      return OpCpWaitAll;
    return OpCpAsync;
  }
  auto it = codes.find(in.opcode);
  return it == codes.end() ? OpUnknown : it->second;
}

std::string fullName(const Instr &in) {
  std::string name = in.opcode;
  for (const std::string &m : in.mods)
    name += "." + m;
  return name;
}

[[noreturn]] void unsupported(const Instr &in, const char *why) {
  throw SimError(std::string(why) + ": " + fullName(in));
}

// --- Types ------------------------------------------------------------------

bool isSigned(Type t) {
  return t == Type::S8 || t == Type::S16 || t == Type::S32 || t == Type::S64;
}
bool isFloat(Type t) {
  return t == Type::F16 || t == Type::BF16 || t == Type::F32 ||
         t == Type::F64 || t == Type::F16x2 || t == Type::BF16x2 ||
         t == Type::TF32;
}
unsigned bitsOfType(Type t) {
  unsigned b = typeBytes(t) * 8;
  return b ? b : 64;
}
uint64_t truncate(Type t, uint64_t v) {
  unsigned b = bitsOfType(t);
  return b >= 64 ? v : v & ((1ull << b) - 1);
}
int64_t signExtend(Type t, uint64_t v) {
  unsigned b = bitsOfType(t);
  if (b >= 64)
    return static_cast<int64_t>(v);
  uint64_t m = 1ull << (b - 1);
  v &= (1ull << b) - 1;
  return static_cast<int64_t>((v ^ m) - m);
}

/// A scalar float operand's value as a double (f16, bf16, f32, f64).
double toDouble(Type t, uint64_t v) {
  switch (t) {
  case Type::F16:
    return f16ToF32(static_cast<uint16_t>(v));
  case Type::BF16:
    return bf16ToF32(static_cast<uint16_t>(v));
  case Type::F64:
    return asF64(v);
  default:
    return asF32(v);
  }
}

uint64_t fromFloat(Type t, float f, Round r = Round::Nearest) {
  switch (t) {
  case Type::F16:
    return f32ToF16(f, r);
  case Type::BF16:
    return f32ToBf16(f, r);
  default:
    return bitsOf(f);
  }
}

Round roundingOf(const Instr &in) {
  if (in.has(F_rz) || in.has(F_rzi))
    return Round::Zero;
  if (in.has(F_rm) || in.has(F_rmi))
    return Round::Down;
  if (in.has(F_rp) || in.has(F_rpi))
    return Round::Up;
  return Round::Nearest;
}

// --- Operands ---------------------------------------------------------------

uint64_t special(const Block &b, const Thread &t, Special s) {
  switch (s) {
  case Special::TidX:
    return t.tid[0];
  case Special::TidY:
    return t.tid[1];
  case Special::TidZ:
    return t.tid[2];
  case Special::NtidX:
    return b.dims[0];
  case Special::NtidY:
    return b.dims[1];
  case Special::NtidZ:
    return b.dims[2];
  case Special::CtaidX:
    return b.ctaid[0];
  case Special::CtaidY:
    return b.ctaid[1];
  case Special::CtaidZ:
    return b.ctaid[2];
  case Special::NctaidX:
    return b.grid[0];
  case Special::NctaidY:
    return b.grid[1];
  case Special::NctaidZ:
    return b.grid[2];
  case Special::LaneId:
    return t.linear % 32;
  case Special::WarpId:
    return t.linear / 32;
  case Special::DynSmem:
    return b.dynamicShared;
  }
  return 0;
}

void write(Thread &t, const Operand &o, uint64_t v) {
  if (o.kind == Operand::Sink)
    return;
  if (o.kind != Operand::Reg)
    throw SimError("destination is not a register");
  t.regs[o.reg] = v;
}

// --- Memory -----------------------------------------------------------------

enum class Space { Generic, Global, Shared, Param, Const };

Space spaceOf(const Instr &in) {
  if (in.has(F_global))
    return Space::Global;
  if (in.has(F_shared))
    return Space::Shared;
  if (in.has(F_param))
    return Space::Param;
  if (in.has(F_const))
    return Space::Const;
  return Space::Generic;
}

uint8_t *pointerIn(Block &b, Space s, uint64_t address, unsigned bytes,
                   bool write) {
  switch (s) {
  case Space::Param:
    return paramPointer(b, address, bytes);
  case Space::Shared:
    return programShared(b, address, bytes, write);
  case Space::Generic:
    if (address >= kSharedWindow)
      return programShared(b, address - kSharedWindow, bytes, write);
    if (address >= kParamWindow) {
      if (write)
        throw SimError("a store to the kernel's parameters, which are "
                       "read-only");
      return paramPointer(b, address - kParamWindow, bytes);
    }
    [[fallthrough]];
  case Space::Global:
  case Space::Const:
    return static_cast<uint8_t *>(globalPointer(address, bytes));
  }
  return nullptr;
}

unsigned vectorWidth(const Instr &in) {
  if (in.has(F_v2))
    return 2;
  if (in.has(F_v4))
    return 4;
  if (in.has(F_v8))
    return 8;
  return 1;
}

uint64_t loadValue(const uint8_t *p, Type t) {
  uint64_t v = 0;
  std::memcpy(&v, p, typeBytes(t));
  return isSigned(t) ? static_cast<uint64_t>(signExtend(t, v)) : v;
}

void load(Block &b, Thread &t, const Instr &in) {
  Type ty = in.types.back();
  unsigned n = vectorWidth(in), size = typeBytes(ty);
  uint64_t address = operandAddress(b, t, in.operands.at(1));
  uint8_t *p = pointerIn(b, spaceOf(in), address, n * size, false);
  const Operand &d = in.operands[0];
  if (n == 1)
    return write(t, d, loadValue(p, ty));
  if (d.kind != Operand::Vector || d.elements.size() != n)
    throw SimError("vector load needs a vector of registers");
  for (unsigned i = 0; i < n; ++i)
    write(t, d.elements[i], loadValue(p + i * size, ty));
}

void store(Block &b, Thread &t, const Instr &in) {
  Type ty = in.types.back();
  unsigned n = vectorWidth(in), size = typeBytes(ty);
  uint64_t address = operandAddress(b, t, in.operands.at(0));
  uint8_t *p = pointerIn(b, spaceOf(in), address, n * size, true);
  const Operand &s = in.operands.at(1);
  for (unsigned i = 0; i < n; ++i) {
    uint64_t v = readOperand(b, t, n == 1 ? s : s.elements.at(i));
    std::memcpy(p + i * size, &v, size);
  }
}

void atomic(Block &b, Thread &t, const Instr &in) {
  bool isRed = in.opcode == "red";
  Type ty = in.types.back();
  const Operand &addr = in.operands.at(isRed ? 0 : 1);
  unsigned size = typeBytes(ty);
  uint8_t *p =
      pointerIn(b, spaceOf(in), operandAddress(b, t, addr), size, true);
  uint64_t old = loadValue(p, ty),
           v = readOperand(b, t, in.operands.at(isRed ? 1 : 2));
  uint64_t r = old;
  if (in.has(F_add)) {
    if (ty == Type::F32)
      r = bitsOf(asF32(old) + asF32(v));
    else if (ty == Type::F64)
      r = bitsOf(asF64(old) + asF64(v));
    else
      r = old + v;
  } else if (in.has(F_exch)) {
    r = v;
  } else if (in.has(F_cas)) {
    r = truncate(ty, old) == truncate(ty, v)
            ? readOperand(b, t, in.operands.at(3))
            : old;
  } else if (in.has(F_max) || in.has(F_min)) {
    bool takeNew;
    if (isSigned(ty))
      takeNew = in.has(F_max) ? signExtend(ty, v) > signExtend(ty, old)
                              : signExtend(ty, v) < signExtend(ty, old);
    else
      takeNew = in.has(F_max) ? truncate(ty, v) > truncate(ty, old)
                              : truncate(ty, v) < truncate(ty, old);
    r = takeNew ? v : old;
  } else if (in.has(F_and)) {
    r = old & v;
  } else if (in.has(F_or)) {
    r = old | v;
  } else if (in.has(F_xor)) {
    r = old ^ v;
  } else if (in.has(F_inc)) {
    r = truncate(ty, old) >= truncate(ty, v) ? 0 : old + 1;
  } else {
    unsupported(in, "atomic operation not modelled");
  }
  std::memcpy(p, &r, size);
  if (!isRed)
    write(t, in.operands[0], old);
}

// cp.async: the copy lands when a wait covers its group.
void cpAsync(Block &b, Thread &t, const Instr &in) {
  uint64_t dst = operandAddress(b, t, in.operands.at(0));
  uint64_t src = operandAddress(b, t, in.operands.at(1));
  unsigned fill = static_cast<unsigned>(readOperand(b, t, in.operands.at(2)));
  unsigned bytes = fill;
  if (in.operands.size() > 3) {
    const Operand &o = in.operands[3];
    bytes = static_cast<unsigned>(readOperand(b, t, o));
  }
  if (dst >= kSharedWindow)
    dst -= kSharedWindow;
  sharedPointer(b, dst, fill);
  checkNotMbarrier(b, dst, fill, "cp.async's write of");
  for (unsigned i = 0; i < fill; ++i) {
    if (b.asyncReads[dst + i])
      throw SimError("cp.async overwrites shared memory that an issued wgmma "
                     "has yet to read (a wgmma.wait_group missing or too "
                     "lax)");
    ++b.asyncWrites[dst + i];
  }
  if (bytes)
    globalPointer(src, bytes);
  t.copies.push_back({dst, src, bytes, fill, -1});
}

void completeCopies(Block &b, Thread &t, long upToGroup) {
  auto done = [&](const PendingCopy &c) {
    return c.group >= 0 && c.group < upToGroup;
  };
  for (const PendingCopy &c : t.copies) {
    if (!done(c))
      continue;
    uint8_t *d = sharedPointer(b, c.dst, c.fill);
    if (c.bytes)
      std::memcpy(d, globalPointer(c.src, c.bytes), c.bytes);
    std::memset(d + c.bytes, 0, c.fill - c.bytes);
    for (unsigned i = 0; i < c.fill; ++i)
      --b.asyncWrites[c.dst + i];
  }
  t.copies.erase(std::remove_if(t.copies.begin(), t.copies.end(), done),
                 t.copies.end());
}

// --- Arithmetic
// ---------------------------------------------------------------

float ftzIf(const Instr &in, float f) {
  return in.has(F_ftz) ? flushSubnormal(f) : f;
}

float finishF32(const Instr &in, float f) {
  f = ftzIf(in, f);
  if (in.has(F_sat))
    f = std::isnan(f) ? 0.0f : std::min(1.0f, std::max(0.0f, f));
  return f;
}

/// Float arithmetic on f32/f64 scalars or each half of f16x2/bf16x2.
template <typename F>
uint64_t floatOp(const Instr &in, Type ty, uint64_t a, uint64_t b, uint64_t c,
                 F f) {
  if (ty == Type::F64)
    return bitsOf(static_cast<double>(f(asF64(a), asF64(b), asF64(c))));
  if (ty == Type::F16x2 || ty == Type::BF16x2) {
    Type half = ty == Type::F16x2 ? Type::F16 : Type::BF16;
    uint64_t r = 0;
    for (int i = 0; i < 2; ++i) {
      auto part = [&](uint64_t v) {
        return static_cast<float>(toDouble(half, (v >> (16 * i)) & 0xFFFF));
      };
      float x = finishF32(in, static_cast<float>(f(part(a), part(b), part(c))));
      r |= fromFloat(half, x) << (16 * i);
    }
    return r;
  }
  if (ty == Type::F16 || ty == Type::BF16) {
    float x = static_cast<float>(f(static_cast<float>(toDouble(ty, a)),
                                   static_cast<float>(toDouble(ty, b)),
                                   static_cast<float>(toDouble(ty, c))));
    return fromFloat(ty, finishF32(in, x));
  }
  float x = static_cast<float>(
      f(ftzIf(in, asF32(a)), ftzIf(in, asF32(b)), ftzIf(in, asF32(c))));
  return bitsOf(finishF32(in, x));
}

uint64_t intMul(const Instr &in, Type ty, uint64_t a, uint64_t b, bool &wide) {
  wide = in.has(F_wide);
  unsigned bits = bitsOfType(ty);
  if (isSigned(ty)) {
    __int128 p = static_cast<__int128>(signExtend(ty, a)) * signExtend(ty, b);
    if (wide)
      return static_cast<uint64_t>(p);
    if (in.has(F_hi))
      return truncate(ty, static_cast<uint64_t>(p >> bits));
    return truncate(ty, static_cast<uint64_t>(p));
  }
  unsigned __int128 p =
      static_cast<unsigned __int128>(truncate(ty, a)) * truncate(ty, b);
  if (wide)
    return static_cast<uint64_t>(p);
  if (in.has(F_hi))
    return truncate(ty, static_cast<uint64_t>(p >> bits));
  return truncate(ty, static_cast<uint64_t>(p));
}

enum Cmp {
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Lo,
  Ls,
  Hi,
  Hs,
  Equ,
  Neu,
  Ltu,
  Leu,
  Gtu,
  Geu,
  Num,
  Nan
};

int cmpOf(const std::string &op) {
  static const std::map<std::string, int> cmps = {
      {"eq", Eq},   {"ne", Ne},   {"lt", Lt},   {"le", Le},   {"gt", Gt},
      {"ge", Ge},   {"lo", Lo},   {"ls", Ls},   {"hi", Hi},   {"hs", Hs},
      {"equ", Equ}, {"neu", Neu}, {"ltu", Ltu}, {"leu", Leu}, {"gtu", Gtu},
      {"geu", Geu}, {"num", Num}, {"nan", Nan}};
  auto it = cmps.find(op);
  if (it == cmps.end())
    throw SimError("unknown comparison " + op);
  return it->second;
}

bool compare(int op, Type ty, uint64_t a, uint64_t b) {
  if (isFloat(ty)) {
    double x = toDouble(ty, a), y = toDouble(ty, b);
    bool unordered = std::isnan(x) || std::isnan(y);
    if (op == Num || op == Nan)
      return unordered == (op == Nan);
    if (unordered)
      return op >= Equ; // the unordered forms are true on NaN
    switch (op) {
    case Eq:
    case Equ:
      return x == y;
    case Ne:
    case Neu:
      return x != y;
    case Lt:
    case Ltu:
      return x < y;
    case Le:
    case Leu:
      return x <= y;
    case Gt:
    case Gtu:
      return x > y;
    case Ge:
    case Geu:
      return x >= y;
    default:
      throw SimError("unsigned comparison of floats");
    }
  }
  bool sgn = isSigned(ty);
  int64_t sa = signExtend(ty, a), sb = signExtend(ty, b);
  uint64_t ua = truncate(ty, a), ub = truncate(ty, b);
  switch (op) {
  case Eq:
    return ua == ub;
  case Ne:
    return ua != ub;
  case Lt:
    return sgn ? sa < sb : ua < ub;
  case Le:
    return sgn ? sa <= sb : ua <= ub;
  case Gt:
    return sgn ? sa > sb : ua > ub;
  case Ge:
    return sgn ? sa >= sb : ua >= ub;
  case Lo:
    return ua < ub;
  case Ls:
    return ua <= ub;
  case Hi:
    return ua > ub;
  case Hs:
    return ua >= ub;
  default:
    throw SimError("unordered comparison of integers");
  }
}

uint64_t convert(const Instr &in, Type dt, Type st, uint64_t v) {
  Round r = roundingOf(in);
  bool integral =
      in.has(F_rni) || in.has(F_rzi) || in.has(F_rmi) || in.has(F_rpi);
  if (dt == Type::TF32) {
    return bitsOf(f32ToTf32(asF32(v)));
  }
  if (isFloat(st) && isFloat(dt)) {
    double x = toDouble(st, v);
    if (integral) {
      x = r == Round::Zero   ? std::trunc(x)
          : r == Round::Down ? std::floor(x)
          : r == Round::Up   ? std::ceil(x)
                             : std::nearbyint(x);
    }
    if (dt == Type::F64)
      return bitsOf(x);
    float f;
    if (st == Type::F64 && r != Round::Nearest)
      throw SimError("directed f64 to f32 rounding is not modelled");
    f = static_cast<float>(x);
    if (in.has(F_relu) && !(f > 0.0f))
      f = std::isnan(f) ? f : 0.0f;
    f = finishF32(in, f);
    return fromFloat(dt, f, r);
  }
  if (isFloat(st)) {
    // float -> integer: rounds as named and saturates; NaN becomes 0.
    double x = toDouble(st, v);
    if (std::isnan(x))
      return 0;
    x = r == Round::Zero   ? std::trunc(x)
        : r == Round::Down ? std::floor(x)
        : r == Round::Up   ? std::ceil(x)
                           : std::nearbyint(x);
    unsigned bits = bitsOfType(dt);
    if (isSigned(dt)) {
      double lo = -std::ldexp(1.0, bits - 1),
             hi = std::ldexp(1.0, bits - 1) - 1;
      x = std::min(hi, std::max(lo, x));
      return truncate(dt, static_cast<uint64_t>(static_cast<int64_t>(x)));
    }
    double hi = std::ldexp(1.0, bits) - 1;
    x = std::min(hi, std::max(0.0, x));
    return truncate(dt, static_cast<uint64_t>(x));
  }
  if (isFloat(dt)) {
    double x = isSigned(st) ? static_cast<double>(signExtend(st, v))
                            : static_cast<double>(truncate(st, v));
    if (dt == Type::F64)
      return bitsOf(x);
    return fromFloat(dt, static_cast<float>(x), r);
  }
  // integer -> integer: extend from the source, then clamp (sat) or cut.
  int64_t sv =
      isSigned(st) ? signExtend(st, v) : static_cast<int64_t>(truncate(st, v));
  if (in.has(F_sat)) {
    unsigned bits = bitsOfType(dt);
    int64_t lo = isSigned(dt) ? -(int64_t(1) << (bits - 1)) : 0;
    int64_t hi = isSigned(dt)
                     ? (int64_t(1) << (bits - 1)) - 1
                     : (bits >= 63 ? INT64_MAX : (int64_t(1) << bits) - 1);
    sv = std::min(hi, std::max(lo, sv));
  }
  return isSigned(dt)
             ? static_cast<uint64_t>(signExtend(dt, static_cast<uint64_t>(sv)))
             : truncate(dt, static_cast<uint64_t>(sv));
}

uint64_t packed(const Block &b, const Thread &t, const Operand &vec,
                unsigned totalBits) {
  unsigned n = static_cast<unsigned>(vec.elements.size());
  unsigned w = totalBits / n;
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) {
    uint64_t e = readOperand(b, t, vec.elements[i]);
    if (w < 64)
      e &= (1ull << w) - 1;
    v |= e << (w * i);
  }
  return v;
}

void unpack(Thread &t, const Operand &vec, uint64_t v, unsigned totalBits) {
  unsigned n = static_cast<unsigned>(vec.elements.size());
  unsigned w = totalBits / n;
  for (unsigned i = 0; i < n; ++i)
    write(t, vec.elements[i], w < 64 ? (v >> (w * i)) & ((1ull << w) - 1) : v);
}

/// Runs `t` until it blocks (warp op, barrier) or exits.
void runThread(Block &b, Thread &t) {
  const std::vector<Instr> &code = b.kernel->code;
  while (true) {
    if (t.pc < 0 || t.pc >= static_cast<int>(code.size())) {
      t.state = Thread::Exited;
      return;
    }
    const Instr &in = code[t.pc];
    if (in.guard >= 0 && ((t.regs[in.guard] & 1) != 0) == in.guardNegated) {
      ++t.pc;
      continue;
    }
    const std::vector<Operand> &o = in.operands;
    Type ty = in.types.empty() ? Type::B64 : in.types.back();
    auto rd = [&](size_t i) { return readOperand(b, t, o.at(i)); };
    switch (in.code) {
    case OpMov:
      if (o.at(1).kind == Operand::Vector)
        write(t, o[0], packed(b, t, o[1], bitsOfType(ty)));
      else if (o.at(0).kind == Operand::Vector)
        unpack(t, o[0], rd(1), bitsOfType(ty));
      else
        write(t, o[0], ty == Type::Pred ? rd(1) & 1 : truncate(ty, rd(1)));
      break;
    case OpLd:
      load(b, t, in);
      break;
    case OpSt:
      store(b, t, in);
      break;
    case OpCvta: {
      bool shared = in.has(F_shared), param = in.has(F_param);
      if (!shared && !param && !in.has(F_global) && !in.has(F_const))
        unsupported(in, "address space not modelled");
      // Global and constant addresses are host addresses, generic as they
      // are; shared memory and the parameters have windows of their own.
      uint64_t window = shared ? kSharedWindow : param ? kParamWindow : 0;
      uint64_t a = in.has(F_to) ? rd(1) - window : rd(1) + window;
      write(t, o[0], truncate(ty, a));
      break;
    }
    case OpCvt:
      if (in.types.size() < 2)
        unsupported(in, "cvt needs two types");
      if (in.types[0] == Type::BF16x2 || in.types[0] == Type::F16x2) {
        Type half = in.types[0] == Type::F16x2 ? Type::F16 : Type::BF16;
        uint64_t hi = convert(in, half, in.types[1], rd(1));
        uint64_t lo = convert(in, half, in.types[1], rd(2));
        write(t, o[0], (hi << 16) | lo);
      } else {
        write(t, o[0], convert(in, in.types[0], in.types[1], rd(1)));
      }
      break;
    case OpAdd:
    case OpSub: {
      bool sub = in.code == OpSub;
      if (isFloat(ty)) {
        write(t, o[0],
              floatOp(in, ty, rd(1), rd(2), 0, [&](auto x, auto y, auto) {
                return sub ? x - y : x + y;
              }));
      } else {
        uint64_t r = sub ? rd(1) - rd(2) : rd(1) + rd(2);
        if (in.has(F_sat)) {
          int64_t w =
              sub ? int64_t(signExtend(ty, rd(1))) - signExtend(ty, rd(2))
                  : int64_t(signExtend(ty, rd(1))) + signExtend(ty, rd(2));
          w = std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, w));
          r = static_cast<uint64_t>(w);
        }
        write(t, o[0], truncate(ty, r));
      }
      break;
    }
    case OpMul:
      if (isFloat(ty)) {
        write(t, o[0],
              floatOp(in, ty, rd(1), rd(2), 0,
                      [](auto x, auto y, auto) { return x * y; }));
      } else {
        bool wide;
        write(t, o[0], intMul(in, ty, rd(1), rd(2), wide));
      }
      break;
    case OpMad:
    case OpFma:
      if (isFloat(ty)) {
        write(t, o[0],
              floatOp(in, ty, rd(1), rd(2), rd(3), [](auto x, auto y, auto z) {
                return std::fma(x, y, z);
              }));
      } else {
        bool wide;
        uint64_t p = intMul(in, ty, rd(1), rd(2), wide);
        uint64_t r = p + rd(3);
        write(t, o[0], wide ? r : truncate(ty, r));
      }
      break;
    case OpDiv:
    case OpRem:
      if (isFloat(ty)) {
        write(t, o[0],
              floatOp(in, ty, rd(1), rd(2), 0,
                      [](auto x, auto y, auto) { return x / y; }));
      } else {
        uint64_t r;
        if (truncate(ty, rd(2)) == 0)
          throw SimError("integer division by zero");
        if (isSigned(ty)) {
          int64_t x = signExtend(ty, rd(1)), y = signExtend(ty, rd(2));
          r = static_cast<uint64_t>(in.code == OpDiv ? x / y : x % y);
        } else {
          uint64_t x = truncate(ty, rd(1)), y = truncate(ty, rd(2));
          r = in.code == OpDiv ? x / y : x % y;
        }
        write(t, o[0], truncate(ty, r));
      }
      break;
    case OpNeg:
    case OpAbs:
      if (isFloat(ty)) {
        bool neg = in.code == OpNeg;
        write(t, o[0], floatOp(in, ty, rd(1), 0, 0, [&](auto x, auto, auto) {
                return neg ? -x : std::abs(x);
              }));
      } else {
        int64_t x = signExtend(ty, rd(1));
        write(t, o[0],
              truncate(ty, static_cast<uint64_t>(in.code == OpNeg ? -x
                                                 : x < 0          ? -x
                                                                  : x)));
      }
      break;
    case OpMin:
    case OpMax: {
      bool mx = in.code == OpMax;
      if (isFloat(ty)) {
        bool nanOut = in.has(F_NaN);
        write(t, o[0],
              floatOp(in, ty, rd(1), rd(2), 0, [&](auto x, auto y, auto) {
                if (nanOut && (std::isnan(x) || std::isnan(y)))
                  return x + y;
                return mx ? std::fmax(x, y) : std::fmin(x, y);
              }));
      } else if (isSigned(ty)) {
        int64_t x = signExtend(ty, rd(1)), y = signExtend(ty, rd(2));
        write(t, o[0],
              truncate(ty, static_cast<uint64_t>(mx ? std::max(x, y)
                                                    : std::min(x, y))));
      } else {
        uint64_t x = truncate(ty, rd(1)), y = truncate(ty, rd(2));
        write(t, o[0], mx ? std::max(x, y) : std::min(x, y));
      }
      break;
    }
    case OpAnd:
      write(t, o[0], truncate(ty, rd(1) & rd(2)));
      break;
    case OpOr:
      write(t, o[0], truncate(ty, rd(1) | rd(2)));
      break;
    case OpXor:
      write(t, o[0], truncate(ty, rd(1) ^ rd(2)));
      break;
    case OpNot:
      write(t, o[0], ty == Type::Pred ? (~rd(1)) & 1 : truncate(ty, ~rd(1)));
      break;
    case OpShl:
    case OpShr: {
      uint64_t n = truncate(Type::U32, rd(2));
      unsigned bits = bitsOfType(ty);
      uint64_t r;
      if (in.code == OpShl)
        r = n >= bits ? 0 : rd(1) << n;
      else if (isSigned(ty))
        r = static_cast<uint64_t>(signExtend(ty, rd(1)) >>
                                  std::min<uint64_t>(n, bits - 1));
      else
        r = n >= bits ? 0 : truncate(ty, rd(1)) >> n;
      write(t, o[0], truncate(ty, r));
      break;
    }
    case OpSetp: {
      if (o.size() != 3)
        unsupported(in, "setp with a second destination or a combining "
                        "predicate is not modelled");
      write(t, o[0], compare(in.cmp, in.types.at(0), rd(1), rd(2)));
      break;
    }
    case OpSelp:
      write(t, o[0], (rd(3) & 1) ? rd(1) : rd(2));
      break;
    case OpBra:
      t.pc = static_cast<int>(o.at(0).imm);
      continue;
    case OpRet:
      t.state = Thread::Exited;
      return;
    case OpBar:
      if (in.has(F_arrive) || in.has(F_red))
        unsupported(in, "barrier form not modelled");
      if (!o.empty() && rd(0) != 0)
        unsupported(in, "named barriers are not modelled");
      if (o.size() > 1 && rd(1) != b.threads.size())
        unsupported(in, "barriers over part of the block are not modelled");
      t.state = Thread::AtBarrier;
      return;
    case OpNop:
      break;
    case OpCpAsync:
      cpAsync(b, t, in);
      break;
    case OpCpCommit:
      for (PendingCopy &c : t.copies)
        if (c.group < 0)
          c.group = t.committed;
      ++t.committed;
      break;
    case OpCpWait:
      completeCopies(b, t, t.committed - static_cast<long>(rd(0)));
      break;
    case OpCpWaitAll:
      for (PendingCopy &c : t.copies)
        if (c.group < 0)
          c.group = t.committed;
      ++t.committed;
      completeCopies(b, t, t.committed);
      break;
    case OpMbarrier:
      if (!runMbarrier(b, t, in)) {
        t.state = Thread::AtMbarrier;
        return;
      }
      break;
    case OpCpBulk:
      issueBulkCopy(b, t, in);
      break;
    case OpWarp:
      t.state = Thread::AtWarpOp;
      return;
    case OpAtom:
      atomic(b, t, in);
      break;
    case OpEx2:
    case OpLg2:
    case OpRcp:
    case OpSqrt:
    case OpRsqrt:
    case OpTanh:
    case OpSin:
    case OpCos: {
      int c = in.code;
      write(t, o[0], floatOp(in, ty, rd(1), 0, 0, [c](auto x, auto, auto) {
              using T = decltype(x);
              switch (c) {
              case OpEx2:
                return static_cast<T>(std::exp2(x));
              case OpLg2:
                return static_cast<T>(std::log2(x));
              case OpRcp:
                return static_cast<T>(T(1) / x);
              case OpSqrt:
                return static_cast<T>(std::sqrt(x));
              case OpRsqrt:
                return static_cast<T>(T(1) / std::sqrt(x));
              case OpTanh:
                return static_cast<T>(std::tanh(x));
              case OpSin:
                return static_cast<T>(std::sin(x));
              default:
                return static_cast<T>(std::cos(x));
              }
            }));
      break;
    }
    case OpPrmt: {
      if (in.mods.size() > 1)
        unsupported(in, "prmt modes are not modelled");
      uint64_t bytes =
          truncate(Type::U32, rd(1)) | (truncate(Type::U32, rd(2)) << 32);
      uint32_t sel = static_cast<uint32_t>(rd(3)), r = 0;
      for (int i = 0; i < 4; ++i) {
        unsigned s = (sel >> (4 * i)) & 0xF;
        uint32_t byte = (bytes >> (8 * (s & 7))) & 0xFF;
        if (s & 8)
          byte = (byte & 0x80) ? 0xFF : 0;
        r |= byte << (8 * i);
      }
      write(t, o[0], r);
      break;
    }
    case OpBfe: {
      unsigned bits = bitsOfType(ty);
      unsigned pos = static_cast<unsigned>(rd(2) & 0xFF),
               len = static_cast<unsigned>(rd(3) & 0xFF);
      uint64_t a = truncate(ty, rd(1)), r = 0;
      for (unsigned i = 0; i < len && i < bits; ++i) {
        unsigned src = std::min(pos + i, bits - 1);
        uint64_t bit = pos + i < bits ? (a >> src) & 1
                       : isSigned(ty) ? (a >> (bits - 1)) & 1
                                      : 0;
        r |= bit << i;
      }
      if (isSigned(ty) && len > 0 && len < bits) {
        uint64_t signBit = pos + len - 1 < bits ? (a >> (pos + len - 1)) & 1
                                                : (a >> (bits - 1)) & 1;
        if (signBit)
          r |= ~0ull << len;
      }
      write(t, o[0], truncate(ty, r));
      break;
    }
    case OpBfi: {
      unsigned bits = bitsOfType(ty);
      uint64_t f = rd(1), base = truncate(ty, rd(2));
      unsigned pos = static_cast<unsigned>(rd(3) & 0xFF),
               len = static_cast<unsigned>(rd(4) & 0xFF);
      for (unsigned i = 0; i < len && pos + i < bits; ++i) {
        uint64_t bit = 1ull << (pos + i);
        base = (base & ~bit) | (((f >> i) & 1) << (pos + i));
      }
      write(t, o[0], base);
      break;
    }
    case OpLop3: {
      uint32_t a = static_cast<uint32_t>(rd(1)),
               bb = static_cast<uint32_t>(rd(2)),
               c = static_cast<uint32_t>(rd(3)),
               lut = static_cast<uint32_t>(rd(4));
      uint32_t r = 0;
      for (int i = 0; i < 32; ++i) {
        unsigned idx =
            (((a >> i) & 1) << 2) | (((bb >> i) & 1) << 1) | ((c >> i) & 1);
        r |= ((lut >> idx) & 1u) << i;
      }
      write(t, o[0], r);
      break;
    }
    case OpShf: {
      uint64_t pair =
          truncate(Type::U32, rd(1)) | (truncate(Type::U32, rd(2)) << 32);
      uint32_t n = static_cast<uint32_t>(rd(3));
      n = in.has(F_wrap) ? n & 31 : std::min(n, 32u);
      uint32_t r = in.has(F_l) ? static_cast<uint32_t>((pair << n) >> 32)
                               : static_cast<uint32_t>(pair >> n);
      write(t, o[0], r);
      break;
    }
    case OpPopc:
      write(t, o[0],
            static_cast<uint64_t>(__builtin_popcountll(truncate(ty, rd(1)))));
      break;
    case OpClz: {
      unsigned bits = bitsOfType(ty);
      uint64_t a = truncate(ty, rd(1));
      write(t, o[0], a == 0 ? bits : __builtin_clzll(a) - (64 - bits));
      break;
    }
    case OpBrev: {
      unsigned bits = bitsOfType(ty);
      uint64_t a = rd(1), r = 0;
      for (unsigned i = 0; i < bits; ++i)
        r |= ((a >> i) & 1) << (bits - 1 - i);
      write(t, o[0], r);
      break;
    }
    case OpCopysign:
      write(t, o[0], floatOp(in, ty, rd(1), rd(2), 0, [](auto x, auto y, auto) {
              return std::copysign(y, x);
            }));
      break;
    case OpTestp: {
      double x = toDouble(ty, rd(1));
      bool r = in.has(F_finite)       ? std::isfinite(x)
               : in.has(F_infinite)   ? std::isinf(x)
               : in.has(F_number)     ? !std::isnan(x)
               : in.has(F_notanumber) ? std::isnan(x)
               : in.has(F_normal)
                   ? std::isnormal(static_cast<float>(x))
                   : std::fpclassify(static_cast<float>(x)) == FP_SUBNORMAL;
      write(t, o[0], r);
      break;
    }
    default:
      unsupported(in, "instruction not modelled");
    }
    ++t.pc;
  }
}

std::string where(const Block &b, const Thread *t) {
  std::ostringstream s;
  s << b.kernel->name << " block (" << b.ctaid[0] << "," << b.ctaid[1] << ","
    << b.ctaid[2] << ")";
  if (t) {
    s << " thread (" << t->tid[0] << "," << t->tid[1] << "," << t->tid[2]
      << ")";
    const auto &code = b.kernel->code;
    if (t->pc >= 0 && t->pc < static_cast<int>(code.size()))
      s << " at PTX line " << code[t->pc].line;
  }
  return s.str();
}

/// The instruction every live lane of warp `w` waits at (its lanes in
/// `lanes`), or -1 while some lane still runs or waits at a barrier.
int waitingAt(Block &b, size_t w, Thread **lanes, Thread *&current) {
  size_t n = b.threads.size();
  int pc = -1;
  for (size_t l = 0; l < 32 && w * 32 + l < n; ++l) {
    Thread &t = b.threads[w * 32 + l];
    if (t.state == Thread::Exited)
      continue;
    if (t.state != Thread::AtWarpOp)
      return -1;
    if (pc >= 0 && t.pc != pc) {
      current = &t;
      throw SimError("the lanes of a warp wait at different "
                     "warp-collective instructions (PTX lines " +
                     std::to_string(b.kernel->code[pc].line) + " and " +
                     std::to_string(b.kernel->code[t.pc].line) + ")");
    }
    pc = t.pc;
    lanes[l] = &t;
  }
  return pc;
}

Thread *firstOf(Thread **lanes, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (lanes[i])
      return lanes[i];
  return nullptr;
}

void release(Thread **lanes, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (lanes[i]) {
      lanes[i]->state = Thread::Running;
      ++lanes[i]->pc;
    }
}

void runBlock(Block &b) {
  size_t n = b.threads.size();
  size_t warps = (n + 31) / 32;
  Thread *current = nullptr;
  try {
    while (true) {
      bool progress = false;
      for (Thread &t : b.threads)
        if (t.state == Thread::Running) {
          current = &t;
          runThread(b, t);
          progress = true;
        }
      current = nullptr;
      for (size_t w = 0; w < warps; ++w) {
        Thread *lanes[32] = {};
        int pc = waitingAt(b, w, lanes, current);
        if (pc < 0 || isWarpgroupOp(b.kernel->code[pc]))
          continue;
        current = firstOf(lanes, 32);
        runWarpOp(b, b.kernel->code[pc], lanes);
        release(lanes, 32);
        current = nullptr;
        progress = true;
      }
      // Warpgroup collectives (wgmma): every live thread of the four warps
      // at the same instruction.
      for (size_t g = 0; g * 4 < warps; ++g) {
        Thread *group[128] = {};
        int pc = -1;
        bool ready = true;
        for (size_t w = g * 4; w < std::min(warps, g * 4 + 4) && ready; ++w) {
          Thread **lanes = group + (w - g * 4) * 32;
          int at = waitingAt(b, w, lanes, current);
          bool exited = true;
          for (size_t l = 0; l < 32 && w * 32 + l < n; ++l)
            exited &= b.threads[w * 32 + l].state == Thread::Exited;
          if (exited)
            continue;
          if (at < 0 || !isWarpgroupOp(b.kernel->code[at]) ||
              (pc >= 0 && at != pc))
            ready = false;
          pc = at;
        }
        if (!ready || pc < 0)
          continue;
        current = firstOf(group, 128);
        runWarpgroupOp(b, b.kernel->code[pc], static_cast<unsigned>(g), group);
        release(group, 128);
        current = nullptr;
        progress = true;
      }
      size_t live = 0, atBarrier = 0;
      for (Thread &t : b.threads) {
        live += t.state != Thread::Exited;
        atBarrier += t.state == Thread::AtBarrier;
      }
      if (live == 0)
        break;
      if (atBarrier == live) {
        for (Thread &t : b.threads)
          if (t.state == Thread::AtBarrier) {
            t.state = Thread::Running;
            ++t.pc;
          }
        progress = true;
      }
      if (!progress) {
        // The latest moment copies in flight may land: the block cannot
        // progress without them.
        if (landAwaitedBulkCopies(b))
          continue;
        std::string why;
        if (Thread *waiter = mbarrierDeadlock(b, why)) {
          current = waiter;
          throw SimError(why);
        }
        for (Thread &t : b.threads)
          if (t.state != Thread::Exited) {
            current = &t;
            break;
          }
        throw SimError("deadlock: threads wait at a barrier while others "
                       "wait at a warp-collective instruction");
      }
    }
    finishAsync(b);
    for (const Warpgroup &g : b.warpgroups)
      if (!g.pending.empty())
        throw SimError("the block ended with wgmma operations never waited "
                       "for");
    for (Thread &t : b.threads)
      if (!t.copies.empty()) {
        current = &t;
        throw SimError("the thread ended with cp.async copies never waited "
                       "for");
      }
  } catch (const SimError &e) {
    throw SimError(where(b, current) + ": " + e.what());
  }
}

} // namespace

// --- Shared with PtxWarp.cpp
// ---------------------------------------------------

uint64_t readOperandSlow(const Block &b, const Thread &t, const Operand &o) {
  switch (o.kind) {
  case Operand::Reg:
    return t.regs[o.reg];
  case Operand::Imm:
    return static_cast<uint64_t>(o.imm);
  case Operand::Special:
    return special(b, t, o.special);
  case Operand::Symbol:
    return b.kernel->symbols.at(o.symbol).value;
  default:
    throw SimError("operand cannot be read as a value");
  }
}

uint64_t operandAddress(const Block &b, const Thread &t, const Operand &o) {
  if (o.kind != Operand::Address)
    throw SimError("expected an address operand");
  uint64_t base = 0;
  if (o.reg >= 0)
    base = t.regs[o.reg];
  else if (o.symbol >= 0)
    base = b.kernel->symbols.at(o.symbol).value;
  return base + static_cast<uint64_t>(o.imm);
}

void *globalPointer(uint64_t address, unsigned bytes) {
  auto it = allocations.upper_bound(address);
  if (it != allocations.begin()) {
    --it;
    if (address >= it->first && address + bytes <= it->first + it->second)
      return reinterpret_cast<void *>(address);
  }
  std::ostringstream s;
  s << "global access of " << bytes << " bytes at 0x" << std::hex << address
    << " is outside every allocation";
  throw SimError(s.str());
}

uint8_t *programShared(Block &b, uint64_t offset, unsigned bytes, bool write) {
  uint8_t *p = sharedPointer(b, offset, bytes);
  if (!b.mbarriers.empty())
    checkNotMbarrier(b, offset, bytes, write ? "a store to" : "a load of");
  for (unsigned i = 0; i < bytes; ++i) {
    if (b.asyncWrites[offset + i])
      throw SimError(std::string(write ? "a store to" : "a load of") +
                     " shared memory that " + inFlightWriter(b, offset + i));
    if (write && b.asyncReads[offset + i])
      throw SimError("a store to shared memory that an issued wgmma has yet "
                     "to read (a wgmma.wait_group missing or too lax)");
  }
  return p;
}

void markWgmmaRead(Block &b, uint64_t offset, unsigned bytes, int delta) {
  sharedPointer(b, offset, bytes);
  if (delta > 0)
    checkNotMbarrier(b, offset, bytes, "wgmma's read of");
  for (unsigned i = 0; i < bytes; ++i) {
    if (delta > 0 && b.asyncWrites[offset + i])
      throw SimError("wgmma reads shared memory that " +
                     inFlightWriter(b, offset + i));
    b.asyncReads[offset + i] =
        static_cast<uint16_t>(b.asyncReads[offset + i] + delta);
  }
}

uint8_t *paramPointer(Block &b, uint64_t offset, unsigned bytes) {
  if (offset + bytes > b.kernel->paramBytes)
    throw SimError("parameter read past the parameters");
  return const_cast<uint8_t *>(b.params) + offset;
}

uint8_t *sharedPointer(Block &b, uint64_t offset, unsigned bytes) {
  if (offset + bytes > b.shared.size()) {
    throw SimError("shared access of " + std::to_string(bytes) +
                   " bytes at offset " + std::to_string(offset) +
                   " is past the block's " + std::to_string(b.shared.size()) +
                   " bytes");
  }
  return b.shared.data() + offset;
}

} // namespace ptxsim

using namespace ptxsim;

extern "C" const char *ptxsim_load(const char *paths) {
  std::string list = paths ? paths : "";
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos)
      end = list.size();
    std::string path = list.substr(start, end - start);
    start = end + 1;
    if (path.empty())
      continue;
    std::ifstream in(path);
    if (!in) {
      lastError = "cannot read PTX file " + path;
      return lastError.c_str();
    }
    std::stringstream text;
    text << in.rdbuf();
    auto m = std::make_unique<Module>();
    std::string err = parse(text.str(), path, *m);
    if (!err.empty()) {
      lastError = err;
      return lastError.c_str();
    }
    for (Variable &v : m->variables)
      if (v.space != "shared")
        allocations[v.address] = v.size ? v.size : 1;
    for (auto &[name, k] : m->kernels) {
      for (Instr &in : k.code) {
        in.code = codeOf(in);
        try {
          if (in.code == OpSetp)
            in.cmp = cmpOf(in.mods.at(0));
        } catch (const SimError &e) {
          lastError = path + ":" + std::to_string(in.line) + ": " + e.what();
          return lastError.c_str();
        }
        if (in.code == OpUnknown) {
          lastError = path + ":" + std::to_string(in.line) +
                      ": instruction not modelled: " + fullName(in);
          return lastError.c_str();
        }
      }
      kernels[name] = &k;
    }
    modules.push_back(std::move(m));
  }
  return nullptr;
}

extern "C" int ptxsim_has_kernel(const char *name) {
  return kernels.count(name) != 0;
}

extern "C" void ptxsim_track(uint64_t base, size_t bytes) {
  allocations[base] = bytes;
}

extern "C" void ptxsim_untrack(uint64_t base) { allocations.erase(base); }

extern "C" const char *ptxsim_launch(const char *name, const unsigned grid[3],
                                     const unsigned block[3],
                                     unsigned dynamicShared, void **params) {
  auto it = kernels.find(name);
  if (it == kernels.end()) {
    lastError = std::string("no PTX for kernel ") + name;
    return lastError.c_str();
  }
  const Kernel &k = *it->second;
  std::vector<uint8_t> paramBytes(k.paramBytes + 8, 0);
  for (size_t i = 0; i < k.params.size(); ++i)
    std::memcpy(paramBytes.data() + k.params[i].offset, params[i],
                k.params[i].size);
  unsigned threads = block[0] * block[1] * block[2];
  std::vector<uint64_t> regs(static_cast<size_t>(threads) *
                             std::max(1, k.registers));
  // FFN_PTXSIM_REVERSE_BLOCKS runs the blocks last to first: a kernel whose
  // blocks coordinate (a split GEMM's last block reducing its tile) must
  // not depend on the order the hardware happens to pick.
  bool reverse = std::getenv("FFN_PTXSIM_REVERSE_BLOCKS") != nullptr;
  uint64_t blocks = uint64_t(grid[0]) * grid[1] * grid[2];
  try {
    for (uint64_t n = 0; n < blocks; ++n) {
      uint64_t linear = reverse ? blocks - 1 - n : n;
      unsigned x = linear % grid[0], y = (linear / grid[0]) % grid[1],
               z = linear / (uint64_t(grid[0]) * grid[1]);
      Block b;
      b.kernel = &k;
      b.ctaid[0] = x;
      b.ctaid[1] = y;
      b.ctaid[2] = z;
      std::copy(grid, grid + 3, b.grid);
      std::copy(block, block + 3, b.dims);
      b.dynamicShared = dynamicShared;
      b.shared.assign(k.staticShared + dynamicShared, 0xA5);
      b.asyncWrites.assign(b.shared.size(), 0);
      b.asyncReads.assign(b.shared.size(), 0);
      b.params = paramBytes.data();
      b.threads.resize(threads);
      b.warpgroups.resize((threads + 127) / 128);
      std::fill(regs.begin(), regs.end(), 0);
      for (unsigned i = 0; i < threads; ++i) {
        Thread &t = b.threads[i];
        t.regs =
            regs.data() + static_cast<size_t>(i) * std::max(1, k.registers);
        t.linear = i;
        t.tid[0] = i % block[0];
        t.tid[1] = (i / block[0]) % block[1];
        t.tid[2] = i / (block[0] * block[1]);
      }
      runBlock(b);
    }
  } catch (const SimError &e) {
    lastError = e.what();
    return lastError.c_str();
  }
  return nullptr;
}
