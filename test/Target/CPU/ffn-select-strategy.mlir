// The target is the module's #ffn.target (ffn-attach-target); overrides
// are a #ffn.cpu_strategy with knobs left out.
// RUN: ffn-opt %s --ffn-attach-target --ffn-select-strategy | FileCheck %s --check-prefix=AVX512
// RUN: ffn-opt %s --ffn-attach-target=threads=2 --ffn-select-strategy | FileCheck %s --check-prefix=T2-NOMINAL
// RUN: ffn-opt %s --ffn-attach-target="threads=2 sync-us=0" --ffn-select-strategy | FileCheck %s --check-prefix=T2-FREE
// RUN: ffn-opt %s --ffn-attach-target="threads=2 sync-us=20" --ffn-select-strategy | FileCheck %s --check-prefix=T2
// RUN: ffn-opt %s --ffn-attach-target="threads=8 sync-us=20" --ffn-select-strategy | FileCheck %s --check-prefix=T8
// RUN: ffn-opt %s --ffn-attach-target="isa=x86-64-avx2 threads=2 sync-us=20" --ffn-select-strategy | FileCheck %s --check-prefix=AVX2
// RUN: ffn-opt %s --ffn-attach-target="threads=2 peak-gflops=500 cache-gbs=30" --ffn-select-strategy | FileCheck %s --check-prefix=T2-SLOWCACHE
// RUN: ffn-opt %s --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<mr = 4, nr = 64, mc = 32, prefetch = false>'" | FileCheck %s --check-prefix=OVERRIDE
// RUN: ffn-opt %s --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<fused_max_m = 16>'" | FileCheck %s --check-prefix=FUSED
// RUN: ffn-opt %s --ffn-attach-target="threads=2 sync-us=20" --ffn-select-strategy="batch-invariant" | FileCheck %s --check-prefix=INVARIANT
// RUN: ffn-opt %s --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<fused_max_m = 8, chunk = 512, groups = 4>'" | FileCheck %s --check-prefix=FUSED-OVERRIDE
// RUN: ffn-opt %s --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<vector_bits = 256>'" | FileCheck %s --check-prefix=NARROW
// RUN: not ffn-opt %s --ffn-select-strategy 2>&1 | FileCheck %s --check-prefix=NO-TARGET
// RUN: not ffn-opt %s --ffn-attach-target="peak-gflops=-1" 2>&1 | FileCheck %s --check-prefix=BAD-PEAK
// RUN: not ffn-opt %s --ffn-attach-target="sync-us=-3" 2>&1 | FileCheck %s --check-prefix=BAD-SYNC
// RUN: not ffn-opt %s --ffn-attach-target="threads=0" 2>&1 | FileCheck %s --check-prefix=BAD-THREADS
// RUN: not ffn-opt %s --ffn-attach-target="isa=x86-64-sse2" 2>&1 | FileCheck %s --check-prefix=BAD-ISA
// RUN: not ffn-opt %s --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<nr = 24>'" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not ffn-opt %s --ffn-attach-target="isa=x86-64-avx2" --ffn-select-strategy="overrides='#ffn.cpu_strategy<nr = 4>'" 2>&1 | FileCheck %s --check-prefix=BAD-PARSE
// RUN: not ffn-opt %s --ffn-attach-target="isa=x86-64-avx2" --ffn-select-strategy="overrides='#ffn.cpu_strategy<vector_bits = 512>'" 2>&1 | FileCheck %s --check-prefix=BAD-WIDE
// RUN: not ffn-opt %s --ffn-attach-target --ffn-select-strategy="overrides='#ffn.norm<rmsnorm, pre, eps = 1.0>'" 2>&1 | FileCheck %s --check-prefix=BAD-KIND
// RUN: not ffn-opt %s --ffn-attach-target --ffn-select-strategy="batch-invariant overrides='#ffn.cpu_strategy<fused_max_m = 16>'" 2>&1 | FileCheck %s --check-prefix=BAD-INVARIANT
// RUN: not ffn-opt %s --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<fused_max_m = 16, chunk = 48>'" 2>&1 | FileCheck %s --check-prefix=BAD-CHUNK
// RUN: not ffn-opt %s --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<fused_max_m = 512>'" 2>&1 | FileCheck %s --check-prefix=BAD-BUCKET
// RUN: ffn-opt %s --ffn-attach-target=isa=x86-64-avx512-bf16 --ffn-select-strategy | FileCheck %s --check-prefix=BF16
// RUN: ffn-opt %s --ffn-attach-target=isa=x86-64-avx512-bf16 --ffn-select-strategy="overrides='#ffn.cpu_strategy<bf16_dot = false>'" | FileCheck %s --check-prefix=BF16-OFF
// RUN: not ffn-opt %s --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<bf16_dot = true>'" 2>&1 | FileCheck %s --check-prefix=BAD-DOT
// RUN: not ffn-opt %s --ffn-attach-target=isa=x86-64-avx512-bf16 --ffn-select-strategy="overrides='#ffn.cpu_strategy<vector_bits = 256, bf16_dot = true>'" 2>&1 | FileCheck %s --check-prefix=BAD-DOT-WIDTH

// RUN: ffn-opt %s --ffn-attach-target=isa=x86-64-avx512-bf16 --ffn-select-strategy | FileCheck %s --check-prefix=SPARSE
// RUN: ffn-opt %s --ffn-attach-target=isa=x86-64-avx512-bf16 --ffn-select-strategy="overrides='#ffn.cpu_strategy<sparse_max_m = 2>'" | FileCheck %s --check-prefix=SPARSE-OVERRIDE
// RUN: ffn-opt %s --ffn-attach-target="threads=2 sync-us=20" --ffn-select-strategy="overrides='#ffn.cpu_strategy<sparse_max_m = 20>'" | FileCheck %s --check-prefix=SPARSE-BEYOND
// RUN: not ffn-opt %S/Inputs/quantized-ffn.mlir --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<sparse_max_m = 2>'" 2>&1 | FileCheck %s --check-prefix=BAD-SPARSE
// Grouped FFNs take the two-pass schedule at every thread count: where the
// dense FFN of the same block shape takes the fused bucket, the grouped one
// does not, and asking for a fused or sparse bucket is an error at the op.
// RUN: ffn-opt %S/Inputs/grouped-ffn.mlir --ffn-attach-target="threads=8 sync-us=20" --ffn-select-strategy | FileCheck %s --check-prefix=GROUPED
// GROUPED-LABEL: func.func @grouped
// At 8 threads its 4 blocks would leave half of them idle as work units:
// panels x blocks (block_units = false).
// GROUPED: groups 4 {{.*}} strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 0, block_units = false> ->
// GROUPED-LABEL: func.func @dense
// GROUPED: strategy #ffn.cpu_strategy<{{.*}}fused_max_m = 16,
// The blocks are the work units while they split evenly enough: the
// busiest thread at most 1/8 above an even share (4 blocks on 1, 2 or 4
// threads; not on 3: 2 of 4 blocks is 1.5 shares).
// RUN: ffn-opt %S/Inputs/grouped-ffn.mlir --ffn-attach-target="threads=2" --ffn-select-strategy | FileCheck %s --check-prefix=GROUPED-T2
// GROUPED-T2: groups 4 {{.*}} fused_max_m = 0, block_units = true> ->
// RUN: ffn-opt %S/Inputs/grouped-ffn.mlir --ffn-attach-target="threads=3" --ffn-select-strategy | FileCheck %s --check-prefix=GROUPED-T3
// GROUPED-T3: groups 4 {{.*}} fused_max_m = 0, block_units = false> ->
// block_units is a grouped FFN's knob only (test/Integration/grouped.ffn
// sets it both ways on grouped FFNs).
// RUN: not ffn-opt %s --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<block_units = false>'" 2>&1 | FileCheck %s --check-prefix=BAD-BLOCK-UNITS
// BAD-BLOCK-UNITS: error: 'ffn.ffn' op strategy option block_units: a grouped FFN's work units; this FFN has no blocks (groups)
// RUN: not ffn-opt %S/Inputs/grouped-ffn.mlir --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<fused_max_m = 16>'" 2>&1 | FileCheck %s --check-prefix=BAD-GROUPED-FUSED
// BAD-GROUPED-FUSED: grouped-ffn.mlir:5:8: error: 'ffn.ffn' op is a grouped FFN, whose blocks take the two-pass schedule; the fused one (fused_max_m = 16) is not built for them
// RUN: not ffn-opt %S/Inputs/grouped-ffn.mlir --ffn-attach-target --ffn-select-strategy="overrides='#ffn.cpu_strategy<sparse_max_m = 2>'" 2>&1 | FileCheck %s --check-prefix=BAD-GROUPED-SPARSE
// BAD-GROUPED-SPARSE: grouped-ffn.mlir:5:8: error: 'ffn.ffn' op strategy option sparse_max_m = 2: the sparse GEMM 2 is built for unquantized dense FFNs; this one has blocks (groups)

// AVX512: module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>}
// AVX-512: 8 rows x 32 columns (16 zmm accumulators), 256-row blocks.
// With AVX2, 6 rows x 16 columns (12 ymm accumulators), 252-row blocks (a
// multiple of 6).
// The fused bucket is the cost model's (ScheduleCost.h): on one thread it
// never wins (the same work plus partial outputs), so there is none.
// AVX512-LABEL: func.func @bert
// AVX512: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 0>
// On two threads the fused schedule saves one phase boundary and pays for
// its partial outputs. With the nominal hand-off (1 us) that is about even:
// fused up to m = 2 only; with a free one, never; on a machine whose pool
// takes 20 us per hand-off (sync-us=20), BERT-base's cache-resident weights
// price lower fused up to m = 16 (0.98x there). 3072 / 8 = 384 capped at
// 256-column chunks, 12 of them, and 2 groups of 6 balance two threads with
// the fewest partial outputs.
// T2-NOMINAL-LABEL: func.func @bert
// T2-NOMINAL: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 2, chunk = 256, groups = 2>
// T2-FREE-LABEL: func.func @bert
// T2-FREE: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 0>
// Compute 4x faster and the cache half as fast: the partial outputs weigh
// more than the saved boundary.
// T2-SLOWCACHE-LABEL: func.func @bert
// T2-SLOWCACHE: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 0>
// T2-LABEL: func.func @bert
// T2: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 16, chunk = 256, groups = 2>
// On eight threads 12 chunks cannot be split evenly (6 groups of 2: the
// busiest thread holds 2 of 12 chunks, not 1.5), so fused wins only while
// the saved boundary outweighs that, up to m = 4.
// T8-LABEL: func.func @bert
// T8: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 4, chunk = 256, groups = 6>
// AVX2-LABEL: func.func @bert
// AVX2: strategy #ffn.cpu_strategy<vector_bits = 256, mr = 6, nr = 16, mc = 252, kc = 256, nc = 64, prefetch = true, fused_max_m = 16, chunk = 256, groups = 2>
// OVERRIDE-LABEL: func.func @bert
// OVERRIDE: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 64, mc = 32, kc = 64, kc_tall = 256, nc = 256, prefetch = false, fused_max_m = 0>
// NARROW-LABEL: func.func @bert
// NARROW: strategy #ffn.cpu_strategy<vector_bits = 256, mr = 6, nr = 16, mc = 252, kc = 256, nc = 64, prefetch = true, fused_max_m = 0>
// NO-TARGET: error: ffn-select-strategy: the module has no #ffn.target (run ffn-attach-target first)
// BAD-PEAK: error: ffn-attach-target: target peak_gflops must be positive and finite, got -1
// BAD-SYNC: error: ffn-attach-target: target sync_us must be non-negative and finite, got -3
// BAD-THREADS: error: ffn-attach-target: target threads must be in [1, 1024], got 0
// BAD-ISA: error: ffn-attach-target: unknown isa 'x86-64-sse2' (x86-64-avx2, x86-64-avx512, x86-64-avx512-bf16, nvptx-sm80, nvptx-sm90, nvptx-sm90a)
// The attribute alone knows no lanes but the narrowest (8); the target's
// 16 are checked when the pass runs.
// BAD: error: 'ffn.ffn' op strategy option nr must be a multiple of 16 (the f32 lanes of a 512-bit vector) up to 128, got 24
// BAD-PARSE: error: nr must be a multiple of 8 (f32 lanes) up to 128, got 4
// BAD-WIDE: error: 'ffn.ffn' op strategy option vector_bits must be at most the target's (256), got 512
// BAD-KIND: error: ffn-select-strategy: overrides must be a #ffn.cpu_strategy, got #ffn.norm<rmsnorm, pre, eps = 1.0>
// The bucket bound, chunk and groups can be set; the rest is still chosen
// (one thread: one group, the fewest partial outputs).
// FUSED-LABEL: func.func @bert
// FUSED: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 16, chunk = 256, groups = 1>
// batch-invariant: the op says so, and no m takes the fused schedule (T2
// above picks it for m <= 16 on the same machine).
// INVARIANT-LABEL: func.func @bert
// INVARIANT: ffn.ffn gelu batch_invariant ins({{.*}}) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 0>
// BAD-INVARIANT: error: 'ffn.ffn' op is batch_invariant; it cannot take the fused schedule (fused_max_m = 16)
// FUSED-OVERRIDE: fused_max_m = 8, chunk = 512, groups = 4>
// BAD-CHUNK: error: 'ffn.ffn' op strategy option chunk must be a multiple of nr (32) up to 1048576, got 48
// BAD-BUCKET: error: 'ffn.ffn' op strategy option fused_max_m must be in [0, mc = 256], got 512
func.func @bert(%x: tensor<?x768xf32>, %w1: tensor<768x3072xf32>, %w2: tensor<3072x768xf32>) -> tensor<?x768xf32> {
  %y = ffn.ffn gelu ins(%x : tensor<?x768xf32>) up(%w1 : tensor<768x3072xf32>) down(%w2 : tensor<3072x768xf32>) -> tensor<?x768xf32>
  return %y : tensor<?x768xf32>
}

// An existing strategy is kept. A small d_ff gets narrower chunks so there
// is work to split (64 / 8 = 8, at least nr = 32: 2 chunks, one per thread).
// AVX512-LABEL: func.func @small
// AVX512: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = true, fused_max_m = 0>
// AVX512: strategy #ffn.cpu_strategy<vector_bits = 256, mr = 2, nr = 8, mc = 2, prefetch = false, fused_max_m = 0>
// T2-LABEL: func.func @small
// T2: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = true, fused_max_m = 16, chunk = 32, groups = 2>
// T2: strategy #ffn.cpu_strategy<vector_bits = 256, mr = 2, nr = 8, mc = 2, prefetch = false, fused_max_m = 0>
func.func @small(%x: tensor<?x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %y = ffn.ffn relu ins(%x : tensor<?x64xf32>) up(%w1 : tensor<64x64xf32>) down(%w2 : tensor<64x64xf32>) -> tensor<?x64xf32>
  %z = ffn.ffn relu ins(%x : tensor<?x64xf32>) up(%w1 : tensor<64x64xf32>) down(%w2 : tensor<64x64xf32>) strategy #ffn.cpu_strategy<vector_bits = 256, mr = 2, nr = 8, mc = 2, prefetch = false, fused_max_m = 0> -> tensor<?x64xf32>
  return %y, %z : tensor<?x64xf32>, tensor<?x64xf32>
}

// Weights beyond 64 MiB stream from DRAM on every run. The fused schedule
// gains nothing there (both schedules stream the same bytes) and its uneven
// chunk groups cost (43 chunks), so no bucket. (Every size prefetches; the
// OVERRIDE run checks that prefetch = false is kept.)
// LLaMA-7B's SwiGLU: 3 * 4096 * 11008 * 2 bytes = 258 MiB in bf16.
// AVX512-LABEL: func.func @llama
// AVX512: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 256, kc_tall = 1024, nc = 128, prefetch = true, fused_max_m = 0>
// T2-LABEL: func.func @llama
// T2: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 256, kc_tall = 1024, nc = 128, prefetch = true, fused_max_m = 0>
// T8-LABEL: func.func @llama
// T8: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 256, kc_tall = 1024, nc = 128, prefetch = true, fused_max_m = 0>
// On a target with avx512bf16, bf16 FFNs take pair tiles (the same bytes,
// half the instructions: cheaper at decode and at a full block); f32 ones
// are untouched, and the knob is not printed where it cannot apply.
// BF16-LABEL: func.func @bert
// BF16: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 0>
// BF16-LABEL: func.func @llama
// BF16: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 256, kc_tall = 1024, nc = 128, prefetch = true, fused_max_m = 0, bf16_dot = true>
// BF16-OFF-LABEL: func.func @llama
// BF16-OFF: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 256, kc_tall = 1024, nc = 128, prefetch = true, fused_max_m = 0, bf16_dot = false>
// BAD-DOT: error: 'ffn.ffn' op strategy option bf16_dot needs a bf16 FFN on a target with avx512bf16 (x86-64-avx512-bf16); this is 'f32' on 'x86-64-avx512'
// BAD-DOT-WIDTH: #ffn.cpu_strategy<vector_bits = 256, bf16_dot = true>:1:38: error: bf16_dot needs 512-bit vectors, got 256
func.func @llama(%x: tensor<?x4096xbf16>, %wu: tensor<4096x11008xbf16>, %wg: tensor<4096x11008xbf16>, %wd: tensor<11008x4096xbf16>) -> tensor<?x4096xbf16> {
  %y = ffn.ffn gated silu ins(%x : tensor<?x4096xbf16>) up(%wu : tensor<4096x11008xbf16>) gate(%wg : tensor<4096x11008xbf16>) down(%wd : tensor<11008x4096xbf16>) -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}

// Activation sparsity: with the profiled share of zero activations the cost
// model prices the sparse GEMM 2 (listed share x 3 of the dense one's cost)
// and takes it for the m whose listed share stays under a third: f32 lists
// single rows (90% zeros: m <= 3), bf16 pair tiles pairs (m = 1). Without a
// profile, or at 50% zeros, it takes none. An override sets the bucket for
// any FFN.
// SPARSE-LABEL: func.func @opt
// SPARSE: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, kc_tall = 512, nc = 128, prefetch = true, fused_max_m = 0, sparse_max_m = 3>
// SPARSE: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 256, kc_tall = 1024, nc = 128, prefetch = true, fused_max_m = 0, bf16_dot = true, sparse_max_m = 1>
// SPARSE: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, kc_tall = 512, nc = 128, prefetch = true, fused_max_m = 0>
// SPARSE: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, kc_tall = 512, nc = 128, prefetch = true, fused_max_m = 0>
// A sparse bucket asked for beyond the fused one the model picks (BERT on
// two threads: m <= 16) is the two-pass one, which turns the fused off.
// SPARSE-BEYOND-LABEL: func.func @bert
// SPARSE-BEYOND: strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, kc = 128, nc = 128, prefetch = true, fused_max_m = 0, sparse_max_m = 20>
// SPARSE-OVERRIDE-LABEL: func.func @opt
// SPARSE-OVERRIDE-COUNT-4: sparse_max_m = 2>
// BAD-SPARSE: error: 'ffn.ffn' op strategy option sparse_max_m = 2: the sparse GEMM 2 is built for unquantized dense FFNs; this one has quantized weights
func.func @opt(%x: tensor<?x4096xf32>, %w1: tensor<4096x16384xf32>, %w2: tensor<16384x4096xf32>, %xb: tensor<?x4096xbf16>, %w1b: tensor<4096x16384xbf16>, %w2b: tensor<16384x4096xbf16>) -> (tensor<?x4096xf32>, tensor<?x4096xbf16>, tensor<?x4096xf32>, tensor<?x4096xf32>) {
  %a = ffn.ffn relu activation_sparsity 0.9 ins(%x : tensor<?x4096xf32>) up(%w1 : tensor<4096x16384xf32>) down(%w2 : tensor<16384x4096xf32>) -> tensor<?x4096xf32>
  %b = ffn.ffn relu activation_sparsity 0.9 ins(%xb : tensor<?x4096xbf16>) up(%w1b : tensor<4096x16384xbf16>) down(%w2b : tensor<16384x4096xbf16>) -> tensor<?x4096xbf16>
  %c = ffn.ffn relu activation_sparsity 0.5 ins(%x : tensor<?x4096xf32>) up(%w1 : tensor<4096x16384xf32>) down(%w2 : tensor<16384x4096xf32>) -> tensor<?x4096xf32>
  %d = ffn.ffn relu ins(%x : tensor<?x4096xf32>) up(%w1 : tensor<4096x16384xf32>) down(%w2 : tensor<16384x4096xf32>) -> tensor<?x4096xf32>
  return %a, %b, %c, %d : tensor<?x4096xf32>, tensor<?x4096xbf16>, tensor<?x4096xf32>, tensor<?x4096xf32>
}
