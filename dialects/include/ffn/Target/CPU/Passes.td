//===- Passes.td - ffn passes for x86 CPUs -----------------*- tablegen -*-===//

#ifndef FFN_TARGET_CPU_PASSES_TD
#define FFN_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def FfnSelectStrategy : Pass<"ffn-select-strategy", "func::FuncOp"> {
  let summary = "Choose the CPU schedule of each ffn.ffn";
  let description = [{
    Attaches a `#ffn.cpu_strategy` to every `ffn.ffn` that has none: the register
    tile fills the SIMD register file (32 zmm with AVX-512: 8 rows x 2
    vectors = 16 accumulators; 16 ymm with AVX2: 6 x 2 = 12), leaving room
    for the weight vectors and the broadcast. The cache block is 256 rows
    (rounded to a multiple of `mr`): a packed weight panel stays in L2
    while the block's rows stream past it, so larger blocks read the
    weights from memory fewer times. The K loop prefetches 2 KiB down the
    weight stream when the FFN's weights exceed 64 MiB (they stream from
    DRAM), and always in one-row tiles.
    The target is the module's `#ffn.target` (ffn-attach-target): its SIMD
    width, threads and machine figures. Per token-count bucket it picks the fusion: runs with `m <= fused_max_m`
    take the whole-FFN fused schedule (d_ff in chunks), larger runs the
    two-pass one. A cost model (`ffn/Target/CPU/CostModel.h`) prices both
    schedules on `threads` threads -- compute and weight traffic per parallel phase with
    the busiest thread's share, the phase boundaries, the fused schedule's
    partial outputs -- and the bucket is every m up to 16 where fused
    prices lower; it also picks the group count. `overrides` (the same
    attribute with knobs left out) fixes any choice; the rest is chosen and
    the result verified against the target.
  }];
  let options = [
    Option<"overrides", "overrides", "std::string", /*default=*/"\"\"",
           "Knobs to keep, as a #ffn.cpu_strategy with the others left out "
           "(e.g. '#ffn.cpu_strategy<mr = 4, fused_max_m = 0>')">,
    Option<"batchInvariant", "batch-invariant", "bool", /*default=*/"false",
           "Make every ffn.ffn batch-invariant (one reduction order per row "
           "for every m: never the fused schedule)">
  ];
  // `overrides` is parsed before any ffn op may have loaded the dialect.
  let dependentDialects = ["::mlir::ffn::FfnDialect"];
}

def FfnLowerPacked : Pass<"ffn-lower-packed", "ModuleOp"> {
  let summary = "Lower scheduled FFNs to packed, register-tiled vector loops";
  let description = [{
    Rewrites each FFN function whose `ffn.ffn` carries a `#ffn.cpu_strategy`
    into a kernel on memrefs that reads weights packed into `nr`-wide panels
    (`[N/nr][K][nr]`, zero-padded), plus one pack function per packed
    parameter (`<name>_pack_<param>`). Each projection is an `scf` loop nest
    (cache block of `mc` rows, weight panel, register tile of `mr`, `mr/2`,
    ..., 1 rows); each register tile is a `linalg.generic` contraction
    (`acc[r, n] += A[r, k] * W[k, n]`, gate and up in one op for gated FFNs)
    that TilingInterface (`scf::tileUsingSCF`) tiles into the K loop, one k
    per step, for `ffn-vectorize-register-tiles` to turn into FMAs on
    accumulators held in registers. Any M runs without scalar fallback.
    The bias, activation and (for gated FFNs) the gate product are applied
    to the accumulators, and the gate and up projections of a column are
    computed in the same tile. Norms, the down bias, the residual and the
    storage conversion are row loops (without a post-norm GEMM 2's
    epilogue writes y). Scratch (the f32 hidden activations) lives in a
    caller-provided workspace of `ffn.workspace_per_row` bytes per row, so
    the kernel never allocates (the only stack buffers hold the register
    tiles' accumulators, one per tile height and weight matrix, in each
    GEMM function's entry block). Each GEMM is a private function
    (`<kernel>.gemm_up`, `<kernel>.gemm_down`) called by both schedules and shared by the
    module's kernels of the same shape.
    With `fused_max_m > 0` the kernel also holds the fused schedule for runs
    of at most that many rows: d_ff in chunks, each chunk's activations
    computed into a small buffer and multiplied straight into a per-group
    partial output (W_down packed chunk-major), the partials summed in group
    order. `ffn.phase_units` and `ffn.bucket_max_m` give each bucket's phase
    table for the runtime's threads.
  }];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect",
                           "math::MathDialect", "LLVM::LLVMDialect",
                           "linalg::LinalgDialect",
                           "x86vector::X86VectorDialect"];
}

def FfnVectorizeRegisterTiles
    : Pass<"ffn-vectorize-register-tiles", "func::FuncOp"> {
  let summary = "Vectorize the packed kernels' register tiles into FMAs";
  let description = [{
    Turns each `linalg.generic` marked `ffn.register_tile` (one k-step of a
    register tile, as `ffn-lower-packed` tiles it with TilingInterface:
    `acc[r, n] += A[r, k] * W[k, n]` for one or, for gated FFNs, two
    weight matrices) into vector code with the upstream vectorizer, then
    hoists the accumulator transfers out of the enclosing K (and chunk)
    loops so the accumulators live in registers as loop-carried vectors,
    and lowers the contraction through outer products to one broadcast of
    A per row and one `vector.fma` per accumulator row and k. Fails (with
    an error on the op) if a marked op does not vectorize: there is no
    scalar fallback.
  }];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "memref::MemRefDialect", "arith::ArithDialect"];
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

def FfnExpandBf16 : Pass<"ffn-expand-bf16", "ModuleOp"> {
  let summary = "Expand the bf16 conversions a target has no instruction for";
  let description = [{
    `arith.extf` and `arith.truncf` between f32 and bf16 become integer
    operations (truncf rounds to nearest even and keeps NaN a NaN), which
    LLVM would otherwise lower to compiler-rt calls, unless the module's
    `#ffn.target` has `avx512bf16`. There they stay, and LLVM lowers truncf
    to `vcvtneps2bf16` (one instruction for 16 values instead of six; it
    rounds to nearest even as well and flushes f32 inputs below 2^-126 to
    zero, far below any error bound of docs/numerics.md) and extf to a
    shift. Host code without a target (a GPU kernel's pack functions) is
    always expanded.
  }];
  let dependentDialects = ["arith::ArithDialect"];
}

def FfnCpuKernelGlue : Pass<"ffn-cpu-kernel-glue", "ModuleOp"> {
  let summary = "Build the kernel ABI's CPU entry points and descriptors";
  let description = [{
    The last step of the CPU lowering, on the LLVM dialect: for every
    function with an `#ffn.kernel_abi` (after func-to-llvm, its memref
    arguments expanded to descriptor fields), builds the plain-pointer
    entry points of `ffn/kernel_abi.h` and the exported descriptor:

    - `ffn_<name>_phase(phase, m, x, params, y, workspace, begin, end)`:
      one phase over a unit range; it rebuilds each buffer's memref fields
      from the contract's shapes (a dense row-major buffer; `m` rows) and
      calls the kernel, renamed `__ffn_<name>_impl` and made internal;
    - `ffn_<name>_phase_units(phase, m)`: the units of a phase for `m` rows,
      from the contract's table per token-count bucket;
    - `ffn_<name>_run(m, x, params, y, workspace)`: every phase in order on
      the calling thread;
    - `ffn_<name>_pack(index, src, dst)`: a parameter through its pack
      function (made internal) or copied as it is;
    - `ffn_kernel_<name>`: the `ffn_kernel_desc` (model, parameters,
      workspace, strategy, the `ffn_cpu_code` entry), its `target` the
      module's `#ffn.target` isa.

    The contract attributes are consumed: the module's `ffn.target` and the
    functions' `ffn.kernel_abi` are removed. A kernel without code (a device
    kernel's contract), a module without a target or a name the ABI
    reserves already in use is an error.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // FFN_TARGET_CPU_PASSES_TD
