//===- Passes.td - ffn passes for the Halide back end ------*- tablegen -*-===//

#ifndef FFN_TARGET_HALIDE_PASSES_TD
#define FFN_TARGET_HALIDE_PASSES_TD

include "mlir/Pass/PassBase.td"

def FfnHalideLower : Pass<"ffn-halide-lower", "ModuleOp"> {
  let summary = "Lower each dense ffn.ffn to calls of Halide pipelines";
  let description = [{
    The Halide back end's half inside ffnc (docs/plans/halide-backend.md
    §5). Replaces every function holding one dense `ffn.ffn` by a kernel
    function in the CPU back end's calling convention (input, parameters,
    output, workspace, phase, begin, end) carrying `#ffn.kernel_abi`,
    whose body builds `halide_buffer_t`s on the stack and calls the
    ahead-of-time compiled pipelines `__ffnh_<name>_<role>` that
    ffnc-halide-gen makes from the request this pass writes into the
    module attribute `ffn.halide_request` (halide/protocol/HalideProtocol.h:
    the pipelines and their arguments come from `pipelinesOf`, which the
    generator runs too). The normal CPU LLVM lowering and
    `ffn-cpu-kernel-glue` then build the entry points and the descriptor.

    With `schedule=strategy` each FFN needs a `#ffn.cpu_strategy` (two-pass:
    fused_max_m = 0, no bf16_dot, no sparse_max_m): the kernel has four
    phases (pre-norm rows, up panels, down panels, post-norm rows), the
    panel phases call their pipeline once per block of `mc` rows, and the
    weight matrices are packed panel-major by Halide pack pipelines through
    pack adapters `<name>_pack_<param>` (`pack_layout = "halide-panels-1"`).
    With an autoscheduler's name (`mullapudi2016`, `li2018`, `adams2019`)
    each FFN must have no strategy: one `whole` pipeline on unpacked weights
    runs over the rows of a call, on Halide's own thread pool of `threads`
    threads, scheduled for `m-estimate` rows.

    Mixtures of experts, grouped FFNs, quantized weights and strategies
    with a fused, sparse or bf16-dot schedule are refused at the op.
  }];
  let options = [
    Option<"schedule", "schedule", "std::string", /*default=*/"\"strategy\"",
           "strategy (the op's #ffn.cpu_strategy) or an autoscheduler: "
           "mullapudi2016, li2018, adams2019">,
    Option<"mEstimate", "m-estimate", "int64_t", /*default=*/"64",
           "rows the autoscheduler's estimates assume">,
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "threads of Halide's pool an autoscheduled kernel runs on">,
    Option<"testBug", "test-bug", "std::string", /*default=*/"\"\"",
           "tests of the oracle only: drop-last-k-after-row-0 or bias-shift">
  ];
  let dependentDialects = ["LLVM::LLVMDialect", "memref::MemRefDialect",
                           "scf::SCFDialect", "arith::ArithDialect",
                           "func::FuncDialect"];
}

#endif // FFN_TARGET_HALIDE_PASSES_TD
