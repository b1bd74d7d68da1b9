// RUN: ffn-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(ffn-vectorize-register-tiles))' | FileCheck %s

// One k-step of a 4-row tile, as ffn-lower-packed tiles it: the
// accumulator rows' reads and writes leave the K loop (each row becomes a
// loop-carried vector<32xf32>), and each k is one load of W's row, one
// scalar load and broadcast of A per row and one FMA per row, straight from
// A and W (the k-step's subviews folded away).
#a = affine_map<(r, k, n) -> (r, k)>
#w = affine_map<(r, k, n) -> (k, n)>
#c = affine_map<(r, k, n) -> (r, n)>
// CHECK-LABEL: func.func @tile(
// CHECK-SAME: %[[A:[^:]*]]: memref<4x20xf32>, %[[W:[^:]*]]: memref<20x32xf32>, %[[ACC:[^:]*]]: memref<4x32xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[I0:.*]] = vector.load %[[ACC]][%c0{{.*}}, %c0{{.*}}] : memref<4x32xf32>, vector<32xf32>
// CHECK-COUNT-3: vector.load %[[ACC]]
// CHECK: %[[R:.*]]:4 = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[T0:.*]] = %[[I0]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK-NOT: %[[ACC]]
// CHECK-NOT: memref.subview
// CHECK: %[[WK:.*]] = vector.load %[[W]][%[[K]], %c0{{.*}}] : memref<20x32xf32>, vector<32xf32>
// CHECK: %[[A0:.*]] = memref.load %[[A]][%c0{{.*}}, %[[K]]] : memref<4x20xf32>
// CHECK: %[[S0:.*]] = vector.broadcast %[[A0]] : f32 to vector<32xf32>
// CHECK: vector.fma %[[WK]], %[[S0]], %[[T0]] : vector<32xf32>
// CHECK-COUNT-3: vector.fma
// CHECK-NOT: %[[ACC]]
// CHECK: scf.yield %{{.*}} : vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>
// CHECK: {llvm.loop_annotation = {{.*}}}
// CHECK-DAG: vector.store %[[R]]#0, %[[ACC]][%c0{{.*}}, %c0{{.*}}] : memref<4x32xf32>, vector<32xf32>
// CHECK-DAG: vector.store %[[R]]#3, %[[ACC]][%c3{{.*}}, %c0{{.*}}] : memref<4x32xf32>, vector<32xf32>
#nounroll = #llvm.loop_annotation<unroll = <disable = true>>
func.func @tile(%A: memref<4x20xf32>, %W: memref<20x32xf32>, %acc: memref<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  scf.for %k = %c0 to %c20 step %c1 {
    %ak = memref.subview %A[0, %k] [4, 1] [1, 1] : memref<4x20xf32> to memref<4x1xf32, strided<[20, 1], offset: ?>>
    %wk = memref.subview %W[%k, 0] [1, 32] [1, 1] : memref<20x32xf32> to memref<1x32xf32, strided<[32, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%ak, %wk : memref<4x1xf32, strided<[20, 1], offset: ?>>, memref<1x32xf32, strided<[32, 1], offset: ?>>)
        outs(%acc : memref<4x32xf32>) attrs = {ffn.register_tile} {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
  } {llvm.loop_annotation = #nounroll}
  return
}

// -----

// A gated tile (gate and up in one contraction, bf16 weights) inside the
// fused schedule's chunk loop: both accumulators stay in registers across
// the chunk loop and the K loop; the weights are widened once per k.
#a = affine_map<(r, k, n) -> (r, k)>
#w = affine_map<(r, k, n) -> (k, n)>
#c = affine_map<(r, k, n) -> (r, n)>
// CHECK-LABEL: func.func @gated_chunks(
// CHECK-SAME: %[[U:[^:]*]]: memref<2x16xf32>, %[[G:[^:]*]]: memref<2x16xf32>)
// CHECK-COUNT-2: vector.load %[[U]]
// CHECK-COUNT-2: vector.load %[[G]]
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-NOT: %[[U]]
// CHECK-NOT: %[[G]]
// CHECK: vector.load %{{.*}} : memref<3x32x16xbf16>, vector<16xbf16>
// CHECK: vector.load %{{.*}} : memref<3x32x16xbf16>, vector<16xbf16>
// CHECK: arith.extf {{.*}} : vector<2x1x16xbf16> to vector<2x1x16xf32>
// CHECK-COUNT-4: vector.fma
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK-DAG: vector.store %{{.*}}, %[[U]][%c0{{.*}}]
// CHECK-DAG: vector.store %{{.*}}, %[[U]][%c1{{.*}}]
// CHECK-DAG: vector.store %{{.*}}, %[[G]][%c0{{.*}}]
// CHECK-DAG: vector.store %{{.*}}, %[[G]][%c1{{.*}}]
func.func @gated_chunks(%A: memref<2x96xf32>, %Wu: memref<3x32x16xbf16>, %Wg: memref<3x32x16xbf16>, %u: memref<2x16xf32>, %g: memref<2x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  scf.for %q = %c0 to %c3 step %c1 {
    %k0 = arith.muli %q, %c32 : index
    scf.for %k = %c0 to %c32 step %c1 {
      %col = arith.addi %k0, %k : index
      %ak = memref.subview %A[0, %col] [2, 1] [1, 1] : memref<2x96xf32> to memref<2x1xf32, strided<[96, 1], offset: ?>>
      %uk = memref.subview %Wu[%q, %k, 0] [1, 1, 16] [1, 1, 1] : memref<3x32x16xbf16> to memref<1x16xbf16, strided<[16, 1], offset: ?>>
      %gk = memref.subview %Wg[%q, %k, 0] [1, 1, 16] [1, 1, 1] : memref<3x32x16xbf16> to memref<1x16xbf16, strided<[16, 1], offset: ?>>
      linalg.generic {indexing_maps = [#a, #w, #w, #c, #c], iterator_types = ["parallel", "reduction", "parallel"]}
          ins(%ak, %uk, %gk : memref<2x1xf32, strided<[96, 1], offset: ?>>, memref<1x16xbf16, strided<[16, 1], offset: ?>>, memref<1x16xbf16, strided<[16, 1], offset: ?>>)
          outs(%u, %g : memref<2x16xf32>, memref<2x16xf32>) attrs = {ffn.register_tile} {
      ^bb0(%x: f32, %wu: bf16, %wg: bf16, %ou: f32, %og: f32):
        %wu32 = arith.extf %wu : bf16 to f32
        %wg32 = arith.extf %wg : bf16 to f32
        %pu = arith.mulf %x, %wu32 : f32
        %su = arith.addf %ou, %pu : f32
        %pg = arith.mulf %x, %wg32 : f32
        %sg = arith.addf %og, %pg : f32
        linalg.yield %su, %sg : f32, f32
      }
    }
  }
  return
}

// -----

// Unmarked linalg ops are not this pass's business.
// CHECK-LABEL: func.func @unmarked(
// CHECK: linalg.matmul
func.func @unmarked(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A marked op the vectorizer cannot take (dynamic shape): an error, not a
// silent scalar loop.
#a = affine_map<(r, k, n) -> (r, k)>
#w = affine_map<(r, k, n) -> (k, n)>
#c = affine_map<(r, k, n) -> (r, n)>
func.func @dynamic(%A: memref<?x1xf32>, %W: memref<1x32xf32>, %acc: memref<?x32xf32>) {
  // expected-error @+1 {{register tile does not vectorize}}
  linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%A, %W : memref<?x1xf32>, memref<1x32xf32>)
      outs(%acc : memref<?x32xf32>) attrs = {ffn.register_tile} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}
