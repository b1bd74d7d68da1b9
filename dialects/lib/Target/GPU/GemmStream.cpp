//===- GemmStream.cpp - the decode tile's register weight stream ---------===//
//
// The 16-row tile's main loop without a shared-memory ring (`stages = 0` in
// the strategy): at decode every weight byte is read once, so staging B
// through shared memory buys no reuse, and the ring's block barrier and
// per-slice fill and drain cost the stream its depth (docs/gpu.md: the
// ring's decode reached 2.7 TB/s on an H200 whose copy runs at 4.2).
//
// Each lane loads its B fragments straight from global memory with 16-byte
// `ld.global.nc` loads of a K-major row, and A the same way, so no shuffle
// is needed: mma.m16n8k16 sums over its 16 k, and any bijection between
// those and the real k's that A and B share gives the same sum. Lane (g, t)
// holds the fragment k's {2t, 2t+1, 2t+8, 2t+9}; for the j-th MMA (j = 0, 1)
// of a 32-wide chunk they are taken to be the chunk's k's 8t + 4j + {0, 1,
// 2, 3}, so one 16-byte load of k's 8t .. 8t+7 gives a lane both MMAs'
// operands: words 2j and 2j+1, for B (rows g of the n8 fragment) and for A
// (rows g and g + 8). The accumulators keep the usual layout, so the
// epilogue and the split-K fix-up are the ring's.
//
// The next chunks' B loads are issued before the current ones' MMAs (the
// loop carries them), so every lane keeps an iteration of weights in flight
// with no barrier in the loop. A, which every warp reads, is staged in
// shared memory once per block (16 rows of the K slice, at most 48 KiB),
// so no global latency sits between one iteration's MMAs and the next
// one's loads; a slice too long for that reads A from L1/L2 instead.
// Loads past the slice or the matrix are predicated off and read as zero.
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <cassert>

using namespace mlir;
using namespace mlir::ffn::gpu_target;
using mlir::ffn::gpu_target::detail::GemmBuilder;

namespace {
/// k per 16-byte load of a row (8 elements) times the 4 lanes of a row.
constexpr int64_t kChunk = 32;
/// Chunks per loop iteration: a lane keeps the next iteration's weights in
/// flight, 2 chunks x 2 fragments x 16 bytes (16 KiB a block), in about 60
/// registers, so four blocks fit an SM (a deeper stream measured slower on
/// an H200: fewer resident blocks).
constexpr int64_t kUnroll = 2;
/// The most shared memory a block stages A's slice in (up to 16 x 1504
/// bf16): four blocks an SM still fit beside it.
constexpr int64_t kStageLimit = 48 * 1024;
/// Padding after each staged row of A. A quarter warp's 16-byte loads read
/// two rows, 64 contiguous bytes each; a row stride of 64 bytes past a
/// multiple of 128 puts them on all 32 banks once. (16 bytes of padding
/// overlapped them in 12 banks: Nsight Compute counted 7.9 wavefronts per
/// load where 4 is the least, docs/bench-gpu-2026-11-30-h200-refresh.txt.)
constexpr int64_t kStagePadBytes = 64;
} // namespace

int64_t GemmConfig::streamStageBytes() const {
  int64_t eb = storage.getIntOrFloatBitWidth() / 8;
  int64_t kTiles = (k / bk + splitK - 1) / splitK;
  int64_t bytes = bm * (kTiles * bk * eb + kStagePadBytes);
  return bytes <= kStageLimit ? bytes : 0;
}

int64_t GemmConfig::streamFrontBytes() const {
  return std::max<int64_t>(postNorm ? 32 : 16, streamStageBytes());
}

int64_t GemmConfig::warpRingOffset() const {
  return (streamFrontBytes() + 127) / 128 * 128;
}

Value GemmBuilder::byteAddress(Value buffer, Value element) {
  // The memref's aligned pointer plus its offset and the element, in bytes.
  auto meta = memref::ExtractStridedMetadataOp::create(b, buffer);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, buffer);
  Value at = ir.add(meta.getOffset(), element);
  return arith::IndexCastOp::create(b, b.getI64Type(),
                                    ir.add(base, ir.mul(at, eb)));
}

SmallVector<Value> GemmBuilder::load16(Value address, Value valid,
                                       bool streaming) {
  // Four words, zero where `valid` is false (the load is predicated off and
  // touches no memory). The weights are read once: no L1 allocation.
  std::string ld = streaming ? "ld.global.nc.L1::no_allocate.v4.u32"
                             : "ld.global.nc.v4.u32";
  std::string code = "{\n .reg .pred p;\n setp.ne.b32 p, $5, 0;\n"
                     " mov.b32 $0, 0;\n mov.b32 $1, 0;\n mov.b32 $2, 0;\n"
                     " mov.b32 $3, 0;\n @p " +
                     ld + " {$0, $1, $2, $3}, [$4];\n}";
  Type i32 = b.getI32Type();
  auto result = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                 {i32, i32, i32, i32});
  Value flag = arith::ExtUIOp::create(b, i32, valid);
  auto op = LLVM::InlineAsmOp::create(
      b, result, ValueRange{address, flag}, code, "=r,=r,=r,=r,l,r",
      /*has_side_effects=*/false, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  SmallVector<Value> words;
  for (int64_t i = 0; i < 4; ++i)
    words.push_back(LLVM::ExtractValueOp::create(b, op.getResult(0),
                                                 ArrayRef<int64_t>{i}));
  return words;
}

Value GemmBuilder::mmaOperand(Value word) {
  // bf16 pairs travel as i32, f16 pairs as vector<2xf16> (asI32's forms).
  if (!c.storage.isF16())
    return word;
  return LLVM::BitcastOp::create(b, VectorType::get({2}, c.storage), word);
}

void GemmBuilder::buildStream() {
  assert(c.bm == 16 && c.warpsM == 1 && c.tensorCores() && !c.weightBits &&
         !moe() && "the register stream is the unquantized 16-row tile's");
  // A's rows start 16-byte aligned and its valid columns end on a whole
  // load (the planner pads the input otherwise, as cp.async needs too).
  assert(c.kValid % vec == 0 && c.lda % vec == 0 && c.k % vec == 0);
  int64_t step = kChunk * kUnroll;
  int64_t iterations = (kPerSlice + step - 1) / step;
  Value kEnd = ir.min(ir.add(kBeg, kPerSlice), ir.idx(c.k));
  Value aEnd = ir.min(ir.add(kBeg, kPerSlice), ir.idx(c.kValid));
  Value laneK = ir.mul(tig, vec); // this lane's k in a chunk

  // This lane's B row of each n8 fragment (gated: the interleaving's gate
  // or up row), as the byte address of its k = kBeg + laneK.
  Value bFirst = ir.add(kBeg, laneK);
  SmallVector<Value> bAddr;
  for (int64_t nt = 0; nt < fragsN; ++nt) {
    auto [isGate, srcRow] =
        bSource(ir.add(ir.add(ir.add(col0, warpCol), nt * 8), grp));
    Value element =
        ir.add(ir.mul(inGroup(srcRow, c.bGroupRows), c.k), bFirst);
    Value address = byteAddress(bBuf, element);
    if (c.gated)
      address = ir.select(isGate, address, byteAddress(bUpBuf, element));
    bAddr.push_back(address);
  }
  Type i64 = b.getI64Type();
  auto offset = [&](Value address, Value kOffset) {
    Value bytes = arith::IndexCastOp::create(b, i64, ir.mul(kOffset, eb));
    return arith::AddIOp::create(b, address, bytes).getResult();
  };
  // A's slice in shared memory (rows padded by kStagePadBytes), copied once
  // while the first weights are in flight; without room for it, A comes
  // from L1/L2 each chunk. kPerSlice is a multiple of 64 elements.
  int64_t aRow = kPerSlice + kStagePadBytes / eb;
  bool staged = c.streamStageBytes() > 0;
  assert((!staged || kPerSlice % step == 0) && "staged reads stay inside");
  // Unstaged, each lane reads rows grp and grp + 8 of A from global memory
  // (rows past m read nothing).
  Value aAddr[2], aRowValid[2];
  if (!staged)
    for (int64_t half = 0; half < 2; ++half) {
      Value row = ir.add(ir.add(row0, grp), half * 8);
      aRowValid[half] = ir.lt(row, m);
      Value element =
          inGroup(ir.add(ir.mul(row, c.lda), bFirst), c.aGroupStride);
      aAddr[half] = byteAddress(aBuf, element);
    }
  Value aStage, raw;
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  if (staged || c.warpStages) {
    raw = gpu::DynamicSharedMemoryOp::create(
        b,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr, space));
    aStage = memref::ExtractAlignedPointerAsIndexOp::create(b, raw);
  }
  if (staged)
    aSmem = memref::ViewOp::create(
        b, MemRefType::get({c.bm, aRow}, c.storage, nullptr, space), raw,
        ir.idx(0), ValueRange{});

  // Iteration `it`'s weights: fragsN x kUnroll loads of four words.
  auto loadB = [&](Value it) {
    SmallVector<Value> words;
    for (int64_t u = 0; u < kUnroll; ++u) {
      Value k = ir.add(ir.mul(it, step), u * kChunk);
      Value valid = ir.lt(ir.add(bFirst, k), kEnd);
      for (int64_t nt = 0; nt < fragsN; ++nt)
        llvm::append_range(words, load16(offset(bAddr[nt], k), valid,
                                         /*streaming=*/true));
    }
    return words;
  };
  // The warp ring (c.warpStages > 0): iteration `it`'s weights of the
  // warp's rows (fragsN x 8 rows, `step` k: one 128-byte line a row) land
  // in stage it % warpStages of the warp's own ring. Eight lanes copy a
  // line, so every copy instruction reads four whole lines where the
  // register loads read 64 bytes of eight (twice the L2 requests for the
  // same bytes). Segment s (16 bytes) of ring row r lies at s ^ 4 (r % 2):
  // a quarter warp's copies then write one line's eight bank groups and
  // its reads (rows g, g + 1, segments 4u + t) eight distinct ones.
  int64_t warpRows = fragsN * 8, segments = step / vec;
  int64_t ringRows = c.warpStages * warpRows;
  int64_t copiesPerLane = warpRows * segments / 32;
  assert((!c.warpStages ||
          (segments == 8 && copiesPerLane * 32 == warpRows * segments)) &&
         "the warp ring copies whole 128-byte lines, 8 lanes a line");
  Value ringSmem, ringBase, copySeg;
  SmallVector<Value> copyRow, copyBuf, copySrc;
  if (c.warpStages) {
    int64_t offset = c.warpRingOffset();
    ringSmem = memref::ViewOp::create(
        b,
        MemRefType::get({c.warpsN * ringRows, step}, c.storage, nullptr, space),
        raw, ir.idx(offset), ValueRange{});
    ringBase = ir.add(aStage, ir.idx(offset));
    // Copy i of a stage: ring row 4 i + lane / 8, segment lane % 8, from
    // the packed B row the row stands for (gated: its gate or up row).
    copySeg = ir.rem(lane, 8);
    for (int64_t i = 0; i < copiesPerLane; ++i) {
      Value row = ir.add(ir.div(lane, 8), i * 4);
      auto [isGate, srcRow] = bSource(ir.add(ir.add(col0, warpCol), row));
      copyRow.push_back(row);
      copyBuf.push_back(c.gated ? ir.select(isGate, bBuf, bUpBuf) : bBuf);
      copySrc.push_back(ir.add(ir.mul(inGroup(srcRow, c.bGroupRows), c.k),
                               ir.add(kBeg, ir.mul(copySeg, vec))));
    }
  }
  auto swizzled = [&](Value row, Value segment) {
    return arith::XOrIOp::create(b, segment, ir.mul(ir.rem(row, 2), 4))
        .getResult();
  };
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  // The first ring row of iteration `it`'s stage in this warp's ring.
  auto stageRow0 = [&](Value it) {
    return ir.add(ir.mul(warp, ringRows),
                  ir.mul(ir.rem(it, c.warpStages), warpRows));
  };
  // 16 bytes of shared memory at a byte address, as four i32 words.
  auto sharedWords = [&](Value byteAddress) {
    Value v = LLVM::LoadOp::create(b, VectorType::get({4}, b.getI32Type()),
                                   sharedPointer(byteAddress),
                                   /*alignment=*/16);
    SmallVector<Value> words;
    for (int64_t i = 0; i < 4; ++i)
      words.push_back(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{i}));
    return words;
  };
  // Iteration `it`'s copies into its stage, one cp.async group (zero-filled
  // past the slice or the matrix, as the register loads read zeros there).
  auto fillStage = [&](Value it) {
    Value zero = ir.idx(0), full = ir.idx(vec);
    Value k = ir.mul(it, step);
    Value valid = ir.select(
        ir.lt(ir.add(ir.add(kBeg, ir.mul(copySeg, vec)), k), kEnd), full, zero);
    Value ringRow0 = stageRow0(it);
    SmallVector<Value> tokens;
    for (int64_t i = 0; i < copiesPerLane; ++i) {
      // A zero-filled copy reads nothing but still names a valid address.
      Value src = ir.select(ir.lt(zero, valid), ir.add(copySrc[i], k), zero);
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, tokenType, ringSmem,
          ValueRange{ir.add(ringRow0, copyRow[i]),
                     ir.mul(swizzled(copyRow[i], copySeg), vec)},
          copyBuf[i], ValueRange{src}, b.getIndexAttr(vec), valid,
          b.getUnitAttr()));
    }
    return nvgpu::DeviceAsyncCreateGroupOp::create(b, tokenType, tokens)
        .getResult();
  };
  // Iteration `it`'s weights out of its stage, in loadB's order: lane
  // (g, t) reads row 8 nt + g, segment 4 u + t (the k's its register load
  // would have held).
  auto readStage = [&](Value it) {
    Value ringRow0 = stageRow0(it);
    SmallVector<Value> words;
    for (int64_t u = 0; u < kUnroll; ++u)
      for (int64_t nt = 0; nt < fragsN; ++nt) {
        Value row = ir.add(grp, nt * 8);
        Value segment = swizzled(row, ir.add(tig, u * 4));
        Value byte = ir.add(ir.mul(ir.add(ringRow0, row), step * eb),
                            ir.mul(segment, 16));
        llvm::append_range(words, sharedWords(ir.add(ringBase, byte)));
      }
    return words;
  };
  // Rows grp and grp + 8 of A at slice column `k` + laneK.
  auto loadA = [&](Value k, int64_t half) -> SmallVector<Value> {
    if (!staged)
      return load16(offset(aAddr[half], k),
                    ir.andI(ir.lt(ir.add(bFirst, k), aEnd), aRowValid[half]),
                    /*streaming=*/false);
    Value element =
        ir.add(ir.mul(ir.add(grp, half * 8), aRow), ir.add(k, laneK));
    return sharedWords(ir.add(aStage, ir.mul(element, eb)));
  };

  int64_t accCount = fragsN * 4;
  SmallVector<Value> init(accCount, ir.f32(0));
  Value stagedGroup;
  if (staged) {
    // 16-byte copies, zero-filled past A's columns and m's rows.
    SmallVector<Value> tokens;
    Value zero = ir.idx(0), full = ir.idx(vec);
    forEachChunk(c.bm, kPerSlice / vec, [&](Value r, Value j) {
      Value gk = ir.add(kBeg, ir.mul(j, vec));
      Value gm = ir.add(row0, r);
      Value valid =
          ir.select(ir.andI(ir.lt(gk, aEnd), ir.lt(gm, m)), full, zero);
      Value src = inGroup(ir.add(ir.mul(gm, c.lda), gk), c.aGroupStride);
      src = ir.select(ir.lt(zero, valid), src, zero);
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, tokenType, aSmem, ValueRange{r, ir.mul(j, vec)}, aBuf,
          ValueRange{src}, b.getIndexAttr(vec), valid, b.getUnitAttr()));
    });
    stagedGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, tokenType, tokens);
  }
  // The first weights go out while A's copies land (issued after them: the
  // copies' addresses are dead by then, which keeps ptxas within the four
  // blocks' registers): an iteration's loads, or the ring's first stages
  // but one. Groups complete in order, so A has landed once no more than
  // the ring's groups are pending.
  Value ringGroup = stagedGroup;
  if (c.warpStages)
    for (int64_t st = 0; st + 1 < c.warpStages; ++st)
      ringGroup = fillStage(ir.idx(st));
  else
    llvm::append_range(init, loadB(ir.idx(0)));
  if (staged) {
    nvgpu::DeviceAsyncWaitOp::create(
        b, ringGroup,
        b.getI32IntegerAttr(std::max<int64_t>(c.warpStages - 1, 0)));
    ir.barrier();
  }
  SmallVector<Value> state = ir.loop(
      ir.idx(0), ir.idx(iterations), 1, init,
      [&](Value it, ValueRange iter) -> SmallVector<Value> {
        // The next iteration's weights go out before this one's MMAs, so
        // no load waits on the previous one's arrival. The ring: this
        // stage has landed once the ring's later groups alone are pending
        // (each lane's own copies), and every lane's once the warp meets;
        // then the stage the previous iteration read is refilled.
        SmallVector<Value> next, ringWords;
        ValueRange words = iter.drop_front(accCount);
        if (c.warpStages) {
          nvgpu::DeviceAsyncWaitOp::create(
              b, ringGroup, b.getI32IntegerAttr(c.warpStages - 2));
          NVVM::SyncWarpOp::create(b, ir.i32(-1));
          fillStage(ir.add(it, c.warpStages - 1));
          ringWords = readStage(it);
          words = ringWords;
        } else {
          next = loadB(ir.add(it, 1));
        }
        SmallVector<Value> acc(iter.begin(), iter.begin() + accCount);
        for (int64_t u = 0; u < kUnroll; ++u) {
          Value k = ir.add(ir.mul(it, step), u * kChunk);
          SmallVector<Value> a[2] = {loadA(k, 0), loadA(k, 1)};
          for (int64_t j = 0; j < 2; ++j) {
            // a0a1, a2a3 (row + 8), a4a5, a6a7 (row + 8): words 2j, 2j + 1.
            SmallVector<Value> aFrag = {
                mmaOperand(a[0][2 * j]), mmaOperand(a[1][2 * j]),
                mmaOperand(a[0][2 * j + 1]), mmaOperand(a[1][2 * j + 1])};
            for (int64_t nt = 0; nt < fragsN; ++nt) {
              int64_t w = (u * fragsN + nt) * 4;
              SmallVector<Value> bFrag = {mmaOperand(words[w + 2 * j]),
                                          mmaOperand(words[w + 2 * j + 1])};
              SmallVector<Value> d =
                  mma(aFrag, bFrag, ArrayRef<Value>(acc).slice(nt * 4, 4));
              std::copy(d.begin(), d.end(), acc.begin() + nt * 4);
            }
          }
        }
        acc.append(next);
        return acc;
      });
  state.resize(accCount);
  // The ring's last groups only zero-fill stages no one reads; they land
  // before the block ends.
  if (c.warpStages)
    nvgpu::DeviceAsyncWaitOp::create(b, ringGroup, b.getI32IntegerAttr(0));
  epilogue(state);
}
