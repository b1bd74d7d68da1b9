//===- Passes.td - ffn passes -------------------------------*- tablegen -*-===//

#ifndef FFN_TRANSFORMS_PASSES_TD
#define FFN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFfnToLinalg : Pass<"convert-ffn-to-linalg", "func::FuncOp"> {
  let summary = "Lower ffn.ffn to linalg on tensors";
  let description = [{
    Rewrites every `ffn.ffn` into upstream ops on tensors: `linalg.matmul`
    for the projections (storage-typed operands, f32 accumulator) and
    `linalg.generic` for the norm reductions and the elementwise epilogues
    (bias, activation, gate product, residual, final conversion to the
    storage type). All arithmetic is f32; activations use `math` ops
    (`math.erf`, `math.tanh`, `math.exp`), which `ffn-approximate-math`
    later turns into polynomials. Each created op carries an `ffn.role`
    attribute (`in`, `norm`, `up`, `gate`, `act`, `down`, `out`) for later
    scheduling and for tests.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "arith::ArithDialect", "math::MathDialect"];
}

def FfnKernelInterface : Pass<"ffn-kernel-interface", "ModuleOp"> {
  let summary = "Give each FFN function the kernel calling convention";
  let description = [{
    Rewrites each `func.func` built from an ffn spec (arguments tagged
    `ffn.param`) from `(tensors) -> tensor` to destination-passing style on
    memrefs: the same arguments as memrefs, followed by an output memref
    `[M, d_model]`. The body reads the arguments through
    `bufferization.to_tensor restrict` and writes its result with
    `bufferization.materialize_in_destination`, so one-shot bufferization
    computes straight into the caller's output buffer.
  }];
  let dependentDialects = ["bufferization::BufferizationDialect",
                           "memref::MemRefDialect"];
}

def FfnMatmulLoopOrder : Pass<"ffn-matmul-loop-order", "func::FuncOp"> {
  let summary = "Order matmul loops (m, k, n) for the unscheduled CPU path";
  let description = [{
    Generalizes every `linalg.matmul` and interchanges its loops to
    (m, k, n), so that once lowered to loops the innermost loop walks a row
    of the weight matrix and of the accumulator contiguously and LLVM's loop
    vectorizer can use full-width SIMD. This is the baseline schedule of the
    correctness-first CPU pipeline; the tiled, packed schedule replaces it.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def FfnApproximateMath : Pass<"ffn-approximate-math"> {
  let summary = "Replace math.exp/tanh/erf (and friends) by polynomials";
  let description = [{
    Applies MLIR's polynomial approximations to f32 `math` ops (scalar or
    vector), so no activation becomes a scalar libm call. Ops on other float
    types are first widened to f32.
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "vector::VectorDialect"];
}

#endif // FFN_TRANSFORMS_PASSES_TD
