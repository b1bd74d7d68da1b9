// RUN: ffn-opt %s --ffn-drop-annotations | FileCheck %s

// Every discardable ffn.* attribute of a function but the kernel contract
// (ffn.kernel_abi, for the kernel glue) and every ffn.param argument
// attribute goes; the module's #ffn.target and everything else stays.
// CHECK: module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2"
// CHECK-SAME: other.module_note = 2 : i64} {
// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: %arg0: memref<?x8xf32>,
// CHECK-SAME: %arg1: memref<8x8xf32> {llvm.noalias},
// CHECK-SAME: %arg2: memref<?x8xf32>)
// CHECK-SAME: attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8,
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>}
// CHECK-NOT: ffn.
// CHECK: return
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 1>, other.module_note = 2 : i64} {
func.func @kernel(%x: memref<?x8xf32> {ffn.param = "input"},
                  %w: memref<8x8xf32> {ffn.param = "w_up", llvm.noalias},
                  %y: memref<?x8xf32> {ffn.param = "output"})
    attributes {ffn.kernel, ffn.workspace_per_row = 64 : i64,
                ffn.strategy_text = "packed", llvm.linkage = #llvm.linkage<internal>,
                ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = identity, gated = false, residual = false, operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [8, 8], packed = memref<8x8xf32>>], strategy = "baseline">} {
  return
}

// A function without annotations is left as it is.
// CHECK-LABEL: func.func private @plain(%arg0: index) attributes {other.note = 1 : i64}
func.func private @plain(%i: index) attributes {other.note = 1 : i64} {
  return
}
}
