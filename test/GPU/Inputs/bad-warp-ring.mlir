// A bucket with a ring (stages = 4) cannot also stream through warp rings.
func.func @f(%x: tensor<?x64xbf16>, %w1: tensor<64x128xbf16>, %w2: tensor<128x64xbf16>) -> tensor<?x64xbf16> {
  %0 = ffn.ffn relu ins(%x : tensor<?x64xbf16>) up(%w1 : tensor<64x128xbf16>) down(%w2 : tensor<128x64xbf16>) strategy #ffn.gpu_strategy<sms = 132, buckets = [<block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 4, warp_stages = 2, mma = mma_sync, split_k = [1, 1]>]> -> tensor<?x64xbf16>
  return %0 : tensor<?x64xbf16>
}
