// A ReLU FFN with int8 weights: no sparse GEMM 2 (ffn-select-strategy.mlir).
func.func @q(%x: tensor<?x64xf32>, %w1: tensor<64x128xf32>, %w2: tensor<128x64xf32>) -> tensor<?x64xf32> {
  %y = ffn.ffn relu weights <int8, group = 32> ins(%x : tensor<?x64xf32>) up(%w1 : tensor<64x128xf32>) down(%w2 : tensor<128x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
