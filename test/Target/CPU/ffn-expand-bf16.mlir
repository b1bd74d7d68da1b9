// RUN: ffn-opt %s --ffn-expand-bf16 | FileCheck %s
// RUN: sed 's/x86-64-avx512-bf16/x86-64-avx512/' %s | ffn-opt --ffn-expand-bf16 | FileCheck %s --check-prefix=EXPAND
// RUN: sed 's/module attributes .*{/module {/' %s | ffn-opt --ffn-expand-bf16 | FileCheck %s --check-prefix=EXPAND

// A target with AVX512-BF16 keeps the conversions for LLVM to lower to
// vcvtneps2bf16 (truncf) and a shift (extf).
// CHECK-LABEL: func.func @convert(
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK-NOT: arith.shrui

// Without it (AVX-512 without BF16, or host code with no target), both
// become integer operations: truncf rounds to nearest even (add 0x7fff
// plus the lowest kept bit, shift right by 16) and maps NaN (x != x) to a quiet
// NaN; extf shifts left by 16. No conversion op is left for compiler-rt.
// EXPAND-LABEL: func.func @convert(
// EXPAND-NOT: arith.truncf
// EXPAND: arith.cmpf une
// EXPAND: arith.shrui
// EXPAND: arith.select
// EXPAND: arith.shli
// EXPAND-NOT: arith.extf
// EXPAND: return
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512-bf16", vector_bits = 512, threads = 1, peak_gflops = 100.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
  func.func @convert(%v: vector<16xf32>, %s: f32, %h: vector<16xbf16>) -> (vector<16xbf16>, bf16, vector<16xf32>) {
    %t = arith.truncf %v : vector<16xf32> to vector<16xbf16>
    %u = arith.truncf %s : f32 to bf16
    %e = arith.extf %h : vector<16xbf16> to vector<16xf32>
    return %t, %u, %e : vector<16xbf16>, bf16, vector<16xf32>
  }
}
