//===- Passes.td - target-neutral ffn passes ---------------*- tablegen -*-===//

#ifndef FFN_TRANSFORMS_PASSES_TD
#define FFN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FfnDropAnnotations : Pass<"ffn-drop-annotations", "ModuleOp"> {
  let summary = "Drop the ffn.* annotations once the kernel glue has read them";
  let description = [{
    Removes every discardable `ffn.*` attribute of a function and every
    `ffn.param` argument attribute. They describe the kernel contract
    (parameters, pack functions, workspace, phases, strategy) to ffnc's
    kernel glue, which reads them before the LLVM lowering; LLVM IR
    translation has no use for them.
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
