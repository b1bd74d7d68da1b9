//===- PtxWarp.cpp - warp-collective instructions of the interpreter ------===//
//
// mma.sync, ldmatrix, stmatrix, shfl.sync, vote.sync and redux.sync, run
// once for a whole warp with the fragment layouts of the PTX ISA (section
// "Matrix fragments for mma.m16n8k*"): lane l holds row g = l / 4 and the
// column pair 2 (l % 4) of each 8-wide slice. Tensor-core products are
// formed exactly (in double) and summed onto the f32 accumulator in double,
// rounded once per output.
//
//===----------------------------------------------------------------------===//

#include "PtxExec.h"
#include "PtxFloat.h"

#include <sstream>

namespace ptxsim {
namespace {

const Operand &vec(const Instr &in, size_t i) {
  const Operand &o = in.operands.at(i);
  if (o.kind != Operand::Vector)
    throw SimError("expected a register vector");
  return o;
}

void setReg(Thread &t, const Operand &o, uint64_t v) {
  if (o.kind == Operand::Reg)
    t.regs[o.reg] = v;
  else if (o.kind != Operand::Sink)
    throw SimError("destination is not a register");
}

Thread &lane(Thread *lanes[32], unsigned l, const Instr &in) {
  if (!lanes[l])
    throw SimError("lane " + std::to_string(l) + " has exited before " +
                   in.opcode + " (every lane must take part)");
  return *lanes[l];
}

/// One element of an A or B fragment register, as a double.
double element(Type ty, uint32_t word, unsigned index) {
  switch (ty) {
  case Type::BF16:
    return bf16ToF32(static_cast<uint16_t>(word >> (16 * index)));
  case Type::F16:
    return f16ToF32(static_cast<uint16_t>(word >> (16 * index)));
  case Type::TF32:
    return asF32(word & 0xFFFFE000u);
  case Type::S8:
    return static_cast<int8_t>(word >> (8 * index));
  case Type::U8:
    return static_cast<uint8_t>(word >> (8 * index));
  default:
    throw SimError("mma operand type not modelled");
  }
}

unsigned perWord(Type ty) {
  return ty == Type::TF32 ? 1 : (ty == Type::S8 || ty == Type::U8) ? 4 : 2;
}

/// mma.sync.aligned.m16n8k{8,16,32}.row.col.D.A.B.C
void mma(Block &b, const Instr &in, Thread *lanes[32]) {
  unsigned k;
  if (in.has("m16n8k16"))
    k = 16;
  else if (in.has("m16n8k8"))
    k = 8;
  else if (in.has("m16n8k32"))
    k = 32;
  else
    throw SimError("mma shape not modelled");
  if (!in.has("row") || !in.has("col") || in.types.size() != 4)
    throw SimError("mma layout or types not modelled");
  Type dt = in.types[0], at = in.types[1], bt = in.types[2], ct = in.types[3];
  unsigned per = perWord(at);
  double A[16][32] = {}, B[32][8] = {}, C[16][8] = {};
  const Operand &d = vec(in, 0), &a = vec(in, 1), &bb = vec(in, 2),
                &c = vec(in, 3);
  for (unsigned l = 0; l < 32; ++l) {
    Thread &t = lane(lanes, l, in);
    unsigned g = l / 4, q = l % 4;
    // A: 16 x k, row major: registers walk (rows g, g + 8) x (k slices of
    // 8 / per-word columns).
    for (size_t r = 0; r < a.elements.size(); ++r) {
      uint32_t w = static_cast<uint32_t>(readOperand(b, t, a.elements[r]));
      unsigned row = g + 8 * (r % 2);
      unsigned colBase = (r / 2) * (4 * per) + q * per;
      for (unsigned e = 0; e < per; ++e)
        A[row][colBase + e] = element(at, w, e);
    }
    // B: k x 8, column major: lane's column g, rows in slices.
    for (size_t r = 0; r < bb.elements.size(); ++r) {
      uint32_t w = static_cast<uint32_t>(readOperand(b, t, bb.elements[r]));
      unsigned rowBase = r * (4 * per) + q * per;
      for (unsigned e = 0; e < per; ++e)
        B[rowBase + e][g] = element(bt, w, e);
    }
    // C: 16 x 8: c0, c1 at row g, columns 2q, 2q + 1; c2, c3 at row g + 8.
    for (size_t r = 0; r < 4 && r < c.elements.size(); ++r) {
      uint64_t v = readOperand(b, t, c.elements[r]);
      double x = ct == Type::F32 ? asF32(v)
                 : ct == Type::S32
                     ? static_cast<double>(static_cast<int32_t>(v))
                     : throw SimError("mma accumulator type not modelled");
      C[g + 8 * (r / 2)][2 * q + r % 2] = x;
    }
  }
  if (a.elements.size() * per * 32 != 16 * k ||
      bb.elements.size() * per * 32 != 8 * k)
    throw SimError("mma fragment sizes do not match the shape");
  double D[16][8];
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned j = 0; j < 8; ++j) {
      double s = C[i][j];
      for (unsigned x = 0; x < k; ++x)
        s += A[i][x] * B[x][j];
      D[i][j] = s;
    }
  for (unsigned l = 0; l < 32; ++l) {
    Thread &t = *lanes[l];
    unsigned g = l / 4, q = l % 4;
    for (size_t r = 0; r < 4; ++r) {
      double x = D[g + 8 * (r / 2)][2 * q + r % 2];
      uint64_t v = dt == Type::F32
                       ? bitsOf(static_cast<float>(x))
                       : static_cast<uint32_t>(static_cast<int32_t>(x));
      setReg(t, d.elements.at(r), v);
    }
  }
}

unsigned matrices(const Instr &in) {
  if (in.has("x1"))
    return 1;
  if (in.has("x2"))
    return 2;
  if (in.has("x4"))
    return 4;
  throw SimError("ldmatrix/stmatrix count not modelled");
}

uint64_t sharedOffset(uint64_t address) {
  return address >= kSharedWindow ? address - kSharedWindow : address;
}

/// ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16: lanes 8i..8i+7 give
/// the row addresses of matrix i; each lane receives a 32-bit word of each.
void ldmatrix(Block &b, const Instr &in, Thread *lanes[32]) {
  if (!in.has("m8n8"))
    throw SimError("ldmatrix shape not modelled");
  unsigned n = matrices(in);
  bool trans = in.has("trans");
  uint16_t M[4][8][8];
  for (unsigned i = 0; i < n; ++i)
    for (unsigned r = 0; r < 8; ++r) {
      Thread &t = lane(lanes, i * 8 + r, in);
      uint64_t off = sharedOffset(operandAddress(b, t, in.operands.at(1)));
      if (off % 16)
        throw SimError("ldmatrix row address not 16-byte aligned");
      std::memcpy(M[i][r], programShared(b, off, 16, false), 16);
    }
  const Operand &d = vec(in, 0);
  for (unsigned l = 0; l < 32; ++l) {
    Thread &t = lane(lanes, l, in);
    unsigned g = l / 4, q = l % 4;
    for (unsigned i = 0; i < n; ++i) {
      uint16_t lo = trans ? M[i][2 * q][g] : M[i][g][2 * q];
      uint16_t hi = trans ? M[i][2 * q + 1][g] : M[i][g][2 * q + 1];
      setReg(t, d.elements.at(i), lo | (uint32_t(hi) << 16));
    }
  }
}

/// stmatrix.sync.aligned.m8n8.xN[.trans].shared.b16: the inverse.
void stmatrix(Block &b, const Instr &in, Thread *lanes[32]) {
  unsigned n = matrices(in);
  bool trans = in.has("trans");
  uint16_t M[4][8][8];
  const Operand &s = vec(in, 1);
  for (unsigned l = 0; l < 32; ++l) {
    Thread &t = lane(lanes, l, in);
    unsigned g = l / 4, q = l % 4;
    for (unsigned i = 0; i < n; ++i) {
      uint32_t w = static_cast<uint32_t>(readOperand(b, t, s.elements.at(i)));
      (trans ? M[i][2 * q][g] : M[i][g][2 * q]) = static_cast<uint16_t>(w);
      (trans ? M[i][2 * q + 1][g] : M[i][g][2 * q + 1]) =
          static_cast<uint16_t>(w >> 16);
    }
  }
  for (unsigned i = 0; i < n; ++i)
    for (unsigned r = 0; r < 8; ++r) {
      Thread &t = lane(lanes, i * 8 + r, in);
      uint64_t off = sharedOffset(operandAddress(b, t, in.operands.at(0)));
      std::memcpy(programShared(b, off, 16, true), M[i][r], 16);
    }
}

/// shfl.sync.mode.b32 d[|p], a, b, c, membermask
void shfl(Block &b, const Instr &in, Thread *lanes[32]) {
  bool withPred = in.operands.size() == 6;
  size_t base = withPred ? 2 : 1;
  uint64_t value[32] = {};
  for (unsigned l = 0; l < 32; ++l)
    if (lanes[l])
      value[l] = readOperand(b, *lanes[l], in.operands.at(base));
  for (unsigned l = 0; l < 32; ++l) {
    if (!lanes[l])
      continue;
    Thread &t = *lanes[l];
    unsigned bval =
        static_cast<unsigned>(readOperand(b, t, in.operands[base + 1])) & 31;
    unsigned c =
        static_cast<unsigned>(readOperand(b, t, in.operands[base + 2]));
    unsigned cval = c & 31, segmask = (c >> 8) & 31;
    unsigned maxLane = (l & segmask) | (cval & ~segmask);
    unsigned minLane = l & segmask;
    int j;
    bool ok;
    if (in.has("up")) {
      j = static_cast<int>(l) - static_cast<int>(bval);
      ok = j >= static_cast<int>(maxLane);
    } else if (in.has("down")) {
      j = static_cast<int>(l + bval);
      ok = j <= static_cast<int>(maxLane);
    } else if (in.has("bfly")) {
      j = static_cast<int>(l ^ bval);
      ok = j <= static_cast<int>(maxLane);
    } else if (in.has("idx")) {
      j = static_cast<int>(minLane | (bval & ~segmask));
      ok = j <= static_cast<int>(maxLane);
    } else {
      throw SimError("shfl mode not modelled");
    }
    if (!ok)
      j = static_cast<int>(l);
    if (!lanes[j])
      throw SimError("shfl reads lane " + std::to_string(j) +
                     ", which has exited");
    setReg(t, in.operands[0], value[j] & 0xFFFFFFFFu);
    if (withPred)
      setReg(t, in.operands[1], ok);
  }
}

void vote(Block &b, const Instr &in, Thread *lanes[32]) {
  uint32_t ballot = 0;
  unsigned live = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (lanes[l]) {
      ++live;
      if (readOperand(b, *lanes[l], in.operands.at(1)) & 1)
        ballot |= 1u << l;
    }
  unsigned set = static_cast<unsigned>(__builtin_popcount(ballot));
  for (unsigned l = 0; l < 32; ++l) {
    if (!lanes[l])
      continue;
    uint64_t r;
    if (in.has("ballot"))
      r = ballot;
    else if (in.has("any"))
      r = set > 0;
    else if (in.has("all"))
      r = set == live;
    else if (in.has("uni"))
      r = set == 0 || set == live;
    else
      throw SimError("vote mode not modelled");
    setReg(*lanes[l], in.operands[0], r);
  }
}

void redux(Block &b, const Instr &in, Thread *lanes[32]) {
  uint64_t acc = 0;
  bool first = true, sgn = in.types.back() == Type::S32;
  for (unsigned l = 0; l < 32; ++l) {
    if (!lanes[l])
      continue;
    uint32_t v =
        static_cast<uint32_t>(readOperand(b, *lanes[l], in.operands.at(1)));
    if (first) {
      acc = v;
      first = false;
    } else if (in.has("add")) {
      acc = static_cast<uint32_t>(acc + v);
    } else if (in.has("max")) {
      acc = sgn ? static_cast<uint32_t>(
                      std::max<int32_t>(int32_t(acc), int32_t(v)))
                : std::max<uint32_t>(uint32_t(acc), v);
    } else if (in.has("min")) {
      acc = sgn ? static_cast<uint32_t>(
                      std::min<int32_t>(int32_t(acc), int32_t(v)))
                : std::min<uint32_t>(uint32_t(acc), v);
    } else if (in.has("and")) {
      acc &= v;
    } else if (in.has("or")) {
      acc |= v;
    } else if (in.has("xor")) {
      acc ^= v;
    } else {
      throw SimError("redux operation not modelled");
    }
  }
  for (unsigned l = 0; l < 32; ++l)
    if (lanes[l])
      setReg(*lanes[l], in.operands[0], acc);
}

} // namespace

void runWarpOp(Block &b, const Instr &in, Thread *lanes[32]) {
  if (in.opcode == "mma")
    return mma(b, in, lanes);
  if (in.opcode == "ldmatrix")
    return ldmatrix(b, in, lanes);
  if (in.opcode == "stmatrix")
    return stmatrix(b, in, lanes);
  if (in.opcode == "shfl")
    return shfl(b, in, lanes);
  if (in.opcode == "vote")
    return vote(b, in, lanes);
  if (in.opcode == "redux")
    return redux(b, in, lanes);
  if (in.opcode == "bar") // bar.warp.sync: the gathering is the effect
    return;
  throw SimError("warp instruction not modelled: " + in.opcode);
}

} // namespace ptxsim
