//===- KernelIR.cpp - terse IR building for the GPU kernels ---------------===//

#include "KernelIR.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::ffn::gpu_target;

Value KernelIR::toF32(Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, b.getF32Type(), v);
}

Value KernelIR::fromF32(Value v, Type type) {
  if (type.isF32())
    return v;
  return arith::TruncFOp::create(b, type, v);
}

Value KernelIR::math_fma(Value x, Value y, Value z) {
  return math::FmaOp::create(b, x, y, z);
}

SmallVector<Value> KernelIR::loop(
    Value lb, Value ub, int64_t step, ValueRange init,
    const std::function<SmallVector<Value>(Value, ValueRange)> &body) {
  auto forOp = scf::ForOp::create(b, lb, ub, idx(step), init);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(forOp.getBody());
  SmallVector<Value> yields = body(forOp.getInductionVar(),
                                   forOp.getRegionIterArgs());
  scf::YieldOp::create(b, yields);
  return SmallVector<Value>(forOp.getResults());
}

void KernelIR::loop(Value lb, Value ub, int64_t step,
                    const std::function<void(Value)> &body) {
  auto forOp = scf::ForOp::create(b, lb, ub, idx(step));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(forOp.getBody()->getTerminator());
  body(forOp.getInductionVar());
}

void KernelIR::guard(Value cond, const std::function<void()> &body) {
  auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  body();
}

Value KernelIR::sharedArray(Type type, int64_t count, int64_t byteOffset) {
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto raw = gpu::DynamicSharedMemoryOp::create(
      b,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr, space));
  return memref::ViewOp::create(b,
                                MemRefType::get({count}, type, nullptr, space),
                                raw, idx(byteOffset), ValueRange{});
}

Value KernelIR::warpSum(Value v) {
  Value width = i32(32);
  for (int64_t offset : {16, 8, 4, 2, 1}) {
    auto shuffle = gpu::ShuffleOp::create(b, v, i32(offset), width,
                                          gpu::ShuffleMode::XOR);
    v = addf(v, shuffle.getShuffleResult());
  }
  return v;
}

Value KernelIR::blockSum(Value v, Value scratch, int64_t threads) {
  int64_t warps = threads / 32;
  Value tid = threadId();
  Value lane = rem(tid, 32), warp = div(tid, 32);
  v = warpSum(v);
  // The barrier first: scratch may still be read from the previous sum.
  barrier();
  guard(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, idx(0)),
        [&] { store(v, scratch, {warp}); });
  barrier();
  // Every warp sums the per-warp partials itself: no second broadcast.
  Value partial = select(lt(lane, warps), load(scratch, {min(lane, idx(warps - 1))}),
                         f32(0));
  return warpSum(partial);
}
