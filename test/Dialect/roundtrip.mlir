// RUN: ffn-opt %s | FileCheck %s
// RUN: ffn-opt %s | ffn-opt | FileCheck %s
// RUN: ffn-opt %s -mlir-print-op-generic | ffn-opt | FileCheck %s
// Custom and generic forms of ffn.ffn print and parse back unchanged.

// CHECK-LABEL: func.func @plain
// CHECK: ffn.ffn relu ins(%{{.*}} : tensor<?x16xf32>) up(%{{.*}} : tensor<16x64xf32>) down(%{{.*}} : tensor<64x16xf32>) -> tensor<?x16xf32>
func.func @plain(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<?x16xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @static_m_gelu_tanh_biases
// CHECK: ffn.ffn gelu_tanh ins(%{{.*}} : tensor<4x16xf16>) up(%{{.*}} : tensor<16x64xf16>) down(%{{.*}} : tensor<64x16xf16>) bias_up(%{{.*}} : tensor<64xf16>) bias_down(%{{.*}} : tensor<16xf16>) -> tensor<4x16xf16>
func.func @static_m_gelu_tanh_biases(%x: tensor<4x16xf16>, %w1: tensor<16x64xf16>, %w2: tensor<64x16xf16>, %b1: tensor<64xf16>, %b2: tensor<16xf16>) -> tensor<4x16xf16> {
  %y = ffn.ffn gelu_tanh ins(%x : tensor<4x16xf16>) up(%w1 : tensor<16x64xf16>) down(%w2 : tensor<64x16xf16>) bias_up(%b1 : tensor<64xf16>) bias_down(%b2 : tensor<16xf16>) -> tensor<4x16xf16>
  return %y : tensor<4x16xf16>
}

// CHECK-LABEL: func.func @swiglu_rmsnorm_residual
// CHECK: ffn.ffn gated silu residual norm<rmsnorm, pre, eps = 1.0e-06> ins(%{{.*}} : tensor<?x16xbf16>) up(%{{.*}} : tensor<16x48xbf16>) gate(%{{.*}} : tensor<16x48xbf16>) down(%{{.*}} : tensor<48x16xbf16>) norm_scale(%{{.*}} : tensor<16xbf16>) -> tensor<?x16xbf16>
func.func @swiglu_rmsnorm_residual(%x: tensor<?x16xbf16>, %wu: tensor<16x48xbf16>, %wg: tensor<16x48xbf16>, %wd: tensor<48x16xbf16>, %g: tensor<16xbf16>) -> tensor<?x16xbf16> {
  %y = ffn.ffn gated silu residual norm<rmsnorm, pre, eps = 1.0e-6> ins(%x : tensor<?x16xbf16>) up(%wu : tensor<16x48xbf16>) gate(%wg : tensor<16x48xbf16>) down(%wd : tensor<48x16xbf16>) norm_scale(%g : tensor<16xbf16>) -> tensor<?x16xbf16>
  return %y : tensor<?x16xbf16>
}

// CHECK-LABEL: func.func @activation_sparsity
// CHECK: ffn.ffn gated relu activation_sparsity 9.000000e-01 ins(
// CHECK-SAME: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0, sparse_max_m = 2>
func.func @activation_sparsity(%x: tensor<?x16xf32>, %wu: tensor<16x48xf32>, %wg: tensor<16x48xf32>, %wd: tensor<48x16xf32>) -> tensor<?x16xf32> {
  %y = ffn.ffn gated relu activation_sparsity 0.9 ins(%x : tensor<?x16xf32>) up(%wu : tensor<16x48xf32>) gate(%wg : tensor<16x48xf32>) down(%wd : tensor<48x16xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0, sparse_max_m = 2> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @batch_invariant
// CHECK: ffn.ffn gated silu residual batch_invariant ins(
func.func @batch_invariant(%x: tensor<?x16xf32>, %wu: tensor<16x48xf32>, %wg: tensor<16x48xf32>, %wd: tensor<48x16xf32>) -> tensor<?x16xf32> {
  %y = ffn.ffn gated silu residual batch_invariant ins(%x : tensor<?x16xf32>) up(%wu : tensor<16x48xf32>) gate(%wg : tensor<16x48xf32>) down(%wd : tensor<48x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @geglu_all_biases_layernorm_post
// CHECK: ffn.ffn gated gelu norm<layernorm, post, eps = 1.0e-12> ins({{.*}}) up({{.*}}) gate({{.*}}) down({{.*}}) bias_up(%{{.*}} : tensor<48xf32>) bias_gate(%{{.*}} : tensor<48xf32>) bias_down(%{{.*}} : tensor<16xf32>) norm_scale(%{{.*}} : tensor<16xf32>) norm_shift(%{{.*}} : tensor<16xf32>) -> tensor<?x16xf32>
func.func @geglu_all_biases_layernorm_post(%x: tensor<?x16xf32>, %wu: tensor<16x48xf32>, %wg: tensor<16x48xf32>, %wd: tensor<48x16xf32>, %bu: tensor<48xf32>, %bg: tensor<48xf32>, %bd: tensor<16xf32>, %s: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %y = ffn.ffn gated gelu norm<layernorm, post, eps = 1.0e-12> ins(%x : tensor<?x16xf32>) up(%wu : tensor<16x48xf32>) gate(%wg : tensor<16x48xf32>) down(%wd : tensor<48x16xf32>) bias_up(%bu : tensor<48xf32>) bias_gate(%bg : tensor<48xf32>) bias_down(%bd : tensor<16xf32>) norm_scale(%s : tensor<16xf32>) norm_shift(%b : tensor<16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// Every activation keyword parses.
// CHECK-LABEL: func.func @activations
// CHECK: ffn.ffn sigmoid
// CHECK: ffn.ffn identity
// CHECK: ffn.ffn gated relu
// CHECK: ffn.ffn gelu
func.func @activations(%x: tensor<?x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) {
  %0 = ffn.ffn sigmoid ins(%x : tensor<?x8xf32>) up(%w1 : tensor<8x8xf32>) down(%w2 : tensor<8x8xf32>) -> tensor<?x8xf32>
  %1 = ffn.ffn identity ins(%x : tensor<?x8xf32>) up(%w1 : tensor<8x8xf32>) down(%w2 : tensor<8x8xf32>) -> tensor<?x8xf32>
  %2 = ffn.ffn gated relu ins(%x : tensor<?x8xf32>) up(%w1 : tensor<8x8xf32>) gate(%w1 : tensor<8x8xf32>) down(%w2 : tensor<8x8xf32>) -> tensor<?x8xf32>
  %3 = ffn.ffn gelu ins(%x : tensor<?x8xf32>) up(%w1 : tensor<8x8xf32>) down(%w2 : tensor<8x8xf32>) -> tensor<?x8xf32>
  return
}

// The norm attribute also stands alone.
// CHECK-LABEL: func.func @norm_attr
// CHECK-SAME: attributes {n = #ffn.norm<layernorm, pre, eps = 1.0e-05>}
func.func @norm_attr() attributes {n = #ffn.norm<layernorm, pre, eps = 0.00001>} {
  return
}

// The kernel contract, a CPU one (phased, with a workspace) and a device one
// (with its launch plan), print and parse back unchanged.
// CHECK-LABEL: func.func @cpu_kernel
// CHECK-SAME: ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 16, storage = bf16, activation = silu, gated = true, residual = true, norm = <rmsnorm, pre, eps = 1.0e-06>, operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [8, 16], packed = memref<1x8x16xbf16>, pack = "cpu_kernel_pack_w_up">, #ffn.kernel_param<name = "norm_scale", shape = [8], packed = memref<8xbf16>>], workspace_per_row = 128, phase_units = [array<i64: -1, 0, 0, 2, -1>, array<i64: -1, 1, 1, 0, 0>], bucket_max_m = [4, -1], strategy = "packed">
func.func @cpu_kernel(%x: memref<?x8xbf16>, %w: memref<1x8x16xbf16>, %s: memref<8xbf16>, %y: memref<?x8xbf16>, %ws: memref<?xi8>, %phase: index, %begin: index, %end: index)
    attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 16, storage = bf16, activation = silu, gated = true, residual = true, norm = <rmsnorm, pre, eps = 1.0e-06>, operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [8, 16], packed = memref<1x8x16xbf16>, pack = "cpu_kernel_pack_w_up">, #ffn.kernel_param<name = "norm_scale", shape = [8], packed = memref<8xbf16>>], workspace_per_row = 128, phase_units = [array<i64: -1, 0, 0, 2, -1>, array<i64: -1, 1, 1, 0, 0>], bucket_max_m = [4, -1], strategy = "packed">} {
  return
}

// A contract whose packed bytes another back end lays out names that
// packing (pack_layout, elided when empty as above).
// CHECK-LABEL: func.func @halide_kernel
// CHECK-SAME: norm = <rmsnorm, pre, eps = 1.0e-06>, pack_layout = "halide-panels-1", operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [8, 16], packed = memref<1x8x16xbf16>, pack = "halide_kernel_pack_w_up">
func.func @halide_kernel(%x: memref<?x8xbf16>, %w: memref<1x8x16xbf16>, %y: memref<?x8xbf16>, %ws: memref<?xi8>, %phase: index, %begin: index, %end: index)
    attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 16, storage = bf16, activation = relu, gated = false, residual = false, norm = <rmsnorm, pre, eps = 1.0e-06>, pack_layout = "halide-panels-1", operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [8, 16], packed = memref<1x8x16xbf16>, pack = "halide_kernel_pack_w_up">], workspace_per_row = 128, phase_units = [array<i64: -1, 1, 1, 0>], bucket_max_m = [-1], strategy = "halide">} {
  return
}

// CHECK-LABEL: func.func private @device_kernel
// CHECK-SAME: operand_type = f16
// CHECK-SAME: device_module = "device_kernel_device", launches = [#ffn.device_launch<kernel = "up", min_m = 1, max_m = 16, rows_per_block = 16, grid_y = 4, grid_z = 1, threads = 256, shared_bytes = 1024, workspace_per_row = 0, args = [1, 0, 3, 0]>]
func.func private @device_kernel(memref<?x8xf16>, memref<?x8xf16>, memref<?xi8>)
    attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f16, activation = relu, gated = false, residual = false, operand_type = f16, params = [], workspace_per_row = 0, strategy = "gpu", device_module = "device_kernel_device", launches = [#ffn.device_launch<kernel = "up", min_m = 1, max_m = 16, rows_per_block = 16, grid_y = 4, grid_z = 1, threads = 256, shared_bytes = 1024, workspace_per_row = 0, args = [1, 0, 3, 0]>]>}

// The target and a strategy on an op, complete; an override with knobs left
// out (prefetch given as 1 prints as true); machine figures that are not
// given are the nominal ones.
// CHECK-LABEL: module @targeted
// CHECK-SAME: ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 4, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 0.5>
// CHECK-SAME: test.override = #ffn.cpu_strategy<mr = 4, prefetch = true, fused_max_m = 8>
// CHECK: strategy #ffn.cpu_strategy<vector_bits = 256, mr = 6, nr = 16, mc = 252, prefetch = false, fused_max_m = 4, chunk = 32, groups = 2>
module @targeted attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 4, sync_us = 0.5>, test.override = #ffn.cpu_strategy<fused_max_m = 8, prefetch = 1, mr = 4>} {
  func.func @scheduled(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<?x16xf32> {
    %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) strategy #ffn.cpu_strategy<vector_bits = 256, mr = 6, nr = 16, mc = 252, prefetch = false, fused_max_m = 4, chunk = 32, groups = 2> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
}

// CHECK-LABEL: func.func @quantized
// CHECK: ffn.ffn gated silu weights <int4, group = 32> ins(%{{.*}} : tensor<?x16xbf16>)
func.func @quantized(%x: tensor<?x16xbf16>, %wu: tensor<16x64xbf16>, %wg: tensor<16x64xbf16>, %wd: tensor<64x16xbf16>) -> tensor<?x16xbf16> {
  %y = ffn.ffn gated silu weights <int4, group = 32> ins(%x : tensor<?x16xbf16>) up(%wu : tensor<16x64xbf16>) gate(%wg : tensor<16x64xbf16>) down(%wd : tensor<64x16xbf16>) -> tensor<?x16xbf16>
  return %y : tensor<?x16xbf16>
}

// Integer dot products: the int8_activations flag prints only when set.
// CHECK-LABEL: func.func @quantized_activations
// CHECK: ffn.ffn relu weights <int8, group = 128, int8_activations = true> ins(
// CHECK: ffn.ffn relu weights <int4, group = 64, zero_points = true> ins(
func.func @quantized_activations(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<?x16xf32> {
  %y = ffn.ffn relu weights <int8, group = 128, int8_activations = true> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  %z = ffn.ffn relu weights <int4, group = 64, zero_points = true> ins(%y : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return %z : tensor<?x16xf32>
}

// A mixture of experts: stacked expert weights and biases (2 routed + 1
// shared), the router, and the #ffn.moe flags printed only when set.
// CHECK-LABEL: func.func @moe
// CHECK: ffn.ffn gated silu moe <experts = 2, top_k = 1, router = softmax_topk, normalize = true, shared = 1> ins(%{{.*}} : tensor<?x16xf32>) up(%{{.*}} : tensor<3x16x32xf32>) gate(%{{.*}} : tensor<3x16x32xf32>) down(%{{.*}} : tensor<3x32x16xf32>) bias_down(%{{.*}} : tensor<3x16xf32>) router(%{{.*}} : tensor<16x2xf32>) -> tensor<?x16xf32>
// CHECK-LABEL: func.func @moe_plain
// CHECK: ffn.ffn relu moe <experts = 4, top_k = 2, router = topk_softmax> ins(
func.func @moe(%x: tensor<?x16xf32>, %wu: tensor<3x16x32xf32>, %wg: tensor<3x16x32xf32>, %wd: tensor<3x32x16xf32>, %bd: tensor<3x16xf32>, %wr: tensor<16x2xf32>) -> tensor<?x16xf32> {
  %y = ffn.ffn gated silu moe <experts = 2, top_k = 1, router = softmax_topk, normalize = true, shared = 1> ins(%x : tensor<?x16xf32>) up(%wu : tensor<3x16x32xf32>) gate(%wg : tensor<3x16x32xf32>) down(%wd : tensor<3x32x16xf32>) bias_down(%bd : tensor<3x16xf32>) router(%wr : tensor<16x2xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
func.func @moe_plain(%x: tensor<?x16xbf16>, %wu: tensor<4x16x32xbf16>, %wd: tensor<4x32x16xbf16>, %wr: tensor<16x4xbf16>) -> tensor<?x16xbf16> {
  %y = ffn.ffn relu moe <experts = 4, top_k = 2, router = topk_softmax> ins(%x : tensor<?x16xbf16>) up(%wu : tensor<4x16x32xbf16>) down(%wd : tensor<4x32x16xbf16>) router(%wr : tensor<16x4xbf16>) -> tensor<?x16xbf16>
  return %y : tensor<?x16xbf16>
}

// A grouped FFN: stacked block weights and biases, the norm over the whole
// row; `groups` printed only when set.
// CHECK-LABEL: func.func @grouped
// CHECK: ffn.ffn gated silu residual norm<rmsnorm, pre, eps = 1.0e-05> groups 4 ins(%{{.*}} : tensor<?x64xf32>) up(%{{.*}} : tensor<4x16x32xf32>) gate(%{{.*}} : tensor<4x16x32xf32>) down(%{{.*}} : tensor<4x32x16xf32>) bias_down(%{{.*}} : tensor<4x16xf32>) norm_scale(%{{.*}} : tensor<64xf32>) -> tensor<?x64xf32>
// CHECK-LABEL: func.func @grouped_plain
// CHECK: ffn.ffn relu groups 2 ins(
func.func @grouped(%x: tensor<?x64xf32>, %wu: tensor<4x16x32xf32>, %wg: tensor<4x16x32xf32>, %wd: tensor<4x32x16xf32>, %bd: tensor<4x16xf32>, %s: tensor<64xf32>) -> tensor<?x64xf32> {
  %y = ffn.ffn gated silu residual norm<rmsnorm, pre, eps = 1.000000e-05> groups 4 ins(%x : tensor<?x64xf32>) up(%wu : tensor<4x16x32xf32>) gate(%wg : tensor<4x16x32xf32>) down(%wd : tensor<4x32x16xf32>) bias_down(%bd : tensor<4x16xf32>) norm_scale(%s : tensor<64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
func.func @grouped_plain(%x: tensor<?x32xbf16>, %wu: tensor<2x16x24xbf16>, %wd: tensor<2x24x16xbf16>) -> tensor<?x32xbf16> {
  %y = ffn.ffn relu groups 2 ins(%x : tensor<?x32xbf16>) up(%wu : tensor<2x16x24xbf16>) down(%wd : tensor<2x24x16xbf16>) -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}

// A GPU strategy (complete: sms and buckets) on an op of a module targeting
// sm_90a, and an override's knobs, print back in their order.
// CHECK-LABEL: module @gpu
// CHECK-SAME: test.override = #ffn.gpu_strategy<sms = 114, bounds = [8, 128], block_m = 64, block_n = 128, stages = 3, split_k = 2, mma = mma_sync>
// CHECK: strategy #ffn.gpu_strategy<sms = 132, buckets = [<max_m = 16, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 4, mma = mma_sync, split_k = [2, 8]>, <block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>]>
module @gpu attributes {ffn.target = #ffn.target<isa = "nvptx-sm90a", vector_bits = 0, threads = 1>, test.override = #ffn.gpu_strategy<mma = mma_sync, split_k = 2, stages = 3, block_n = 128, block_m = 64, bounds = [8, 128], sms = 114>} {
  func.func @g(%x: tensor<?x64xbf16>, %wu: tensor<64x96xbf16>, %wd: tensor<96x64xbf16>) -> tensor<?x64xbf16> {
    %y = ffn.ffn relu ins(%x : tensor<?x64xbf16>) up(%wu : tensor<64x96xbf16>) down(%wd : tensor<96x64xbf16>) strategy #ffn.gpu_strategy<sms = 132, buckets = [<max_m = 16, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 4, mma = mma_sync, split_k = [2, 8]>, <block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>]> -> tensor<?x64xbf16>
    return %y : tensor<?x64xbf16>
  }
}
