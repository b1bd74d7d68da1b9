//===- KernelIR.h - terse IR building for the GPU kernels -------*- C++ -*-===//
//
// The GPU kernels are written directly at the gpu/nvgpu/nvvm + scf + memref
// level (upstream linalg transforms do not produce competitive tensor-core
// GEMMs in MLIR 22, see docs/gpu.md). This helper keeps that C++ readable:
// index and f32 arithmetic, loops and guards in one line each.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_GPU_KERNELIR_H
#define FFN_TARGET_GPU_KERNELIR_H

#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <functional>

namespace mlir::ffn::gpu_target {

class KernelIR {
public:
  explicit KernelIR(ImplicitLocOpBuilder &b) : b(b) {}

  ImplicitLocOpBuilder &b;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, v, 32); }
  Value f32(double v) {
    return arith::ConstantFloatOp::create(b, b.getF32Type(),
                                          APFloat(static_cast<float>(v)));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, idx(y)) : x; }
  Value mul(Value x, int64_t y) { return y == 1 ? x : mul(x, idx(y)); }
  Value div(Value x, int64_t y) { return y == 1 ? x : div(x, idx(y)); }
  Value rem(Value x, int64_t y) { return rem(x, idx(y)); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y);
  }
  Value lt(Value x, int64_t y) { return lt(x, idx(y)); }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
  }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value orI(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, b.getIndexType(), v);
  }
  Value toI32(Value v) {
    return arith::IndexCastOp::create(b, b.getI32Type(), v);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y);
  }

  Value addf(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value subf(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value divf(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
  Value fma(Value x, Value y, Value z) { return math_fma(x, y, z); }

  /// Widens a storage value to f32 (exact), or narrows f32 to `type`
  /// (round to nearest even).
  Value toF32(Value v);
  Value fromF32(Value v, Type type);

  /// `count` elements of `type` in the block's dynamic shared memory, from
  /// byte `byteOffset`.
  Value sharedArray(Type type, int64_t count, int64_t byteOffset);

  Value load(Value memref, ValueRange indices) {
    return memref::LoadOp::create(b, memref, indices);
  }
  void store(Value v, Value memref, ValueRange indices) {
    memref::StoreOp::create(b, v, memref, indices);
  }

  Value threadId() { return gpu::ThreadIdOp::create(b, gpu::Dimension::x); }
  Value blockId(gpu::Dimension d) { return gpu::BlockIdOp::create(b, d); }
  void barrier() { gpu::BarrierOp::create(b); }

  /// for (i = lb; i < ub; i += step) body(i, iterArgs) -> yields.
  SmallVector<Value>
  loop(Value lb, Value ub, int64_t step, ValueRange init,
       const std::function<SmallVector<Value>(Value, ValueRange)> &body);
  void loop(Value lb, Value ub, int64_t step,
            const std::function<void(Value)> &body);
  /// if (cond) body().
  void guard(Value cond, const std::function<void()> &body);

  /// Sum of `v` over the 32 lanes of a warp (butterfly shuffles).
  Value warpSum(Value v);
  /// Sum of `v` over a block of `threads` threads; `scratch` is a
  /// workgroup memref of at least threads / 32 f32. Every thread gets it.
  Value blockSum(Value v, Value scratch, int64_t threads);

private:
  Value math_fma(Value x, Value y, Value z);
};

/// A kernel being built: its empty function (createKernel) and the
/// builders at the end of its body.
struct KernelBody {
  KernelBody(OpBuilder &builder, gpu::GPUModuleOp module, StringRef name,
             ArrayRef<KernelArg> args, int64_t threads)
      : func(createKernel(builder, module, name, args, threads)),
        b(module.getLoc(), builder), ir(b) {
    b.setInsertionPoint(func.getBody().front().getTerminator());
  }
  gpu::GPUFuncOp func;
  ImplicitLocOpBuilder b;
  KernelIR ir;
};

/// act(v) for an f32 scalar, with the SM's fast ex2 and reciprocal for the
/// logistic forms (GpuActivation.cpp); the GPU kernels' activation.
Value buildGpuActivation(ImplicitLocOpBuilder &b, Activation activation,
                         Value v);

} // namespace mlir::ffn::gpu_target

#endif // FFN_TARGET_GPU_KERNELIR_H
