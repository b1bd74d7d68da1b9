// RUN: ffn-opt %s -split-input-file -verify-diagnostics --ffn-halide-lower
// RUN: not ffn-opt %s -split-input-file --ffn-halide-lower="schedule=li2018" 2>&1 >/dev/null | FileCheck %s --check-prefix=AUTO
// RUN: not ffn-opt %s -split-input-file --ffn-halide-lower="schedule=bogus" 2>&1 >/dev/null | FileCheck %s --check-prefix=BOGUS

// The Halide back end lowers dense FFNs only: each refusal is an error at
// the op (the spec's location), never a dense lowering of something else.
// The refusals are the same with an autoscheduler; there, an FFN that has a
// strategy is refused too (the autoscheduled kernel would not be what the
// strategy says), and an unscheduled one is lowered.
// AUTO: error: ffn-halide-lower: mixtures of experts (moe) have no Halide kernels; use --backend=ffnc
// AUTO: error: ffn-halide-lower: grouped FFNs (groups = 4) have no Halide kernels; use --backend=ffnc
// AUTO: error: ffn-halide-lower: quantized weights (weights <...>) have no Halide kernels; use --backend=ffnc
// AUTO: error: ffn-halide-lower: the strategy takes the fused schedule
// AUTO: error: ffn-halide-lower: the strategy takes the sparse GEMM 2
// AUTO: error: ffn-halide-lower: the strategy takes bf16 pair tiles
// AUTO-NOT: @unscheduled
// AUTO: error: ffn-halide-lower: schedule=li2018 autoschedules an FFN without a strategy; this one has a #ffn.cpu_strategy
// BOGUS: error: ffn-halide-lower: unknown schedule 'bogus' (strategy, mullapudi2016, li2018 or adams2019)

module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @moe(%x: tensor<?x20xf32> {ffn.param = "input"}, %wu: tensor<3x20x40xf32> {ffn.param = "w_up"}, %wg: tensor<3x20x40xf32> {ffn.param = "w_gate"}, %wd: tensor<3x40x20xf32> {ffn.param = "w_down"}, %wr: tensor<20x2xf32> {ffn.param = "w_router"}) -> tensor<?x20xf32> {
  // expected-error @+1 {{ffn-halide-lower: mixtures of experts (moe) have no Halide kernels}}
  %y = ffn.ffn gated silu moe <experts = 2, top_k = 1, router = softmax_topk, normalize = true, shared = 1> ins(%x : tensor<?x20xf32>) up(%wu : tensor<3x20x40xf32>) gate(%wg : tensor<3x20x40xf32>) down(%wd : tensor<3x40x20xf32>) router(%wr : tensor<20x2xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
}

// -----

module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @grouped(%x: tensor<?x64xf32> {ffn.param = "input"}, %wu: tensor<4x16x32xf32> {ffn.param = "w_up"}, %wd: tensor<4x32x16xf32> {ffn.param = "w_down"}) -> tensor<?x64xf32> {
  // expected-error @+1 {{ffn-halide-lower: grouped FFNs (groups = 4) have no Halide kernels}}
  %y = ffn.ffn relu groups 4 ins(%x : tensor<?x64xf32>) up(%wu : tensor<4x16x32xf32>) down(%wd : tensor<4x32x16xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
}

// -----

module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @quantized(%x: tensor<?x5xf32> {ffn.param = "input"}, %w1: tensor<5x9xf32> {ffn.param = "w_up"}, %w2: tensor<9x5xf32> {ffn.param = "w_down"}) -> tensor<?x5xf32> {
  // expected-error @+1 {{ffn-halide-lower: quantized weights (weights <...>) have no Halide kernels}}
  %y = ffn.ffn relu weights <int4, group = 4> ins(%x : tensor<?x5xf32>) up(%w1 : tensor<5x9xf32>) down(%w2 : tensor<9x5xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 2, nr = 32, mc = 8, prefetch = false, fused_max_m = 0> -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}
}

// -----

// A strategy with a fused bucket for small m (the CPU back end's choice at
// decode): the Halide back end is two-pass only.
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @fused(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  // expected-error @+1 {{ffn-halide-lower: the strategy takes the fused schedule (fused_max_m = 4); the Halide back end is two-pass only (fused_max_m = 0)}}
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 8, prefetch = false, fused_max_m = 4, chunk = 32, groups = 2> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
}

// -----

module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @sparse(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  // expected-error @+1 {{ffn-halide-lower: the strategy takes the sparse GEMM 2 (sparse_max_m = 3)}}
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 32, prefetch = false, fused_max_m = 0, sparse_max_m = 3> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
}

// -----

module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512-bf16", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @dot(%x: tensor<?x5xbf16> {ffn.param = "input"}, %w1: tensor<5x9xbf16> {ffn.param = "w_up"}, %w2: tensor<9x5xbf16> {ffn.param = "w_down"}) -> tensor<?x5xbf16> {
  // expected-error @+1 {{ffn-halide-lower: the strategy takes bf16 pair tiles (bf16_dot = true)}}
  %y = ffn.ffn relu ins(%x : tensor<?x5xbf16>) up(%w1 : tensor<5x9xbf16>) down(%w2 : tensor<9x5xbf16>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 2, nr = 32, mc = 8, prefetch = false, fused_max_m = 0, bf16_dot = true> -> tensor<?x5xbf16>
  return %y : tensor<?x5xbf16>
}
}

// -----

// schedule=strategy lowers what the cost model scheduled: an FFN without a
// strategy is an error, not an autoscheduled kernel nobody asked for.
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @unscheduled(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  // expected-error @+1 {{ffn-halide-lower: schedule=strategy needs a #ffn.cpu_strategy on the op}}
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
}

// -----

// The pipelines are compiled for the module's target row: there must be one.
// expected-error @+1 {{ffn-halide-lower: the module needs a CPU #ffn.target (ffn-attach-target)}}
module {
func.func @untargeted(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 32, prefetch = false, fused_max_m = 0> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
}
