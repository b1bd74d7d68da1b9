// REQUIRES: ptxas
// RUN: ffn-opt %s -split-input-file --ffn-gpu-ptxas-feedback="toolkit=%cuda_home format=isa" -verify-diagnostics | FileCheck %s
// RUN: ffn-opt %s -split-input-file --ffn-gpu-ptxas-feedback="toolkit=%cuda_home format=bin" -verify-diagnostics | FileCheck %s --check-prefix=BIN

// ptxas assembles each gpu.binary's PTX; a kernel it reports spilling or
// keeping a stack frame gets .minnctapersm one block below what its
// registers and threads allowed (8 registers, 256 threads: eight blocks,
// by the 2048 threads an SM), then one fewer each round while the report
// stays, four times; the binary lists it. `plain` (no stack) is left
// alone. A local array's stack frame stays whatever the hint: the note
// says so. `stack2d`'s block is 32 x 4 threads: 16 blocks, hints 15 to 12.
// CHECK-LABEL: gpu.binary @k_device
// CHECK-SAME: ffn.ptxas_feedback = ["stack: ptxas spilled 0 bytes (256-byte stack frame) at 8 registers; assembled for 4 blocks an SM; still 0 spill bytes, a 256-byte stack frame", "stack2d: ptxas spilled 0 bytes (64-byte stack frame) at 8 registers; assembled for 12 blocks an SM; still 0 spill bytes, a 64-byte stack frame"]
// CHECK-SAME: assembly = "
// CHECK-SAME: .entry stack(
// CHECK-SAME: .maxntid 256, 1, 1\0A.minnctapersm 4\0A{
// CHECK-SAME: .entry plain(
// CHECK-SAME: .maxntid 128, 1, 1\0A{
// CHECK-SAME: .entry stack2d(
// CHECK-SAME: .maxntid 32, 4, 1\0A.minnctapersm 12\0A{
// With format=bin the object is ptxas's cubin.
// BIN-LABEL: gpu.binary @k_device
// BIN-SAME: bin = "\7FELF
module attributes {gpu.container_module} {
  gpu.binary @k_device [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, assembly = ".version 8.0\0A.target sm_80\0A.address_size 64\0A\0A.visible .entry stack(\0A\09.param .u64 stack_param_0,\0A\09.param .u32 stack_param_1\0A)\0A.maxntid 256, 1, 1\0A{\0A\09.local .align 4 .b8 buf[256];\0A\09.reg .b32 %r<4>;\0A\09.reg .b64 %rd<6>;\0A\09ld.param.u64 %rd1, [stack_param_0];\0A\09ld.param.u32 %r1, [stack_param_1];\0A\09mov.u64 %rd2, buf;\0A\09mul.wide.u32 %rd3, %r1, 4;\0A\09add.s64 %rd4, %rd2, %rd3;\0A\09st.local.u32 [%rd4], %r1;\0A\09ld.local.u32 %r2, [buf+4];\0A\09cvta.to.global.u64 %rd5, %rd1;\0A\09st.global.u32 [%rd5], %r2;\0A\09ret;\0A}\0A\0A.visible .entry plain(\0A\09.param .u64 plain_param_0\0A)\0A.maxntid 128, 1, 1\0A{\0A\09.reg .b64 %rd<3>;\0A\09ld.param.u64 %rd1, [plain_param_0];\0A\09cvta.to.global.u64 %rd2, %rd1;\0A\09st.global.u32 [%rd2], 7;\0A\09ret;\0A}\0A\0A.visible .entry stack2d(\0A\09.param .u64 stack2d_param_0,\0A\09.param .u32 stack2d_param_1\0A)\0A.maxntid 32, 4, 1\0A{\0A\09.local .align 4 .b8 buf[64];\0A\09.reg .b32 %r<4>;\0A\09.reg .b64 %rd<6>;\0A\09ld.param.u64 %rd1, [stack2d_param_0];\0A\09ld.param.u32 %r1, [stack2d_param_1];\0A\09mov.u64 %rd2, buf;\0A\09mul.wide.u32 %rd3, %r1, 4;\0A\09add.s64 %rd4, %rd2, %rd3;\0A\09st.local.u32 [%rd4], %r1;\0A\09ld.local.u32 %r2, [buf+4];\0A\09cvta.to.global.u64 %rd5, %rd1;\0A\09st.global.u32 [%rd5], %r2;\0A\09ret;\0A}\0A">]
}

// -----

// PTX that ptxas rejects: an error naming the binary, with ptxas's log.
module attributes {gpu.container_module} {
  // expected-error @+1 {{ptxas could not assemble bad_device: ptxas failed}}
  gpu.binary @bad_device [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, assembly = ".version 8.0\0A.target sm_80\0Anot ptx\0A">]
}

// -----

// Only PTX comes in (gpu-module-to-binary with format=isa).
module attributes {gpu.container_module} {
  // expected-error @+1 {{expected PTX from gpu-module-to-binary (format=isa) before ffn-gpu-ptxas-feedback}}
  gpu.binary @cubin_device [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, bin = "\7FELF">]
}
