//===- PtxAsync.cpp - mbarriers and TMA tile loads for the interpreter ----===//
//
// sm_90's asynchronous data movement as the compiler's kernels use it: an
// mbarrier object (init, arrive, arrive.expect_tx, expect_tx, complete_tx,
// try_wait.parity, inval) counts arrivals and transaction bytes per phase,
// and cp.async.bulk.tensor copies a box of a tensor (a tensor map from the
// stand-in driver, PtxSim.h) into shared memory, completing its bytes on an
// mbarrier. A copy lands only when some thread waits for the barrier's
// current phase with every arrival of it in, or when the block could not
// progress otherwise (see BulkCopy), so a kernel that reads a tile before
// its wait, expects too few bytes or never waits fails here as it may fail
// on the hardware.
//
//===----------------------------------------------------------------------===//

#include "PtxExec.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace ptxsim {
namespace {

/// The largest arrival count and transaction count magnitude (2^20 - 1).
constexpr int64_t kMaxCount = (1 << 20) - 1;

std::string nameOf(const Instr &in) {
  std::string name = in.opcode;
  for (const std::string &m : in.mods)
    name += "." + m;
  return name;
}

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

std::string barrierName(uint64_t offset) {
  return "the mbarrier at shared offset " + std::to_string(offset);
}

std::string threadName(const Thread &t) {
  return "thread (" + std::to_string(t.tid[0]) + "," +
         std::to_string(t.tid[1]) + "," + std::to_string(t.tid[2]) + ")";
}

void setReg(Thread &t, const Operand &o, uint64_t v) {
  if (o.kind == Operand::Reg)
    t.regs[o.reg] = v;
  else if (o.kind != Operand::Sink)
    throw SimError("destination is not a register");
}

/// The shared offset an mbarrier operand names: a shared address under
/// .shared (::cta, ::cluster), otherwise a generic one, which must fall in
/// the shared window.
uint64_t barrierOffset(Block &b, const Thread &t, const Instr &in,
                       const Operand &o) {
  uint64_t a = operandAddress(b, t, o);
  if (!in.has(F_shared)) {
    if (a < kSharedWindow)
      throw SimError(nameOf(in) + ": the generic address " + hex(a) +
                     " is not in shared memory");
    a -= kSharedWindow;
  }
  if (a % 8)
    throw SimError(barrierName(a) + " is not 8-byte aligned");
  sharedPointer(b, a, 8);
  return a;
}

Mbarrier &initialised(Block &b, uint64_t offset, const Instr &in) {
  auto it = b.mbarriers.find(offset);
  if (it == b.mbarriers.end())
    throw SimError(nameOf(in) + " on shared offset " + std::to_string(offset) +
                   ", which holds no initialised mbarrier (an mbarrier.init "
                   "missing or not yet run)");
  return it->second;
}

/// A count operand in [lo, 2^20 - 1].
int64_t countOperand(const Block &b, const Thread &t, const Instr &in, size_t i,
                     int64_t lo, const char *what) {
  int64_t v = static_cast<uint32_t>(readOperand(b, t, in.operands.at(i)));
  if (v < lo || v > kMaxCount)
    throw SimError(nameOf(in) + ": " + what + " " + std::to_string(v) +
                   " is not in [" + std::to_string(lo) + ", 2^20 - 1]");
  return v;
}

void addTx(Mbarrier &m, uint64_t offset, int64_t delta) {
  m.tx += delta;
  if (m.tx > kMaxCount || m.tx < -kMaxCount)
    throw SimError("the transaction count of " + barrierName(offset) +
                   " leaves [-(2^20 - 1), 2^20 - 1]: " + std::to_string(m.tx));
}

/// Completes the current phase once it awaits nothing, and wakes the
/// threads that wait for it.
void settle(Block &b, uint64_t offset, Mbarrier &m) {
  if (m.pending != 0 || m.tx != 0)
    return;
  ++m.phase;
  m.pending = m.expected;
  for (Thread &t : b.threads)
    if (t.state == Thread::AtMbarrier && t.waitBarrier == offset)
      t.state = Thread::Running;
}

/// The first thread that waits on the barrier at `offset`, or null.
const Thread *waiterOn(const Block &b, uint64_t offset) {
  for (const Thread &t : b.threads)
    if (t.state == Thread::AtMbarrier && t.waitBarrier == offset)
      return &t;
  return nullptr;
}

/// Refuses `what` on the barrier at `offset` while a thread waits on it.
/// init and inval replace a barrier's state: refused while a copy in
/// flight will complete bytes on it or a thread waits on it.
void refuseIfInUse(const Block &b, uint64_t offset, const char *what) {
  for (const BulkCopy &c : b.bulkCopies)
    if (c.barrier == offset)
      throw SimError(std::string(what) + " of " + barrierName(offset) +
                     ", on which a cp.async.bulk.tensor is in flight");
  if (const Thread *t = waiterOn(b, offset))
    throw SimError(std::string(what) + " of " + barrierName(offset) +
                   " while " + threadName(*t) + " waits on it");
}

// --- The box of a tensor ----------------------------------------------------

/// Calls f(boxByte, address, bytes) for the in-range part of each row (the
/// elements along dimension 0) of the copy's box: `bytes` at global
/// `address` go to byte `boxByte` of the box, laid out row-major with
/// dimension 0 contiguous. Elements outside the tensor are not visited.
template <typename F> void forEachRow(const BulkCopy &c, F f) {
  const PtxsimTensorMap &m = c.map;
  unsigned e = m.elementBytes, rank = m.rank;
  uint64_t rows = 1;
  for (unsigned d = 1; d < rank; ++d)
    rows *= m.boxDim[d];
  int64_t c0 = c.coords[0], dim0 = static_cast<int64_t>(m.globalDim[0]);
  int64_t lo = std::max<int64_t>(0, -c0);
  int64_t hi = std::min<int64_t>(m.boxDim[0], dim0 - c0);
  if (lo >= hi)
    return;
  for (uint64_t r = 0; r < rows; ++r) {
    uint64_t address = m.globalAddress + static_cast<uint64_t>(c0 + lo) * e;
    bool inside = true;
    uint64_t rest = r;
    for (unsigned d = 1; d < rank && inside; ++d) {
      int64_t x = c.coords[d] + static_cast<int64_t>(rest % m.boxDim[d]);
      rest /= m.boxDim[d];
      inside = x >= 0 && x < static_cast<int64_t>(m.globalDim[d]);
      address += static_cast<uint64_t>(x) * m.globalStrides[d - 1];
    }
    if (inside)
      f(r * m.boxDim[0] * e + static_cast<uint64_t>(lo) * e, address,
        static_cast<unsigned>((hi - lo) * e));
  }
}

/// The shared offset of 16-byte chunk `i` of the box: consecutive from
/// the destination, with the swizzle's XOR of address bits [7, 7 + n) into
/// the chunk bits [4, 4 + n) (n = 1, 2, 3 for 32, 64, 128 bytes), as
/// wgmma's descriptors read it (PtxWgmma.cpp).
uint64_t chunkOffset(const BulkCopy &c, uint64_t i) {
  uint64_t a = c.dst + 16 * i;
  unsigned bits = c.map.swizzle == 128  ? 3
                  : c.map.swizzle == 64 ? 2
                  : c.map.swizzle == 32 ? 1
                                        : 0;
  return a ^ (((a >> 7) & ((1u << bits) - 1)) << 4);
}

/// Writes the box into shared memory and completes its bytes.
void land(Block &b, const BulkCopy &c) {
  std::vector<uint8_t> box(c.bytes, 0);
  forEachRow(c, [&](uint64_t at, uint64_t address, unsigned n) {
    std::memcpy(box.data() + at, globalPointer(address, n), n);
  });
  for (uint64_t i = 0; i < c.bytes / 16; ++i) {
    uint64_t off = chunkOffset(c, i);
    std::memcpy(sharedPointer(b, off, 16), box.data() + 16 * i, 16);
    for (unsigned j = 0; j < 16; ++j)
      --b.asyncWrites[off + j];
  }
  Mbarrier &m = b.mbarriers.at(c.barrier);
  if (m.phase != c.phase)
    throw SimError("a cp.async.bulk.tensor (issued at PTX line " +
                   std::to_string(c.line) + ") lands after the phase of " +
                   barrierName(c.barrier) +
                   " it was issued in has completed without its " +
                   std::to_string(c.bytes) +
                   " bytes (an expect_tx too "
                   "small)");
  // The hardware completes a copy's bytes piecemeal: with every arrival in,
  // a phase expecting fewer bytes than the copy brings completes while the
  // copy still writes.
  if (m.pending == 0 && m.tx > 0 && c.bytes > m.tx)
    throw SimError("a cp.async.bulk.tensor of " + std::to_string(c.bytes) +
                   " bytes (issued at PTX line " + std::to_string(c.line) +
                   ") completes on " + barrierName(c.barrier) +
                   ", whose phase expects only " + std::to_string(m.tx) +
                   " more transaction bytes (an expect_tx too small): the "
                   "phase would complete while the copy still writes");
  addTx(m, c.barrier, -static_cast<int64_t>(c.bytes));
  settle(b, c.barrier, m);
}

/// Lands the copies in flight that complete on `barrier`.
void landBulkCopies(Block &b, uint64_t barrier) {
  std::vector<BulkCopy> mine;
  auto it = std::stable_partition(
      b.bulkCopies.begin(), b.bulkCopies.end(),
      [&](const BulkCopy &c) { return c.barrier != barrier; });
  mine.assign(it, b.bulkCopies.end());
  b.bulkCopies.erase(it, b.bulkCopies.end());
  for (const BulkCopy &c : mine)
    land(b, c);
}

void arrive(Block &b, uint64_t offset, Mbarrier &m, int64_t count,
            bool mayComplete) {
  if (count > m.pending)
    throw SimError("more arrivals on " + barrierName(offset) +
                   " than its phase awaits (" + std::to_string(m.pending) +
                   " pending, " + std::to_string(count) + " arriving)");
  m.pending -= static_cast<unsigned>(count);
  if (!mayComplete && m.pending == 0 && m.tx == 0)
    throw SimError("mbarrier.arrive.noComplete completes the phase of " +
                   barrierName(offset));
  // The last arrival while a thread waits: the copies the phase awaits
  // land now, the latest moment they may.
  if (m.pending == 0 && m.tx != 0 && waiterOn(b, offset))
    landBulkCopies(b, offset);
  settle(b, offset, m);
}

/// The 128 bytes of the tensor map at generic `address`: the kernel's
/// parameters (a __grid_constant__ map) or global memory.
PtxsimTensorMap readTensorMap(Block &b, uint64_t address) {
  if (address % 64)
    throw SimError("the tensor map at " + hex(address) +
                   " is not 64-byte aligned");
  if (address >= kSharedWindow)
    throw SimError("the tensor map at " + hex(address) +
                   " is in shared memory (it must be a kernel parameter, a "
                   "constant or in global memory)");
  const void *p = address >= kParamWindow
                      ? paramPointer(b, address - kParamWindow, 128)
                      : globalPointer(address, 128);
  PtxsimTensorMap m;
  std::memcpy(&m, p, sizeof m);
  bool sane = m.rank >= 1 && m.rank <= 5 && m.elementBytes >= 1 &&
              m.elementBytes <= 8 && m.boxDim[0] * m.elementBytes % 16 == 0 &&
              (m.swizzle == 0 || m.swizzle == 32 || m.swizzle == 64 ||
               m.swizzle == 128);
  for (unsigned d = 0; d < m.rank && sane; ++d)
    sane = m.boxDim[d] >= 1 && m.boxDim[d] <= 256;
  if (m.magic != PTXSIM_TENSOR_MAP_MAGIC || !sane)
    throw SimError("the 128 bytes at " + hex(address) +
                   " are not a tensor map (cuTensorMapEncodeTiled did not "
                   "write them)");
  return m;
}

unsigned boxRank(const Instr &in) {
  for (const std::string &m : in.mods)
    if (m.size() == 2 && m[1] == 'd' && m[0] >= '1' && m[0] <= '5')
      return static_cast<unsigned>(m[0] - '0');
  return 0;
}

} // namespace

bool isModelledMbarrier(const Instr &in) {
  if (in.mods.empty() || !in.has("b64"))
    return false;
  const std::string &op = in.mods[0];
  size_t n = in.operands.size();
  if (op == "init")
    return n == 2;
  if (op == "arrive") {
    if (in.has("expect_tx") || in.has("noComplete"))
      return n == 3;
    return n == 2 || n == 3;
  }
  if (op == "expect_tx" || op == "complete_tx")
    return n == 2;
  if (op == "try_wait")
    return in.has("parity") && (n == 3 || n == 4);
  if (op == "inval")
    return n == 1;
  return false;
}

bool isModelledBulkCopy(const Instr &in) {
  if (in.has("prefetch"))
    return true; // cp.async.bulk.prefetch(.tensor): an L2 hint, a no-op
  // Global to shared, a tile (not im2col, not gathered), to this CTA
  // alone, completing on an mbarrier.
  unsigned rank = boxRank(in);
  return in.has("tensor") && rank && in.has(F_global) && in.has(F_shared) &&
         in.has("mbarrier::complete_tx::bytes") &&
         !in.has("multicast::cluster") && !in.has("im2col") &&
         !in.has("im2col::w") && !in.has("im2col::w::128") &&
         !in.has("tile::gather4") &&
         (in.operands.size() == 3 || in.operands.size() == 4) &&
         in.operands[1].kind == Operand::Address &&
         in.operands[1].elements.size() == rank;
}

bool runMbarrier(Block &b, Thread &t, const Instr &in) {
  const std::string &op = in.mods.at(0);
  const std::vector<Operand> &o = in.operands;
  if (op == "init") {
    uint64_t offset = barrierOffset(b, t, in, o.at(0));
    refuseIfInUse(b, offset, "mbarrier.init");
    b.mbarriers.erase(offset);
    programShared(b, offset, 8, true);
    unsigned count =
        static_cast<unsigned>(countOperand(b, t, in, 1, 1, "the count"));
    Mbarrier &m = b.mbarriers[offset];
    m.expected = m.pending = count;
    return true;
  }
  if (op == "inval") {
    uint64_t offset = barrierOffset(b, t, in, o.at(0));
    initialised(b, offset, in);
    refuseIfInUse(b, offset, "mbarrier.inval");
    b.mbarriers.erase(offset);
    return true;
  }
  if (op == "try_wait") {
    uint64_t offset = barrierOffset(b, t, in, o.at(1));
    Mbarrier &m = initialised(b, offset, in);
    // The phase of parity P has completed when the current phase's parity
    // is not P (so a wait for parity 1 on a fresh barrier returns at once).
    unsigned parity = readOperand(b, t, o.at(2)) & 1;
    // Waiting for the current phase, every arrival in: the copies it
    // awaits land now, the latest moment they may (see also arrive).
    if ((m.phase & 1) == parity && m.pending == 0)
      landBulkCopies(b, offset);
    if ((m.phase & 1) == parity) {
      t.waitBarrier = offset;
      t.waitParity = parity;
      return false;
    }
    setReg(t, o[0], 1);
    return true;
  }
  if (op == "expect_tx" || op == "complete_tx") {
    uint64_t offset = barrierOffset(b, t, in, o.at(0));
    Mbarrier &m = initialised(b, offset, in);
    int64_t tx = countOperand(b, t, in, 1, 0, "the transaction count");
    addTx(m, offset, op == "expect_tx" ? tx : -tx);
    settle(b, offset, m);
    return true;
  }
  // arrive[.expect_tx | .noComplete]: state, [addr] [, count or tx]
  uint64_t offset = barrierOffset(b, t, in, o.at(1));
  Mbarrier &m = initialised(b, offset, in);
  uint64_t state = m.phase;
  int64_t count = 1;
  if (in.has("expect_tx"))
    addTx(m, offset, countOperand(b, t, in, 2, 0, "the transaction count"));
  else if (o.size() > 2)
    count = countOperand(b, t, in, 2, 1, "the arrival count");
  arrive(b, offset, m, count, !in.has("noComplete"));
  setReg(t, o[0], state);
  return true;
}

void issueBulkCopy(Block &b, Thread &t, const Instr &in) {
  if (in.has("prefetch"))
    return;
  const std::vector<Operand> &o = in.operands;
  BulkCopy c;
  c.dst = operandAddress(b, t, o.at(0));
  if (c.dst % 128)
    throw SimError("cp.async.bulk.tensor's destination, shared offset " +
                   std::to_string(c.dst) + ", is not 128-byte aligned");
  c.map = readTensorMap(b, operandAddress(b, t, o.at(1)));
  unsigned rank = boxRank(in);
  if (c.map.rank != rank)
    throw SimError("a tensor map of rank " + std::to_string(c.map.rank) +
                   " used by " + nameOf(in));
  for (unsigned d = 0; d < rank; ++d)
    c.coords[d] = static_cast<int32_t>(readOperand(b, t, o[1].elements.at(d)));
  c.barrier = operandAddress(b, t, o.at(2));
  if (c.barrier % 8)
    throw SimError(barrierName(c.barrier) + " is not 8-byte aligned");
  c.phase = initialised(b, c.barrier, in).phase;
  uint64_t bytes = c.map.elementBytes;
  for (unsigned d = 0; d < rank; ++d)
    bytes *= c.map.boxDim[d];
  if (bytes > b.shared.size())
    throw SimError("a box of " + std::to_string(bytes) +
                   " bytes does not fit the block's " +
                   std::to_string(b.shared.size()) + " bytes of shared memory");
  c.bytes = static_cast<unsigned>(bytes);
  c.thread = t.linear;
  c.line = in.line;
  // The box's global rows must lie in allocations now; they are read when
  // the copy lands.
  forEachRow(c, [](uint64_t, uint64_t address, unsigned n) {
    globalPointer(address, n);
  });
  for (uint64_t i = 0; i < c.bytes / 16; ++i) {
    uint64_t off = chunkOffset(c, i);
    sharedPointer(b, off, 16);
    checkNotMbarrier(b, off, 16, "cp.async.bulk.tensor's write of");
    for (unsigned j = 0; j < 16; ++j)
      if (b.asyncReads[off + j])
        throw SimError("cp.async.bulk.tensor overwrites shared memory that "
                       "an issued wgmma has yet to read (a wgmma.wait_group "
                       "missing or too lax)");
  }
  for (uint64_t i = 0; i < c.bytes / 16; ++i) {
    uint64_t off = chunkOffset(c, i);
    for (unsigned j = 0; j < 16; ++j)
      ++b.asyncWrites[off + j];
  }
  b.bulkCopies.push_back(c);
}

bool landAwaitedBulkCopies(Block &b) {
  size_t before = b.bulkCopies.size();
  for (size_t i = 0; i < b.bulkCopies.size();) {
    uint64_t barrier = b.bulkCopies[i].barrier;
    if (waiterOn(b, barrier))
      landBulkCopies(b, barrier); // erases copy i and any after it
    else
      ++i;
  }
  return b.bulkCopies.size() != before;
}

void checkNotMbarrier(const Block &b, uint64_t offset, unsigned bytes,
                      const char *what) {
  if (b.mbarriers.empty())
    return;
  auto it = b.mbarriers.lower_bound(offset >= 7 ? offset - 7 : 0);
  if (it != b.mbarriers.end() && it->first < offset + bytes)
    throw SimError(std::string(what) + " " + barrierName(it->first) +
                   " (only mbarrier instructions may touch it until "
                   "mbarrier.inval)");
}

std::string inFlightWriter(const Block &b, uint64_t offset) {
  for (const BulkCopy &c : b.bulkCopies)
    for (uint64_t i = 0; i < c.bytes / 16; ++i) {
      uint64_t off = chunkOffset(c, i);
      if (offset >= off && offset < off + 16)
        return "a cp.async.bulk.tensor in flight writes (issued at PTX line " +
               std::to_string(c.line) + "; an mbarrier wait missing)";
    }
  return "a cp.async in flight writes (a cp.async.wait_group or barrier "
         "missing)";
}

Thread *mbarrierDeadlock(Block &b, std::string &why) {
  for (Thread &t : b.threads) {
    if (t.state != Thread::AtMbarrier)
      continue;
    const Mbarrier &m = b.mbarriers.at(t.waitBarrier); // inval refuses waiters
    why = "deadlock: the wait for the phase of parity " +
          std::to_string(t.waitParity) + " of " + barrierName(t.waitBarrier) +
          " never completes (pending: " + std::to_string(m.pending) +
          " arrivals, " + std::to_string(m.tx) + " transaction bytes)";
    return &t;
  }
  return nullptr;
}

void finishAsync(const Block &b) {
  if (!b.bulkCopies.empty()) {
    const BulkCopy &c = b.bulkCopies.front();
    throw SimError("the block ended with a cp.async.bulk.tensor (issued by " +
                   threadName(b.threads.at(c.thread)) + " at PTX line " +
                   std::to_string(c.line) + ") never waited for");
  }
  for (const auto &[offset, m] : b.mbarriers)
    if (m.tx != 0)
      throw SimError("the block ended while the phase of " +
                     barrierName(offset) + " awaits " + std::to_string(m.tx) +
                     " transaction bytes: a copy never issued or its bytes "
                     "never waited for");
}

} // namespace ptxsim
