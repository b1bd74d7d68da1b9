//===- FfnAttrs.td - ffn dialect enums and attributes -------*- tablegen -*-===//

#ifndef FFN_IR_FFNATTRS_TD
#define FFN_IR_FFNATTRS_TD

include "ffn/IR/FfnBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "ffn/IR/FfnInterfaces.td"

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

def Ffn_WeightQuantKind : I32EnumAttr<"WeightQuantKind",
                                      "weight-only quantization format", [
  I32EnumAttrCase<"int8", 0>,
  I32EnumAttrCase<"int4", 1>
]> {
  let cppNamespace = "::mlir::ffn";
  let genSpecializedAttr = 0;
}

def Ffn_Router : I32EnumAttr<"Router", "how a mixture of experts weighs its choice", [
  I32EnumAttrCase<"softmax_topk", 0>,
  I32EnumAttrCase<"topk_softmax", 1>
]> {
  let cppNamespace = "::mlir::ffn";
  let genSpecializedAttr = 0;
}

def Ffn_MoeAttr : AttrDef<Ffn_Dialect, "Moe"> {
  let mnemonic = "moe";
  let summary = "a mixture of expert FFNs in place of one FFN";
  let description = [{
    The op holds `experts` routed expert FFNs and `shared` always-on ones,
    all of the op's family and widths; their weights and biases are stacked
    along a leading dimension of `experts + shared` (shared ones last). A
    router matrix `[d_model, experts]` gives each row's logits over the
    routed experts (of the matmuls' input: x, or the pre-normed x); the row
    takes the `top_k` largest, in descending order, ties to the lower index,
    weighted by `softmax_topk` (the softmax over every routed expert,
    divided by the chosen ones' sum when `normalize`) or `topk_softmax`
    (the softmax over the chosen logits). The output is the weighted sum of
    the chosen experts' outputs, then the shared experts' (weight 1); the
    residual and a norm apply once, around the mixture
    (`ffn/kernel_abi.h`).

    Example: `#ffn.moe<experts = 8, top_k = 2, router = topk_softmax>`,
    `#ffn.moe<experts = 64, top_k = 6, router = softmax_topk, shared = 2>`
  }];
  let parameters = (ins "int64_t":$experts, "int64_t":$top_k,
                        EnumParameter<Ffn_Router>:$router,
                        DefaultValuedParameter<"bool", "false">:$normalize,
                        DefaultValuedParameter<"int64_t", "0">:$shared);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Expert FFNs whose weights the op holds (routed and shared).
    int64_t totalExperts() const { return getExperts() + getShared(); }
    /// Expert FFNs each row runs.
    int64_t activeExperts() const { return getTopK() + getShared(); }
  }];
}

def Ffn_WeightQuantAttr : AttrDef<Ffn_Dialect, "WeightQuant"> {
  let mnemonic = "weight_quant";
  let summary = "weight-only quantization of an FFN's weight matrices";
  let description = [{
    The weight matrices are stored as `int8` or `int4` integers q with one
    scale s per `group` input rows of each output column, symmetric
    (w = s q; q in [-127, 127] for int8, [-7, 7] for int4), the scales in
    the FFN's element type. Biases, norm parameters and activations keep
    the element type. The matmuls multiply the activations by the
    dequantized weights s q: the f64 reference runs on those, and what the
    quantization itself loses is a property of the model, reported apart.
    `group` is even, in [2, 65536].

    With `int8_activations = true` the FFN also allows its matmuls' inputs
    (x or the pre-normed x, and the hidden activations) to be quantized:
    per row and per `group` of the reduction, symmetric int8 with an f32
    scale, so the products are integer dot products (x86 VNNI `vpdpbusd`).
    That changes the numerics contract, so it is the spec's choice, never
    the compiler's: the kernel declares `operand_type = i8` and the f64
    reference widens its bound by one int8 quantum per input. `group` is
    then a multiple of 16.

    With `zero_points = true` (int4 only) the quantization is asymmetric:
    per group and column a scale s and an integer zero point z in [0, 15],
    q in [0, 15], w = s (q - z), the range [min(w, 0), max(w, 0)] mapped
    onto [0, 15] (the formula is kernel_abi.h's).

    Example: `#ffn.weight_quant<int4, group = 32>`,
    `#ffn.weight_quant<int8, group = 128, int8_activations = true>`,
    `#ffn.weight_quant<int4, group = 64, zero_points = true>`
  }];
  let parameters = (ins EnumParameter<Ffn_WeightQuantKind>:$kind,
                        "int64_t":$group,
                        DefaultValuedParameter<"bool", "false">:$int8_activations,
                        DefaultValuedParameter<"bool", "false">:$zero_points);
  // The flags print only when set.
  let assemblyFormat =
      "`<` $kind `,` struct($group, $int8_activations, $zero_points) `>`";
  let genVerifyDecl = 1;
}

def Ffn_TargetAttr : AttrDef<Ffn_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "the machine a module's kernels are compiled for";
  let description = [{
    Attached to the module as `ffn.target` by `ffn-attach-target` (ffnc
    from `--target`, `--kernel-threads` and `--machine`); what strategy
    selection reads:

    - `isa`: the target's name as `--target` spells it (`x86-64-avx512`,
      `x86-64-avx2`, `nvptx-sm90`, ...);
    - `vector_bits`: the SIMD width of a CPU target (0 on a GPU);
    - `threads`: the threads the kernels will run on;
    - `peak_gflops`, `dram_gbs`, `cache_gbs`, `sync_us`: the machine the
      cost model prices for -- one thread's f32 FMA peak, the read bandwidth
      from memory (all threads) and from cache (per thread), one phase
      hand-off of the thread pool. ffnc uses a nominal machine unless
      `--machine=FILE` gives a profile `ffnc probe` measured; either way it
      is printed here.

    Example:
    `#ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 2, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>`
  }];
  let parameters = (ins StringRefParameter<"the target's name">:$isa,
                        "int64_t":$vector_bits, "int64_t":$threads,
                        APFloatParameter<"GFLOP/s">:$peak_gflops,
                        APFloatParameter<"GB/s">:$dram_gbs,
                        APFloatParameter<"GB/s">:$cache_gbs,
                        APFloatParameter<"microseconds">:$sync_us);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The name of the module attribute.
    static constexpr ::llvm::StringLiteral kAttrName = "ffn.target";
    /// The target of the module enclosing `op` (or `op` itself); null if
    /// none is attached.
    static TargetAttr lookup(::mlir::Operation *op);
    /// Whether the target is a CPU (vector_bits > 0).
    bool isCpu() const { return getVectorBits() > 0; }
    /// The machine figures as the cost model takes them.
    ::mlir::ffn::MachineAssumptions machine() const;
  }];
}

def Ffn_CpuStrategyAttr
    : AttrDef<Ffn_Dialect, "CpuStrategy",
              [DeclareAttrInterfaceMethods<Ffn_StrategyAttrInterface>]> {
  let mnemonic = "cpu_strategy";
  let summary = "how the CPU back end schedules one FFN";
  let description = [{
    Written by `ffn-select-strategy`, read by `ffn-lower-packed`. The knobs
    (each `key = value`, printed in this order):

    - `vector_bits`: SIMD width (512 for AVX-512 zmm, 256 for AVX2 ymm);
    - `mr`: token rows of the register tile;
    - `nr`: accumulator columns of the register tile, 1, 2, 4 or 8 vectors
      of the f32 lanes (other counts are not legal LLVM vector widths and
      are refused) (a gated FFN splits them between gate and up, so both
      projections of a column are computed in the same tile);
    - `mc`: token rows per cache block (a packed weight panel is reused,
      from L2, by all rows of a block);
    - `kc`: K blocks. A row block of more than `mr` and at most 12 `mr`
      rows runs each panel's K in blocks of `kc` rows: every tile of the
      block over one K block before any moves on, its partial sums parked
      in an `mc` x `nc` stack buffer (f32, exact) in between, and the
      block's first two tiles prefetching the next K block between them, so
      the weights stream from memory while all the tiles compute instead of
      before them. The same FMAs in the same order as whole K (bit-identical
      results). A multiple of 16; for the
      widening and bf16 pair tiles over whole panels (not quantized
      weights, the fused schedule's chunk-major W_down or the sparse GEMM
      2). The cost model picks 16 KiB of weights per block (f32 128, bf16
      256 at `nr` = 32) where K exceeds it; absent means 0 (whole K);
    - `kc_tall`: the same for a row block of more than 12 `mr` rows, in K
      blocks of `kc_tall` rows: there the many tiles hide the weight
      stream, and K blocks keep a panel that is too long for L2 beside the
      block's A rows in cache. A multiple of 16; the cost model picks 4
      `kc` where the longer GEMM's whole-K panel exceeds 512 KiB; absent
      means 0 (whole K);
    - `nc`: a K-blocked row block runs its weight panels in groups of `nc`
      columns (a multiple of `nr`): each K block over every panel of the
      group before the next K block, so the block's A rows of a K block are
      read from memory once per group, not once per panel; the partial
      sums are `mc` x `nc` (at most 32768, with K blocks). The cost model
      picks 4 `nr` (as `mc` allows) where it picks K blocks; absent means
      `nr` (one panel);
    - `prefetch`: whether a block's first multi-row tile prefetches 2 KiB
      down the weight stream in its K loop (the block's later tiles, which
      find the panel in cache, run a K loop without prefetches; one-row
      tiles always prefetch); chosen `true` for every size, `false` to
      compare; `true`/`false` (or 1/0);
    - `fused_max_m`: the token-count bucket boundary. Runs with
      `m <= fused_max_m` take the whole-FFN fused schedule: d_ff in chunks of
      `chunk` columns, each chunk's hidden activations computed into an
      L1-sized buffer and immediately multiplied into the output, so the
      `[m, d_ff]` intermediate never exists; chunks are grouped into
      `groups` work units (the thread split), each with its own partial
      output, summed in a fixed order. Larger runs take the two-pass packed
      schedule (GEMM 1 into an `[m, d_ff]` buffer, then GEMM 2), split over
      weight panels. 0 means the two-pass schedule for all m; `chunk` and
      `groups` are given exactly when it is positive.
    - `bf16_dot`: bf16 pair tiles. The register tiles multiply bf16 pairs
      with AVX-512 BF16's `vdpbf16ps` instead of widening each weight to
      f32; the weights are packed with two K rows interleaved per panel row
      (`[N/nr][K/2][2 nr]`) and the matmuls' inputs (the pre-normed input,
      the hidden activations) are rounded to bf16. Only for bf16 FFNs on a
      target with `avx512bf16` and 512-bit vectors; absent means false.
    - `sparse_max_m`: runs with `m <= sparse_max_m` skip the rows of W_down
      whose hidden activation is exactly zero in every row of the run: the
      kernel lists the rows some row needs (per chunk in the fused bucket;
      over all of d_ff, in a one-unit phase of its own, in a two-pass
      bucket) and GEMM 2 reads only those. Results equal the dense GEMM 2's
      (the skipped terms are exact zeros; the others are summed in the same
      order). For unquantized dense FFNs; it pays off only where the
      activation makes exact zeros (ReLU, ReGLU). The cost model does not
      choose it yet (measured no faster, docs/performance.md); absent means
      0 (never).
    - `block_units`: a grouped FFN's work units. `true`: one unit per block,
      whose GEMM 1 and GEMM 2 one thread runs back to back, so the block's
      hidden activations stay in that thread's cache and no barrier
      separates the GEMMs (the cost model's choice while whole blocks split
      evenly enough over the threads); `false`: each GEMM's units are
      panels x blocks, with a barrier between the GEMMs. Set exactly for
      grouped FFNs (absent means false).

    Weights are packed once into `nr`-wide panels (`[N/nr][K][nr]`,
    zero-padded), so the innermost loop reads one contiguous panel row.


    The strategy on an `ffn.ffn` is complete. The same attribute with knobs
    left out is an override (`--strategy=mr=4,nr=64` is
    `#ffn.cpu_strategy<mr = 4, nr = 64>`): the cost model chooses the rest.
    The rules (ranges, multiples of the lanes and of `nr`/`mr`) are checked
    for every knob given, the defaults standing in for the others.

    Example:
    `#ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = true, fused_max_m = 16, chunk = 256, groups = 8>`
  }];
  let parameters = (ins AttrParameter<"::mlir::ffn::CpuStrategy",
                                      "the knobs (unset: not decided)">:$knobs);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Ffn_GpuStrategyAttr
    : AttrDef<Ffn_Dialect, "GpuStrategy",
              [DeclareAttrInterfaceMethods<Ffn_StrategyAttrInterface>]> {
  let mnemonic = "gpu_strategy";
  let summary = "how the NVIDIA back end schedules one FFN";
  let description = [{
    Written by `ffn-gpu-select-strategy`, read by `ffn-gpu-lower`. A
    complete strategy has the multiprocessor count its grids are sized for
    and one bucket per token-count range, ascending (`max_m`: the bucket
    takes the runs with the previous bucket's max_m < m <= max_m; the last
    bucket has none and takes every larger m). Each bucket's knobs:

    - `block_m` x `block_n`: the block's output tile, split between
      `warps_m` x `warps_n` warps (the kernels exist for 16x128 (1 x 8
      warps), 64x128 (2 x 4) and 128x256 (2 x 4; f32: 128x128), and on
      sm_90a the ping-pong 128x128 wgmma tile (each consumer warpgroup its
      own tile; only an override chooses it));
    - `block_k`: K per pipeline stage (64 for bf16/f16, 32 for f32);
    - `stages`: depth of the cp.async or TMA ring (2-4, as shared memory
      allows; the ping-pong tile up to 6),
      or 0: no ring, the 16-row tile's register stream (each lane loads
      its weight and activation fragments with 16-byte `ld.global.nc`
      straight into mma.sync operands; the default for that tile on
      unquantized bf16/f16 FFNs that are not mixtures of experts);
    - `warp_stages` (optional, 0 if absent; only beside `stages = 0`): the
      register stream's weights through each warp's own cp.async ring of
      this depth (2-6; whole 128-byte lines a copy) instead of straight
      into registers;
    - `mma`: `mma_sync` (mma.sync.m16n8k16 on tensor cores, sm_80+),
      `wgmma` (warpgroup MMA, sm_90a, the 128x256 and 128x128 tiles) or
      `fma` (f32);
    - `split_k = [up, down]`: K slices of GEMM 1 and GEMM 2 (f32 partials
      in the workspace, summed in slice order by a reduction kernel that
      applies the epilogue: deterministic);
    - `widen = registers` (optional; absent: `shared`): quantized weights
      widened by each warp in registers, straight from the ring's integer
      tile, instead of by the block into converted tiles in shared memory
      (int4, or int8 on f16; scale groups a multiple of 32; an mma_sync
      ring with block_k = 64).

    The cost model (`ffn/Target/GPU/CostModel.h`) prices every tile at the
    bucket's largest m -- the larger of its tensor time (padded rows, the
    warp tile's operand traffic, the SM with the most blocks) and its memory
    time (weights from HBM once, from L2 for every further row of blocks)
    -- and splits K where a bounded bucket's grid leaves SMs idle (four
    blocks per SM for decode, one full wave otherwise). The device's figures
    are the chip's nominal board (sm_80: A100 SXM4, sm_90/sm_90a: H100
    SXM5); `sms` resizes it.

    An override (`--strategy=`, the selection pass's `overrides`) is the
    same attribute without buckets, setting any of: `sms`, `bounds = [..]`
    (the bounded buckets' max_m), `block_m` and `block_n` (one tile for
    every bucket), `stages`, `warp_stages` (every bucket that takes the
    register stream), `split_k` (every bounded bucket's GEMMs; 1:
    none), `mma = mma_sync` (wgmma off on sm_90a), `widen = registers`
    (every bucket; an error names what keeps an FFN from it) or `shared`.
    The model chooses the rest.

    Example (abridged):
    `#ffn.gpu_strategy<sms = 132, buckets = [<max_m = 16, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 4, mma = mma_sync, split_k = [4, 17]>, <block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>]>`
  }];
  let parameters = (ins AttrParameter<"::mlir::ffn::GpuStrategy",
                                      "the knobs or the buckets">:$knobs);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// The kernel contract: what the lowering tells the kernel glue, the header
// writer and (through the descriptor) the runtime.
//===----------------------------------------------------------------------===//

def Ffn_KernelParamAttr : AttrDef<Ffn_Dialect, "KernelParam"> {
  let mnemonic = "kernel_param";
  let summary = "one parameter of a kernel: its name, shape and packing";
  let description = [{
    `name` is the spec's name for the parameter (`w_up`, `b_down`, ...);
    `shape` its logical shape (matrices `[in, out]`, read from a dense
    row-major buffer of the storage type); `packed` the static, row-major
    buffer the kernel reads after packing (its size is the descriptor's
    `packed_bytes`); `pack` the private function that packs it (empty: the
    kernel reads the parameter as it is, and `packed` has the logical shape).
    `pack_quantized` (quantized weight matrices only) the private function
    that packs the same buffer from blocks quantized elsewhere: integers
    `[in, out]` i8, scales `[groups, out]` in the storage type and, with
    zero points, zero points `[groups, out]` i8 (the runtime's
    `ffn_kernel_set_quantized_param`).
    The kernel glue passes each buffer to the kernel and the pack functions
    in these shapes, so the contract alone fixes the calling convention.
    `experts` (a mixture of experts' or a grouped FFN's stacked weights and
    biases): `shape` and `packed` are one expert's (block's); the kernel takes all of them as one byte
    buffer `memref<(experts * stride) x i8>`, expert e's packed buffer at
    byte e * stride, stride = packed bytes rounded up to 64 (the pack
    functions pack one expert per call).

    Example:
    `#ffn.kernel_param<name = "w_up", shape = [768, 3072], packed = memref<96x768x32xf32>, pack = "bert_pack_w_up">`
  }];
  let parameters = (ins StringRefParameter<"the spec's parameter name">:$name,
                        "::mlir::DenseI64ArrayAttr":$shape,
                        "::mlir::MemRefType":$packed,
                        StringRefParameter<"pack function (empty: none)",
                                           "\"\"">:$pack,
                        StringRefParameter<"pack function from quantized blocks (empty: none)",
                                           "\"\"">:$pack_quantized,
                        DefaultValuedParameter<"int64_t", "0">:$experts);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of the packed buffer (one expert's, if stacked).
    int64_t packedBytes() const;
    /// Stacked: bytes from one expert's packed buffer to the next.
    int64_t expertStride() const { return (packedBytes() + 63) / 64 * 64; }
    /// The buffer the kernel function takes: `packed`, or for stacked
    /// parameters every expert's in one byte buffer.
    ::mlir::MemRefType kernelType() const;
  }];
}

def Ffn_DeviceLaunchAttr : AttrDef<Ffn_Dialect, "DeviceLaunch"> {
  let mnemonic = "device_launch";
  let summary = "one kernel launch of a device kernel's launch plan";
  let description = [{
    A launch of gpu.func `kernel` for runs with `min_m <= m <= max_m`: a
    grid of ceil(m / rows_per_block) x grid_y x grid_z blocks of `threads`
    threads and `shared_bytes` of dynamic shared memory; `args` are
    (kind, index) pairs naming the runtime's buffers in kernel_abi.h's
    `ffn_device_arg` terms. Its workspace arguments reach less than
    `workspace_per_row` bytes per row: the runtime sizes a run's workspace
    from the launches that run, not from the largest bucket. `maps` (absent:
    none) describes the TMA tensor maps its tensor-map arguments (kind 5,
    index = the map's number) are built from, twelve values each in
    `ffn_tensor_map` order: source kind, source index, rank, dims[3] (0: the
    run's m), strides[2] (bytes), box[3], swizzle (bytes). grid.x is
    ceil((m grid_m_scale + grid_rows_extra) / rows_per_block) (defaults 1
    and 0: ceil(m / rows_per_block)). A persistent launch (`max_blocks` >
    0) runs min(x y z, max_blocks) blocks of that x x y x z grid of tiles
    as a one-dimensional grid, each block walking the tiles blockIdx.x,
    blockIdx.x + gridDim.x, ... in x-fastest order.
  }];
  let parameters = (ins StringRefParameter<"gpu.func name">:$kernel,
                        "int64_t":$min_m, "int64_t":$max_m,
                        "int64_t":$rows_per_block, "int64_t":$grid_y,
                        "int64_t":$grid_z, "int64_t":$threads,
                        "int64_t":$shared_bytes,
                        "int64_t":$workspace_per_row,
                        "::mlir::DenseI64ArrayAttr":$args,
                        OptionalParameter<"::mlir::DenseI64ArrayAttr">:$maps,
                        DefaultValuedParameter<"int64_t", "1">:$grid_m_scale,
                        DefaultValuedParameter<"int64_t", "0">:$grid_rows_extra,
                        DefaultValuedParameter<"int64_t", "0">:$max_blocks);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Ffn_KernelAbiAttr : AttrDef<Ffn_Dialect, "KernelAbi"> {
  let mnemonic = "kernel_abi";
  let summary = "the contract of one lowered kernel";
  let description = [{
    Written by the lowering that gives an FFN its calling convention
    (`ffn-lower-packed`, `ffn-kernel-interface` and `ffn-workspace-allocs`
    for the CPU, `ffn-gpu-lower` for NVIDIA GPUs, `ffn-halide-lower` for the
    Halide back end) on the kernel function as
    the `ffn.kernel_abi` attribute; read by the kernel glue that builds the
    `ffn_kernel_desc` of `ffn/kernel_abi.h` and by the header writer, so the
    spec is not consulted after MLIRGen.

    - the model: `d_model`, `d_ff`, `storage` (f32, bf16, f16),
      `activation`, `gated`, `residual`, `norm`, `weight_quant` (absent:
      weights in the storage type), `moe` (absent: one FFN), `groups` (a
      grouped FFN's blocks; 0, elided: not grouped; `d_model` and `d_ff`
      are then the whole row's, the parameters' shapes one block's);
    - `pack_layout`: who laid out the packed parameters when it is not
      ffnc's own packing (`"halide-panels-1"`: the Halide back end's pack
      pipelines; empty, elided: ffnc's). The kernel glue adds it to the
      pack signature, so two kernels whose packed types happen to match but
      whose bytes differ never share packed buffers;
    - `operand_type`: the type the GEMM operands are rounded to (f32 on the
      CPU, whose GEMMs run in f32; the storage type on tensor cores);
    - `params`: `#ffn.kernel_param`s, in argument order after the input;
    - `workspace_per_row`: bytes of workspace per token row (absent: the
      kernel takes no workspace argument);
    - `phase_units`, `bucket_max_m`: per token-count bucket, the work units
      of each phase (-n: n * m rows), and the largest m of each bucket (the last
      is unbounded, -1); absent: one indivisible call;
    - `strategy`: the schedule in words;
    - `device_module`, `launches`: a device kernel's gpu.module and its
      launch plan of `#ffn.device_launch`es.

    The function's arguments are the input, the parameters, the output, the
    workspace (if any) and, for phased kernels, the phase and its unit range
    (`index`); the verifier checks the count and each parameter's packed
    type, and after func-to-llvm the count of the memref descriptors' fields.
    The kernel glue pass of the target (`ffn-cpu-kernel-glue`,
    `ffn-gpu-kernel-glue`) consumes the attribute: it builds the entry
    points and the descriptor in the LLVM dialect from it.
  }];
  let parameters = (ins
      "int64_t":$d_model, "int64_t":$d_ff, "::mlir::Type":$storage,
      EnumParameter<Ffn_Activation>:$activation, "bool":$gated,
      "bool":$residual, OptionalParameter<"NormAttr">:$norm,
      OptionalParameter<"WeightQuantAttr">:$weight_quant,
      OptionalParameter<"MoeAttr">:$moe,
      DefaultValuedParameter<"int64_t", "0">:$groups,
      StringRefParameter<"who laid out the packed bytes (empty: ffnc)",
                         "\"\"">:$pack_layout,
      "::mlir::Type":$operand_type, "::mlir::ArrayAttr":$params,
      OptionalParameter<"std::optional<int64_t>">:$workspace_per_row,
      OptionalParameter<"::mlir::ArrayAttr">:$phase_units,
      OptionalParameter<"::mlir::DenseI64ArrayAttr">:$bucket_max_m,
      StringRefParameter<"the schedule in words">:$strategy,
      OptionalParameter<"::mlir::StringAttr">:$device_module,
      OptionalParameter<"::mlir::ArrayAttr">:$launches);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The discardable attribute's name on the kernel function.
    static constexpr ::llvm::StringLiteral kAttrName = "ffn.kernel_abi";
    /// Arguments the kernel function takes under this contract.
    int64_t numArguments() const;
    /// The same after func-to-llvm, each memref expanded to its
    /// descriptor's fields (allocated, aligned, offset, sizes, strides).
    int64_t numExpandedArguments() const;
    /// The attribute on `op`, if any.
    static KernelAbiAttr of(::mlir::Operation *op);
  }];
}

#endif // FFN_IR_FFNATTRS_TD
