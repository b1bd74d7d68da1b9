// RUN: ffn-opt %s -split-input-file --convert-func-to-llvm --ffn-gpu-kernel-glue="chip=sm_90a" -verify-diagnostics | FileCheck %s

// A device kernel's glue, after gpu-module-to-binary and the host lowering
// (here func-to-llvm on a stub and a pack function; the cubin's bytes are a
// stand-in): the cubin embedded, the launch plan, the pack entry point and
// the descriptor, with nothing of the device code or the stub left.

// CHECK-LABEL: module {
// CHECK-NOT: gpu.binary
// CHECK-NOT: llvm.func @g(
// CHECK: llvm.func internal @g_pack_0(
// CHECK: llvm.mlir.global private constant @ffn_g_cubin("\7FELF\00cubin") {addr_space = 0 : i32, alignment = 16 : i64}
// CHECK: llvm.mlir.global private constant @ffn_g_launch_args_0()
// A launch with tensor-map arguments has its table of ffn_tensor_map.
// CHECK: llvm.mlir.global private constant @ffn_g_launch_maps_0() {{.*}} : !llvm.array<1 x array<12 x i64>>
// CHECK-NEXT: llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(8 : i64) : i64
// CHECK: llvm.mlir.global private unnamed_addr constant @ffn_g_launch_kernel("up\00")
// CHECK: llvm.mlir.global private constant @ffn_g_launch_args_1()
// CHECK-NOT: @ffn_g_launch_maps_1
// CHECK: llvm.mlir.global private unnamed_addr constant @ffn_g_launch_kernel_0("down\00")
// Each launch: kernel, m range, rows per block, grid y and z, threads,
// shared bytes, its workspace bytes per row, its arguments, its tensor maps
// (none: a null table), grid.x's m scale and extra rows.
// CHECK: llvm.mlir.global private constant @ffn_g_launches() {{.*}} !llvm.array<2 x struct<(ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, ptr, i64, ptr, i64, i64, i64)>>
// CHECK: llvm.mlir.constant(256 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(1024 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(16 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT: llvm.mlir.addressof @ffn_g_launch_args_0
// CHECK-NEXT: llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: llvm.mlir.addressof @ffn_g_launch_maps_0
// CHECK: llvm.mlir.global private constant @ffn_g_cuda()
// CHECK: llvm.mlir.addressof @ffn_g_cubin
// CHECK: llvm.mlir.constant(10 : i64) : i64
// CHECK: llvm.mlir.addressof @ffn_g_launches
// CHECK-LABEL: llvm.func @ffn_g_pack(
// CHECK: llvm.call @g_pack_0(
// CHECK: llvm.mlir.global private unnamed_addr constant @ffn_g_target("nvptx-sm90a\00")
// CHECK: llvm.mlir.global external constant @ffn_kernel_g()
// CHECK: llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.mlir.addressof @ffn_g_cuda
// CHECK-NOT: gpu.container_module
module attributes {gpu.container_module} {
  gpu.binary @g_device [#gpu.object<#nvvm.target<chip = "sm_90a">, bin = "\7FELF\00cubin">]
  func.func private @g_pack_0(%src: memref<8x8xf16>, %dst: memref<64xf16>) {
    return
  }
  func.func private @g(memref<?x8xf16>, memref<64xf16>, memref<?x8xf16>, memref<?xi8>)
      attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f16, activation = relu, gated = false, residual = false, operand_type = f16, params = [#ffn.kernel_param<name = "w_up", shape = [8, 8], packed = memref<64xf16>, pack = "g_pack_0">], workspace_per_row = 16, strategy = "gpu", device_module = "g_device", launches = [#ffn.device_launch<kernel = "up", min_m = 1, max_m = 9223372036854775807, rows_per_block = 16, grid_y = 4, grid_z = 1, threads = 256, shared_bytes = 1024, workspace_per_row = 16, args = [0, 0, 1, 0, 3, 0, 5, 0], maps = [1, 0, 2, 8, 0, 1, 16, 0, 8, 16, 1, 0]>, #ffn.device_launch<kernel = "down", min_m = 1, max_m = 9223372036854775807, rows_per_block = 16, grid_y = 1, grid_z = 1, threads = 128, shared_bytes = 0, workspace_per_row = 0, args = [3, 0, 2, 0]>]>}
}

// -----

// PTX is not what the runtime loads.
module attributes {gpu.container_module} {
  // expected-error @+1 {{ffn-gpu-kernel-glue: the descriptor embeds a cubin; this gpu.binary is not one (format=bin)}}
  gpu.binary @p_device [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "// ptx">]
}

// -----

// expected-error @+1 {{ffn-gpu-kernel-glue: kernel 'lost' has no gpu.binary 'lost_device'}}
module attributes {gpu.container_module} {
  func.func private @lost(memref<?x8xf16>, memref<?x8xf16>)
      attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f16, activation = relu, gated = false, residual = false, operand_type = f16, params = [], strategy = "gpu", device_module = "lost_device", launches = []>}
}
