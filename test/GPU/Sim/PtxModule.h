//===- PtxModule.h - parsed PTX for the interpreter -------------*- C++ -*-===//
//
// The parsed form of a PTX module: each kernel's parameters, its shared
// variables and its instructions with operands resolved to register
// numbers, immediates, symbols and branch targets, so that execution does
// no string work.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_TEST_GPU_SIM_PTXMODULE_H
#define FFNC_TEST_GPU_SIM_PTXMODULE_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ptxsim {

enum class Special {
  TidX,
  TidY,
  TidZ,
  NtidX,
  NtidY,
  NtidZ,
  CtaidX,
  CtaidY,
  CtaidZ,
  NctaidX,
  NctaidY,
  NctaidZ,
  LaneId,
  WarpId,
  DynSmem
};

struct Operand {
  enum Kind { None, Reg, Imm, Special, Symbol, Address, Vector, Label, Sink };
  Kind kind = None;
  int reg = -1;    // Reg; Address base register (-1: none)
  int64_t imm = 0; // Imm bits; Address offset; Label target index
  ptxsim::Special special = ptxsim::Special::TidX;
  int symbol = -1;               // Symbol; Address base symbol (-1: none)
  std::vector<Operand> elements; // Vector
};

/// Scalar types as the instruction suffixes name them.
enum class Type {
  None,
  B8,
  U8,
  S8,
  B16,
  U16,
  S16,
  B32,
  U32,
  S32,
  B64,
  U64,
  S64,
  F16,
  BF16,
  F32,
  F64,
  F16x2,
  BF16x2,
  TF32,
  Pred,
  E4M3,
  E5M2,
  S4,
  U4
};

/// The modifiers the interpreter tests on its hot paths, as bits of
/// Instr::flags (a string compare per instruction would dominate its time).
/// "shared::cta" and "shared::cluster" (one-CTA clusters) set `shared`.
#define PTXSIM_FLAGS(X)                                                        \
  X(NaN)                                                                       \
  X(add) X(and) X(arrive) X(async) X(cas) X(commit_group) X(const) X(exch)     \
      X(fence) X(finite) X(ftz) X(global) X(hi) X(inc) X(infinite) X(l) X(max) \
          X(min) X(normal) X(notanumber) X(number) X(or) X(param) X(red)       \
              X(relu) X(rm) X(rmi) X(rni) X(rp) X(rpi) X(rz) X(rzi) X(sat)     \
                  X(shared) X(to) X(v2) X(v4) X(v8) X(wait_all) X(wait_group)  \
                      X(warp) X(wide) X(wrap) X(xor)
enum Flag : unsigned {
#define PTXSIM_FLAG_ENUM(name) F_##name,
  PTXSIM_FLAGS(PTXSIM_FLAG_ENUM)
#undef PTXSIM_FLAG_ENUM
};

struct Instr {
  std::string opcode;            // "mma", "ld", ...
  std::vector<std::string> mods; // every ".x" suffix, in order
  std::vector<Type> types;       // the type suffixes, in order
  int guard = -1;                // predicate register, -1: none
  bool guardNegated = false;
  std::vector<Operand> operands;
  int line = 0;
  int code = 0; // the interpreter's dispatch number
  int cmp = 0;  // setp: the comparison
  uint64_t flags = 0; // the modifiers among PTXSIM_FLAGS
  bool has(Flag f) const { return (flags >> f) & 1; }
  bool has(const char *mod) const {
    for (const std::string &m : mods)
      if (m == mod)
        return true;
    return false;
  }
};

struct Param {
  std::string name;
  unsigned size = 0, offset = 0;
};

/// A module-scope or kernel-scope variable (.shared, .global, .const).
struct Variable {
  std::string name;
  std::string space; // "shared", "global", "const"
  uint64_t size = 0;
  unsigned align = 1;
  bool dynamic = false;      // extern .shared ... name[]
  std::vector<uint8_t> init; // .global/.const initializers
  uint64_t address = 0;      // shared: offset; others: host address
};

/// What a Symbol operand names in one kernel.
struct Symbol {
  enum Kind { Param, Shared, Global } kind = Param;
  uint64_t value = 0; // Param: offset; Shared: offset; Global: host address
};

struct Kernel {
  std::string name;
  std::vector<Symbol> symbols; // Operand::symbol indexes these
  uint64_t staticShared = 0;   // dynamic shared memory starts here
  std::vector<Param> params;
  unsigned paramBytes = 0;
  std::vector<Instr> code;
  int registers = 0;
};

struct Module {
  std::vector<Variable> variables; // module scope
  std::map<std::string, Kernel> kernels;
};

/// Parses `text` (from `path`, for messages) into `module`. Returns an
/// empty string on success, otherwise "path:line: what".
std::string parse(const std::string &text, const std::string &path,
                  Module &module);

Type parseType(const std::string &suffix);
unsigned typeBytes(Type t);

} // namespace ptxsim

#endif
