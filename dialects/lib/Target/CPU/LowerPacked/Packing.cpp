//===- Packing.cpp - the pack functions of a packed kernel ----------------===//

#include "Packing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ffn;

func::FuncOp cpu::createPackFunction(OpBuilder &b, Location loc, StringRef name,
                                     MemRefType src, MemRefType dst) {
  auto func =
      func::FuncOp::create(b, loc, name, b.getFunctionType({src, dst}, {}));
  func.setPrivate();
  func.addEntryBlock();
  return func;
}

/// A private `func @name(%src, %dst)` whose body fills every element of dst
/// from src at `source(iv)`, or with zero where that says the element is
/// padding (past the last row or column).
static func::FuncOp
buildPack(OpBuilder &b, Location loc, StringRef name, MemRefType src,
          MemRefType dst,
          function_ref<std::pair<SmallVector<Value>, Value>(
              OpBuilder &, Location, ValueRange, function_ref<Value(int64_t)>)>
              source) {
  func::FuncOp func = cpu::createPackFunction(b, loc, name, src, dst);
  Block *body = &func.front();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  Value s = body->getArgument(0), d = body->getArgument(1);
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(src.getElementType()));
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t size : dst.getShape()) {
    lbs.push_back(c(0));
    ubs.push_back(c(size));
    steps.push_back(c(1));
  }
  scf::buildLoopNest(b, loc, lbs, ubs, steps,
                     [&](OpBuilder &nb, Location l, ValueRange iv) {
                       auto [index, inside] = source(nb, l, iv, c);
                       // Clamp padding reads to element 0 so no load leaves
                       // src.
                       for (Value &i : index)
                         i = arith::SelectOp::create(nb, l, inside, i, c(0));
                       Value v = memref::LoadOp::create(nb, l, s, index);
                       v = arith::SelectOp::create(nb, l, inside, v, zero);
                       memref::StoreOp::create(nb, l, v, d, iv);
                     });
  func::ReturnOp::create(b, loc);
  return func;
}

static Value lessThan(OpBuilder &b, Location loc, Value v, Value limit) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, limit);
}

/// dst[p][k][c] = src[k][p * nr + c], zero past the last column.
func::FuncOp cpu::buildMatrixPack(OpBuilder &b, Location loc, StringRef name,
                                  MemRefType src, MemRefType dst) {
  int64_t nr = dst.getDimSize(2), cols = src.getDimSize(1);
  return buildPack(b, loc, name, src, dst,
                   [&](OpBuilder &nb, Location l, ValueRange iv,
                       function_ref<Value(int64_t)> c) {
                     Value col = arith::AddIOp::create(
                         nb, l, arith::MulIOp::create(nb, l, iv[0], c(nr)),
                         iv[2]);
                     return std::make_pair(SmallVector<Value>{iv[1], col},
                                           lessThan(nb, l, col, c(cols)));
                   });
}

/// Chunk-major: dst[q][p][k][c] = src[q * kc + k][p * nr + c], zero past the
/// last row and column.
func::FuncOp cpu::buildChunkedPack(OpBuilder &b, Location loc, StringRef name,
                                   MemRefType src, MemRefType dst) {
  int64_t kc = dst.getDimSize(2), nr = dst.getDimSize(3);
  int64_t rows = src.getDimSize(0), cols = src.getDimSize(1);
  return buildPack(
      b, loc, name, src, dst,
      [&](OpBuilder &nb, Location l, ValueRange iv,
          function_ref<Value(int64_t)> c) {
        Value row = arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, iv[0], c(kc)), iv[2]);
        Value col = arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, iv[1], c(nr)), iv[3]);
        Value inside =
            arith::AndIOp::create(nb, l, lessThan(nb, l, row, c(rows)),
                                  lessThan(nb, l, col, c(cols)));
        return std::make_pair(SmallVector<Value>{row, col}, inside);
      });
}

func::FuncOp cpu::buildVectorPack(OpBuilder &b, Location loc, StringRef name,
                                  MemRefType src, MemRefType dst) {
  int64_t size = src.getDimSize(0);
  return buildPack(b, loc, name, src, dst,
                   [&](OpBuilder &nb, Location l, ValueRange iv,
                       function_ref<Value(int64_t)> c) {
                     return std::make_pair(SmallVector<Value>{iv[0]},
                                           lessThan(nb, l, iv[0], c(size)));
                   });
}

/// Source row and column of element (kk, e) of a pair panel p whose k runs
/// from row0, nr = half the panel row's length.
static std::pair<Value, Value> pairSource(OpBuilder &nb, Location l, Value row0,
                                          Value p, Value kk, Value e,
                                          int64_t nr,
                                          function_ref<Value(int64_t)> c) {
  Value row = arith::AddIOp::create(
      nb, l, row0,
      arith::AddIOp::create(nb, l, arith::MulIOp::create(nb, l, kk, c(2)),
                            arith::RemUIOp::create(nb, l, e, c(2))));
  Value col =
      arith::AddIOp::create(nb, l, arith::MulIOp::create(nb, l, p, c(nr)),
                            arith::DivUIOp::create(nb, l, e, c(2)));
  return {row, col};
}

func::FuncOp cpu::buildPairPack(OpBuilder &b, Location loc, StringRef name,
                                MemRefType src, MemRefType dst) {
  int64_t nr = dst.getDimSize(2) / 2;
  int64_t rows = src.getDimSize(0), cols = src.getDimSize(1);
  return buildPack(
      b, loc, name, src, dst,
      [&](OpBuilder &nb, Location l, ValueRange iv,
          function_ref<Value(int64_t)> c) {
        auto [row, col] = pairSource(nb, l, c(0), iv[0], iv[1], iv[2], nr, c);
        Value inside =
            arith::AndIOp::create(nb, l, lessThan(nb, l, row, c(rows)),
                                  lessThan(nb, l, col, c(cols)));
        return std::make_pair(SmallVector<Value>{row, col}, inside);
      });
}

func::FuncOp cpu::buildChunkedPairPack(OpBuilder &b, Location loc,
                                       StringRef name, MemRefType src,
                                       MemRefType dst) {
  int64_t kc = 2 * dst.getDimSize(2), nr = dst.getDimSize(3) / 2;
  int64_t rows = src.getDimSize(0), cols = src.getDimSize(1);
  return buildPack(
      b, loc, name, src, dst,
      [&](OpBuilder &nb, Location l, ValueRange iv,
          function_ref<Value(int64_t)> c) {
        Value row0 = arith::MulIOp::create(nb, l, iv[0], c(kc));
        auto [row, col] = pairSource(nb, l, row0, iv[1], iv[2], iv[3], nr, c);
        Value inside =
            arith::AndIOp::create(nb, l, lessThan(nb, l, row, c(rows)),
                                  lessThan(nb, l, col, c(cols)));
        return std::make_pair(SmallVector<Value>{row, col}, inside);
      });
}
