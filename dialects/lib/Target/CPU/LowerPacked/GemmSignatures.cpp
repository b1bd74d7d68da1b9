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

SmallVector<Value> UpGemmArgs::operands() const {
  return present({a, c, colBase, m, p0, p1, wUp, wGate, bUp, bGate});
}

UpGemmArgs UpGemmArgs::fromArguments(ValueRange in, FfnOp op) {
  UpGemmArgs args;
  args.a = in[0];
  args.c = in[1];
  args.colBase = in[2];
  args.m = in[3];
  args.p0 = in[4];
  args.p1 = in[5];
  ValueRange rest = in.drop_front(6);
  auto next = [&](bool has) {
    if (!has)
      return Value();
    Value v = rest.front();
    rest = rest.drop_front();
    return v;
  };
  bool gated = op.getGated();
  args.wUp = next(true);
  args.wGate = next(gated);
  args.bUp = next(bool(op.getBUp()));
  args.bGate = next(gated && op.getBGate());
  assert(rest.empty() && "gemm_up takes exactly the FFN's up weights");
  return args;
}

SmallVector<Value> DownGemmArgs::operands() const {
  return present({a, c, m, p0, p1, q0, q1, aColBase, mode, wDown, y, x, bDown});
}

DownGemmArgs DownGemmArgs::fromArguments(ValueRange in, FfnOp op,
                                         const Layout &l) {
  DownGemmArgs args;
  auto next = [&](bool has) {
    if (!has)
      return Value();
    Value v = in.front();
    in = in.drop_front();
    return v;
  };
  bool fused = l.fusedMaxM > 0;
  args.a = next(true);
  args.c = next(true);
  args.m = next(true);
  args.p0 = next(true);
  args.p1 = next(true);
  args.q0 = next(fused);
  args.q1 = next(fused);
  args.aColBase = next(fused);
  args.mode = next(fused || l.finishInGemm);
  args.wDown = next(true);
  args.y = next(l.finishInGemm);
  args.x = next(l.finishInGemm && op.getResidual());
  args.bDown = next(l.finishInGemm && op.getBDown());
  assert(in.empty() && "gemm_down's arguments follow the layout");
  return args;
}
