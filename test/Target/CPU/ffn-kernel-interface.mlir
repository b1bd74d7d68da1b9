// RUN: ffn-opt %s --ffn-kernel-interface --allow-unregistered-dialect | FileCheck %s

// An FFN function takes memrefs and writes into a caller-owned output.
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[X:.*]]: memref<?x8xf32> {ffn.param = "input"},
// CHECK-SAME: %[[W:.*]]: memref<8x8xf32> {ffn.param = "w_up"},
// CHECK-SAME: %[[Y:.*]]: memref<?x8xf32> {ffn.param = "output"})
// CHECK-SAME: attributes {ffn.kernel}
// CHECK-NOT: ->
// CHECK: %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict : memref<?x8xf32> to tensor<?x8xf32>
// CHECK: %[[WT:.*]] = bufferization.to_tensor %[[W]] restrict : memref<8x8xf32> to tensor<8x8xf32>
// CHECK: %[[R:.*]] = "test.compute"(%[[XT]], %[[WT]])
// CHECK: bufferization.materialize_in_destination %[[R]] in restrict writable %[[Y]] : (tensor<?x8xf32>, memref<?x8xf32>) -> ()
// CHECK: return{{$}}
func.func @k(%x: tensor<?x8xf32> {ffn.param = "input"}, %w: tensor<8x8xf32> {ffn.param = "w_up"}) -> tensor<?x8xf32> {
  %r = "test.compute"(%x, %w) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// Functions that are not FFN kernels (no ffn.param on every argument) are
// left alone.
// CHECK-LABEL: func.func @helper(%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: bufferization
func.func @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
