// RUN: ffn-opt %s --ffn-attach-target | FileCheck %s --check-prefix=NOMINAL
// RUN: ffn-opt %s --ffn-attach-target="isa=x86-64-avx2 threads=8 peak-gflops=90.5 dram-gbs=40 cache-gbs=75 sync-us=0" | FileCheck %s --check-prefix=GIVEN
// RUN: ffn-opt %s --ffn-attach-target="isa=nvptx-sm90" | FileCheck %s --check-prefix=GPU
// RUN: ffn-opt %s --ffn-attach-target="isa=x86-64-avx2" --ffn-attach-target | FileCheck %s --check-prefix=KEEP
// RUN: ffn-opt %s --ffn-attach-target="isa=x86-64-avx2" --ffn-attach-target="isa=x86-64-avx2" | FileCheck %s --check-prefix=KEEP
// RUN: not ffn-opt %s --ffn-attach-target="isa=x86-64-avx2" --ffn-attach-target="isa=x86-64-avx512" 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: not ffn-opt %s --ffn-attach-target="isa=armv9" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not ffn-opt %s --ffn-attach-target="threads=2000" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not ffn-opt %s --ffn-attach-target="cache-gbs=-5" 2>&1 | FileCheck %s --check-prefix=CACHE

// The SIMD width comes from the name; figures not given are the nominal
// machine's (ffn/Target/CPU/CostModel.h), and printed, so a reader of
// --emit output sees what the cost model priced for.
// NOMINAL: module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>}
// GIVEN: module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 8, peak_gflops = 90.5, dram_gbs = 40.0, cache_gbs = 75.0, sync_us = 0.0>}
// GPU: #ffn.target<isa = "nvptx-sm90", vector_bits = 0,
// A module that has a target keeps it; asked for another, the pass fails.
// KEEP: #ffn.target<isa = "x86-64-avx2", vector_bits = 256,
// OTHER: error: ffn-attach-target: the module already targets 'x86-64-avx2'; asked for 'x86-64-avx512'
// UNKNOWN: error: ffn-attach-target: unknown isa 'armv9'
// THREADS: error: ffn-attach-target: target threads must be in [1, 1024], got 2000
// CACHE: error: ffn-attach-target: target cache_gbs must be positive and finite, got -5
module {
}
