//===- Passes.td - ffn passes for NVIDIA GPUs ---------------*- tablegen -*-===//

#ifndef FFN_TARGET_GPU_PASSES_TD
#define FFN_TARGET_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

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

    Token counts are split into buckets (decode, medium, large) with their
    own row-tile height and split-K factor, chosen from `sm-count`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "the SM architecture (sm_80, sm_90, sm_90a)">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"132",
           "multiprocessors of the device the split-K factors are sized for">
  ];
  let dependentDialects = ["gpu::GPUDialect", "NVVM::NVVMDialect",
                           "nvgpu::NVGPUDialect", "LLVM::LLVMDialect",
                           "scf::SCFDialect", "memref::MemRefDialect",
                           "vector::VectorDialect", "math::MathDialect",
                           "arith::ArithDialect", "func::FuncDialect"];
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
