// RUN: ffn-opt %s --ffn-kernel-interface --allow-unregistered-dialect | FileCheck %s

// An FFN function takes memrefs and writes into a caller-owned output.
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[X:.*]]: memref<?x8xf32> {ffn.param = "input"},
// CHECK-SAME: %[[W:.*]]: memref<8x8xf32> {ffn.param = "w_up"},
// CHECK-SAME: %[[Y:.*]]: memref<?x8xf32> {ffn.param = "output"})
// CHECK-SAME: attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8,
// CHECK-NOT: ->
// CHECK: %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict : memref<?x8xf32> to tensor<?x8xf32>
// CHECK: %[[WT:.*]] = bufferization.to_tensor %[[W]] restrict : memref<8x8xf32> to tensor<8x8xf32>
// CHECK: %[[R:.*]] = "test.compute"(%[[XT]], %[[WT]])
// CHECK: bufferization.materialize_in_destination %[[R]] in restrict writable %[[Y]] : (tensor<?x8xf32>, memref<?x8xf32>) -> ()
// CHECK: return{{$}}
// The contract (convert-ffn-to-linalg writes it) counts the output, which
// is a result before this pass and the last argument after it.
func.func @k(%x: tensor<?x8xf32> {ffn.param = "input"}, %w: tensor<8x8xf32> {ffn.param = "w_up"}) -> tensor<?x8xf32>
    attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = identity, gated = false, residual = false, operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [8, 8], packed = memref<8x8xf32>>], strategy = "baseline">} {
  %r = "test.compute"(%x, %w) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// Functions that are not FFN kernels (no contract) are left alone.
// CHECK-LABEL: func.func @helper(%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: bufferization
func.func @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
