//===- Passes.td - target-neutral ffn passes ---------------*- tablegen -*-===//

#ifndef FFN_TRANSFORMS_PASSES_TD
#define FFN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FfnAttachTarget : Pass<"ffn-attach-target", "ModuleOp"> {
  let summary = "Attach the #ffn.target the module is compiled for";
  let description = [{
    Sets the module's `ffn.target` attribute, which strategy selection
    reads: the target's name, its SIMD width (from the name: 512 for
    `x86-64-avx512`, 256 for `x86-64-avx2`, 0 for `nvptx-*`), the threads
    the kernels will run on and the machine figures the cost model prices
    for (nominal where not given; `ffnc --machine=FILE` gives a profile
    `ffnc probe` measured). A module that already has a target keeps it
    when no `isa` is given; asked for another target, the pass fails rather
    than compile for one the caller did not ask for.
  }];
  let options = [
    Option<"isa", "isa", "std::string", /*default=*/"\"\"",
           "The target: x86-64-avx512 (the default), x86-64-avx2, nvptx-sm80, "
           "nvptx-sm90, nvptx-sm90a">,
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads the kernels will run on">,
    Option<"peakGflops", "peak-gflops", "double", /*default=*/"0",
           "One thread's f32 FMA peak in GFLOP/s (0: nominal)">,
    Option<"dramGBs", "dram-gbs", "double", /*default=*/"0",
           "Read bandwidth from memory in GB/s (0: nominal)">,
    Option<"cacheGBs", "cache-gbs", "double", /*default=*/"0",
           "Read bandwidth from cache per thread in GB/s (0: nominal)">,
    Option<"syncMicros", "sync-us", "double", /*default=*/"-1",
           "One phase hand-off of the thread pool in us (-1: nominal)">,
  ];
  // The module may hold no ffn op yet (the attribute needs the dialect).
  let dependentDialects = ["::mlir::ffn::FfnDialect"];
}

def FfnDropAnnotations : Pass<"ffn-drop-annotations", "ModuleOp"> {
  let summary = "Drop the passes' ffn.* markers before the LLVM lowering";
  let description = [{
    Removes every discardable `ffn.*` attribute of a function and every
    `ffn.param` argument attribute: markers the ffn passes leave for each
    other, of no use below them. The kernel contract stays for the target's
    kernel glue pass, which consumes it after func-to-llvm: each kernel
    function's `ffn.kernel_abi` and the module's `ffn.target`.
  }];
}

def FfnLoopAnnotationsToBranches
    : Pass<"ffn-loop-annotations-to-branches", "ModuleOp"> {
  let summary = "Move loop annotations onto the branches LLVM IR reads";
  let description = [{
    scf-to-cf carries an `scf.for`'s `llvm.loop_annotation` to the loop's
    back edge as a discardable attribute of the `llvm.br`; LLVM IR
    translation reads the branch's own `loop_annotation` property. This
    moves one to the other, so the annotations ffn-lower-packed sets (no
    unrolling, no re-vectorization of register-tile loops) reach LLVM.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
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

def FfnWorkspaceAllocs : Pass<"ffn-workspace-allocs", "func::FuncOp"> {
  let summary = "Serve a bufferized kernel's scratch buffers from a workspace";
  let description = [{
    For an `ffn.kernel` function without a workspace (the baseline path,
    after bufferization): every `memref.alloc` of `[m, ...]` (m = the
    input's row count; static trailing sizes, identity layout) becomes a
    `memref.view` of its own 64-byte aligned section of a new trailing
    `memref<?xi8>` argument (`ffn.param = "workspace"`), and the function
    gets `ffn.workspace_per_row`. The runtime keeps that workspace between
    runs, so the kernel does no heap allocation. A function with any other
    allocation is left as it is, with a warning naming the allocation.
  }];
  let dependentDialects = ["memref::MemRefDialect", "arith::ArithDialect"];
}

#endif // FFN_TRANSFORMS_PASSES_TD
