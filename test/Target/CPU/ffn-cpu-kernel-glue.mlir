// RUN: ffn-opt %s -split-input-file --convert-func-to-llvm --ffn-cpu-kernel-glue -verify-diagnostics | FileCheck %s

// The glue reads each kernel's #ffn.kernel_abi after func-to-llvm (here on
// empty kernels, so the glue itself is all there is to see) and builds the
// plain-pointer entry points and the descriptor of ffn/kernel_abi.h.

// The contract is consumed: no #ffn.target, no ffn.kernel_abi is left.
// CHECK-LABEL: module {
// CHECK-NOT: ffn.target
// CHECK-NOT: ffn.kernel_abi

// The pack function is reached through the pack entry point only.
// CHECK: llvm.func internal @k_pack_w_up(

// The kernel is renamed and hidden behind its entry points.
// CHECK: llvm.func internal @__ffn_k_impl(

// A phase: an empty unit range returns at once; otherwise each buffer's
// memref fields are rebuilt from the contract (x and y [m, 8], the packed
// w_up [1, 8, 8] through params[0], b_down [8] through params[1], the
// workspace m * 96 bytes) and the kernel runs the phase on [begin, end).
// CHECK-LABEL: llvm.func @ffn_k_phase(
// CHECK-SAME: %[[PHASE:.*]]: i64, %[[M:.*]]: i64, %[[X:.*]]: !llvm.ptr, %[[PARAMS:.*]]: !llvm.ptr, %[[Y:.*]]: !llvm.ptr, %[[WS:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// CHECK: %[[EMPTY:.*]] = llvm.icmp "slt" %[[BEGIN]], %[[END]] : i64
// CHECK: llvm.cond_br %[[EMPTY]], ^[[CALL:.*]], ^[[DONE:.*]]
// CHECK: ^[[CALL]]:
// CHECK: %[[SLOT0:.*]] = llvm.getelementptr inbounds %[[PARAMS]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[W:.*]] = llvm.load %[[SLOT0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[SIZE:.*]] = llvm.mul %[[M]], %{{.*}} : i64
// CHECK: llvm.call @__ffn_k_impl(%[[X]], %[[X]], %{{.*}}, %[[M]], %{{.*}}, %{{.*}}, %{{.*}}, %[[W]], %[[W]], {{.*}}, %[[B]], %[[B]], {{.*}}, %[[Y]], %[[Y]], %{{.*}}, %[[M]], {{.*}}, %[[WS]], %[[WS]], %{{.*}}, %[[SIZE]], %{{.*}}, %[[PHASE]], %[[BEGIN]], %[[END]])
// CHECK: ^[[DONE]]:
// CHECK-NEXT: llvm.return

// Units per phase and bucket (m <= 4, then larger; -1 = m rows).
// CHECK: llvm.mlir.global private constant @ffn_k_phase_table()
// CHECK: llvm.mlir.constant(dense<[-1, 0, 2, -1, 1, 0]> : tensor<6xi64>) : !llvm.array<6 x i64>
// CHECK-LABEL: llvm.func @ffn_k_phase_units(
// CHECK: llvm.icmp "ult"
// CHECK: llvm.icmp "sgt"
// CHECK: llvm.select

// Run: each phase over all its units, in order.
// CHECK-LABEL: llvm.func @ffn_k_run(
// CHECK-COUNT-3: llvm.call @ffn_k_phase_units
// CHECK: llvm.return

// CHECK: llvm.mlir.global private constant @ffn_k_cpu()
// CHECK: llvm.mlir.addressof @ffn_k_run
// CHECK: llvm.mlir.addressof @ffn_k_phase_units
// CHECK: llvm.mlir.addressof @ffn_k_phase

// Pack: parameter 0 through its pack function, parameter 1 copied (32
// bytes).
// CHECK-LABEL: llvm.func @ffn_k_pack(
// CHECK: llvm.switch %{{.*}} : i64, ^[[PDONE:.*]] [
// CHECK-NEXT: 0: ^[[P0:[a-z0-9]*]],
// CHECK-NEXT: 1: ^[[P1:[a-z0-9]*]]
// CHECK: ^[[P0]]:
// CHECK: llvm.call @k_pack_w_up(
// CHECK: ^[[P1]]:
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(32 : i64) : i64
// CHECK: "llvm.intr.memcpy"(%{{.*}}, %{{.*}}, %[[BYTES]]) <{isVolatile = false}>

// The descriptor, exported; its strings private.
// CHECK: llvm.mlir.global private unnamed_addr constant @ffn_k_param_name("w_up\00")
// CHECK: llvm.mlir.global private unnamed_addr constant @ffn_k_param_name_0("b_down\00")
// CHECK: llvm.mlir.global private constant @ffn_k_params()
// CHECK: llvm.mlir.global private unnamed_addr constant @ffn_k_name("k\00")
// CHECK: llvm.mlir.global private unnamed_addr constant @ffn_k_target("x86-64-avx2\00")
// CHECK: llvm.mlir.global private unnamed_addr constant @ffn_k_strategy("packed\00")
// CHECK: llvm.mlir.global external constant @ffn_kernel_k()
// CHECK: llvm.mlir.addressof @ffn_k_params
// CHECK: llvm.mlir.addressof @ffn_k_pack
// CHECK: llvm.mlir.addressof @ffn_k_strategy
// CHECK: llvm.mlir.addressof @ffn_k_cpu
// CHECK: llvm.mlir.zero : !llvm.ptr
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 2>} {
  func.func private @k_pack_w_up(%src: memref<8x8xf32>, %dst: memref<1x8x8xf32>) {
    return
  }
  func.func @k(%x: memref<?x8xf32>, %w: memref<1x8x8xf32>, %b: memref<8xf32>,
               %y: memref<?x8xf32>, %ws: memref<?xi8>, %phase: index,
               %begin: index, %end: index)
      attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = relu, gated = false, residual = true, operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [8, 8], packed = memref<1x8x8xf32>, pack = "k_pack_w_up">, #ffn.kernel_param<name = "b_down", shape = [8], packed = memref<8xf32>>], workspace_per_row = 96, phase_units = [array<i64: -1, 0, 2>, array<i64: -1, 1, 0>], bucket_max_m = [4, -1], strategy = "packed">} {
    return
  }
}

// -----

// An unphased kernel (the baseline) is one phase of one unit, called
// without a phase range.
// CHECK-LABEL: llvm.func @ffn_base_phase(
// CHECK: llvm.call @__ffn_base_impl(%{{[^)]*}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64) -> ()
// CHECK: llvm.mlir.constant(dense<1> : tensor<1xi64>) : !llvm.array<1 x i64>
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1>} {
  func.func @base(%x: memref<?x8xf32>, %w: memref<8x8xf32>, %y: memref<?x8xf32>)
      attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = identity, gated = false, residual = false, operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [8, 8], packed = memref<8x8xf32>>], strategy = "baseline">} {
    return
  }
}

// -----

// The descriptor's target is the module's.
// expected-error @+1 {{ffn-cpu-kernel-glue: the module needs a CPU #ffn.target (ffn-attach-target)}}
module {
  func.func @untargeted(%x: memref<?x8xf32>, %y: memref<?x8xf32>)
      attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = identity, gated = false, residual = false, operand_type = f32, params = [], strategy = "s">} {
    return
  }
}

// -----

// A device kernel's contract (a stub without code) is the GPU glue's.
// expected-error @+1 {{ffn-cpu-kernel-glue: kernel 'dev' has no CPU code (a device kernel: use ffn-gpu-kernel-glue)}}
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 1>} {
  func.func private @dev(memref<?x8xf16>, memref<?x8xf16>)
      attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f16, activation = relu, gated = false, residual = false, operand_type = f16, params = [], strategy = "gpu", device_module = "dev_device", launches = []>}
}

// -----

// The names of the kernel ABI are the glue's to define.
// expected-error @+1 {{kernel glue: the module already defines 'ffn_clash_run', a name the kernel ABI reserves}}
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 1>} {
  func.func @clash(%x: memref<?x8xf32>, %y: memref<?x8xf32>)
      attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = identity, gated = false, residual = false, operand_type = f32, params = [], strategy = "s">} {
    return
  }
  func.func @ffn_clash_run() {
    return
  }
}

// -----

// A grouped FFN's descriptor: kind 2 (FFN_KIND_GROUPED), d_model and d_ff
// the whole row's, and `groups` after router_normalize (field 23), before
// num_params; its stacked parameter holds 2 blocks of 128 bytes.
// CHECK-LABEL: llvm.mlir.global external constant @ffn_kernel_grouped()
// CHECK-NEXT: llvm.mlir.constant(16 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(264 : i64) : i64
// CHECK-NEXT: llvm.mlir.addressof @ffn_grouped_name
// CHECK-NEXT: llvm.mlir.addressof @ffn_grouped_target
// CHECK-NEXT: %[[KIND:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(8 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(16 : i64) : i64
// CHECK: %[[GROUPS:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: llvm.mlir.addressof @ffn_grouped_params
// CHECK: llvm.insertvalue %[[KIND]], %{{.*}}[4]
// CHECK: llvm.insertvalue %[[GROUPS]], %{{.*}}[23]
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 1>} {
  func.func @grouped(%x: memref<?x8xf32>, %w: memref<256xi8>, %y: memref<?x8xf32>, %ws: memref<?xi8>, %phase: index, %begin: index, %end: index)
      attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 16, storage = f32, activation = relu, gated = false, residual = false, groups = 2, operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [4, 8], packed = memref<4x8xf32>, experts = 2>], workspace_per_row = 64, phase_units = [array<i64: -1, 2, 0, 2, 0, 0>], bucket_max_m = [-1], strategy = "packed">} {
    return
  }
}
