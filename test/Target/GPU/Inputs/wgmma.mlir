// The gated bf16 FFN of ffn-gpu-lower.mlir with a strategy for sm_90a:
// mma.sync up to m = 64, wgmma beyond.
module {
  func.func @g(%arg0: tensor<?x64xbf16> {ffn.param = "input"}, %arg1: tensor<64x96xbf16> {ffn.param = "w_up"}, %arg2: tensor<64x96xbf16> {ffn.param = "w_gate"}, %arg3: tensor<96x64xbf16> {ffn.param = "w_down"}, %arg4: tensor<96xbf16> {ffn.param = "b_up"}, %arg5: tensor<96xbf16> {ffn.param = "b_gate"}, %arg6: tensor<64xbf16> {ffn.param = "b_down"}) -> tensor<?x64xbf16> {
    %0 = ffn.ffn gated silu residual ins(%arg0 : tensor<?x64xbf16>) up(%arg1 : tensor<64x96xbf16>) gate(%arg2 : tensor<64x96xbf16>) down(%arg3 : tensor<96x64xbf16>) bias_up(%arg4 : tensor<96xbf16>) bias_gate(%arg5 : tensor<96xbf16>) bias_down(%arg6 : tensor<64xbf16>) strategy #ffn.gpu_strategy<sms = 132, buckets = [<max_m = 64, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>, <block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>]> -> tensor<?x64xbf16>
    return %0 : tensor<?x64xbf16>
  }
}
