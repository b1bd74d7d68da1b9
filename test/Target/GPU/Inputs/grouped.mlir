// A grouped FFN, which the NVIDIA back end refuses (ffn-gpu-lower.mlir).
func.func @grouped(%x: tensor<?x32xf16>, %w1: tensor<2x16x64xf16>, %w2: tensor<2x64x16xf16>) -> tensor<?x32xf16> {
  %y = ffn.ffn relu groups 2 ins(%x : tensor<?x32xf16>) up(%w1 : tensor<2x16x64xf16>) down(%w2 : tensor<2x64x16xf16>) -> tensor<?x32xf16>
  return %y : tensor<?x32xf16>
}
