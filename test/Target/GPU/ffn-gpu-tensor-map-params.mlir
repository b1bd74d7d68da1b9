// RUN: ffn-opt %s -split-input-file --pass-pipeline='builtin.module(gpu.module(llvm.func(ffn-gpu-tensor-map-params)))' -verify-diagnostics | FileCheck %s

// The listed positions become 128-byte, 64-byte aligned by-value
// __grid_constant__ parameters (what NVPTX declares as `.param .align 64
// .b8 name[128]`); the list goes; other arguments keep what they had.
// CHECK-LABEL: llvm.func @k(%arg0: !llvm.ptr, %arg1: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %arg2: i64, %arg3: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}) attributes {nvvm.kernel}
// A kernel without the list is left alone.
// CHECK-LABEL: llvm.func @plain(
// CHECK-SAME: %{{.*}}: !llvm.ptr)
gpu.module @m {
  llvm.func @k(%a: !llvm.ptr, %map0: !llvm.ptr, %m: i64, %map1: !llvm.ptr)
      attributes {ffn.tensor_map_args = array<i64: 1, 3>, nvvm.kernel} {
    llvm.return
  }
  llvm.func @plain(%a: !llvm.ptr) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{ffn-gpu-tensor-map-params: argument 0 is not a pointer argument of this kernel}}
  llvm.func @k(%m: i64) attributes {ffn.tensor_map_args = array<i64: 0>, nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{ffn-gpu-tensor-map-params: argument 2 is not a pointer argument of this kernel}}
  llvm.func @k(%a: !llvm.ptr) attributes {ffn.tensor_map_args = array<i64: 2>, nvvm.kernel} {
    llvm.return
  }
}
