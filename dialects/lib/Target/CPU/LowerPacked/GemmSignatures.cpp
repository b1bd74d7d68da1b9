//===- GemmSignatures.cpp - the arguments of the outlined GEMMs -----------===//

#include "GemmSignatures.h"

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::cpu;

/// Appends the values that are set, in order: absent arguments are null.
static SmallVector<Value> present(std::initializer_list<Value> values) {
  SmallVector<Value> out;
  for (Value v : values)
    if (v)
      out.push_back(v);
  return out;
}

/// The next block argument if the signature has it (else null).
static Value take(ValueRange &in, bool has) {
  if (!has)
    return Value();
  Value v = in.front();
  in = in.drop_front();
  return v;
}

SmallVector<Value> UpGemmArgs::operands() const {
  return present(
      {a, aScales, aSums, c, colBase, m, p0, p1, wUp, wGate, bUp, bGate});
}

UpGemmArgs UpGemmArgs::fromArguments(ValueRange in, FfnOp op,
                                     const Layout &l) {
  UpGemmArgs args;
  bool gated = op.getGated();
  args.a = take(in, true);
  args.aScales = take(in, l.intDot);
  args.aSums = take(in, l.intDot);
  args.c = take(in, true);
  args.colBase = take(in, true);
  args.m = take(in, true);
  args.p0 = take(in, true);
  args.p1 = take(in, true);
  args.wUp = take(in, true);
  args.wGate = take(in, gated);
  args.bUp = take(in, bool(op.getBUp()));
  args.bGate = take(in, gated && op.getBGate());
  assert(in.empty() && "gemm_up takes exactly the FFN's up weights");
  return args;
}

SmallVector<Value> DownGemmArgs::operands() const {
  return present({a, aScales, aSums, c, m, p0, p1, q0, q1, aColBase, mode,
                  wDown, y, x, bDown, yColBase, kList, kCount});
}

DownGemmArgs DownGemmArgs::fromArguments(ValueRange in, FfnOp op,
                                         const Layout &l, bool sparse) {
  DownGemmArgs args;
  bool fused = l.fusedMaxM > 0;
  args.a = take(in, true);
  args.aScales = take(in, l.intDot);
  args.aSums = take(in, l.intDot);
  args.c = take(in, true);
  args.m = take(in, true);
  args.p0 = take(in, true);
  args.p1 = take(in, true);
  args.q0 = take(in, fused);
  args.q1 = take(in, fused);
  args.aColBase = take(in, fused);
  args.mode = take(in, fused || l.finishInGemm);
  args.wDown = take(in, true);
  args.y = take(in, l.finishInGemm);
  args.x = take(in, l.finishInGemm && op.getResidual());
  args.bDown = take(in, l.finishInGemm && op.getBDown());
  args.yColBase = take(in, l.finishInGemm && l.grouped());
  args.kList = take(in, sparse);
  args.kCount = take(in, sparse);
  assert(in.empty() && "gemm_down's arguments follow the layout");
  return args;
}
