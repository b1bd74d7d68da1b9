//===- Passes.h - ffn passes for NVIDIA GPUs --------------------*- C++ -*-===//

#ifndef FFN_TARGET_GPU_PASSES_H
#define FFN_TARGET_GPU_PASSES_H

#include "ffn/IR/FfnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ffn {

#define GEN_PASS_DECL
#include "ffn/Target/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ffn/Target/GPU/Passes.h.inc"

} // namespace mlir::ffn

#endif // FFN_TARGET_GPU_PASSES_H
