// Mixtures of experts for ffn-gpu-lower.mlir: six bf16 SwiGLU experts of
// 40 -> 72 with every bias, two per row, one shared expert, a pre-RMSNorm
// and a residual, two buckets; and five f32 ReLU experts of 36 -> 64, one
// per row, behind a post-LayerNorm (36 f32 columns: rows already aligned).
module {
  func.func @mix(%arg0: tensor<?x40xbf16> {ffn.param = "input"}, %arg1: tensor<7x40x72xbf16> {ffn.param = "w_up"}, %arg2: tensor<7x40x72xbf16> {ffn.param = "w_gate"}, %arg3: tensor<7x72x40xbf16> {ffn.param = "w_down"}, %arg4: tensor<7x72xbf16> {ffn.param = "b_up"}, %arg5: tensor<7x72xbf16> {ffn.param = "b_gate"}, %arg6: tensor<7x40xbf16> {ffn.param = "b_down"}, %arg7: tensor<40xbf16> {ffn.param = "norm_scale"}, %arg8: tensor<40x6xbf16> {ffn.param = "w_router"}) -> tensor<?x40xbf16> {
    %0 = ffn.ffn gated silu residual norm<rmsnorm, pre, eps = 1.0e-06> moe <experts = 6, top_k = 2, router = softmax_topk, normalize = true, shared = 1> ins(%arg0 : tensor<?x40xbf16>) up(%arg1 : tensor<7x40x72xbf16>) gate(%arg2 : tensor<7x40x72xbf16>) down(%arg3 : tensor<7x72x40xbf16>) bias_up(%arg4 : tensor<7x72xbf16>) bias_gate(%arg5 : tensor<7x72xbf16>) bias_down(%arg6 : tensor<7x40xbf16>) norm_scale(%arg7 : tensor<40xbf16>) router(%arg8 : tensor<40x6xbf16>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<max_m = 16, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 2]>, <block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>]> -> tensor<?x40xbf16>
    return %0 : tensor<?x40xbf16>
  }
  func.func @post(%arg0: tensor<?x36xf32> {ffn.param = "input"}, %arg1: tensor<5x36x64xf32> {ffn.param = "w_up"}, %arg2: tensor<5x64x36xf32> {ffn.param = "w_down"}, %arg3: tensor<36xf32> {ffn.param = "norm_scale"}, %arg4: tensor<36xf32> {ffn.param = "norm_shift"}, %arg5: tensor<36x5xf32> {ffn.param = "w_router"}) -> tensor<?x36xf32> {
    %0 = ffn.ffn relu norm<layernorm, post, eps = 1.0e-05> moe <experts = 5, top_k = 1, router = topk_softmax> ins(%arg0 : tensor<?x36xf32>) up(%arg1 : tensor<5x36x64xf32>) down(%arg2 : tensor<5x64x36xf32>) norm_scale(%arg3 : tensor<36xf32>) norm_shift(%arg4 : tensor<36xf32>) router(%arg5 : tensor<36x5xf32>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<block_m = 128, block_n = 128, warps_m = 2, warps_n = 4, block_k = 32, stages = 3, mma = fma, split_k = [1, 1]>]> -> tensor<?x36xf32>
    return %0 : tensor<?x36xf32>
  }
}
