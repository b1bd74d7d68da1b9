// Mixtral 8x7B's sparse MLP (8 SwiGLU experts of 4096 -> 14336, two per
// row) for ffn-gpu-select-strategy.mlir.
module {
  func.func @mixtral(%arg0: tensor<?x4096xbf16> {ffn.param = "input"}, %arg1: tensor<8x4096x14336xbf16> {ffn.param = "w_up"}, %arg2: tensor<8x4096x14336xbf16> {ffn.param = "w_gate"}, %arg3: tensor<8x14336x4096xbf16> {ffn.param = "w_down"}, %arg4: tensor<4096x8xbf16> {ffn.param = "w_router"}) -> tensor<?x4096xbf16> {
    %0 = ffn.ffn gated silu moe <experts = 8, top_k = 2, router = topk_softmax> ins(%arg0 : tensor<?x4096xbf16>) up(%arg1 : tensor<8x4096x14336xbf16>) gate(%arg2 : tensor<8x4096x14336xbf16>) down(%arg3 : tensor<8x14336x4096xbf16>) router(%arg4 : tensor<4096x8xbf16>) -> tensor<?x4096xbf16>
    return %0 : tensor<?x4096xbf16>
  }
}
