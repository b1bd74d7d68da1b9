//===- Passes.td - ffn passes for NVIDIA GPUs ---------------*- tablegen -*-===//

#ifndef FFN_TARGET_GPU_PASSES_TD
#define FFN_TARGET_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def FfnGpuSelectStrategy
    : Pass<"ffn-gpu-select-strategy", "func::FuncOp"> {
  let summary = "Choose the NVIDIA back end's #ffn.gpu_strategy of each FFN";
  let description = [{
    Sets `strategy` on every `ffn.ffn` that has none to a complete
    `#ffn.gpu_strategy`: per token-count bucket the block tile the GPU cost
    model prices fastest at the bucket's largest m, the deepest cp.async
    ring the chip's shared memory holds, the MMA instruction (wgmma for the
    wide tile on sm_90a) and the K split of each GEMM where the bucket's
    grid would leave SMs idle. The chip is the module's `#ffn.target`
    (`nvptx-sm80`, `nvptx-sm90`, `nvptx-sm90a`); the device's figures are
    the chip's nominal board (ffn/Target/GPU/CostModel.h).

    `overrides` (the text of an `#ffn.gpu_strategy` without buckets) fixes
    knobs the model then does not choose; one that cannot hold for an FFN
    (a tile not built for its dtype, wgmma off sm_90a, a K split beyond its
    K tiles, bounds or a split for a batch_invariant FFN) is an error at
    the op. A strategy already on an op is checked against the target.
  }];
  let options = [
    Option<"overrides", "overrides", "std::string", /*default=*/"\"\"",
           "an #ffn.gpu_strategy whose knobs the model keeps">
  ];
  let dependentDialects = ["::mlir::ffn::FfnDialect"];
}

def FfnGpuTensorMapParams
    : Pass<"ffn-gpu-tensor-map-params", "::mlir::LLVM::LLVMFuncOp"> {
  let summary = "Pass TMA tensor maps to kernels by value (__grid_constant__)";
  let description = [{
    Runs on the kernels after `convert-gpu-to-nvvm`. A kernel whose
    `ffn.tensor_map_args` lists argument positions (written by the GEMM
    builder: its tensor-map arguments among the lowered ones, each rank-1
    memref counted as five) gets, on each of those `!llvm.ptr` arguments,
    `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64` and
    `nvvm.grid_constant`: NVPTX then declares a 128-byte, 64-byte aligned
    `.param` array that cuLaunchKernel fills from the runtime's encoded
    CUtensorMap, and the kernel's TMA copies name it in place (the PTX ISA
    allows a tensor map in the kernel parameter space). The list is
    removed. A listed position that is not an `!llvm.ptr` argument is an
    error. The upstream lowering keeps no other argument attribute of a
    `gpu.func` that could carry this, hence the function attribute.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def FfnGpuDependentLaunch
    : Pass<"ffn-gpu-dependent-launch", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Let each kernel overlap its launch with the one before it "
                "(sm_90 programmatic dependent launch)";
  let description = [{
    On a module whose `#nvvm.target` chip is sm_90 or later, every kernel
    starts with `nvvm.griddepcontrol launch_dependents` and then
    `nvvm.griddepcontrol wait`, before anything else it does. The runtime
    launches the kernels of such a target with programmatic stream
    serialization (kernel ABI 14): the next launch's blocks may then be
    placed on SMs as this grid's finish, and the wait holds each of them
    until every earlier grid on the stream has completed and its memory
    is visible, so no kernel reads its input or writes its output early.
    What is saved is the gap between one grid's last block and the next
    grid's first (a launch's latency, several microseconds at decode).
    Because the wait comes first in every block, a grid whose blocks leave
    early still completes only after its predecessor, so the order is
    transitive along the stream. Modules for earlier chips are left
    unchanged (the instructions need sm_90).
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def FfnGpuLower : Pass<"ffn-gpu-lower", "ModuleOp"> {
  let summary = "Lower each ffn.ffn to NVIDIA GPU kernels and a launch plan";
  let description = [{
    Replaces every function built from an ffn spec by:

    - a `gpu.module @<name>_device` carrying `#nvvm.target<chip = ...>` with
      the FFN's kernels: an optional row kernel (pre-norm, or padding an
      input whose width is not a multiple of 8), the up (and gate) GEMM with
      its epilogue in registers (bias, activation, gate product, storage
      conversion), the down GEMM with bias and residual, split-K reductions
      where a bucket's grid would leave SMs idle, and an optional post-norm
      row kernel. bf16/f16 GEMMs use tensor cores (`ldmatrix` +
      `mma.sync.m16n8k16`, f32 accumulators) fed by a multi-stage `cp.async`
      ring; f32 GEMMs use the same tiles with FMA (no TF32);
    - one host `func.func @<name>_pack_<param>` per parameter (weights
      transposed to K-major rows, gate and up interleaved in groups of 8
      columns, everything zero-padded to whole tiles);
    - a body-less `func.func @<name>` keeping the kernel's calling
      convention (packed parameter shapes) with `ffn.kernel`, `ffn.pack`,
      `ffn.workspace_per_row` and `ffn.device_launches` (one dictionary per
      kernel launch: entry, grid, block, shared memory, the token-count
      bucket it belongs to, and its arguments), read by the kernel glue.

    Token counts are split into the buckets of the op's complete
    `#ffn.gpu_strategy` (ffn-gpu-select-strategy), each with its own block
    tile, ring depth, MMA instruction and K splits; a strategy the kernels
    cannot be built from for this FFN and chip is an error.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "the SM architecture (sm_80, sm_90, sm_90a)">
  ];
  let dependentDialects = ["gpu::GPUDialect", "NVVM::NVVMDialect",
                           "nvgpu::NVGPUDialect", "LLVM::LLVMDialect",
                           "scf::SCFDialect", "memref::MemRefDialect",
                           "vector::VectorDialect", "math::MathDialect",
                           "arith::ArithDialect", "func::FuncDialect"];
}

def FfnGpuPtxasFeedback : Pass<"ffn-gpu-ptxas-feedback", "ModuleOp"> {
  let summary = "Assemble each device module's PTX with ptxas; re-hint the "
                "kernels ptxas spilled";
  let description = [{
    Runs after `gpu-module-to-binary{format=isa}`. Each `gpu.binary`'s PTX
    is assembled with the toolkit's ptxas with upstream's arguments
    (`-arch <chip> --opt-level <O>` of its `#nvvm.target`) and `-v`, and
    the report read. Left without a hint, ptxas sometimes budgets a
    kernel's registers for more resident blocks than its shared memory
    allows and spills; no static rule in the lowering predicts which
    kernels (docs/gpu.md). A kernel that spilled or kept a stack frame gets
    `.minnctapersm` one block below what its register count allowed (at
    least 1) and the module is assembled again, up to four rounds. The
    binary's `ffn.ptxas_feedback` lists each such kernel (ffnc prints it).
    With `format=bin` the objects become the cubins; with `format=isa`
    they stay PTX, with the hints, so `--emit=ptx` shows what is
    assembled. A ptxas failure is an error carrying its log.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"/usr/local/cuda\"",
           "The CUDA toolkit whose bin/ptxas runs">,
    Option<"format", "format", "std::string", /*default=*/"\"bin\"",
           "isa (keep the hinted PTX) or bin (cubins)">,
  ];
}

def FfnGpuKernelGlue : Pass<"ffn-gpu-kernel-glue", "ModuleOp"> {
  let summary = "Embed the cubins and build the kernel ABI's descriptors";
  let description = [{
    The host side's last step for NVIDIA targets, on the LLVM dialect after
    `gpu-module-to-binary` (as a cubin) and the host lowering: for every
    kernel stub with an `#ffn.kernel_abi` naming a `device_module`, embeds
    that `gpu.binary`'s cubin (16-byte aligned: the driver reads its ELF
    headers in place), writes the launch plan as `ffn_device_launch`es,
    builds `ffn_<name>_pack(index, src, dst)` and the exported
    `ffn_kernel_<name>` descriptor with its `ffn_cuda_code` entry, its
    `target` named after `chip`. The stubs, the `gpu.binary` ops and the
    module's `gpu.container_module` are removed, leaving host code only.
    A contract without a device module, a missing binary or one that is
    not a cubin (PTX from `format=isa`) is an error.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The GPU the cubins are for: sm_80, sm_90 or sm_90a">
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // FFN_TARGET_GPU_PASSES_TD
