// RUN: ffn-opt %s --ffn-lower-packed | FileCheck %s

// A plain FFN, d_model 20, d_ff 40, with an AVX-512 strategy of 4 x 32
// tiles: up panels 32 wide (2 panels, d_ff padded to 64), down panels 32
// wide (1 panel, d_model padded to 32).

// Pack functions read the [in, out] weights and zero-fill past the edge.
// CHECK-LABEL: func.func private @f_pack_w_up(
// CHECK-SAME: %[[SRC:.*]]: memref<20x40xf32>, %[[DST:.*]]: memref<2x20x32xf32>)
// CHECK: %[[COL:.*]] = arith.addi
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[COL]], %c40
// CHECK: %[[SAFE:.*]] = arith.select %[[IN]], %[[COL]], %c0
// CHECK: %[[V:.*]] = memref.load %[[SRC]][%{{.*}}, %[[SAFE]]]
// CHECK: %[[Z:.*]] = arith.select %[[IN]], %[[V]], %cst
// CHECK: memref.store %[[Z]], %[[DST]]
// CHECK-LABEL: func.func private @f_pack_w_down(
// CHECK-SAME: memref<40x20xf32>, %{{.*}}: memref<1x40x32xf32>)
// CHECK-LABEL: func.func private @f_pack_b_up(
// CHECK-SAME: memref<40xf32>, %{{.*}}: memref<64xf32>)

// The kernel: packed parameters, output, workspace, and the phase to run.
// Workspace per row: H 64 + O 32 floats = 384 bytes (no A section: f32, no
// pre-norm).
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %[[X:.*]]: memref<?x20xf32> {ffn.param = "input"}, %[[WU:.*]]: memref<2x20x32xf32> {ffn.param = "w_up"}, %[[WD:.*]]: memref<1x40x32xf32> {ffn.param = "w_down"}, %[[BU:.*]]: memref<64xf32> {ffn.param = "b_up"}, %[[BD:.*]]: memref<20xf32> {ffn.param = "b_down"}, %[[Y:.*]]: memref<?x20xf32> {ffn.param = "output"}, %[[WS:.*]]: memref<?xi8> {ffn.param = "workspace"}, %[[PH:.*]]: index {ffn.param = "phase"}, %[[B:.*]]: index {ffn.param = "begin"}, %[[E:.*]]: index {ffn.param = "end"})
// CHECK-SAME: ffn.pack = ["f_pack_w_up", "f_pack_w_down", "f_pack_b_up", ""]
// CHECK-SAME: ffn.phase_units = [0, 2, 1, -1]
// CHECK-SAME: ffn.workspace_per_row = 384
// CHECK: %[[H:.*]] = memref.view %[[WS]]{{.*}} : memref<?xi8> to memref<?x64xf32>
// CHECK: %[[O:.*]] = memref.view %[[WS]]{{.*}} : memref<?xi8> to memref<?x32xf32>

// Phase 1, GEMM 1 over up panels [begin, end): 4-row tiles carry 4 x 2
// accumulators through the K loop, then a 2-row tile and one-row tiles for
// the rest.
// CHECK: scf.if
// CHECK: scf.for %[[I0:.*]] = %c0{{(_[0-9]+)?}} to %{{.*}} step %c8{{(_[0-9]+)?}}
// CHECK: scf.for %[[P:.*]] = %[[B]] to %[[E]] step %c1{{(_[0-9]+)?}}
// CHECK: scf.for %{{.*}} = %[[I0]] to %{{.*}} step %c4{{(_[0-9]+)?}}
// CHECK: scf.for %[[K:.*]] = %c0{{(_[0-9]+)?}} to %c20{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: vector.load %[[WU]][%[[P]], %[[K]], %c0{{(_[0-9]+)?}}] : memref<2x20x32xf32>, vector<16xf32>
// CHECK: vector.load %[[WU]][%[[P]], %[[K]], %c16{{(_[0-9]+)?}}] : memref<2x20x32xf32>, vector<16xf32>
// The next panel's row k is prefetched while this one computes.
// CHECK: memref.prefetch %[[WU]][%[[NEXT:.*]], %[[K]], %c0{{(_[0-9]+)?}}], read, locality<2>, data : memref<2x20x32xf32>
// CHECK: memref.load %[[X]]
// CHECK: vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK-COUNT-2: vector.fma
// The epilogue: bias, then relu, on the accumulators, stored into H.
// CHECK: vector.load %[[BU]]
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[H]]
// Then, if at least 2 rows are left, one 2-row tile; then single rows.
// CHECK: %[[FITS:.*]] = arith.cmpi sge, %{{.*}}, %c2{{(_[0-9]+)?}}
// CHECK: scf.if %[[FITS]]
// CHECK: scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c20{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %[[K2:.*]] = %c0{{(_[0-9]+)?}} to %c20{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>)

// Phase 2, GEMM 2 over down panels: the K loop runs over the 40 real
// columns of H only; results go to O.
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c40{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// CHECK: vector.load %[[WD]]
// CHECK: memref.load %[[H]]
// CHECK: vector.store %{{.*}}, %[[O]]

// Phase 3 over rows: down bias and the store to y.
// CHECK: scf.if
// CHECK: scf.for %[[R:.*]] = %[[B]] to %[[E]] step %c1{{(_[0-9]+)?}}
// CHECK: memref.load %[[O]]
// CHECK: memref.load %[[BD]]
// CHECK: memref.store %{{.*}}, %[[Y]][%[[R]], %{{.*}}]
func.func @f(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}, %b1: tensor<40xf32> {ffn.param = "b_up"}, %b2: tensor<20xf32> {ffn.param = "b_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) bias_up(%b1 : tensor<40xf32>) bias_down(%b2 : tensor<20xf32>) strategy<vector_bits = 512, mr = 4, nr = 32, mc = 8, prefetch = true> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// Functions without a strategy are left for convert-ffn-to-linalg.
// CHECK-LABEL: func.func @unscheduled(
// CHECK: ffn.ffn relu
func.func @unscheduled(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
