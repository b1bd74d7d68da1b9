// RUN: ffn-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect --ffn-workspace-allocs | FileCheck %s

// Each [m, ...] scratch buffer of a kernel becomes a view of its own section
// of a new trailing workspace argument: rows of 64-byte multiples (256 f32
// = 1024 bytes; 20 f32 = 80 -> 128 bytes; 3 bf16 = 6 -> 64 bytes), section
// i starting at m * (the rows before it); deallocations go.
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x20xf32> {ffn.param = "input"}, %{{.*}}: memref<?x20xf32> {ffn.param = "output"}, %[[WS:[^:]*]]: memref<?xi8> {ffn.param = "workspace"})
// The contract gains the workspace: 1216 bytes per row.
// CHECK-SAME: ffn.kernel_abi = #ffn.kernel_abi<d_model = 20, d_ff = 256, {{.*}}, workspace_per_row = 1216, strategy = "baseline">
// CHECK: %[[M:.*]] = memref.dim %[[X]], %c0
// CHECK: %[[OFF0:.*]] = arith.muli %[[M]], %c0
// CHECK: %[[H:.*]] = memref.view %[[WS]][%[[OFF0]]][%[[M]]] : memref<?xi8> to memref<?x256xf32>
// CHECK: %[[OFF1:.*]] = arith.muli %[[M]], %c1024
// CHECK: %[[O:.*]] = memref.view %[[WS]][%[[OFF1]]][%[[M]]] : memref<?xi8> to memref<?x20xf32>
// CHECK: %[[OFF2:.*]] = arith.muli %[[M]], %c1152
// CHECK: %[[B:.*]] = memref.view %[[WS]][%[[OFF2]]][%[[M]]] : memref<?xi8> to memref<?x3xbf16>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: "test.use"(%[[H]], %[[O]], %[[B]])
// CHECK: memref.copy %[[O]], %{{.*}}
func.func @k(%x: memref<?x20xf32> {ffn.param = "input"}, %y: memref<?x20xf32> {ffn.param = "output"}) attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 20, d_ff = 256, storage = f32, activation = relu, gated = false, residual = false, operand_type = f32, params = [], strategy = "baseline">} {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x20xf32>
  %h = memref.alloc(%m) {alignment = 64 : i64} : memref<?x256xf32>
  %o = memref.alloc(%m) {alignment = 64 : i64} : memref<?x20xf32>
  %b = memref.alloc(%m) : memref<?x3xbf16>
  "test.use"(%h, %o, %b) : (memref<?x256xf32>, memref<?x20xf32>, memref<?x3xbf16>) -> ()
  memref.copy %o, %y : memref<?x20xf32> to memref<?x20xf32>
  memref.dealloc %h : memref<?x256xf32>
  memref.dealloc %o : memref<?x20xf32>
  memref.dealloc %b : memref<?x3xbf16>
  return
}

// -----

// A buffer whose size is not the input's row count keeps its allocation,
// with a warning; the function is left as it is.
// CHECK-LABEL: func.func @fixed(
// CHECK-NOT: workspace
// CHECK: memref.alloc
func.func @fixed(%x: memref<?x20xf32> {ffn.param = "input"}, %y: memref<?x20xf32> {ffn.param = "output"}) attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 20, d_ff = 256, storage = f32, activation = relu, gated = false, residual = false, operand_type = f32, params = [], strategy = "baseline">} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %y, %c0 : memref<?x20xf32>
  // expected-warning @+1 {{kernel 'fixed' keeps this heap allocation: its row count is not the input's}}
  %h = memref.alloc(%n) : memref<?x256xf32>
  "test.use"(%h) : (memref<?x256xf32>) -> ()
  return
}

// -----

// A function that is not a kernel, or already has a workspace, is not
// touched.
// CHECK-LABEL: func.func @helper(
// CHECK: memref.alloc
func.func @helper(%x: memref<?x20xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x20xf32>
  %h = memref.alloc(%m) : memref<?x256xf32>
  "test.use"(%h) : (memref<?x256xf32>) -> ()
  return
}
