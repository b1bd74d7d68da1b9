//===- Passes.td - ffn dialect conversions -----------------*- tablegen -*-===//

#ifndef FFN_CONVERSION_PASSES_TD
#define FFN_CONVERSION_PASSES_TD

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

#endif // FFN_CONVERSION_PASSES_TD
