//===- GemmWiden.cpp - quantized weights widened by bit operations -------===//
//
// The converted B tile of quantized weights on tensor cores with one term a
// weight (GemmKernel.cpp's dequantStage), or each warp's B operands where
// they widen in registers (registerOperands, below): the integers go to the
// dtype as whole 32-bit words of two values, not one value at a time
// through f32.
//
// An unsigned integer u below 2^p (p = 7 for bf16, 10 for f16) written into
// the mantissa of the power of two 2^p (bf16 0x4300 = 128, f16 0x6400 =
// 1024) is the number 2^p + u, exactly. One fused multiply-add of such a
// pair by 1 plus -(2^p + o) then gives u - o, exact in the dtype (a small
// integer), which is q itself for signed integers (u = q + 2^(bits-1): the
// sign bit flipped, o = 2^(bits-1)) and q - z with zero points (u = q,
// o = z). That is a mask, an or and a byte permute a pair, and one
// fma.rn.bf16x2/f16x2 (sm_80+), where the f32 route takes a widening, two
// conversions and a subtraction per value. Zero points cannot make int8
// exact in bf16 (2^7 + u needs 8 mantissa bits), so int8 on bf16 keeps the
// f32 route.
//
// Nibble i of a 32-bit word (8 int4 values, the even k in the low nibble)
// masked after shifting the word right by 4 s (s = 0..3) gives the pair of
// k's (s, s + 4) in the word's two halves; a byte permute of two such pairs
// puts them in k order: (0, 1), (2, 3) from the low halves of s = 0, 1 and
// 2, 3, (4, 5), (6, 7) from the high ones. int8 the same with bytes (s =
// 0, 1: the pairs (0, 2), (1, 3)).
//
//===----------------------------------------------------------------------===//

#include "GemmBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cassert>
#include <numeric>

using namespace mlir;
using namespace mlir::ffn::gpu_target;
using mlir::ffn::gpu_target::detail::GemmBuilder;

bool GemmBuilder::widensByBits() const {
  return c.tensorCores() && c.weightTerms == 1 &&
         (c.weightBits == 4 || c.storage.isF16());
}

Value GemmBuilder::widenOffset(Value zeroPoint) {
  // -(2^p + o) in both halves: the sign bit, the power, o in the mantissa
  // (o = z with zero points, else 2^(bits-1)).
  uint32_t power = c.storage.isF16() ? 0x6400 : 0x4300; // 2^10, 2^7
  Value o =
      zeroPoint
          ? arith::ExtUIOp::create(b, b.getI32Type(), zeroPoint).getResult()
          : ir.i32(int64_t(1) << (c.weightBits - 1));
  Value half = arith::OrIOp::create(b, o, ir.i32(0x8000 | power));
  return arith::OrIOp::create(b, half,
                              arith::ShLIOp::create(b, half, ir.i32(16)));
}

SmallVector<Value> GemmBuilder::widenWord(Value word, Value negatedOffset) {
  assert(widensByBits() && "integers exact in the dtype's mantissa");
  bool f16 = c.storage.isF16();
  int64_t bits = c.weightBits, perWord = 32 / bits;
  uint32_t power = f16 ? 0x6400 : 0x4300; // 2^10, 2^7
  uint32_t lowMask = bits == 4 ? 0xFu : 0xFFu;
  auto constant = [&](uint32_t v) {
    return ir.i32(static_cast<int64_t>(static_cast<int32_t>(v)));
  };
  Type i32 = b.getI32Type();
  VectorType pairType = VectorType::get({2}, c.storage);
  VectorType oneWord = VectorType::get({1}, i32);
  auto asPair = [&](Value w) {
    return vector::BitCastOp::create(b, pairType,
                                     vector::BroadcastOp::create(b, oneWord, w))
        .getResult();
  };
  auto asWord = [&](Value pair) {
    Value v = vector::BitCastOp::create(b, oneWord, pair);
    return vector::ExtractOp::create(b, v, ArrayRef<int64_t>{0}).getResult();
  };
  // Signed integers: flip each value's sign bit (u = q + 2^(bits-1)).
  if (!c.zeroPoints) {
    uint32_t signs = 0;
    for (int64_t e = 0; e < perWord; ++e)
      signs |= 1u << (e * bits + bits - 1);
    word = arith::XOrIOp::create(b, word, constant(signs));
  }
  // Pairs (s, s + perWord / 2) of the word, 2^p + u each.
  uint32_t pairMask = lowMask | (lowMask << 16);
  SmallVector<Value> spread;
  for (int64_t s = 0; s < perWord / 2; ++s) {
    Value shifted =
        s ? arith::ShRUIOp::create(b, word, ir.i32(s * bits)).getResult()
          : word;
    spread.push_back(arith::OrIOp::create(
        b, arith::AndIOp::create(b, shifted, constant(pairMask)),
        constant(power | (power << 16))));
  }
  // In k order: the low halves of consecutive spreads (bytes 0, 1 of the
  // first, 4, 5 of the pool's second word), then the high ones; each pair
  // times 1 plus -(2^p + o).
  Value one = asPair(constant(f16 ? 0x3C003C00u : 0x3F803F80u));
  Value offset = asPair(negatedOffset);
  SmallVector<Value> pairs;
  for (uint32_t selector : {0x5410u, 0x7632u})
    for (int64_t s = 0; s < perWord / 2; s += 2) {
      Value pair = NVVM::PermuteOp::create(b, i32, spread[s], spread[s + 1],
                                           constant(selector),
                                           NVVM::PermuteMode::DEFAULT);
      pairs.push_back(
          asWord(LLVM::FMAOp::create(b, asPair(pair), one, offset)));
    }
  return pairs;
}

SmallVector<Value> GemmBuilder::widenByBits(Value raw, Value kChunk,
                                            Value srcRow, Value qBuf) {
  assert(widensByBits() && "integers exact in the dtype's mantissa");
  int64_t perWord = 32 / c.weightBits;
  // k per scale group inside the 16-byte chunk: groups on tensor cores are
  // a multiple of 16, so a word's values share one offset.
  int64_t run = std::gcd(c.quantGroup, qElems);
  assert(run % perWord == 0 && "a word inside one group");
  SmallVector<Value> offsets;
  if (c.zeroPoints) {
    for (int64_t s = 0; s < qElems / run; ++s) {
      Value kg = ir.div(ir.add(kChunk, s * run), c.quantGroup);
      offsets.push_back(widenOffset(
          ir.load(qBuf, {groupEntry(srcRow, kg, c.zeroOffset, 1)})));
    }
  } else {
    offsets.push_back(widenOffset(nullptr));
  }
  Value words =
      vector::BitCastOp::create(b, VectorType::get({4}, b.getI32Type()), raw);
  // The widened pairs in k order, as i32 words.
  SmallVector<Value> pairs;
  for (int64_t w = 0; w < 4; ++w) {
    Value word = vector::ExtractOp::create(b, words, ArrayRef<int64_t>{w});
    Value offset = offsets[c.zeroPoints ? (w * perWord) / run : 0];
    llvm::append_range(pairs, widenWord(word, offset));
  }
  // 16-byte pieces (4 words, 8 values) of the dtype.
  SmallVector<Value> pieces;
  for (int64_t p = 0; p < static_cast<int64_t>(pairs.size()) / 4; ++p) {
    Value piece =
        vector::FromElementsOp::create(b, VectorType::get({4}, b.getI32Type()),
                                       ArrayRef(pairs).slice(4 * p, 4));
    pieces.push_back(
        vector::BitCastOp::create(b, VectorType::get({8}, c.storage), piece));
  }
  return pieces;
}

Value GemmBuilder::qChunkSlot(Value row, Value j) {
  if (!c.widenInRegisters)
    return j;
  // A fragment's lanes read 4 (int4) or 8 (int8) bytes of rows grp = 0..7
  // at the same offset: rows 128 bytes apart would share banks, so every
  // other such run of rows stores its chunks swapped in halves.
  assert((qRowTile == 32 || qRowTile == 64) && "a 64-wide K tile");
  Value run = ir.rem(ir.div(row, 128 / qRowTile), 2);
  return arith::XOrIOp::create(b, j, ir.mul(run, qChunksPerRow / 2));
}

void GemmBuilder::registerOperands(Value stage, Value kChunk, int64_t chunk,
                                   SmallVectorImpl<Value> &aWords,
                                   SmallVectorImpl<Value> &bPairs) {
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  aWords.clear();
  bPairs.clear();
  auto wordsOf = [&](Value v, int64_t n) {
    Value w = vector::BitCastOp::create(b, VectorType::get({n}, i32), v);
    SmallVector<Value> words;
    for (int64_t i = 0; i < n; ++i)
      words.push_back(vector::ExtractOp::create(b, w, ArrayRef<int64_t>{i}));
    return words;
  };
  // A: k's 8 tig .. 8 tig + 7 of the chunk, rows grp and grp + 8 of each
  // fragment row, 16 bytes each; interleaved as (row grp word w, row grp + 8
  // word w) for w = 0..3, the order the steps' a0..a3 take them.
  Value aCol = ir.add(ir.mul(tig, 8), chunk * 32);
  for (int64_t mt = 0; mt < fragsM; ++mt) {
    SmallVector<Value> rowsWords[2];
    for (int64_t half = 0; half < 2; ++half) {
      Value row = ir.add(ir.add(warpRow, grp), mt * 16 + half * 8);
      Value v = vector::LoadOp::create(b, VectorType::get({8}, c.storage),
                                       aSmem, ValueRange{stage, row, aCol},
                                       false, llvm::MaybeAlign(16));
      rowsWords[half] = wordsOf(v, 4);
    }
    for (int64_t w = 0; w < 4; ++w)
      aWords.append({rowsWords[0][w], rowsWords[1][w]});
  }
  // B: the same k's of packed row (column) grp of each n8 fragment, as
  // integers (4 bytes of int4 or 8 of int8) widened to four pair words.
  int64_t bytes = c.weightBits; // 8 k values of weightBits bits
  for (int64_t nt = 0; nt < fragsN; ++nt) {
    Value row = ir.add(ir.add(warpCol, grp), nt * 8);
    Value logical = ir.add(ir.mul(tig, bytes), chunk * 4 * bytes);
    Value at = ir.add(ir.mul(qChunkSlot(row, ir.div(logical, 16)), 16),
                      ir.rem(logical, 16));
    Value raw = vector::LoadOp::create(b, VectorType::get({bytes}, i8), qSmem,
                                       ValueRange{stage, row, at}, false,
                                       llvm::MaybeAlign(bytes));
    Value offset;
    if (c.zeroPoints) {
      // The chunk lies inside one scale group (groups of 32 k or more).
      auto [isGate, srcRow] = bSource(ir.add(col0, row));
      Value qBuf = c.gated ? ir.select(isGate, bBuf, bUpBuf) : bBuf;
      Value kg = ir.div(kChunk, c.quantGroup);
      offset =
          widenOffset(ir.load(qBuf, {groupEntry(srcRow, kg, c.zeroOffset, 1)}));
    } else {
      offset = widenOffset(nullptr);
    }
    for (Value word : wordsOf(raw, bytes / 4))
      llvm::append_range(bPairs, widenWord(word, offset));
  }
}
