//===- PtxExec.h - the interpreter's machine state ---------------*- C++
//-*-===//
//
// Threads, blocks and memory as the interpreter sees them, shared by the
// scalar instructions (PtxExec.cpp) and the warp-collective ones
// (PtxWarp.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_TEST_GPU_SIM_PTXEXEC_H
#define FFNC_TEST_GPU_SIM_PTXEXEC_H

#include "PtxModule.h"

#include <stdexcept>

namespace ptxsim {

/// Generic addresses at or above this are shared memory (host pointers,
/// which are global memory here, stay below 2^47).
constexpr uint64_t kSharedWindow = 1ull << 56;

struct SimError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PendingCopy {
  uint64_t dst;   // shared offset
  uint64_t src;   // global address
  unsigned bytes; // copied
  unsigned fill;  // then zero-filled up to this
  long group;     // -1 while the group is open
};

struct Thread {
  enum State { Running, AtWarpOp, AtBarrier, Exited };
  State state = Running;
  int pc = 0;
  uint64_t *regs = nullptr;
  unsigned tid[3] = {0, 0, 0};
  unsigned linear = 0;
  std::vector<PendingCopy> copies;
  long committed = 0; // groups committed so far
};

/// A wgmma.mma_async issued by a warpgroup: it reads shared memory and the
/// accumulators only when a wgmma.wait_group covers its group, the latest
/// moment the hardware may, so a kernel that overwrites a stage before the
/// wait reads the new data here too.
struct WgmmaOp {
  const Instr *in = nullptr;
  uint64_t descA = 0, descB = 0;
  bool scaleD = true;
  long group = -1; // -1 until committed
  std::vector<uint64_t> chunks; // the 16-byte shared chunks it reads
};

struct Warpgroup {
  std::vector<WgmmaOp> pending;
  long committed = 0;
};

struct Block {
  const Kernel *kernel = nullptr;
  unsigned ctaid[3] = {0, 0, 0};
  unsigned grid[3] = {1, 1, 1};
  unsigned dims[3] = {1, 1, 1};
  unsigned dynamicShared = 0;
  std::vector<uint8_t> shared;
  // Per shared byte: how many cp.async copies in flight write it, and how
  // many issued wgmma operations still read it. A program access that
  // overlaps either is a race on the hardware and an error here.
  std::vector<uint16_t> asyncWrites, asyncReads;
  const uint8_t *params = nullptr;
  std::vector<Thread> threads;
  std::vector<Warpgroup> warpgroups;
};

/// Memory access with bounds: global accesses must fall in a tracked
/// allocation (or a module variable), shared ones inside the block's.
void *globalPointer(uint64_t address, unsigned bytes);
uint8_t *sharedPointer(Block &b, uint64_t offset, unsigned bytes);

/// A shared access by the program's own loads and stores (not by an async
/// unit): refused while a cp.async in flight writes those bytes or, for a
/// write, while an issued wgmma has yet to read them.
uint8_t *programShared(Block &b, uint64_t offset, unsigned bytes, bool write);

/// Marks [offset, offset + bytes) as read by an issued wgmma (delta 1) or
/// no longer (delta -1); refused while a cp.async in flight writes it.
void markWgmmaRead(Block &b, uint64_t offset, unsigned bytes, int delta);

/// Runs one warp-collective instruction for the live lanes of a warp
/// (nullptr for exited or absent lanes).
void runWarpOp(Block &b, const Instr &in, Thread *lanes[32]);

/// Whether `in` is collective over a warpgroup (4 warps) rather than a warp.
bool isWarpgroupOp(const Instr &in);

/// Runs a warpgroup-collective instruction (wgmma.*) for warpgroup `index`,
/// whose 128 threads are `threads` (nullptr for exited ones).
void runWarpgroupOp(Block &b, const Instr &in, unsigned index,
                    Thread *threads[128]);

/// Operand access shared by both files; registers and immediates inline
/// (most of the interpreter's reads).
uint64_t readOperandSlow(const Block &b, const Thread &t, const Operand &o);
inline uint64_t readOperand(const Block &b, const Thread &t, const Operand &o) {
  if (o.kind == Operand::Reg)
    return t.regs[o.reg];
  if (o.kind == Operand::Imm)
    return static_cast<uint64_t>(o.imm);
  return readOperandSlow(b, t, o);
}
uint64_t operandAddress(const Block &b, const Thread &t, const Operand &o);

} // namespace ptxsim

#endif
