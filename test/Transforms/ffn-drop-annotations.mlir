// RUN: ffn-opt %s --ffn-drop-annotations | FileCheck %s

// Every discardable ffn.* attribute of the module (its #ffn.target) and of
// a function, and every ffn.param argument attribute goes; everything else
// stays.
// CHECK: module attributes {other.module_note = 2 : i64} {
// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: %arg0: memref<?x8xf32>,
// CHECK-SAME: %arg1: memref<8x8xf32> {llvm.noalias})
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK-NOT: ffn.
// CHECK: return
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 1>, other.module_note = 2 : i64} {
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
}
