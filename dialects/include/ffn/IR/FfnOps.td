//===- FfnOps.td - ffn dialect operations -------------------*- tablegen -*-===//

#ifndef FFN_IR_FFNOPS_TD
#define FFN_IR_FFNOPS_TD

include "ffn/IR/FfnAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Ffn_FloatTensor : RankedTensorOf<[F32, BF16, F16]>;

def Ffn_FfnOp : Ffn_Op<"ffn", [Pure, AttrSizedOperandSegments]> {
  let summary = "one position-wise feed-forward network";
  let description = [{
    Applies one FFN to every row of `input` (`[M, d_model]`). Weights are in
    `[in, out]` layout:

    | operand      | shape              | present when                 |
    |--------------|--------------------|------------------------------|
    | `w_up`       | `[d_model, d_ff]`  | always (W1, or Wu if gated)  |
    | `w_gate`     | `[d_model, d_ff]`  | gated                        |
    | `w_down`     | `[d_ff, d_model]`  | always (W2, or Wd if gated)  |
    | `b_up`       | `[d_ff]`           | up bias on                   |
    | `b_gate`     | `[d_ff]`           | gated and gate bias on       |
    | `b_down`     | `[d_model]`        | down bias on                 |
    | `norm_scale` | `[d_model]`        | a norm is present            |
    | `norm_shift` | `[d_model]`        | the norm is a LayerNorm      |

    Plain: `h = act(x W_up + b_up)`. Gated (`gated`):
    `h = act(x W_gate + b_gate) * (x W_up + b_up)`; so GLU is `gated sigmoid`,
    ReGLU `gated relu`, GEGLU `gated gelu`, SwiGLU `gated silu` and bilinear
    `gated identity`. Then `f = h W_down + b_down`; with `residual`,
    `f = x + f`. A `pre` norm normalizes the input of the matmuls (the residual
    still adds the raw input); a `post` norm normalizes `f`.

    With `moe #ffn.moe<...>` the op is a mixture of expert FFNs of this
    family (see `#ffn.moe`): `w_up`, `w_gate`, `w_down` are
    `[experts + shared, in, out]` and the biases `[experts + shared, n]`,
    one slice per expert; `router` is `[d_model, experts]`. The norm
    parameters stay single.

    With `groups G` the op is a grouped (block-diagonal) FFN: the input's
    `d_model` columns split into G blocks of `d_model / G`, and block g is an
    FFN of this family and width `d_ff / G` from input columns
    `[g * d_model / G, (g + 1) * d_model / G)` to the same result columns.
    `w_up`, `w_gate` are `[G, d_model / G, d_ff / G]`, `w_down`
    `[G, d_ff / G, d_model / G]`, the biases `[G, d_ff / G]` and
    `[G, d_model / G]`; the norm parameters and the residual span the whole
    row. A dense FFN with these weights on its diagonal computes the same.

    `batch_invariant` declares that a row's result must not depend on how
    many rows are computed with it: every token count reduces each row in
    the same order (so the strategy never takes the fused d_ff-chunked
    schedule, whose partial sums would change the order for small M).

    `activation_sparsity` (ReLU and ReGLU FFNs only) is what the model's
    profile says of its data: the expected share of hidden activations that
    are exactly zero at decode. It changes no result; the CPU cost model
    prices the sparse GEMM 2 (`sparse_max_m`) with it.

    All operands and the result share one element type (`f32`, `bf16` or
    `f16`); accumulation is `f32`. With `weights #ffn.weight_quant<...>` the
    weight matrices are stored quantized (the operands still carry the
    unquantized values in the element type, as `ffn_kernel_set_param`
    receives them; the kernel quantizes them once, when it packs them).

    Example:

    ```mlir
    %y = ffn.ffn gated silu
           ins(%x : tensor<?x4096xbf16>)
           up(%wu : tensor<4096x11008xbf16>)
           gate(%wg : tensor<4096x11008xbf16>)
           down(%wd : tensor<11008x4096xbf16>) -> tensor<?x4096xbf16>
    ```
  }];

  let arguments = (ins
    Ffn_FloatTensor:$input,
    Ffn_FloatTensor:$w_up,
    Optional<Ffn_FloatTensor>:$w_gate,
    Ffn_FloatTensor:$w_down,
    Optional<Ffn_FloatTensor>:$b_up,
    Optional<Ffn_FloatTensor>:$b_gate,
    Optional<Ffn_FloatTensor>:$b_down,
    Optional<Ffn_FloatTensor>:$norm_scale,
    Optional<Ffn_FloatTensor>:$norm_shift,
    Optional<Ffn_FloatTensor>:$router,
    Ffn_ActivationAttr:$activation,
    UnitAttr:$gated,
    UnitAttr:$residual,
    OptionalAttr<Ffn_NormAttr>:$norm,
    OptionalAttr<Ffn_WeightQuantAttr>:$weight_quant,
    OptionalAttr<Ffn_MoeAttr>:$moe,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<2>, IntMaxValue<1024>]>>:$groups,
    UnitAttr:$batch_invariant,
    OptionalAttr<F64Attr>:$activation_sparsity,
    OptionalAttr<Ffn_StrategyAttrInterface>:$strategy
  );
  let results = (outs Ffn_FloatTensor:$result);

  let assemblyFormat = [{
    custom<Kind>($gated, $activation) (`residual` $residual^)? (`norm` `` $norm^)?
    (`weights` $weight_quant^)? (`moe` $moe^)? (`groups` $groups^)?
    (`batch_invariant` $batch_invariant^)?
    (`activation_sparsity` $activation_sparsity^)?
    `ins` `(` $input `:` type($input) `)`
    `up` `(` $w_up `:` type($w_up) `)`
    (`gate` `(` $w_gate^ `:` type($w_gate) `)`)?
    `down` `(` $w_down `:` type($w_down) `)`
    (`bias_up` `(` $b_up^ `:` type($b_up) `)`)?
    (`bias_gate` `(` $b_gate^ `:` type($b_gate) `)`)?
    (`bias_down` `(` $b_down^ `:` type($b_down) `)`)?
    (`norm_scale` `(` $norm_scale^ `:` type($norm_scale) `)`)?
    (`norm_shift` `(` $norm_shift^ `:` type($norm_shift) `)`)?
    (`router` `(` $router^ `:` type($router) `)`)?
    (`strategy` $strategy^)?
    attr-dict `->` type($result)
  }];

  let extraClassDeclaration = [{
    /// The model width (columns of the input and the result).
    /// (Of a mixture of experts, these are each expert's.)
    int64_t getDModel();
    /// The hidden width of the FFN (of a grouped FFN, all blocks').
    int64_t getDFf();
    /// Blocks of a grouped FFN (1 when not grouped).
    int64_t getNumBlocks() { return getGroups() ? *getGroups() : 1; }
    /// One block's widths: the GEMMs' (the model's when not grouped).
    int64_t getBlockDModel();
    int64_t getBlockDFf();
    /// The storage element type shared by all operands.
    ::mlir::Type getStorageType() { return getInput().getType().getElementType(); }
  }];

  let hasVerifier = 1;
}

#endif // FFN_IR_FFNOPS_TD
