// A batch_invariant gated bf16 FFN (ffn-gpu-select-strategy.mlir).
module {
  func.func @inv(%arg0: tensor<?x1024xbf16> {ffn.param = "input"}, %arg1: tensor<1024x4096xbf16> {ffn.param = "w_up"}, %arg2: tensor<1024x4096xbf16> {ffn.param = "w_gate"}, %arg3: tensor<4096x1024xbf16> {ffn.param = "w_down"}) -> tensor<?x1024xbf16> {
    %0 = ffn.ffn gated silu batch_invariant ins(%arg0 : tensor<?x1024xbf16>) up(%arg1 : tensor<1024x4096xbf16>) gate(%arg2 : tensor<1024x4096xbf16>) down(%arg3 : tensor<4096x1024xbf16>) -> tensor<?x1024xbf16>
    return %0 : tensor<?x1024xbf16>
  }
}
