//===- FfnAttrs.td - ffn dialect enums and attributes -------*- tablegen -*-===//

#ifndef FFN_IR_FFNATTRS_TD
#define FFN_IR_FFNATTRS_TD

include "ffn/IR/FfnBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Ffn_Activation : I32EnumAttr<"Activation",
    "activation function of a plain FFN, or the gate function of a gated one", [
  I32EnumAttrCase<"relu", 0>,
  I32EnumAttrCase<"gelu", 1>,       // exact, with erf
  I32EnumAttrCase<"gelu_tanh", 2>,  // tanh approximation
  I32EnumAttrCase<"silu", 3>,       // x * sigmoid(x), a.k.a. swish
  I32EnumAttrCase<"sigmoid", 4>,
  I32EnumAttrCase<"identity", 5>
]> {
  let cppNamespace = "::mlir::ffn";
  let genSpecializedAttr = 0;
}

def Ffn_ActivationAttr : EnumAttr<Ffn_Dialect, Ffn_Activation, "activation">;

def Ffn_NormKind : I32EnumAttr<"NormKind", "normalization", [
  I32EnumAttrCase<"layernorm", 0>,
  I32EnumAttrCase<"rmsnorm", 1>
]> {
  let cppNamespace = "::mlir::ffn";
  let genSpecializedAttr = 0;
}

def Ffn_NormPosition : I32EnumAttr<"NormPosition",
    "where the norm sits relative to the FFN", [
  I32EnumAttrCase<"pre", 0>,   // y = [x +] FFN(norm(x))
  I32EnumAttrCase<"post", 1>   // y = norm([x +] FFN(x))
]> {
  let cppNamespace = "::mlir::ffn";
  let genSpecializedAttr = 0;
}

def Ffn_NormAttr : AttrDef<Ffn_Dialect, "Norm"> {
  let mnemonic = "norm";
  let summary = "a LayerNorm or RMSNorm around the FFN";
  let description = [{
    `kind` is `layernorm` (learned scale and shift) or `rmsnorm` (learned
    scale only); `position` is `pre` (normalize the FFN's input; a residual
    adds the un-normalized input) or `post` (normalize the FFN's output, after
    the residual, as in the original Transformer). `eps` is added to the
    variance (mean of squares for RMSNorm) and must be positive and finite.

    Example: `#ffn.norm<layernorm, post, eps = 1.0e-12>`
  }];
  let parameters = (ins EnumParameter<Ffn_NormKind>:$kind,
                        EnumParameter<Ffn_NormPosition>:$position,
                        APFloatParameter<"epsilon (f64)">:$eps);
  // Custom so eps prints in its shortest exact form (1.0e-12, not
  // 9.9999999999999998E-13 : f64).
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Ffn_StrategyAttr : AttrDef<Ffn_Dialect, "Strategy"> {
  let mnemonic = "strategy";
  let summary = "how the CPU back end schedules one FFN";
  let description = [{
    Written by `ffn-select-strategy`, read by `ffn-lower-packed`:

    - `vector_bits`: SIMD width (512 for AVX-512 zmm, 256 for AVX2 ymm);
    - `mr`: token rows of the register tile;
    - `nr`: accumulator columns of the register tile, a multiple of the
      vector lanes (a gated FFN splits them between gate and up, so both
      projections of a column are computed in the same tile);
    - `mc`: token rows per cache block (a packed weight panel is reused,
      from L2, by all rows of a block);
    - `prefetch`: whether the K loop prefetches the next weight panel (pays
      off when the weights stream from DRAM, costs a little when they stay
      in cache);
    - `fused_max_m`: the token-count bucket boundary. Runs with
      `m <= fused_max_m` take the whole-FFN fused schedule: d_ff in chunks of
      `chunk` columns, each chunk's hidden activations computed into an
      L1-sized buffer and immediately multiplied into the output, so the
      `[m, d_ff]` intermediate never exists; chunks are grouped into
      `groups` work units (the thread split), each with its own partial
      output, summed in a fixed order. Larger runs take the two-pass packed
      schedule (GEMM 1 into an `[m, d_ff]` buffer, then GEMM 2), split over
      weight panels. 0 (the default) means the two-pass schedule for all m.

    Weights are packed once into `nr`-wide panels (`[N/nr][K][nr]`,
    zero-padded), so the innermost loop reads one contiguous panel row.

    Example:
    `#ffn.strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = true, fused_max_m = 16, chunk = 256, groups = 8>`
  }];
  let parameters = (ins "int64_t":$vector_bits, "int64_t":$mr,
                        "int64_t":$nr, "int64_t":$mc, "bool":$prefetch,
                        DefaultValuedParameter<"int64_t", "0">:$fused_max_m,
                        DefaultValuedParameter<"int64_t", "0">:$chunk,
                        DefaultValuedParameter<"int64_t", "0">:$groups);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // FFN_IR_FFNATTRS_TD
