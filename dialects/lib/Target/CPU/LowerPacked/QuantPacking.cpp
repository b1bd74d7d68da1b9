//===- QuantPacking.cpp - weight-only quantization at pack time -----------===//
//
// The pack function of a quantized weight matrix: it receives the matrix
// unquantized, in the storage type, as ffn_kernel_set_param does, and
// writes the integer panels and their scales into the kernel's byte buffer
// (Layout.h). The formula is the kernel ABI's (ffn_weight_quant), which the
// f64 reference repeats to know the weights the kernel multiplies by.
//
//===----------------------------------------------------------------------===//

#include "Packing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>

using namespace mlir;
using namespace mlir::ffn;

/// Both pack functions of a quantized matrix: from the unquantized
/// matrix `src` (quantizing it), or (`prequantized`) from its integers
/// [K, N] i8, scales [groups, N] and, with zero points, zero points
/// [groups, N] i8, copied as given. The integer panels are written the
/// same way either way.
static func::FuncOp buildQuantPackImpl(OpBuilder &b, Location loc,
                                       StringRef name, MemRefType src,
                                       MemRefType dst, int64_t nr, int64_t np,
                                       int64_t bits, int64_t group, bool intDot,
                                       bool zeroPoints, int64_t scaleOffset,
                                       int64_t zeroOffset, bool prequantized,
                                       int64_t panelRows) {
  Type t = src.getElementType(), f32 = b.getF32Type(), i32 = b.getI32Type();
  Type i8 = b.getI8Type();
  int64_t rows = src.getDimSize(0), cols = src.getDimSize(1);
  int64_t groups = (rows + group - 1) / group;
  SmallVector<Type> args = {src};
  if (prequantized) {
    args = {MemRefType::get({rows, cols}, i8),
            MemRefType::get({groups, cols}, t)};
    if (zeroPoints)
      args.push_back(MemRefType::get({groups, cols}, i8));
  }
  args.push_back(dst);
  auto func = func::FuncOp::create(b, loc, name, b.getFunctionType(args, {}));
  func.setPrivate();
  Block *body = func.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  Value s = body->getArgument(0), d = body->getArguments().back();
  // k per panel row and bytes per panel row (Layout.h).
  int64_t kPerRow = intDot ? (bits == 4 ? 8 : 4) : (bits == 4 ? 2 : 1);
  int64_t qRows = (rows + kPerRow - 1) / kPerRow;
  int64_t rowWidth = intDot ? 4 * nr : nr;
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  if (panelRows > qRows) {
    // Longer panels than K needs (the GPU's K-major rows, padded to whole
    // tiles): the loops below write only K's rows, so zero the buffer.
    qRows = panelRows;
    Value zeroByte = arith::ConstantIntOp::create(b, loc, i8, 0);
    auto forOp = scf::ForOp::create(b, loc, c(0), c(dst.getDimSize(0)), c(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    memref::StoreOp::create(b, loc, zeroByte, d,
                            ValueRange{forOp.getInductionVar()});
  }
  auto f = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  auto panels = memref::ViewOp::create(
      b, loc, MemRefType::get({np, qRows, rowWidth}, i8), d, c(0),
      ValueRange{});
  auto scales =
      memref::ViewOp::create(b, loc, MemRefType::get({np, groups, nr}, t), d,
                             c(scaleOffset), ValueRange{});
  Value zeroPointsView;
  if (zeroPoints)
    zeroPointsView = memref::ViewOp::create(
        b, loc, MemRefType::get({np, groups, nr}, i8), d, c(zeroOffset),
        ValueRange{});
  double qmax = bits == 8 ? 127.0 : 7.0;
  Value zero = f(0.0);

  auto loop = [&](Value lb, Value ub, ValueRange init,
                  function_ref<SmallVector<Value>(Value, ValueRange)> bodyFn) {
    auto forOp = scf::ForOp::create(b, loc, lb, ub, c(1), init);
    OpBuilder::InsertionGuard g(b);
    // Without loop-carried values the builder has added the yield.
    if (init.empty())
      b.setInsertionPoint(forOp.getBody()->getTerminator());
    else
      b.setInsertionPointToStart(forOp.getBody());
    SmallVector<Value> next =
        bodyFn(forOp.getInductionVar(), forOp.getRegionIterArgs());
    if (!init.empty())
      scf::YieldOp::create(b, loc, next);
    return forOp;
  };

  loop(c(0), c(np), {}, [&](Value p, ValueRange) {
    loop(c(0), c(groups), {}, [&](Value g, ValueRange) {
      loop(c(0), c(nr), {}, [&](Value cc, ValueRange) {
        Value col = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, p, c(nr)), cc);
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             col, c(cols));
        Value safeCol = arith::SelectOp::create(b, loc, inside, col, c(0));
        auto inRange = [&](Value k) -> Value {
          return arith::AndIOp::create(
              b, loc, inside,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, k,
                                    c(rows)));
        };
        Value k0 = arith::MulIOp::create(b, loc, g, c(group));
        Value k1 = arith::MinSIOp::create(
            b, loc, arith::AddIOp::create(b, loc, k0, c(group)), c(rows));
        // The integer of row k (i32): quantized here, or as given.
        std::function<Value(Value)> quantize;
        if (prequantized) {
          // Scales and zero points as given (0 past the last column); the
          // integers likewise (0 past the last row and column).
          Value stored = memref::LoadOp::create(b, loc, body->getArgument(1),
                                                ValueRange{g, safeCol});
          stored = arith::SelectOp::create(
              b, loc, inside, stored,
              arith::ConstantOp::create(b, loc, b.getZeroAttr(t)));
          memref::StoreOp::create(b, loc, stored, scales, ValueRange{p, g, cc});
          if (zeroPoints) {
            Value z = memref::LoadOp::create(b, loc, body->getArgument(2),
                                             ValueRange{g, safeCol});
            z = arith::SelectOp::create(
                b, loc, inside, z, arith::ConstantIntOp::create(b, loc, i8, 0));
            memref::StoreOp::create(b, loc, z, zeroPointsView,
                                    ValueRange{p, g, cc});
          }
          quantize = [&, safeCol](Value k) -> Value {
            Value in = inRange(k);
            Value safeK = arith::SelectOp::create(b, loc, in, k, c(0));
            Value q =
                memref::LoadOp::create(b, loc, s, ValueRange{safeK, safeCol});
            Value wide =
                zeroPoints ? arith::ExtUIOp::create(b, loc, i32, q).getResult()
                           : arith::ExtSIOp::create(b, loc, i32, q).getResult();
            return arith::SelectOp::create(
                b, loc, in, wide, arith::ConstantIntOp::create(b, loc, i32, 0));
          };
        } else {
          // w[k][col] in f32, 0 past the last column (and row).
          auto weight = [&](Value k) -> Value {
            Value in = arith::AndIOp::create(
                b, loc, inside,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, k,
                                      c(rows)));
            Value safeK = arith::SelectOp::create(b, loc, in, k, c(0));
            Value w =
                memref::LoadOp::create(b, loc, s, ValueRange{safeK, safeCol});
            if (!t.isF32())
              w = arith::ExtFOp::create(b, loc, f32, w);
            return arith::SelectOp::create(b, loc, in, w, zero);
          };
          // Symmetric: max |w| onto qmax. Zero points: [min(w, 0), max(w, 0)]
          // onto [0, 15].
          Value scale, lo;
          if (!zeroPoints) {
            Value amax = loop(k0, k1, {zero}, [&](Value k, ValueRange acc) {
                           Value a = math::AbsFOp::create(b, loc, weight(k));
                           return SmallVector<Value>{
                               arith::MaximumFOp::create(b, loc, acc[0], a)};
                         }).getResult(0);
            // The scale as the kernel stores it, in the storage type; the
            // integers are computed against that rounded value.
            scale = arith::DivFOp::create(b, loc, amax, f(qmax));
          } else {
            auto range =
                loop(k0, k1, {zero, zero}, [&](Value k, ValueRange acc) {
                  Value w = weight(k);
                  return SmallVector<Value>{
                      arith::MinimumFOp::create(b, loc, acc[0], w),
                      arith::MaximumFOp::create(b, loc, acc[1], w)};
                });
            lo = range.getResult(0);
            scale = arith::DivFOp::create(
                b, loc, arith::SubFOp::create(b, loc, range.getResult(1), lo),
                f(15.0));
          }
          Value stored =
              t.isF32() ? scale
                        : arith::TruncFOp::create(b, loc, t, scale).getResult();
          memref::StoreOp::create(b, loc, stored, scales, ValueRange{p, g, cc});
          Value sf =
              t.isF32()
                  ? stored
                  : arith::ExtFOp::create(b, loc, f32, stored).getResult();
          Value isZero = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, sf, zero);
          auto clamp = [&](Value v, double lo, double hi) -> Value {
            return arith::MinimumFOp::create(
                b, loc, arith::MaximumFOp::create(b, loc, v, f(lo)), f(hi));
          };
          // The zero point z = clamp(roundeven(-lo / s), 0, 15) (0 where s =
          // 0), stored as a byte.
          Value zp = zero;
          if (zeroPoints) {
            zp = clamp(math::RoundEvenOp::create(
                           b, loc,
                           arith::DivFOp::create(
                               b, loc, arith::NegFOp::create(b, loc, lo), sf)),
                       0.0, 15.0);
            zp = arith::SelectOp::create(b, loc, isZero, zero, zp);
            memref::StoreOp::create(
                b, loc,
                arith::TruncIOp::create(
                    b, loc, i8, arith::FPToSIOp::create(b, loc, i32, zp)),
                zeroPointsView, ValueRange{p, g, cc});
          }
          quantize = [&, weight, sf, zp, isZero, clamp](Value k) -> Value {
            Value r = math::RoundEvenOp::create(
                b, loc, arith::DivFOp::create(b, loc, weight(k), sf));
            r = zeroPoints
                    ? clamp(arith::AddFOp::create(b, loc, r, zp), 0.0, 15.0)
                    : clamp(r, -qmax, qmax);
            r = arith::SelectOp::create(b, loc, isZero, zero, r);
            return arith::FPToSIOp::create(b, loc, i32, r).getResult();
          };
        }
        auto i32c = [&](int64_t v) -> Value {
          return arith::ConstantIntOp::create(b, loc, i32, v);
        };
        if (intDot) {
          // Unsigned: q + 128 (int8) or q + 8 (int4); four k of column cc
          // in bytes 4 cc .. 4 cc + 3 of a row. Rows past K hold the
          // offset (q = 0), multiplied by zero activations.
          Value lane = arith::MulIOp::create(b, loc, cc, c(4));
          Value kq0 = arith::DivUIOp::create(b, loc, k0, c(kPerRow));
          Value kq1 = arith::CeilDivUIOp::create(b, loc, k1, c(kPerRow));
          loop(kq0, kq1, {}, [&](Value kq, ValueRange) {
            Value kBase = arith::MulIOp::create(b, loc, kq, c(kPerRow));
            for (int64_t j = 0; j < 4; ++j) {
              Value k = arith::AddIOp::create(b, loc, kBase, c(j));
              Value v;
              // Zero points: q is unsigned already.
              int64_t offset = zeroPoints ? 0 : bits == 8 ? 128 : 8;
              if (bits == 8) {
                v = arith::AddIOp::create(b, loc, quantize(k), i32c(offset));
              } else {
                Value hiK = arith::AddIOp::create(b, loc, k, c(4));
                v = arith::OrIOp::create(
                    b, loc,
                    arith::AddIOp::create(b, loc, quantize(k), i32c(offset)),
                    arith::ShLIOp::create(
                        b, loc,
                        arith::AddIOp::create(b, loc, quantize(hiK),
                                              i32c(offset)),
                        i32c(4)));
              }
              memref::StoreOp::create(
                  b, loc, arith::TruncIOp::create(b, loc, i8, v), panels,
                  ValueRange{p, kq, arith::AddIOp::create(b, loc, lane, c(j))});
            }
            return SmallVector<Value>{};
          });
        } else if (bits == 8) {
          loop(k0, k1, {}, [&](Value k, ValueRange) {
            Value q = arith::TruncIOp::create(b, loc, i8, quantize(k));
            memref::StoreOp::create(b, loc, q, panels, ValueRange{p, k, cc});
            return SmallVector<Value>{};
          });
        } else {
          // Two k per byte; groups are even, so a pair never straddles
          // two groups. Past the last row, the high nibble is 0.
          Value kk0 = arith::DivUIOp::create(b, loc, k0, c(2));
          Value kk1 = arith::DivUIOp::create(
              b, loc, arith::AddIOp::create(b, loc, k1, c(1)), c(2));
          loop(kk0, kk1, {}, [&](Value kk, ValueRange) {
            Value k = arith::MulIOp::create(b, loc, kk, c(2));
            Value lo = quantize(k);
            Value hi = quantize(arith::AddIOp::create(b, loc, k, c(1)));
            Value nibble = arith::ConstantIntOp::create(b, loc, i32, 15);
            Value four = arith::ConstantIntOp::create(b, loc, i32, 4);
            Value v = arith::OrIOp::create(
                b, loc, arith::AndIOp::create(b, loc, lo, nibble),
                arith::ShLIOp::create(b, loc, hi, four));
            memref::StoreOp::create(b, loc,
                                    arith::TruncIOp::create(b, loc, i8, v),
                                    panels, ValueRange{p, kk, cc});
            return SmallVector<Value>{};
          });
        }
        return SmallVector<Value>{};
      });
      return SmallVector<Value>{};
    });
    return SmallVector<Value>{};
  });
  func::ReturnOp::create(b, loc);
  return func;
}

func::FuncOp cpu::buildQuantPack(OpBuilder &b, Location loc, StringRef name,
                                 MemRefType src, MemRefType dst, int64_t nr,
                                 int64_t np, int64_t bits, int64_t group,
                                 bool intDot, bool zeroPoints,
                                 int64_t scaleOffset, int64_t zeroOffset,
                                 int64_t panelRows) {
  return buildQuantPackImpl(b, loc, name, src, dst, nr, np, bits, group, intDot,
                            zeroPoints, scaleOffset, zeroOffset,
                            /*prequantized=*/false, panelRows);
}

func::FuncOp cpu::buildPrequantizedPack(OpBuilder &b, Location loc,
                                        StringRef name, MemRefType src,
                                        MemRefType dst, int64_t nr, int64_t np,
                                        int64_t bits, int64_t group,
                                        bool intDot, bool zeroPoints,
                                        int64_t scaleOffset, int64_t zeroOffset,
                                        int64_t panelRows) {
  return buildQuantPackImpl(b, loc, name, src, dst, nr, np, bits, group, intDot,
                            zeroPoints, scaleOffset, zeroOffset,
                            /*prequantized=*/true, panelRows);
}
