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
#include "PtxSim.h"

#include <stdexcept>

namespace ptxsim {

/// Generic addresses at or above this are shared memory (host pointers,
/// which are global memory here, stay below 2^47).
constexpr uint64_t kSharedWindow = 1ull << 56;
/// Generic addresses in [kParamWindow, kSharedWindow) are the kernel's
/// parameters (cvta.param: a __grid_constant__ tensor map's address).
constexpr uint64_t kParamWindow = 1ull << 55;

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
  // AtMbarrier: at an mbarrier.try_wait whose phase has not completed; it
  // runs the instruction again once that barrier's phase completes.
  enum State { Running, AtWarpOp, AtBarrier, AtMbarrier, Exited };
  State state = Running;
  int pc = 0;
  uint64_t *regs = nullptr;
  unsigned tid[3] = {0, 0, 0};
  unsigned linear = 0;
  std::vector<PendingCopy> copies;
  long committed = 0;       // groups committed so far
  uint64_t waitBarrier = 0; // AtMbarrier: the barrier's shared offset
  unsigned waitParity = 0;  // and the parity of the phase waited for
};

/// An mbarrier object (the PTX ISA's mbarrier section). Its state lives
/// here, keyed by its shared offset in Block::mbarriers; the program may
/// not touch its 8 bytes except through mbarrier instructions.
struct Mbarrier {
  uint64_t phase = 0;    // phases completed so far
  unsigned expected = 0; // arrivals per phase (mbarrier.init's count)
  unsigned pending = 0;  // arrivals the current phase still awaits
  int64_t tx = 0;        // transaction bytes it still awaits
};

/// A cp.async.bulk.tensor issued and not landed yet. It lands (reads
/// global memory, writes the box into shared memory, completes its bytes on
/// the barrier) at the latest moment the hardware may: when a thread waits
/// for the barrier's current phase and all its arrivals are in, or when the
/// block would otherwise deadlock with a thread waiting on the barrier, so
/// that a read of the tile without that wait sees the copy in flight.
struct BulkCopy {
  PtxsimTensorMap map;
  int32_t coords[5];
  uint64_t dst;     // shared offset of the box
  uint64_t barrier; // shared offset of the mbarrier it completes on
  uint64_t phase;   // the barrier's phase at issue, which the copy completes
  unsigned bytes;   // the box's bytes, zero-filled ones included
  unsigned thread;  // the issuing thread (linear index), for messages
  int line;         // and its PTX line
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
  std::map<uint64_t, Mbarrier> mbarriers; // by shared offset
  std::vector<BulkCopy> bulkCopies;       // in issue order
};

/// Memory access with bounds: global accesses must fall in a tracked
/// allocation (or a module variable), shared ones inside the block's.
void *globalPointer(uint64_t address, unsigned bytes);
uint8_t *sharedPointer(Block &b, uint64_t offset, unsigned bytes);

/// A shared access by the program's own loads and stores (not by an async
/// unit): refused while a cp.async in flight writes those bytes or, for a
/// write, while an issued wgmma has yet to read them.
uint8_t *programShared(Block &b, uint64_t offset, unsigned bytes, bool write);

/// The kernel parameters' bytes [offset, offset + bytes).
uint8_t *paramPointer(Block &b, uint64_t offset, unsigned bytes);

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

/// mbarrier and cp.async.bulk.tensor (PtxAsync.cpp).
/// Whether the interpreter models this mbarrier or cp.async.bulk form.
bool isModelledMbarrier(const Instr &in);
bool isModelledBulkCopy(const Instr &in);

/// Runs an mbarrier instruction. false: a try_wait whose phase has not
/// completed, where the thread must wait (Thread::AtMbarrier).
bool runMbarrier(Block &b, Thread &t, const Instr &in);

/// Issues a cp.async.bulk.tensor (see BulkCopy).
void issueBulkCopy(Block &b, Thread &t, const Instr &in);

/// Lands the copies in flight on barriers that threads wait on (the block
/// would deadlock otherwise); whether there was any.
bool landAwaitedBulkCopies(Block &b);

/// Refuses an access by `what` ("a load of", ...) to the bytes of an
/// initialised mbarrier.
void checkNotMbarrier(const Block &b, uint64_t offset, unsigned bytes,
                      const char *what);

/// What writes the in-flight shared byte at `offset`, for messages: "a
/// cp.async in flight writes (...)" or the same of a cp.async.bulk.tensor.
std::string inFlightWriter(const Block &b, uint64_t offset);

/// If a thread waits on an mbarrier in a block that cannot progress: that
/// thread, with `why` saying which barrier and phase never complete.
Thread *mbarrierDeadlock(Block &b, std::string &why);

/// The checks when every thread has exited: no copy in flight, no phase
/// awaiting transaction bytes.
void finishAsync(const Block &b);

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
