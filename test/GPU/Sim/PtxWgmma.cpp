//===- PtxWgmma.cpp - warpgroup MMA (sm_90a) for the interpreter ----------===//
//
// wgmma.mma_async with both operands in shared memory, described by matrix
// descriptors (start address, leading and stride byte offsets, swizzle
// mode), K-major, as the PTX ISA's "Matrix Descriptor Format" and "Shared
// Memory Matrix Layout" sections define them. The swizzle is a function of
// the shared address itself (16-byte chunk bits [4, 4 + b) XOR row bits
// [7, 7 + b) for the 32/64/128-byte modes), which is why the hardware wants
// swizzled tiles aligned to their repeat. Issued operations run when a
// wgmma.wait_group covers their group (see WgmmaOp).
//
//===----------------------------------------------------------------------===//

#include "PtxExec.h"
#include "PtxFloat.h"

#include <vector>

namespace ptxsim {
namespace {

/// The shared-memory offset of byte `kByte` of row `row` of a K-major
/// operand (row: m of A or n of B).
uint64_t elementOffset(uint64_t desc, unsigned row, unsigned kByte) {
  uint64_t start = (desc & 0x3FFF) << 4;
  uint64_t lbo = ((desc >> 16) & 0x3FFF) << 4;
  uint64_t sbo = ((desc >> 32) & 0x3FFF) << 4;
  unsigned baseOffset = static_cast<unsigned>((desc >> 49) & 7);
  unsigned mode = static_cast<unsigned>(desc >> 62);
  if (baseOffset != 0)
    throw SimError("wgmma descriptors with a base offset are not modelled");
  if (mode == 0) // 8 x 16-byte core matrices, LBO apart along K
    return start + (row / 8) * sbo + (kByte / 16) * lbo + (row % 8) * 16 +
           kByte % 16;
  unsigned width = mode == 1 ? 128 : mode == 2 ? 64 : 32;
  unsigned bits = mode == 1 ? 3 : mode == 2 ? 2 : 1;
  uint64_t a = start + (row / 8) * sbo + (row % 8) * width +
               (kByte / width) * lbo + kByte % width;
  return a ^ (((a >> 7) & ((1u << bits) - 1)) << 4);
}

/// Row `row`'s 16 elements of k (two 16-byte chunks, each contiguous: the
/// swizzle moves whole chunks) into `out`.
void operandRow(Block &b, uint64_t desc, unsigned row, Type t, double scale,
                double *out) {
  for (unsigned half = 0; half < 2; ++half) {
    uint16_t h[8];
    std::memcpy(h, sharedPointer(b, elementOffset(desc, row, 16 * half), 16),
                16);
    for (unsigned e = 0; e < 8; ++e)
      out[8 * half + e] =
          scale * (t == Type::BF16 ? bf16ToF32(h[e]) : f16ToF32(h[e]));
  }
}

unsigned shapeN(const Instr &in) {
  for (const std::string &m : in.mods)
    if (m.rfind("m64n", 0) == 0) {
      size_t k = m.find('k');
      if (m.substr(k) != "k16")
        break;
      return static_cast<unsigned>(std::stoul(m.substr(4, k - 4)));
    }
  throw SimError("wgmma shape not modelled");
}

/// Runs one issued wgmma for the warpgroup: D (64 x N, f32) = A (64 x 16)
/// times B^T (B is N x 16, K-major) plus D when scale-d is set.
void execute(Block &b, const WgmmaOp &op, Thread *threads[128]) {
  const Instr &in = *op.in;
  unsigned n = shapeN(in);
  Type at = in.types.at(1), bt = in.types.at(2);
  int64_t scaleA = in.operands.at(4).imm, scaleB = in.operands.at(5).imm;
  std::vector<double> A(64 * 16), B(static_cast<size_t>(n) * 16);
  for (unsigned m = 0; m < 64; ++m)
    operandRow(b, op.descA, m, at, static_cast<double>(scaleA), &A[m * 16]);
  for (unsigned j = 0; j < n; ++j)
    operandRow(b, op.descB, j, bt, static_cast<double>(scaleB), &B[j * 16]);
  const Operand &d = in.operands.at(0);
  if (d.elements.size() != n / 2)
    throw SimError("wgmma accumulator count does not match the shape");
  for (unsigned i = 0; i < 128; ++i) {
    Thread *t = threads[i];
    if (!t)
      throw SimError("a thread of the warpgroup exited before its wgmma "
                     "completed");
    unsigned w = i / 32, l = i % 32, g = l / 4, q = l % 4;
    for (unsigned r = 0; r < n / 2; ++r) {
      unsigned row = 16 * w + g + 8 * ((r % 4) / 2);
      unsigned col = 8 * (r / 4) + 2 * q + r % 2;
      double s = op.scaleD ? asF32(t->regs[d.elements[r].reg]) : 0.0;
      for (unsigned k = 0; k < 16; ++k)
        s += A[row * 16 + k] * B[col * 16 + k];
      t->regs[d.elements[r].reg] = bitsOf(static_cast<float>(s));
    }
  }
}

} // namespace

bool isWarpgroupOp(const Instr &in) {
  return in.opcode == "wgmma" && !in.has("fence");
}

void runWarpgroupOp(Block &b, const Instr &in, unsigned index,
                    Thread *threads[128]) {
  Warpgroup &g = b.warpgroups.at(index);
  if (in.has("mma_async")) {
    if (in.types.size() != 3 || in.types[0] != Type::F32 ||
        in.operands.size() != 8 || in.operands[1].kind == Operand::Vector ||
        in.operands[6].imm != 0 || in.operands[7].imm != 0)
      throw SimError("wgmma form not modelled (f32 accumulators, both "
                     "operands K-major in shared memory)");
    WgmmaOp op;
    op.in = &in;
    Thread *first = nullptr;
    for (unsigned i = 0; i < 128; ++i) {
      Thread *t = threads[i];
      if (!t)
        continue;
      uint64_t a = readOperand(b, *t, in.operands[1]);
      uint64_t bb = readOperand(b, *t, in.operands[2]);
      bool sd = readOperand(b, *t, in.operands[3]) & 1;
      if (!first) {
        first = t;
        op.descA = a;
        op.descB = bb;
        op.scaleD = sd;
      } else if (a != op.descA || bb != op.descB || sd != op.scaleD) {
        throw SimError("wgmma descriptors or scale-d differ between the "
                       "threads of a warpgroup");
      }
    }
    // The 16-byte chunks it reads: two per row of A (64 rows) and of B
    // (N rows) for the 32 bytes of k = 16.
    unsigned n = shapeN(in);
    for (unsigned row = 0; row < 64 + n; ++row)
      for (unsigned half = 0; half < 2; ++half) {
        uint64_t desc = row < 64 ? op.descA : op.descB;
        unsigned r = row < 64 ? row : row - 64;
        op.chunks.push_back(elementOffset(desc, r, 16 * half) & ~15ull);
      }
    for (uint64_t c : op.chunks)
      markWgmmaRead(b, c, 16, 1);
    g.pending.push_back(op);
    return;
  }
  if (in.has("commit_group")) {
    for (WgmmaOp &op : g.pending)
      if (op.group < 0)
        op.group = g.committed;
    ++g.committed;
    return;
  }
  if (in.has("wait_group")) {
    Thread *first = nullptr;
    for (unsigned i = 0; i < 128 && !first; ++i)
      first = threads[i];
    long keep = static_cast<long>(readOperand(b, *first, in.operands.at(0)));
    long upTo = g.committed - keep;
    std::vector<WgmmaOp> rest;
    for (const WgmmaOp &op : g.pending) {
      if (op.group >= 0 && op.group < upTo) {
        execute(b, op, threads);
        for (uint64_t c : op.chunks)
          markWgmmaRead(b, c, 16, -1);
      } else
        rest.push_back(op);
    }
    g.pending = std::move(rest);
    return;
  }
  throw SimError("wgmma instruction not modelled");
}

} // namespace ptxsim
