// RUN: ffn-opt %s --ffn-select-strategy | FileCheck %s --check-prefix=AVX512
// RUN: ffn-opt %s --ffn-select-strategy=vector-bits=256 | FileCheck %s --check-prefix=AVX2
// RUN: ffn-opt %s --ffn-select-strategy="mr=4 nr=64 mc=32 prefetch=1" | FileCheck %s --check-prefix=OVERRIDE
// RUN: not ffn-opt %s --ffn-select-strategy="nr=24" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: ffn-opt %s --ffn-select-strategy="fused-max-m=16" | FileCheck %s --check-prefix=FUSED
// RUN: ffn-opt %s --ffn-select-strategy="fused-max-m=8 chunk=512 groups=4" | FileCheck %s --check-prefix=FUSED-OVERRIDE
// RUN: not ffn-opt %s --ffn-select-strategy="fused-max-m=16 chunk=48" 2>&1 | FileCheck %s --check-prefix=BAD-CHUNK
// RUN: not ffn-opt %s --ffn-select-strategy="fused-max-m=512" 2>&1 | FileCheck %s --check-prefix=BAD-BUCKET

// AVX-512: 8 rows x 32 columns (16 zmm accumulators), 256-row blocks.
// With AVX2, 6 rows x 16 columns (12 ymm accumulators), 252-row blocks (a
// multiple of 6).
// Weights that stay in cache (BERT-base, 19 MB) get the fused bucket for
// m <= 8: 256-column chunks (3072 / 8 groups = 384, capped at 256).
// AVX512-LABEL: func.func @bert
// AVX512: strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 8, chunk = 256, groups = 8>
// AVX2-LABEL: func.func @bert
// AVX2: strategy<vector_bits = 256, mr = 6, nr = 16, mc = 252, prefetch = false, fused_max_m = 8, chunk = 256, groups = 8>
// OVERRIDE-LABEL: func.func @bert
// OVERRIDE: strategy<vector_bits = 512, mr = 4, nr = 64, mc = 32, prefetch = true, fused_max_m = 8, chunk = 256, groups = 8>
// BAD: error: 'ffn.ffn' op strategy nr must be a multiple of 16 (f32 lanes) up to 128, got 24
// The bucket bound, chunk and groups can be set.
// FUSED-LABEL: func.func @bert
// FUSED: strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 16, chunk = 256, groups = 8>
// FUSED-OVERRIDE: fused_max_m = 8, chunk = 512, groups = 4>
// BAD-CHUNK: error: 'ffn.ffn' op strategy chunk must be a positive multiple of nr (32), got 48
// BAD-BUCKET: error: 'ffn.ffn' op strategy fused_max_m must be in [0, mc = 256], got 512
func.func @bert(%x: tensor<?x768xf32>, %w1: tensor<768x3072xf32>, %w2: tensor<3072x768xf32>) -> tensor<?x768xf32> {
  %y = ffn.ffn gelu ins(%x : tensor<?x768xf32>) up(%w1 : tensor<768x3072xf32>) down(%w2 : tensor<3072x768xf32>) -> tensor<?x768xf32>
  return %y : tensor<?x768xf32>
}

// An existing strategy is kept. A small d_ff gets narrower chunks, so each
// of the 8 groups has one (64 / 8 = 8, at least nr = 32: 2 chunks).
// AVX512-LABEL: func.func @small
// AVX512: strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 8, chunk = 32, groups = 8>
// AVX512: strategy<vector_bits = 256, mr = 2, nr = 8, mc = 2, prefetch = false>
func.func @small(%x: tensor<?x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %y = ffn.ffn relu ins(%x : tensor<?x64xf32>) up(%w1 : tensor<64x64xf32>) down(%w2 : tensor<64x64xf32>) -> tensor<?x64xf32>
  %z = ffn.ffn relu ins(%x : tensor<?x64xf32>) up(%w1 : tensor<64x64xf32>) down(%w2 : tensor<64x64xf32>) strategy<vector_bits = 256, mr = 2, nr = 8, mc = 2, prefetch = false> -> tensor<?x64xf32>
  return %y, %z : tensor<?x64xf32>, tensor<?x64xf32>
}

// Weights beyond 64 MiB stream from DRAM on every run: prefetch the next
// panel, and no fused bucket (it does not win there).
// LLaMA-7B's SwiGLU: 3 * 4096 * 11008 * 2 bytes = 258 MiB in bf16.
// AVX512-LABEL: func.func @llama
// AVX512: strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = true>
func.func @llama(%x: tensor<?x4096xbf16>, %wu: tensor<4096x11008xbf16>, %wg: tensor<4096x11008xbf16>, %wd: tensor<11008x4096xbf16>) -> tensor<?x4096xbf16> {
  %y = ffn.ffn gated silu ins(%x : tensor<?x4096xbf16>) up(%wu : tensor<4096x11008xbf16>) gate(%wg : tensor<4096x11008xbf16>) down(%wd : tensor<11008x4096xbf16>) -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}
