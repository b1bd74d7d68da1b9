//===- GemmFunctions.cpp - the outlined GEMM functions of a kernel --------===//
//
// GEMM 1 (up and gate, with the bias and activation epilogue) and GEMM 2
// (down; accumulating in the fused schedule, finishing the output when no
// post-norm follows) as private functions that both schedules call, shared
// by every kernel of the module whose code would be the same.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "ffn/Transforms/Activation.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ffn;
using namespace mlir::ffn::cpu;

void KernelBuilder::callOutlined(StringRef suffix, StringRef key,
                                 ValueRange args,
                                 function_ref<void(ValueRange)> body) {
  func::FuncOp &fn = outlined[(suffix + ":" + key).str()];
  if (!fn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(kernel);
    fn = func::FuncOp::create(b, loc, (kernel.getName() + "." + suffix).str(),
                              b.getFunctionType(args.getTypes(), {}));
    fn.setPrivate();
    // Both schedules call it: LLVM must not copy it back into each caller.
    // Internal: no symbol of its own in the object.
    // Nor clone it per constant argument (function specialization does
    // not touch `noduplicate` functions). func-to-llvm drops `no_inline`;
    // `passthrough` reaches LLVM.
    fn->setAttr("passthrough",
                b.getArrayAttr({b.getStringAttr("noinline"),
                                b.getStringAttr("noduplicate")}));
    fn->setAttr("llvm.linkage", LLVM::LinkageAttr::get(
                                    b.getContext(), LLVM::Linkage::Internal));
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    body(entry->getArguments());
    func::ReturnOp::create(b, loc);
  }
  func::CallOp::create(b, loc, fn, args);
}

void KernelBuilder::callUpGemm(const UpGemmArgs &args) {
  callOutlined("gemm_up", upKey(), args.operands(), [&](ValueRange in) {
    buildUpGemm(UpGemmArgs::fromArguments(in, op, l));
  });
}

void KernelBuilder::callDownGemm(const DownGemmArgs &args) {
  bool sparse = bool(args.kList);
  callOutlined(sparse ? "gemm_down_sparse" : "gemm_down", downKey(),
               args.operands(), [&](ValueRange in) {
                 buildDownGemm(DownGemmArgs::fromArguments(in, op, l, sparse));
               });
}

std::string KernelBuilder::layoutKey() {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << storage;
  for (int64_t v : {l.d,
                    l.f,
                    l.lanes,
                    l.mr,
                    l.mc,
                    l.nrUp,
                    l.npUp,
                    l.nrDown,
                    l.npDown,
                    int64_t(l.fusedMaxM > 0),
                    l.chunk,
                    l.chunks,
                    int64_t(l.prefetch),
                    int64_t(l.dot),
                    l.quantBits,
                    l.group,
                    int64_t(l.intDot),
                    int64_t(l.zeroPoints),
                    int64_t(l.batchInvariant),
                    l.blocks,
                    l.dModel})

    os << "," << v;
  return key;
}

std::string KernelBuilder::downKey() {
  if (!l.finishInGemm)
    return layoutKey();
  return layoutKey() + ",finish" + (op.getResidual() ? ",residual" : "") +
         (op.getBDown() ? ",b_down" : "");
}

std::string KernelBuilder::upKey() {
  return layoutKey() + "," + stringifyActivation(op.getActivation()).str() +
         (op.getGated() ? ",gated" : "") + (op.getBUp() ? ",b_up" : "") +
         (op.getBGate() ? ",b_gate" : "");
}

void KernelBuilder::buildUpGemm(const UpGemmArgs &in) {
  bool gated = op.getGated();
  allocTileBuffers(gated ? 2 : 1, l.nrUp);
  PanelGemm up;
  up.a = in.a;
  up.aScales = in.aScales;
  up.aSums = in.aSums;
  up.c = in.c;
  up.colBase = in.colBase;
  up.k = idx(l.d);
  for (Value w : gated ? SmallVector<Value>{in.wUp, in.wGate}
                       : SmallVector<Value>{in.wUp}) {
    if (!l.quantBits) {
      up.panels.push_back(w);
      continue;
    }
    QuantViews q = quantViews(w, l.npUp, l.d, l.nrUp);
    up.panels.push_back(q.panels);
    up.scales.push_back(q.scales);
    if (q.zeros)
      up.zeros.push_back(q.zeros);
  }
  Value bUp = in.bUp, bGate = in.bGate;
  up.nr = l.nrUp;
  up.epilogue = [&](ArrayRef<SmallVector<Value>> acc, Value col) {
    SmallVector<Value> out;
    for (int64_t v = 0; v < l.nrUp / l.lanes; ++v) {
      Value c = arith::AddIOp::create(b, loc, col, idx(v * l.lanes));
      auto biased = [&](Value accv, Value bias) -> Value {
        if (!bias)
          return accv;
        Value bv = toF32(
            vector::LoadOp::create(b, loc, vecStorage, bias, ValueRange{c}));
        return arith::AddFOp::create(b, loc, accv, bv);
      };
      Value u = biased(acc[0][v], bUp);
      if (gated) {
        Value g = biased(acc[1][v], bGate);
        out.push_back(arith::MulFOp::create(
            b, loc, buildActivation(b, loc, op.getActivation(), g), u));
      } else {
        out.push_back(buildActivation(b, loc, op.getActivation(), u));
      }
    }
    return out;
  };
  gemm(up, in.m, in.p0, in.p1);
}

void KernelBuilder::buildDownGemm(const DownGemmArgs &in) {
  PanelGemm down;
  down.a = in.a;
  down.aScales = in.aScales;
  down.aSums = in.aSums;
  down.c = in.c;
  down.k = idx(l.f);
  if (l.quantBits) {
    QuantViews q = quantViews(in.wDown, l.npDown, l.f, l.nrDown);
    down.panels.push_back(q.panels);
    down.scales.push_back(q.scales);
    if (q.zeros)
      down.zeros.push_back(q.zeros);
  } else {
    down.panels.push_back(in.wDown);
  }
  auto modeIs = [&](int64_t v) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, in.mode,
                                 idx(v));
  };
  if (l.finishInGemm) {
    down.y = in.y;
    down.finish = modeIs(2);
    down.residual = in.x;
    down.bias = in.bDown;
    down.yColBase = in.yColBase;
  }
  allocTileBuffers(1, l.nrDown);
  down.nr = l.nrDown;
  if (l.fusedMaxM > 0) {
    down.chunkRows = l.chunk;
    down.chunkBegin = in.q0;
    down.chunkEnd = in.q1;
    down.aColBase = in.aColBase;
    down.accumulate = modeIs(1);
  }
  down.kList = in.kList;
  down.kCount = in.kCount;
  gemm(down, in.m, in.p0, in.p1);
}
