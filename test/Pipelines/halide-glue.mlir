// RUN: ffn-opt %s --ffn-halide-pipeline | FileCheck %s

// ffn-halide-pipeline: ffn-halide-lower, then the CPU back end's LLVM
// lowering and ffn-cpu-kernel-glue as they are. The Halide kernel gets the
// same entry points and descriptor as an ffnc kernel; only its pack
// signature says who laid the packed bytes out, so ffn_kernel_share_params
// never binds it to an ffnc kernel whose packed types happen to match.

// The request stays on the module for ffnc (which takes it off before the
// LLVM stages); the contract and the target are consumed.
// CHECK-LABEL: module attributes {ffn.halide_request = "protocol 1\0A
// CHECK-NOT: ffn.target
// CHECK-NOT: ffn.kernel_abi
// CHECK-NOT: func.func
// The pack adapters and the stub, reached only through the entry points.
// CHECK: llvm.func internal @k_pack_w_up(
// CHECK: llvm.call @__ffnh_k_pack_w_up(
// CHECK: llvm.func internal @k_pack_w_gate(
// CHECK: llvm.func internal @k_pack_w_down(
// CHECK: llvm.func internal @__ffn_k_impl(
// CHECK: llvm.call @__ffnh_k_norm_in(
// CHECK: llvm.call @__ffnh_k_up(
// CHECK: llvm.call @__ffnh_k_down(
// The pipelines stay external: ffnc links the generator's objects.
// CHECK: llvm.func @__ffnh_k_up(i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.func @ffn_k_phase(
// CHECK: llvm.call @__ffn_k_impl(
// CHECK: llvm.mlir.global private constant @ffn_k_phase_table() {{.*}} : !llvm.array<4 x i64>
// CHECK: llvm.func @ffn_k_phase_units(
// CHECK: llvm.func @ffn_k_run(
// CHECK: llvm.func @ffn_k_pack(
// CHECK: llvm.call @k_pack_w_up(
// CHECK: @ffn_k_pack_signature("f32;operands f32;w_up[64x200]=memref<13x64x16xf32>,packed;w_gate[64x200]=memref<13x64x16xf32>,packed;w_down[200x64]=memref<2x200x32xf32>,packed;norm_scale[64]=memref<64xf32>;layout halide-panels-1\00")
// CHECK: @ffn_k_strategy("halide 14 two-pass: 512-bit vectors, register tile 8x32 (gate+up 16+16), 256-row blocks, no prefetch, phases split by the runtime's threads; f32 sums, strict epilogues\00")
// CHECK: llvm.mlir.global external constant @ffn_kernel_k()

module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @k(%x: tensor<?x64xf32> {ffn.param = "input"}, %wu: tensor<64x200xf32> {ffn.param = "w_up"}, %wg: tensor<64x200xf32> {ffn.param = "w_gate"}, %wd: tensor<200x64xf32> {ffn.param = "w_down"}, %s: tensor<64xf32> {ffn.param = "norm_scale"}) -> tensor<?x64xf32> {
  %y = ffn.ffn gated silu residual norm<rmsnorm, pre, eps = 1.0e-05> ins(%x : tensor<?x64xf32>) up(%wu : tensor<64x200xf32>) gate(%wg : tensor<64x200xf32>) down(%wd : tensor<200x64xf32>) norm_scale(%s : tensor<64xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
}
