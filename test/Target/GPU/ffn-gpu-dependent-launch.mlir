// RUN: ffn-opt %s --pass-pipeline='builtin.module(gpu.module(ffn-gpu-dependent-launch))' | FileCheck %s

// On sm_90 and later every kernel starts by releasing its dependents and
// then waiting for the grid before it, ahead of its first memory access;
// functions that are not kernels are left alone.
// CHECK-LABEL: gpu.module @hopper
// CHECK: gpu.func @gemm(%[[A:.*]]: memref<?xf32>) kernel
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: arith.constant
// CHECK-NEXT: memref.load %[[A]]
// CHECK: gpu.func @early_exit(
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: gpu.return
// CHECK: gpu.func @helper(
// CHECK-NOT: griddepcontrol
// CHECK: gpu.return
gpu.module @hopper [#nvvm.target<chip = "sm_90a">] {
  gpu.func @gemm(%a: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<?xf32>
    memref.store %v, %a[%c0] : memref<?xf32>
    gpu.return
  }
  // A block that leaves at once still waits first, so its grid completes
  // only after the grid before it.
  gpu.func @early_exit() kernel {
    gpu.return
  }
  gpu.func @helper() {
    gpu.return
  }
}

// Later chips too.
// CHECK-LABEL: gpu.module @later
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: nvvm.griddepcontrol wait
gpu.module @later [#nvvm.target<chip = "sm_100a">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// sm_80 has no griddepcontrol, nor does a module without an NVVM target.
// CHECK-LABEL: gpu.module @ampere
// CHECK-NOT: griddepcontrol
// CHECK-LABEL: gpu.module @untargeted
// CHECK-NOT: griddepcontrol
gpu.module @ampere [#nvvm.target<chip = "sm_80">] {
  gpu.func @k() kernel {
    gpu.return
  }
}
gpu.module @untargeted {
  gpu.func @k() kernel {
    gpu.return
  }
}
