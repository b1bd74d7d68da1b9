// RUN: ffn-opt %s --ffn-drop-annotations | FileCheck %s

// Every discardable ffn.* attribute of a function and every ffn.param
// argument attribute goes; everything else stays.
// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: %arg0: memref<?x8xf32>,
// CHECK-SAME: %arg1: memref<8x8xf32> {llvm.noalias})
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK-NOT: ffn.
// CHECK: return
func.func @kernel(%x: memref<?x8xf32> {ffn.param = "input"},
                  %w: memref<8x8xf32> {ffn.param = "w_up", llvm.noalias})
    attributes {ffn.kernel, ffn.workspace_per_row = 64 : i64,
                ffn.strategy_text = "packed", llvm.linkage = #llvm.linkage<internal>} {
  return
}

// A function without annotations is left as it is.
// CHECK-LABEL: func.func private @plain(%arg0: index) attributes {other.note = 1 : i64}
func.func private @plain(%i: index) attributes {other.note = 1 : i64} {
  return
}
