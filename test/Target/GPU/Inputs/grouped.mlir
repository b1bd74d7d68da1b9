// Grouped FFNs for ffn-gpu-lower.mlir: two f16 blocks of 24 -> 80, gated,
// with every bias and a residual, split-K in the small bucket; and three
// bf16 blocks of 20 -> 40 (40-byte rows) behind a pre-RMSNorm.
module {
  func.func @grp(%arg0: tensor<?x48xf16> {ffn.param = "input"}, %arg1: tensor<2x24x80xf16> {ffn.param = "w_up"}, %arg2: tensor<2x24x80xf16> {ffn.param = "w_gate"}, %arg3: tensor<2x80x24xf16> {ffn.param = "w_down"}, %arg4: tensor<2x80xf16> {ffn.param = "b_up"}, %arg5: tensor<2x80xf16> {ffn.param = "b_gate"}, %arg6: tensor<2x24xf16> {ffn.param = "b_down"}) -> tensor<?x48xf16> {
    %0 = ffn.ffn gated silu residual groups 2 ins(%arg0 : tensor<?x48xf16>) up(%arg1 : tensor<2x24x80xf16>) gate(%arg2 : tensor<2x24x80xf16>) down(%arg3 : tensor<2x80x24xf16>) bias_up(%arg4 : tensor<2x80xf16>) bias_gate(%arg5 : tensor<2x80xf16>) bias_down(%arg6 : tensor<2x24xf16>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<max_m = 16, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 2]>, <block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>]> -> tensor<?x48xf16>
    return %0 : tensor<?x48xf16>
  }
  func.func @pre(%arg0: tensor<?x60xbf16> {ffn.param = "input"}, %arg1: tensor<3x20x40xbf16> {ffn.param = "w_up"}, %arg2: tensor<3x40x20xbf16> {ffn.param = "w_down"}, %arg3: tensor<60xbf16> {ffn.param = "norm_scale"}) -> tensor<?x60xbf16> {
    %0 = ffn.ffn relu norm<rmsnorm, pre, eps = 1.0e-06> groups 3 ins(%arg0 : tensor<?x60xbf16>) up(%arg1 : tensor<3x20x40xbf16>) down(%arg2 : tensor<3x40x20xbf16>) norm_scale(%arg3 : tensor<60xbf16>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>]> -> tensor<?x60xbf16>
    return %0 : tensor<?x60xbf16>
  }
}
