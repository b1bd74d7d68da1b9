// The GPU cost model's choice per token-count bucket, on each chip's
// nominal device (ffn/Target/GPU/CostModel.h), and what overrides change.
// RUN: ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy | FileCheck %s --check-prefix=SM90A
// RUN: ffn-opt %s --ffn-attach-target=isa=nvptx-sm90 --ffn-gpu-select-strategy | FileCheck %s --check-prefix=SM90
// RUN: ffn-opt %s --ffn-attach-target=isa=nvptx-sm80 --ffn-gpu-select-strategy | FileCheck %s --check-prefix=SM80
// RUN: ffn-opt %S/Inputs/invariant.mlir --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy | FileCheck %s --check-prefix=INVARIANT
// RUN: ffn-opt %S/Inputs/quant-strategy.mlir --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy | FileCheck %s --check-prefix=QUANT
// RUN: not ffn-opt %S/Inputs/quant-strategy.mlir --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<block_m = 128, block_n = 256>'" 2>&1 | FileCheck %s --check-prefix=QUANTTILE
// RUN: not ffn-opt %S/Inputs/quant-strategy.mlir --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<mma = wgmma>'" 2>&1 | FileCheck %s --check-prefix=QUANTWG
// RUN: ffn-opt %S/Inputs/quant-strategy.mlir --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<widen = registers>'" | FileCheck %s --check-prefix=QUANTWIDEN
// RUN: not ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<widen = registers>'" 2>&1 | FileCheck %s --check-prefix=NOWIDEN
// RUN: ffn-opt %S/Inputs/moe-strategy.mlir --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy | FileCheck %s --check-prefix=MOE
// RUN: ffn-opt %S/Inputs/moe-strategy.mlir --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<split_k = 2>'" | FileCheck %s --check-prefix=MOESPLIT

// A mixture of experts (Mixtral's 8 x 2 on sm_90a): GEMM 1 never splits
// (grid.z holds the experts); GEMM 2's split at decode is sized for one
// row's two experts (32 column tiles each, 9 slices: 576 blocks, about four
// per SM), where the dense FFN of the same width splits 3/16 (SM90A below).
// An override's split_k applies to GEMM 2 alone.
// MOE: strategy #ffn.gpu_strategy<sms = 132, buckets = [<max_m = 16, block_m = 16, block_n = 128, {{[^>]*}}mma = mma_sync, split_k = [1, 9]>,
// MOE-NOT: split_k = [{{[02-9]|1[0-9]}}
// MOESPLIT: split_k = [1, 2]>, <max_m = 64, {{[^>]*}}split_k = [1, 2]>,
// MOESPLIT-NOT: split_k = [2

// Quantized weights (int4, LLaMA-7B's MLP on sm_90a): the wide tile and
// wgmma are out (each scale group's sums take a second accumulator set),
// so every bucket past decode takes the 64x128 mma.sync tile.
// QUANT: strategy #ffn.gpu_strategy<sms = 132, buckets = [<max_m = 16, block_m = 16, block_n = 128, {{[^>]*}}mma = mma_sync, split_k = [3, 12]>, <max_m = 64, block_m = 64, block_n = 128,
// QUANT-SAME: <block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>]>
// QUANT-NOT: wgmma
// widen = registers: every bucket widens in registers, tiles and splits
// unchanged; an FFN whose weights are in its dtype cannot.
// QUANTWIDEN: strategy #ffn.gpu_strategy<sms = 132, buckets = [<max_m = 16, block_m = 16, {{[^>]*}}split_k = [3, 12], widen = registers>, <max_m = 64, block_m = 64, {{[^>]*}}, widen = registers>, <max_m = 256, {{[^>]*}}, widen = registers>, <max_m = 1024, {{[^>]*}}, widen = registers>, <block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1], widen = registers>]>
// NOWIDEN: error: 'ffn.ffn' op strategy option widen registers needs quantized weights
// QUANTTILE: error: 'ffn.ffn' op strategy option block_m tile 128x256 is not built for bf16/f16 with quantized weights (tiles: 16x128, 64x128)
// QUANTWG: error: 'ffn.ffn' op strategy option mma quantized weights multiply with mma_sync tiles (each scale group is summed apart)

// LLaMA-7B's MLP in bf16 (sm_90a): decode streams the weights in 16-row
// tiles, K split for at least two blocks per SM and the fullest last wave,
// of equally full waves the one with more blocks (516 and 512 blocks on 132
// SMs; GEMM 2's 12 slices, 384 blocks, fill theirs as well, and the ring's
// quantized decode below keeps that smaller split); from m = 17 the
// 128 x 256 wgmma tile,
// only GEMM 2 split, as far as the model prices it cheaper (what
// docs/bench-gpu-2026-11-28-h200-final.txt measured on an H200).
// SM90A-LABEL: func.func @llama
// SM90A: strategy #ffn.gpu_strategy<sms = 132, buckets = [
// SM90A-SAME: <max_m = 16, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 0, mma = mma_sync, split_k = [3, 16]>,
// SM90A-SAME: <max_m = 64, block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 8]>,
// SM90A-SAME: <max_m = 256, block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 4]>,
// SM90A-SAME: <max_m = 1024, block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>,
// SM90A-SAME: <block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>]>
// The same MLP in 4 blocks (groups = 4): one grid over every block's
// tiles, a block's K its own 1024 (GEMM 1) and 2816 (GEMM 2) columns, so
// the K splits stop earlier (each slice keeps four K tiles).
// SM90A-LABEL: func.func @llama_g4
// SM90A: <max_m = 16, block_m = 16, block_n = 128, {{[^>]*}}mma = mma_sync, split_k = [3, 11]>, <max_m = 64, block_m = 64, block_n = 128, {{[^>]*}}split_k = [1, 4]>, <max_m = 256, block_m = 128, block_n = 256, {{[^>]*}}mma = wgmma, split_k = [1, 4]>
// f32 (BERT-base): FMA tiles, 32 K per stage, the 128 x 128 wide tile;
// the 16-row tiles reduce their own partials, so GEMM 1 may split there.
// SM90A-LABEL: func.func @bert32
// SM90A: <max_m = 16, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 32, stages = 4, mma = fma, split_k = [6, 24]>, <max_m = 64, block_m = 16, block_n = 128, {{[^>]*}}split_k = [4, 11]>
// SM90A-SAME: <block_m = 128, block_n = 128, warps_m = 2, warps_n = 4, block_k = 32, stages = 4, mma = fma, split_k = [1, 1]>]>
// BERT-base in bf16: its 768-wide down projection leaves SMs idle, so the
// narrower tiles win up to m = 256 with GEMM 2 split 5 ways (measured 24%
// faster at m = 128 than the 128 x 256 tile split 3/12), and past 1024
// rows a bucket up to 2048 keeps the wide tile with GEMM 2 split two ways
// (its 48 tiles at m = 2048 fill a third of the SMs; measured 1.26x
// faster there); at 4096 rows (96 tiles) a split no longer pays in the
// model, and the unbounded bucket starts at 2049.
// SM90A-LABEL: func.func @bert_base_gelu
// SM90A: <max_m = 16, block_m = 16, block_n = 128, {{[^>]*}}mma = mma_sync, split_k = [3, 12]>, <max_m = 64, block_m = 16, block_n = 128, {{[^>]*}}split_k = [1, 5]>, <max_m = 256, block_m = 64, block_n = 128, {{[^>]*}}mma = mma_sync, split_k = [1, 5]>, <max_m = 1024, block_m = 128, block_n = 256, {{[^>]*}}mma = wgmma, split_k = [1, 5]>, <max_m = 2048, block_m = 128, block_n = 256, {{[^>]*}}mma = wgmma, split_k = [1, 2]>, <block_m = 128, block_n = 256, {{[^>]*}}split_k = [1, 1]>]>

// sm_90 has no wgmma: mma.sync on the same tiles (not timed on a GPU).
// SM90-LABEL: func.func @llama
// SM90: <max_m = 64, block_m = 64, block_n = 128, {{.*}}, mma = mma_sync, split_k = [1, 4]>, <max_m = 256, block_m = 128, block_n = 256, {{.*}}, mma = mma_sync, split_k = [1, 4]>
// SM90-NOT: wgmma
// SM90-LABEL: func.func @bert32

// An A100 (sm_80): 108 SMs size the splits, its 163 KiB per block hold a
// ring as deep; a third of an H100's tensor rate keeps the 64-row tile.
// SM80-LABEL: func.func @llama
// SM80: strategy #ffn.gpu_strategy<sms = 108, buckets = [<max_m = 16, block_m = 16, block_n = 128, {{.*}}, split_k = [2, 10]>
// SM80-SAME: <block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>]>
// SM80-NOT: wgmma

// Batch invariance: one bucket, the wide tile, no K split.
// INVARIANT: strategy #ffn.gpu_strategy<sms = 132, buckets = [<block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>]>

// Overrides fix knobs; the model chooses the rest.
// RUN: ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<sms = 16>'" | FileCheck %s --check-prefix=SMS
// A 16-SM part: the same decode grid needs no split of GEMM 1.
// SMS-LABEL: func.func @llama
// SMS: strategy #ffn.gpu_strategy<sms = 16, buckets = [<max_m = 16, block_m = 16, {{.*}}, split_k = [1, 2]>
// RUN: ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<bounds = [8, 128], stages = 2>'" | FileCheck %s --check-prefix=BOUNDS
// BOUNDS-LABEL: func.func @llama
// BOUNDS: buckets = [<max_m = 8, block_m = 16, {{[^>]*}}stages = 2, {{[^>]*}}>, <max_m = 128, block_m = 128, block_n = 256, {{[^>]*}}stages = 2, mma = wgmma, {{[^>]*}}>, <block_m = 128, {{[^>]*}}>]>
// RUN: ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<block_m = 64, block_n = 128, split_k = 1>'" | FileCheck %s --check-prefix=TILE
// TILE-LABEL: func.func @llama
// TILE: buckets = [<max_m = 16, block_m = 64, block_n = 128, {{[^>]*}}split_k = [1, 1]>, <max_m = 64, block_m = 64, block_n = 128, {{.*}}, <block_m = 64, block_n = 128, {{[^>]*}}split_k = [1, 1]>]>
// TILE-NOT: split_k = [{{[2-9]}}
// RUN: ffn-opt %S/Inputs/invariant.mlir --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<mma = mma_sync>'" | FileCheck %s --check-prefix=NOWGMMA
// NOWGMMA: buckets = [<block_m = 128, block_n = 256, {{[^>]*}}mma = mma_sync, split_k = [1, 1]>]>

// What cannot hold is an error at the op or the option.
// RUN: not ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<block_m = 32, block_n = 64>'" 2>&1 | FileCheck %s --check-prefix=BADTILE
// BADTILE: error: 'ffn.ffn' op strategy option block_m tile 32x64 is not built for bf16/f16 (tiles: 16x128, 64x128, 128x256, 128x128)
// RUN: not ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<split_k = 40>'" 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: error: 'ffn.ffn' op strategy option split_k bucket 0: more K slices than K tiles (24 in GEMM 1, 96 in GEMM 2)
// RUN: not ffn-opt %S/Inputs/invariant.mlir --ffn-attach-target=isa=nvptx-sm90 --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<mma = wgmma>'" 2>&1 | FileCheck %s --check-prefix=WGMMA
// WGMMA: error: 'ffn.ffn' op strategy option mma wgmma needs sm_90a, not sm_90
// RUN: not ffn-opt %S/Inputs/invariant.mlir --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<mma = fma>'" 2>&1 | FileCheck %s --check-prefix=FMA
// FMA: error: 'ffn.ffn' op strategy option mma fma is f32's; a bf16/f16 FFN multiplies on tensor cores
// RUN: not ffn-opt %S/Inputs/invariant.mlir --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<bounds = [16]>'" 2>&1 | FileCheck %s --check-prefix=INVBOUNDS
// INVBOUNDS: error: 'ffn.ffn' op strategy option bounds cannot hold for a batch_invariant FFN: every m takes one bucket without a K split
// RUN: not ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.gpu_strategy<sms = 132, buckets = [<block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>]>'" 2>&1 | FileCheck %s --check-prefix=COMPLETE
// COMPLETE: error: ffn-gpu-select-strategy: overrides set knobs; a complete strategy (with buckets) goes on the ffn.ffn itself
// RUN: not ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy="overrides='#ffn.cpu_strategy<mr = 4>'" 2>&1 | FileCheck %s --check-prefix=CPUOVERRIDE
// CPUOVERRIDE: error: ffn-gpu-select-strategy: overrides must be a #ffn.gpu_strategy, got #ffn.cpu_strategy<mr = 4>
// RUN: not ffn-opt %s --ffn-attach-target=isa=x86-64-avx512 --ffn-gpu-select-strategy 2>&1 | FileCheck %s --check-prefix=CPUTARGET
// CPUTARGET: error: ffn-gpu-select-strategy: the module's target 'x86-64-avx512' is not an NVIDIA GPU
// RUN: not ffn-opt %s --ffn-gpu-select-strategy 2>&1 | FileCheck %s --check-prefix=NOTARGET
// NOTARGET: error: ffn-gpu-select-strategy: the module has no #ffn.target (run ffn-attach-target first)

// A complete strategy already on the op is kept if the chip can build it.
// RUN: ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy | ffn-opt --ffn-gpu-select-strategy | FileCheck %s --check-prefix=SM90A
// RUN: ffn-opt %s --ffn-attach-target=isa=nvptx-sm90a --ffn-gpu-select-strategy | sed 's/nvptx-sm90a/nvptx-sm80/' | not ffn-opt --ffn-gpu-select-strategy 2>&1 | FileCheck %s --check-prefix=KEPT
// KEPT: error: 'ffn.ffn' op strategy does not fit the module's target: strategy bucket 2 multiplies with wgmma, which needs sm_90a, not sm_80
// RUN: ffn-opt %s --ffn-attach-target=isa=nvptx-sm90 --ffn-gpu-select-strategy | sed 's/nvptx-sm90/nvptx-sm80/' | not ffn-opt --ffn-gpu-select-strategy 2>&1 | FileCheck %s --check-prefix=SMEM
// SMEM: error: 'ffn.ffn' op strategy: stages bucket 3: 4 stages take 221184 bytes of shared memory; a block has 166912 on sm_80

module {
  func.func @llama(%arg0: tensor<?x4096xbf16> {ffn.param = "input"}, %arg1: tensor<4096x11008xbf16> {ffn.param = "w_up"}, %arg2: tensor<4096x11008xbf16> {ffn.param = "w_gate"}, %arg3: tensor<11008x4096xbf16> {ffn.param = "w_down"}) -> tensor<?x4096xbf16> {
    %0 = ffn.ffn gated silu ins(%arg0 : tensor<?x4096xbf16>) up(%arg1 : tensor<4096x11008xbf16>) gate(%arg2 : tensor<4096x11008xbf16>) down(%arg3 : tensor<11008x4096xbf16>) -> tensor<?x4096xbf16>
    return %0 : tensor<?x4096xbf16>
  }
  func.func @llama_g4(%arg0: tensor<?x4096xbf16> {ffn.param = "input"}, %arg1: tensor<4x1024x2752xbf16> {ffn.param = "w_up"}, %arg2: tensor<4x1024x2752xbf16> {ffn.param = "w_gate"}, %arg3: tensor<4x2752x1024xbf16> {ffn.param = "w_down"}) -> tensor<?x4096xbf16> {
    %0 = ffn.ffn gated silu groups 4 ins(%arg0 : tensor<?x4096xbf16>) up(%arg1 : tensor<4x1024x2752xbf16>) gate(%arg2 : tensor<4x1024x2752xbf16>) down(%arg3 : tensor<4x2752x1024xbf16>) -> tensor<?x4096xbf16>
    return %0 : tensor<?x4096xbf16>
  }
  func.func @bert32(%arg0: tensor<?x768xf32> {ffn.param = "input"}, %arg1: tensor<768x3072xf32> {ffn.param = "w_up"}, %arg2: tensor<3072x768xf32> {ffn.param = "w_down"}, %arg3: tensor<3072xf32> {ffn.param = "b_up"}, %arg4: tensor<768xf32> {ffn.param = "b_down"}) -> tensor<?x768xf32> {
    %0 = ffn.ffn gelu ins(%arg0 : tensor<?x768xf32>) up(%arg1 : tensor<768x3072xf32>) down(%arg2 : tensor<3072x768xf32>) bias_up(%arg3 : tensor<3072xf32>) bias_down(%arg4 : tensor<768xf32>) -> tensor<?x768xf32>
    return %0 : tensor<?x768xf32>
  }
  func.func @bert_base_gelu(%arg0: tensor<?x768xbf16> {ffn.param = "input"}, %arg1: tensor<768x3072xbf16> {ffn.param = "w_up"}, %arg2: tensor<3072x768xbf16> {ffn.param = "w_down"}, %arg3: tensor<3072xbf16> {ffn.param = "b_up"}, %arg4: tensor<768xbf16> {ffn.param = "b_down"}) -> tensor<?x768xbf16> {
    %0 = ffn.ffn gelu ins(%arg0 : tensor<?x768xbf16>) up(%arg1 : tensor<768x3072xbf16>) down(%arg2 : tensor<3072x768xbf16>) bias_up(%arg3 : tensor<3072xbf16>) bias_down(%arg4 : tensor<768xbf16>) -> tensor<?x768xbf16>
    return %0 : tensor<?x768xbf16>
  }
}

