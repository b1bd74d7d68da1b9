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
// One token-count bucket (no fused schedule); its phases: no A section,
// 2 up panels, 1 down panel, no chunk groups, rows.
// CHECK-SAME: ffn.bucket_max_m = [-1]
// CHECK-SAME: ffn.pack = ["f_pack_w_up", "f_pack_w_down", "f_pack_b_up", ""]
// CHECK-SAME: ffn.phase_units = {{\[}}[0, 2, 1, 0, -1]]
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

// Phase 4 over rows: down bias and the store to y.
// CHECK: scf.if
// CHECK: scf.for %[[R:.*]] = %[[B]] to %[[E]] step %c1{{(_[0-9]+)?}}
// CHECK: memref.load %[[O]]
// CHECK: memref.load %[[BD]]
// CHECK: memref.store %{{.*}}, %[[Y]][%[[R]], %{{.*}}]
func.func @f(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}, %b1: tensor<40xf32> {ffn.param = "b_up"}, %b2: tensor<20xf32> {ffn.param = "b_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) bias_up(%b1 : tensor<40xf32>) bias_down(%b2 : tensor<20xf32>) strategy<vector_bits = 512, mr = 4, nr = 32, mc = 8, prefetch = true> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// The fused small-m bucket: m <= 4 runs d_ff in chunks of 32 columns over 2
// groups. W_down is packed chunk-major [chunk][panel][32][32] (rows past
// d_ff = 40 are zero) so a chunk's W_down rows are one contiguous block.
// Workspace per row: max(two-pass H 64 + O 32, 2 groups x (chunk 32 +
// partial output 32)) floats = 512 bytes.
// CHECK-LABEL: func.func private @g_pack_w_down(
// CHECK-SAME: memref<40x20xf32>, %{{.*}}: memref<2x1x32x32xf32>)
// CHECK: arith.cmpi slt, %{{.*}}, %c40
// CHECK: arith.cmpi slt, %{{.*}}, %c20
// CHECK: arith.andi
// CHECK-LABEL: func.func @g(
// CHECK-SAME: %[[GX:[^:]*]]: memref<?x20xf32> {ffn.param = "input"}, %[[GWU:[^:]*]]: memref<2x20x32xf32> {ffn.param = "w_up"}, %[[GWD:[^:]*]]: memref<2x1x32x32xf32> {ffn.param = "w_down"}
// Two buckets: m <= 4 runs phases 3 (2 chunk groups) and 4; larger m the
// two-pass phases 1, 2 and 4.
// CHECK-SAME: ffn.bucket_max_m = [4, -1]
// CHECK-SAME: ffn.phase_units = {{\[}}[0, 0, 0, 2, -1], [0, 2, 1, 0, -1]]
// CHECK-SAME: fused_max_m = 4, chunk = 32, groups = 2
// CHECK-SAME: ffn.strategy_text = "m <= 4: fused whole-FFN, d_ff in chunks of 32 over 2 groups; m > 4: two-pass;
// CHECK-SAME: ffn.workspace_per_row = 512
// The two-pass GEMM 2 walks the chunk-major panel chunk by chunk, keeping
// its accumulators in registers: the real rows of each chunk only.
// CHECK: scf.for %[[C:.*]] = %c0{{(_[0-9]+)?}} to %c2{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// CHECK: %[[LEN:.*]] = arith.minsi %c32{{(_[0-9]+)?}}, %{{.*}}
// CHECK: scf.for %[[K:.*]] = %c0{{(_[0-9]+)?}} to %[[LEN]] step %c1{{(_[0-9]+)?}} iter_args
// CHECK: vector.load %[[GWD]][%[[C]], %{{.*}}, %[[K]], %c0{{(_[0-9]+)?}}] : memref<2x1x32x32xf32>, vector<16xf32>
// Phase 3, over groups [begin, end): each group has its chunk buffer Hc and
// its partial output Og, zeroed first.
// CHECK: arith.cmpi eq, %{{.*}}, %c3
// CHECK: scf.for %[[G:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[HC:.*]] = memref.view {{.*}} to memref<?x32xf32>
// CHECK: %[[OG:.*]] = memref.view {{.*}} to memref<?x32xf32>
// CHECK: vector.store %{{.*}}, %[[OG]]
// For each chunk of the group: Hc = act(x W_up[:, chunk]) ...
// CHECK: scf.for %[[CH:.*]] = %{{.*}} to %{{.*}} step
// CHECK: vector.load %[[GWU]]
// CHECK: arith.negf
// CHECK: vector.store %{{.*}}, %[[HC]]
// ... then Og += Hc W_down[chunk, :]: accumulators start from Og, the K loop
// covers the chunk's real rows and reads the chunk's contiguous block.
// CHECK: %[[KLEN:.*]] = arith.minsi %c32{{(_[0-9]+)?}}, %{{.*}}
// CHECK: vector.load %[[OG]]
// CHECK: scf.for %[[KK:.*]] = %c0{{(_[0-9]+)?}} to %[[KLEN]] step %c1{{(_[0-9]+)?}} iter_args
// CHECK: vector.load %[[GWD]][%[[CH]], %{{.*}}, %[[KK]], %c0{{(_[0-9]+)?}}]
// CHECK: memref.load %[[HC]][%{{.*}}, %[[KK]]]
// CHECK: vector.store %{{.*}}, %[[OG]]
// Phase 4: for m <= 4 the output is the sum of the groups' partials, in
// group order.
// CHECK: %[[SMALL:.*]] = arith.cmpi sle, %{{.*}}, %c4
// CHECK: %[[P0:.*]] = memref.view
// CHECK: %[[P1:.*]] = memref.view
// CHECK: arith.cmpi eq, %{{.*}}, %c4
// CHECK: %[[TWO:.*]] = memref.load %{{.*}}
// CHECK: %[[A0:.*]] = memref.load %[[P0]]
// CHECK: %[[A1:.*]] = memref.load %[[P1]]
// CHECK: %[[SUM:.*]] = arith.addf %[[A0]], %[[A1]]
// CHECK: arith.select %[[SMALL]], %[[SUM]], %[[TWO]]
func.func @g(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn sigmoid ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) strategy<vector_bits = 512, mr = 4, nr = 32, mc = 8, prefetch = false, fused_max_m = 4, chunk = 32, groups = 2> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// Functions without a strategy are left for convert-ffn-to-linalg.
// CHECK-LABEL: func.func @unscheduled(
// CHECK: ffn.ffn relu
func.func @unscheduled(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
