// Quantized weights for ffn-gpu-lower.mlir: bf16 int8 in groups of 128
// rows (a group ends every second K tile: a branch per tile) with split-K
// in the small bucket; two f16 int4 blocks with zero points in groups of
// 32 (a group ends every half tile); f32 int4 in groups of 6 (three scales
// per 16-k run of a chunk) behind the input copy, sigmoid and a residual.
module {
  func.func @q8(%arg0: tensor<?x256xbf16> {ffn.param = "input"}, %arg1: tensor<256x200xbf16> {ffn.param = "w_up"}, %arg2: tensor<256x200xbf16> {ffn.param = "w_gate"}, %arg3: tensor<200x256xbf16> {ffn.param = "w_down"}) -> tensor<?x256xbf16> {
    %0 = ffn.ffn gated silu residual weights <int8, group = 128> ins(%arg0 : tensor<?x256xbf16>) up(%arg1 : tensor<256x200xbf16>) gate(%arg2 : tensor<256x200xbf16>) down(%arg3 : tensor<200x256xbf16>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<max_m = 16, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 4, mma = mma_sync, split_k = [2, 2]>, <block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>]> -> tensor<?x256xbf16>
    return %0 : tensor<?x256xbf16>
  }
  func.func @q4zp(%arg0: tensor<?x80xf16> {ffn.param = "input"}, %arg1: tensor<2x40x48xf16> {ffn.param = "w_up"}, %arg2: tensor<2x48x40xf16> {ffn.param = "w_down"}, %arg3: tensor<2x48xf16> {ffn.param = "b_up"}, %arg4: tensor<2x40xf16> {ffn.param = "b_down"}) -> tensor<?x80xf16> {
    %0 = ffn.ffn gelu weights <int4, group = 32, zero_points = true> groups 2 ins(%arg0 : tensor<?x80xf16>) up(%arg1 : tensor<2x40x48xf16>) down(%arg2 : tensor<2x48x40xf16>) bias_up(%arg3 : tensor<2x48xf16>) bias_down(%arg4 : tensor<2x40xf16>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>]> -> tensor<?x80xf16>
    return %0 : tensor<?x80xf16>
  }
  func.func @qf32(%arg0: tensor<?x61xf32> {ffn.param = "input"}, %arg1: tensor<61x45xf32> {ffn.param = "w_up"}, %arg2: tensor<45x61xf32> {ffn.param = "w_down"}) -> tensor<?x61xf32> {
    %0 = ffn.ffn sigmoid residual weights <int4, group = 6> ins(%arg0 : tensor<?x61xf32>) up(%arg1 : tensor<61x45xf32>) down(%arg2 : tensor<45x61xf32>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<block_m = 128, block_n = 128, warps_m = 2, warps_n = 4, block_k = 32, stages = 4, mma = fma, split_k = [1, 1]>]> -> tensor<?x61xf32>
    return %0 : tensor<?x61xf32>
  }
}
