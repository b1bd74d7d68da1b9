// LLaMA-7B's MLP with int4 weights in groups of 128 (ffn-gpu-select-strategy.mlir).
module {
  func.func @llama_w4(%arg0: tensor<?x4096xbf16> {ffn.param = "input"}, %arg1: tensor<4096x11008xbf16> {ffn.param = "w_up"}, %arg2: tensor<4096x11008xbf16> {ffn.param = "w_gate"}, %arg3: tensor<11008x4096xbf16> {ffn.param = "w_down"}) -> tensor<?x4096xbf16> {
    %0 = ffn.ffn gated silu weights <int4, group = 128> ins(%arg0 : tensor<?x4096xbf16>) up(%arg1 : tensor<4096x11008xbf16>) gate(%arg2 : tensor<4096x11008xbf16>) down(%arg3 : tensor<11008x4096xbf16>) -> tensor<?x4096xbf16>
    return %0 : tensor<?x4096xbf16>
  }
}
