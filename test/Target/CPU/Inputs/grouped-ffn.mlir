// A grouped FFN (BERT-base's shape in 4 blocks) and its dense equivalent,
// for ffn-select-strategy.mlir: at 8 threads with a slow hand-off the dense
// one takes the fused bucket, the grouped one never.
func.func @grouped(%x: tensor<?x768xf32>, %w1: tensor<4x192x768xf32>, %w2: tensor<4x768x192xf32>) -> tensor<?x768xf32> {
  %y = ffn.ffn relu groups 4 ins(%x : tensor<?x768xf32>) up(%w1 : tensor<4x192x768xf32>) down(%w2 : tensor<4x768x192xf32>) -> tensor<?x768xf32>
  return %y : tensor<?x768xf32>
}
func.func @dense(%x: tensor<?x768xf32>, %w1: tensor<768x768xf32>, %w2: tensor<768x768xf32>) -> tensor<?x768xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x768xf32>) up(%w1 : tensor<768x768xf32>) down(%w2 : tensor<768x768xf32>) -> tensor<?x768xf32>
  return %y : tensor<?x768xf32>
}
