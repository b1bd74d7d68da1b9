//===- FfnBase.td - ffn dialect definition ------------------*- tablegen -*-===//
//
// The ffn dialect carries the meaning of a Transformer feed-forward network
// (shape, activation, gating, biases, residual, norm, dtype) so that it can be
// verified, printed and tested. Everything computational (matmuls, epilogues,
// tiling, vectorization) is expressed later in upstream dialects.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_IR_FFNBASE_TD
#define FFN_IR_FFNBASE_TD

include "mlir/IR/OpBase.td"

def Ffn_Dialect : Dialect {
  let name = "ffn";
  let cppNamespace = "::mlir::ffn";
  let summary = "Transformer feed-forward networks";
  let description = [{
    The `ffn` dialect describes position-wise feed-forward networks of
    Transformer models at the level a model author thinks of them: the plain
    form `y = act(x W1 + b1) W2 + b2`, the gated (GLU) family
    `y = (g(x Wg + bg) * (x Wu + bu)) Wd + bd`, an optional residual and an
    optional LayerNorm/RMSNorm before or after. It is deliberately thin: the
    single op `ffn.ffn` takes its weights as tensor operands and its meaning as
    typed attributes; lowering passes rewrite it into `linalg`, `vector` and
    `scf`, which own tiling, fusion and vectorization.

    Storage element types are `f32`, `bf16` or `f16`; accumulation is always
    `f32`. The token count M (the first dimension of the input) may be dynamic;
    `d_model` and `d_ff` are static.
  }];
  let useDefaultAttributePrinterParser = 1;
  // ffn.kernel_abi on a kernel function is checked against its signature.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    // Defined next to the attribute storage classes, which must be complete.
    void registerAttributes();
  }];
}

class Ffn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ffn_Dialect, mnemonic, traits>;

#endif // FFN_IR_FFNBASE_TD
