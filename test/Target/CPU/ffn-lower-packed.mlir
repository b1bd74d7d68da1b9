// RUN: ffn-opt %s --split-input-file --verify-diagnostics --ffn-lower-packed | FileCheck %s --check-prefixes=CHECK,DOT

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

// GEMM 1, one private function that the kernel's phases call (both
// schedules, where there are two): (A, C, column base, m, up panels
// [p0, p1), weights, bias).
// CHECK-LABEL: func.func private @f.gemm_up(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x?xf32>, %[[C:[^:]*]]: memref<?x?xf32>, %[[CB:[^:]*]]: index, %[[M:[^:]*]]: index, %[[P0:[^:]*]]: index, %[[P1:[^:]*]]: index, %[[UW:[^:]*]]: memref<2x20x32xf32>, %[[UB:[^:]*]]: memref<64xf32>)
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline", "noduplicate"]}
// Accumulator buffers on the stack, once: 1 and 2 rows for the short
// tiles, 4 (the tile buffer that the epilogue reads) for full ones.
// CHECK: %[[T1:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x32xf32>
// CHECK: %[[T2:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x32xf32>
// CHECK: %[[TB:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x32xf32>
// For each 8-row block and each panel, tiles down the block: each the
// tallest of 4, 2 and 1 rows that fits what is left.
// CHECK: scf.for %[[I0:.*]] = %c0{{(_[0-9]+)?}} to %[[M]] step %c8{{(_[0-9]+)?}}
// CHECK: %[[END:.*]] = arith.minsi
// CHECK: scf.for %[[P:.*]] = %[[P0]] to %[[P1]] step %c1{{(_[0-9]+)?}}
// CHECK: scf.while (%{{.*}} = %[[I0]])
// CHECK: arith.cmpi slt, %{{.*}}, %[[END]]
// CHECK: ^bb0(%[[ROW:.*]]: index):
// CHECK: %[[LEFT:.*]] = arith.subi %[[END]], %[[ROW]]
// CHECK: arith.cmpi sge, %[[LEFT]], %c2{{(_[0-9]+)?}}
// CHECK: arith.cmpi sge, %[[LEFT]], %c4{{(_[0-9]+)?}}
// CHECK: %[[ROWS:.*]] = arith.select
// The block's first tile streams the panel from memory and prefetches
// ahead of itself. The full-height tile has two versions: the first tile's,
// and the later tiles' (the panel in cache), with no prefetch at all.
// CHECK: scf.index_switch %[[ROWS]]
// A 4-row tile starts its accumulators at zero, then a K loop made by
// TilingInterface runs a one-k-step contraction acc[4 x 32] += A[4 x 1] *
// W[1 x 32] (ffn-vectorize-register-tiles turns it into FMAs).
// CHECK: case 4 {
// CHECK-NEXT: %[[STREAMS:.*]] = arith.cmpi eq, %[[ROW]], %[[I0]]
// CHECK-NEXT: scf.if %[[STREAMS]] {
// CHECK-COUNT-8: vector.store %{{.*}}, %[[TB]]
// CHECK: %[[AV:.*]] = memref.subview %[[A]][%[[ROW]], %{{.*}}] [4, %{{.*}}] [1, 1]
// CHECK: %[[WV:.*]] = memref.subview %[[UW]][%[[P]], 0, 0] [1, %{{.*}}, 32] [1, 1, 1] : memref<2x20x32xf32> to memref<?x32xf32
// CHECK: scf.for %[[K:.*]] = %c0{{(_[0-9]+)?}} to %c20{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// 2 KiB down the weights (16 rows of 128 bytes) into L1, one prefetch per
// cache line, in a flat view of the panels: past the panel's 20 rows come
// the next panel's (clamped to the last row).
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[UW]] {{\[}}[0, 1], [2]] : memref<2x20x32xf32> into memref<40x32xf32>
// CHECK: %[[PROW:.*]] = arith.muli %[[P]], %c20{{(_[0-9]+)?}}
// CHECK: %[[ATK:.*]] = arith.addi %[[PROW]], %[[K]]
// CHECK: %[[AT:.*]] = arith.addi %[[ATK]], %c16{{(_[0-9]+)?}}
// CHECK: %[[LAST:.*]] = arith.minsi %[[AT]], %c39{{(_[0-9]+)?}}
// CHECK: memref.prefetch %[[FLAT]][%[[LAST]], %c0{{(_[0-9]+)?}}], read, locality<3>, data : memref<40x32xf32>
// CHECK: memref.prefetch %[[FLAT]][%[[LAST]], %c16{{(_[0-9]+)?}}], read, locality<3>, data : memref<40x32xf32>
// CHECK: %[[AK:.*]] = memref.subview %[[AV]][0, %[[K]]] [4, 1] [1, 1]
// CHECK: %[[WK:.*]] = memref.subview %[[WV]][%[[K]], 0] [1, 32] [1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[MA:.*]], #[[MW:.*]], #[[MC:.*]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[AK]], %[[WK]] : memref<4x1xf32, {{.*}}>, memref<1x32xf32, {{.*}}>) outs(%{{.*}} : memref<4x32xf32{{.*}}>) attrs = {ffn.register_tile}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: } {llvm.loop_annotation = #{{.*}}}
// CHECK: } else {
// CHECK: scf.for
// CHECK-NOT: memref.prefetch
// CHECK: linalg.generic
// CHECK-SAME: attrs = {ffn.register_tile}
// CHECK: } {llvm.loop_annotation = #{{.*}}}
// Shorter tiles compute in their own buffers and copy into the tile buffer.
// CHECK: case 2 {
// CHECK-COUNT-4: vector.store %{{.*}}, %[[T2]]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<2x32xf32{{.*}}>) attrs = {ffn.register_tile}
// CHECK-COUNT-4: vector.store %{{.*}}, %[[TB]]
// CHECK: default {
// CHECK-COUNT-2: vector.store %{{.*}}, %[[T1]]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<1x32xf32{{.*}}>) attrs = {ffn.register_tile}
// CHECK-COUNT-2: vector.store %{{.*}}, %[[TB]]
// Then one epilogue for every tile shape: over the tile's rows, bias and
// relu on the buffered accumulators, stored into C; the next tile starts
// past them.
// CHECK: scf.for %[[R:.*]] = %c0{{(_[0-9]+)?}} to %[[ROWS]] step %c1{{(_[0-9]+)?}}
// CHECK: vector.load %[[TB]][%[[R]], %c0{{(_[0-9]+)?}}]
// CHECK: vector.load %[[UB]]
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[C]]
// CHECK: %[[NEXTROW:.*]] = arith.addi %[[ROW]], %[[ROWS]]
// CHECK: scf.yield %[[NEXTROW]]
// CHECK-NOT: arith.maximumf
// CHECK: return

// GEMM 2: (A, C, m, down panels [p0, p1), mode, weights, y, b_down); the
// K loop runs over the 40 real columns of A only. In mode 2 (the two-pass
// call; no post-norm here) a tile goes through the tile buffer and the
// epilogue adds b_down and stores into y: whole vectors where they fit in
// d = 20, element by element past that; otherwise it goes into C.
// CHECK-LABEL: func.func private @f.gemm_down(
// CHECK-SAME: %[[DA:[^:]*]]: memref<?x?xf32>, %[[DC:[^:]*]]: memref<?x?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[MODE:[^:]*]]: index, %[[DW:[^:]*]]: memref<1x40x32xf32>, %[[DY:[^:]*]]: memref<?x20xf32>, %[[DB:[^:]*]]: memref<20xf32>)
// CHECK: %[[FIN:.*]] = arith.cmpi eq, %[[MODE]], %c2
// CHECK: %[[DTB:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x32xf32>
// CHECK: case 4 {
// CHECK: memref.subview %[[DA]]
// CHECK: memref.subview %[[DW]]
// CHECK: scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c40{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} {
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<4x32xf32{{.*}}>) attrs = {ffn.register_tile}
// CHECK: scf.if %[[FIN]] {
// CHECK-NEXT: } else {
// CHECK: vector.store %{{.*}}, %[[DC]]
// CHECK: case 2 {
// CHECK: scf.if %[[FIN]] {
// CHECK: vector.store %{{.*}}, %[[DTB]]
// CHECK: } else {
// CHECK: vector.store %{{.*}}, %[[DC]]
// CHECK: scf.if %[[FIN]] {
// CHECK: scf.for %[[FR:.*]] = %c0{{(_[0-9]+)?}} to %{{.*}} step %c1{{(_[0-9]+)?}}
// CHECK: %[[FITS:.*]] = arith.cmpi sle, %{{.*}}, %c20{{(_[0-9]+)?}}
// CHECK: scf.if %[[FITS]] {
// CHECK: vector.load %[[DTB]][%[[FR]], %c0{{(_[0-9]+)?}}]
// CHECK: vector.load %[[DB]]
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[DY]]
// CHECK: } else {
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c20{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}}
// CHECK: memref.load %[[DTB]]
// CHECK: memref.load %[[DB]][%[[J]]]
// CHECK: memref.store %{{.*}}, %[[DY]][%{{.*}}, %[[J]]]

// The kernel: packed parameters, output, workspace, and the phase to run.
// Workspace per row: H 64 + O 32 floats = 384 bytes (no A section: f32, no
// pre-norm).
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %[[X:.*]]: memref<?x20xf32> {ffn.param = "input"}, %[[WU:.*]]: memref<2x20x32xf32> {ffn.param = "w_up"}, %[[WD:.*]]: memref<1x40x32xf32> {ffn.param = "w_down"}, %[[BU:.*]]: memref<64xf32> {ffn.param = "b_up"}, %[[BD:.*]]: memref<20xf32> {ffn.param = "b_down"}, %[[Y:.*]]: memref<?x20xf32> {ffn.param = "output"}, %[[WS:.*]]: memref<?xi8> {ffn.param = "workspace"}, %[[PH:.*]]: index {ffn.param = "phase"}, %[[B:.*]]: index {ffn.param = "begin"}, %[[E:.*]]: index {ffn.param = "end"})
// One token-count bucket (no fused schedule); its phases: no A section,
// 2 up panels, 1 down panel (which also finishes y), no chunk groups, no
// row phase.
// The contract names each parameter's logical shape, packed buffer and
// pack function (b_down is read as it is).
// CHECK-SAME: ffn.kernel_abi = #ffn.kernel_abi<d_model = 20, d_ff = 40, storage = f32, activation = relu, gated = false, residual = false, operand_type = f32
// CHECK-SAME: params = [#ffn.kernel_param<name = "w_up", shape = [20, 40], packed = memref<2x20x32xf32>, pack = "f_pack_w_up">, #ffn.kernel_param<name = "w_down", shape = [40, 20], packed = memref<1x40x32xf32>, pack = "f_pack_w_down">, #ffn.kernel_param<name = "b_up", shape = [40], packed = memref<64xf32>, pack = "f_pack_b_up">, #ffn.kernel_param<name = "b_down", shape = [20], packed = memref<20xf32>>]
// CHECK-SAME: workspace_per_row = 384, phase_units = [array<i64: 0, 2, 0, 1, 0, 0>], bucket_max_m = [-1]
// CHECK-SAME: strategy = "packed 512-bit vectors, register tile 4x32, cache block 8 rows, weight-stream prefetch, fused bias+activation epilogue"
// CHECK: %[[DIM:.*]] = memref.dim %[[X]]
// CHECK: %[[H:.*]] = memref.view %[[WS]]{{.*}} : memref<?xi8> to memref<?x64xf32>
// CHECK: %[[O:.*]] = memref.view %[[WS]]{{.*}} : memref<?xi8> to memref<?x32xf32>

// Phase 1: H = relu(x W_up + b_up) over up panels [begin, end).
// CHECK: scf.if
// CHECK: %[[XD:.*]] = memref.cast %[[X]] : memref<?x20xf32> to memref<?x?xf32>
// CHECK: %[[HD:.*]] = memref.cast %[[H]] : memref<?x64xf32> to memref<?x?xf32>
// CHECK: call @f.gemm_up(%[[XD]], %[[HD]], %c0{{(_[0-9]+)?}}, %[[DIM]], %[[B]], %[[E]], %[[WU]], %[[BU]])

// Phase 2: y = H W_down + b_down over down panels [begin, end), finished
// by GEMM 2; no phase after it.
// CHECK: scf.if
// CHECK: %[[HD2:.*]] = memref.cast %[[H]]
// CHECK: %[[OD:.*]] = memref.cast %[[O]]
// CHECK: call @f.gemm_down(%[[HD2]], %[[OD]], %[[DIM]], %[[B]], %[[E]], %c2{{(_[0-9]+)?}}, %[[WD]], %[[Y]], %[[BD]])
// CHECK-NOT: scf.if
// CHECK: return
func.func @f(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}, %b1: tensor<40xf32> {ffn.param = "b_up"}, %b2: tensor<20xf32> {ffn.param = "b_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) bias_up(%b1 : tensor<40xf32>) bias_down(%b2 : tensor<20xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 8, prefetch = true, fused_max_m = 0> -> tensor<?x20xf32>
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
// GEMM 2 of this kernel walks the chunk-major panel over chunks [q0, q1),
// A's column 0 being d_ff row aColBase; in mode 1 its accumulators start
// from C (the fused schedule's Og += ...), else from zero.
// CHECK-LABEL: func.func private @g.gemm_down(
// CHECK-SAME: %[[FA:[^:]*]]: memref<?x?xf32>, %[[FC:[^:]*]]: memref<?x?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[Q0:[^:]*]]: index, %[[Q1:[^:]*]]: index, %[[ACB:[^:]*]]: index, %[[GMODE:[^:]*]]: index, %[[FW:[^:]*]]: memref<2x1x32x32xf32>, %{{.*}}: memref<?x20xf32>)
// CHECK: %[[ACC:.*]] = arith.cmpi eq, %[[GMODE]], %c1
// CHECK: case 4 {
// CHECK: scf.if %[[ACC]] {
// CHECK-COUNT-8: vector.load %[[FC]]
// CHECK: } else {
// CHECK: vector.store %[[ZERO:[^,]*]],
// The chunk loop: each chunk's K loop covers its real rows only and reads
// its contiguous block (the vectorizer keeps the accumulators in registers
// across both loops).
// CHECK: scf.for %[[Q:.*]] = %[[Q0]] to %[[Q1]] step %c1{{(_[0-9]+)?}} {
// CHECK: %[[K0:.*]] = arith.muli %[[Q]], %c32{{(_[0-9]+)?}}
// CHECK: %[[ABASE:.*]] = arith.subi %[[K0]], %[[ACB]]
// CHECK: %[[LEN:.*]] = arith.minsi %c32{{(_[0-9]+)?}}, %{{.*}}
// CHECK: memref.subview %[[FA]][%{{.*}}, %[[ABASE]]] [4, %[[LEN]]] [1, 1]
// CHECK: memref.subview %[[FW]][%[[Q]], %{{.*}}, 0, 0] [1, 1, %[[LEN]], 32] [1, 1, 1, 1] : memref<2x1x32x32xf32> to memref<?x32xf32
// CHECK: scf.for %[[K:.*]] = %c0{{(_[0-9]+)?}} to %[[LEN]] step %c1{{(_[0-9]+)?}} {
// CHECK: linalg.generic {{.*}} attrs = {ffn.register_tile}
// CHECK: vector.store %{{.*}}, %[[FC]]
// CHECK-LABEL: func.func @g(
// CHECK-SAME: %[[GX:[^:]*]]: memref<?x20xf32> {ffn.param = "input"}, %[[GWU:[^:]*]]: memref<2x20x32xf32> {ffn.param = "w_up"}, %[[GWD:[^:]*]]: memref<2x1x32x32xf32> {ffn.param = "w_down"}
// Two buckets: m <= 4 runs phases 4 (2 chunk groups) and 5; larger m the
// two-pass phases 1 and 3 (phase 2 quantizes H, for integer dot products).
// CHECK-SAME: workspace_per_row = 512, phase_units = [array<i64: 0, 0, 0, 0, 2, -1>, array<i64: 0, 2, 0, 1, 0, 0>], bucket_max_m = [4, -1]
// CHECK-SAME: strategy = "m <= 4: fused whole-FFN, d_ff in chunks of 32 over 2 groups; m > 4: two-pass;
// CHECK: %[[GM:.*]] = memref.dim %[[GX]]
// The two-pass GEMM 2: all chunks (0 to 2), A's column = d_ff row, no
// accumulation, finishing y.
// CHECK: arith.cmpi eq, %{{.*}}, %c3
// CHECK: call @g.gemm_down(%{{.*}}, %{{.*}}, %[[GM]], %{{.*}}, %{{.*}}, %c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %[[GWD]], %[[GY:[^)]*]])
// Phase 4, over groups [begin, end): each group has its chunk buffer Hc and
// its partial output Og.
// CHECK: arith.cmpi eq, %{{.*}}, %c4
// CHECK: scf.for %[[G:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[HC:.*]] = memref.view {{.*}} to memref<?x32xf32>
// CHECK: %[[OG:.*]] = memref.view {{.*}} to memref<?x32xf32>
// CHECK: %[[FIRST:.*]] = arith.muli %[[G]], %c1
// For each chunk of the group: Hc = act(x W_up[:, chunk]) over the chunk's
// up panels, its columns starting at the chunk's first column ...
// CHECK: scf.for %[[CH:.*]] = %[[FIRST]] to %{{.*}} step
// CHECK: %[[UP0:.*]] = arith.muli %[[CH]], %c1
// CHECK: %[[UP1:.*]] = arith.minsi
// CHECK: %[[COLBASE:.*]] = arith.muli %[[UP0]], %c32
// CHECK: %[[HCD:.*]] = memref.cast %[[HC]]
// CHECK: call @g.gemm_up(%{{.*}}, %[[HCD]], %[[COLBASE]], %[[GM]], %[[UP0]], %[[UP1]], %[[GWU]])
// ... then Og (+)= Hc W_down[chunk, :] over all down panels: the group's
// first chunk starts Og, the others add to it.
// CHECK: %[[CH1:.*]] = arith.addi %[[CH]], %c1
// CHECK: %[[K0:.*]] = arith.muli %[[CH]], %c32
// CHECK: %[[NOTFIRST:.*]] = arith.cmpi ne, %[[CH]], %[[FIRST]]
// CHECK: %[[GMODE1:.*]] = arith.index_castui %[[NOTFIRST]] : i1 to index
// CHECK: %[[HCD2:.*]] = memref.cast %[[HC]]
// CHECK: %[[OGD:.*]] = memref.cast %[[OG]]
// CHECK: call @g.gemm_down(%[[HCD2]], %[[OGD]], %[[GM]], %c0{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %[[CH]], %[[CH1]], %[[K0]], %[[GMODE1]], %[[GWD]], %[[GY]])
// Phase 5, which only the fused bucket runs (the two-pass GEMM 2 finished
// y itself): the output is the sum of the groups' partials, in group
// order.
// CHECK: %[[P0:.*]] = memref.view
// CHECK: %[[P1:.*]] = memref.view
// CHECK: arith.cmpi eq, %{{.*}}, %c5
// CHECK: %[[A0:.*]] = memref.load %[[P0]]
// CHECK: %[[A1:.*]] = memref.load %[[P1]]
// CHECK: %[[SUM:.*]] = arith.addf %[[A0]], %[[A1]]
// CHECK: memref.store %[[SUM]], %[[GY]]
func.func @g(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn sigmoid ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 8, prefetch = false, fused_max_m = 4, chunk = 32, groups = 2> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// A kernel of the same shape as @g with another activation shares @g's
// GEMM 2 and gets its own GEMM 1.
// CHECK-LABEL: func.func private @h.gemm_up(
// CHECK: arith.maximumf
// CHECK-NOT: func.func private @h.gemm_down
// CHECK-LABEL: func.func @h(
// CHECK: call @h.gemm_up(
// CHECK: call @g.gemm_down(
// CHECK: call @h.gemm_up(
// CHECK: call @g.gemm_down(
func.func @h(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 8, prefetch = false, fused_max_m = 4, chunk = 32, groups = 2> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// Functions without a strategy are left for convert-ffn-to-linalg.
// CHECK-LABEL: func.func @unscheduled(
// CHECK: ffn.ffn relu
func.func @unscheduled(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// -----

// bf16 pair tiles (bf16_dot = true, on a target with avx512bf16): d_model 5
// and d_ff 9, both odd. The weights are packed in pairs of rows, each panel
// row [2 nr] holding (W[2k][c], W[2k+1][c]) side by side: W_up 3 pair rows
// of 64, W_down chunk-major with 16 pair rows per 32-row chunk.
// DOT-LABEL: func.func private @d_pack_w_up(
// DOT-SAME: memref<5x9xbf16>, %{{.*}}: memref<1x3x64xbf16>)
// DOT: arith.remui
// DOT: arith.divui
// DOT-LABEL: func.func private @d_pack_w_down(
// DOT-SAME: memref<9x5xbf16>, %{{.*}}: memref<1x1x16x64xbf16>)
// GEMM 1 reads x itself (bf16, no pre-norm) and writes H in bf16.
// DOT-LABEL: func.func private @d.gemm_up(
// DOT-SAME: memref<?x?xbf16>, %{{[^:]*}}: memref<?x?xbf16>,
// The K loop over pairs: A's two elements one i32, broadcast; one
// vdpbf16ps per accumulator vector, carried in registers.
// DOT: scf.for {{.*}} iter_args(
// DOT: vector.load {{.*}} : memref<?x?xbf16>, vector<2xbf16>
// DOT: vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// DOT: vector.broadcast {{.*}} : i32 to vector<16xi32>
// DOT: vector.bitcast {{.*}} : vector<16xi32> to vector<32xbf16>
// DOT: vector.load {{.*}} : memref<1x3x64xbf16>, vector<32xbf16>
// DOT: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// DOT: scf.yield
// The odd last k: its element alone, paired with zero.
// DOT: arith.andi
// DOT: scf.if
// DOT: memref.load {{.*}} : memref<?x?xbf16>
// DOT: arith.bitcast {{.*}} : bf16 to i16
// DOT: arith.extui {{.*}} : i16 to i32
// DOT: x86vector.avx512.dot
// The epilogue stores H rounded to bf16.
// DOT: arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// DOT-LABEL: func.func private @d.gemm_down(
// DOT-SAME: memref<?x?xbf16>, %{{[^:]*}}: memref<?x?xf32>,
// DOT: x86vector.avx512.dot
// The contract: the matmuls' inputs are rounded to bf16.
// DOT-LABEL: func.func @d(
// DOT-SAME: operand_type = bf16
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512-bf16", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @d(%x: tensor<?x5xbf16> {ffn.param = "input"}, %w1: tensor<5x9xbf16> {ffn.param = "w_up"}, %w2: tensor<9x5xbf16> {ffn.param = "w_down"}) -> tensor<?x5xbf16> {
  %y = ffn.ffn relu ins(%x : tensor<?x5xbf16>) up(%w1 : tensor<5x9xbf16>) down(%w2 : tensor<9x5xbf16>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 2, nr = 32, mc = 8, prefetch = false, fused_max_m = 4, chunk = 32, groups = 1, bf16_dot = true> -> tensor<?x5xbf16>
  return %y : tensor<?x5xbf16>
}
}

// -----

// A hand-written bf16_dot strategy on a target without the instruction is
// refused, located at the op.
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @e(%x: tensor<?x5xbf16> {ffn.param = "input"}, %w1: tensor<5x9xbf16> {ffn.param = "w_up"}, %w2: tensor<9x5xbf16> {ffn.param = "w_down"}) -> tensor<?x5xbf16> {
  // expected-error @+1 {{has bf16_dot = true, which needs a bf16 FFN on a target with avx512bf16 (x86-64-avx512-bf16)}}
  %y = ffn.ffn relu ins(%x : tensor<?x5xbf16>) up(%w1 : tensor<5x9xbf16>) down(%w2 : tensor<9x5xbf16>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 2, nr = 32, mc = 8, prefetch = false, fused_max_m = 0, bf16_dot = true> -> tensor<?x5xbf16>
  return %y : tensor<?x5xbf16>
}
}

// -----

// Weight-only int4, group 4, d_model 5 (odd): each weight matrix is one
// byte buffer, the integer panels (3 pair rows of 32 bytes for W_up) and
// from the next 64-byte boundary the f32 scales (2 groups x 32 columns).
// The pack function quantizes: the group's max |w| / 7, round to nearest
// even, two k per byte.
// DOT-LABEL: func.func private @q_pack_w_up(
// DOT-SAME: memref<5x9xf32>, %[[BUF:.*]]: memref<384xi8>)
// DOT: memref.view %[[BUF]][%c0{{.*}}][] : memref<384xi8> to memref<1x3x32xi8>
// DOT: memref.view %[[BUF]][%c128{{.*}}][] : memref<384xi8> to memref<1x2x32xf32>
// DOT: arith.maximumf
// DOT: arith.divf
// DOT: math.roundeven
// DOT: arith.shli
// DOT: arith.ori
// DOT-LABEL: func.func private @q_pack_w_down(
// DOT-SAME: memref<9x5xf32>, %{{.*}}: memref<576xi8>)
// The K loop of these small tiles (2 rows, 2 vectors): per group the
// scales once; per k pair a byte vector zero-extended, each nibble's value
// looked up in a table (vpermps), one FMA per row and vector into the
// group's own sums, which are scaled once per group.
// DOT-LABEL: func.func private @q.gemm_up(
// DOT-SAME: memref<384xi8>)
// DOT: arith.constant dense<[0.000000e+00, 1.000000e+00, {{.*}}, -8.000000e+00, {{.*}}, -1.000000e+00]> : vector<16xf32>
// DOT: scf.for {{.*}} iter_args(
// DOT: vector.load {{.*}} : memref<1x2x32xf32>, vector<16xf32>
// DOT: scf.for {{.*}} iter_args(
// DOT: vector.load {{.*}} : memref<1x3x32xi8>, vector<16xi8>
// DOT: arith.extui {{.*}} : vector<16xi8> to vector<16xi32>
// DOT: call @llvm.x86.avx512.permvar.sf.512(
// DOT: arith.shrui
// DOT: call @llvm.x86.avx512.permvar.sf.512(
// DOT-NOT: arith.mulf
// DOT: vector.fma
// An odd K ends with the low nibble alone; then the sums times the scales.
// DOT: scf.if
// DOT: vector.fma
// DOT-LABEL: func.func @q(
// DOT-SAME: weight_quant = <int4, group = 4>
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @q(%x: tensor<?x5xf32> {ffn.param = "input"}, %w1: tensor<5x9xf32> {ffn.param = "w_up"}, %w2: tensor<9x5xf32> {ffn.param = "w_down"}) -> tensor<?x5xf32> {
  %y = ffn.ffn relu weights <int4, group = 4> ins(%x : tensor<?x5xf32>) up(%w1 : tensor<5x9xf32>) down(%w2 : tensor<9x5xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 2, nr = 32, mc = 8, prefetch = false, fused_max_m = 0> -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}
}

// -----

// Quantized weights take the two-pass schedule only.
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @qf(%x: tensor<?x5xf32> {ffn.param = "input"}, %w1: tensor<5x9xf32> {ffn.param = "w_up"}, %w2: tensor<9x5xf32> {ffn.param = "w_down"}) -> tensor<?x5xf32> {
  // expected-error @+1 {{has quantized weights, which take the two-pass schedule with widening tiles: fused_max_m = 0 and no bf16_dot}}
  %y = ffn.ffn relu weights <int8, group = 4> ins(%x : tensor<?x5xf32>) up(%w1 : tensor<5x9xf32>) down(%w2 : tensor<9x5xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 2, nr = 32, mc = 8, prefetch = false, fused_max_m = 4, chunk = 32, groups = 1> -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}
}

// -----

// Integer dot products (int8_activations), int4 group 16, d_model 5: the
// pack function stores unsigned nibbles (q + 8), k and k + 4 of a column in
// one byte, four k per 32-bit lane: W_up is one row of 4 x 32 bytes, then
// the scales (1 group x 32 columns) from byte 128.
// DOT-LABEL: func.func private @i_pack_w_up(
// DOT-SAME: memref<5x9xf32>, %[[BUF:.*]]: memref<256xi8>)
// DOT: memref.view %[[BUF]][%c0{{.*}}][] : memref<256xi8> to memref<1x1x128xi8>
// DOT: memref.view %[[BUF]][%c128{{.*}}][] : memref<256xi8> to memref<1x1x32xf32>
// DOT: math.roundeven
// DOT: arith.addi
// DOT: arith.shli
// DOT: arith.ori
// DOT-LABEL: func.func private @i_pack_w_down(
// DOT-SAME: memref<9x5xf32>, %{{.*}}: memref<384xi8>)
// The K loop: per panel row one 64-byte weight load per vector, the low
// and high nibbles masked out, the input's quads broadcast, vpdpbusd into
// int32 sums; per group the offset removed, converted, times both scales.
// DOT-LABEL: func.func private @i.gemm_up(
// DOT-SAME: memref<?x?xi8>, %{{[^:]*}}: memref<?x?xf32>, %{{[^:]*}}: memref<?x?xi32>
// DOT: scf.for {{.*}} iter_args(
// DOT: scf.for {{.*}} iter_args(
// DOT: vector.load {{.*}} : memref<?x?xi8>, vector<4xi8>
// DOT: vector.load {{.*}} : memref<1x1x128xi8>, vector<64xi8>
// DOT: arith.andi
// DOT: arith.shrui
// DOT: call @llvm.x86.avx512.vpdpbusd.512({{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// DOT: call @llvm.x86.avx512.vpdpbusd.512
// DOT: arith.subi {{.*}} : vector<16xi32>
// DOT: arith.sitofp {{.*}} : vector<16xi32> to vector<16xf32>
// DOT: vector.fma
// The kernel quantizes x (phase 0) and H (phase 2) per row: masked loads,
// the group's max |x|, round to nearest even, clamp, the group's sum.
// DOT-LABEL: func.func @i(
// DOT-SAME: operand_type = i8
// DOT-SAME: phase_units = [array<i64: -1, 1, -1, 1, 0, 0>]
// DOT: vector.maskedload
// DOT: vector.reduction <maximumf>
// DOT: math.roundeven
// DOT: arith.maxnumf
// DOT: arith.minnumf
// DOT: vector.reduction <add>
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512-bf16", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @i(%x: tensor<?x5xf32> {ffn.param = "input"}, %w1: tensor<5x9xf32> {ffn.param = "w_up"}, %w2: tensor<9x5xf32> {ffn.param = "w_down"}) -> tensor<?x5xf32> {
  %y = ffn.ffn relu weights <int4, group = 16, int8_activations = true> ins(%x : tensor<?x5xf32>) up(%w1 : tensor<5x9xf32>) down(%w2 : tensor<9x5xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 2, nr = 32, mc = 8, prefetch = false, fused_max_m = 0> -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}
}

// -----

// Integer dot products need VNNI: refused on a target without it.
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @iv(%x: tensor<?x5xf32> {ffn.param = "input"}, %w1: tensor<5x9xf32> {ffn.param = "w_up"}, %w2: tensor<9x5xf32> {ffn.param = "w_down"}) -> tensor<?x5xf32> {
  // expected-error @+1 {{has int8_activations, whose integer dot products need 512-bit vectors on a target with avx512vnni (x86-64-avx512-bf16)}}
  %y = ffn.ffn relu weights <int8, group = 16, int8_activations = true> ins(%x : tensor<?x5xf32>) up(%w1 : tensor<5x9xf32>) down(%w2 : tensor<9x5xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 2, nr = 32, mc = 8, prefetch = false, fused_max_m = 0> -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}
}

// -----

// A mixture of experts, 2 routed + 1 shared, top 1: each stacked parameter
// is one byte buffer of 3 experts' packed buffers, 64-byte strides (w_up:
// 3 x 20 x 16 f32 = 3840 bytes each); the router is read as it is.
// CHECK-LABEL: func.func @moe(
// CHECK-SAME: memref<11520xi8> {ffn.param = "w_up"}, %{{.*}}: memref<11520xi8> {ffn.param = "w_gate"}, %{{.*}}: memref<15360xi8> {ffn.param = "w_down"}, %{{.*}}: memref<384xi8> {ffn.param = "b_down"}, %{{.*}}: memref<20x2xf32> {ffn.param = "w_router"}
// CHECK-SAME: moe = <experts = 2, top_k = 1, router = softmax_topk, normalize = true, shared = 1>
// CHECK-SAME: #ffn.kernel_param<name = "w_up", shape = [20, 40], packed = memref<3x20x16xf32>, pack = "moe_pack_w_up", experts = 3>
// CHECK-SAME: #ffn.kernel_param<name = "b_down", shape = [20], packed = memref<20xf32>, experts = 3>
// CHECK-SAME: #ffn.kernel_param<name = "w_router", shape = [20, 2], packed = memref<20x2xf32>>
// Phases: rows, one unit, 2 routed rows per row, 3 up panel groups (of one
// panel) x 3 experts, no quantization, 1 down panel group x 3 experts,
// rows. Workspace per row: the
// 64-byte head, then per routed row Ap, Hp, Op (32 + 48 + 32 floats), the
// routing table (12 bytes) and the token index (4).
// CHECK-SAME: workspace_per_row = 992, phase_units = [array<i64: -1, 1, -2, 9, 0, 3, -1>]
// CHECK-SAME: mixture of 2 experts + 1 shared, top 1
// The router's scratch, in the entry block: the logits and the f32 row.
// CHECK: %[[LOGITS:.*]] = memref.alloca() : memref<2xf32>
// CHECK: %[[IN:.*]] = memref.alloca() {alignment = 64 : i64} : memref<20xf32>
// The head: per expert its routed rows' end and start.
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<?xi8> to memref<2x3xi64>
// Phase 0: the row's f32 input into a scratch row, then the router's
// logits summed across it in registers, a vector of the 2 experts (one
// W_router row per step, i in order), stored once; then the top pick's
// exp-weights.
// CHECK: memref.store %{{.*}}, %[[IN]][%{{.*}}] : memref<20xf32>
// CHECK: %[[SUMS:.*]] = scf.for %[[I:.*]] = %c0{{.*}} to %c20{{.*}} step %c1{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<2xf32>) {
// CHECK: %[[AI:.*]] = memref.load %[[IN]][%[[I]]] : memref<20xf32>
// CHECK: %[[W:.*]] = vector.load %{{.*}}[%[[I]], %c0{{.*}}] : memref<20x2xf32>, vector<2xf32>
// CHECK: %[[AV:.*]] = vector.broadcast %[[AI]] : f32 to vector<2xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[AV]], %[[W]] : vector<2xf32>
// CHECK: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : vector<2xf32>
// CHECK: scf.yield %[[S]] : vector<2xf32>
// CHECK: vector.store %[[SUMS]], %[[LOGITS]][%c0{{.*}}] : memref<2xf32>, vector<2xf32>
// CHECK: math.exp
// Phase 3: the thread's units [begin, end) (unit = panel group * 3 +
// expert; groups of one panel here, as nc is unset) expert by expert: an
// expert with routed rows, then the groups from begin / 3 to ceil(end /
// 3), each unit of the range running the expert's rows of its group's
// panels [g, min(g + 1, 3)).
// CHECK: %[[GB:.*]] = arith.divui %[[UB:arg[0-9]+]], %c3
// CHECK: %[[UE1:.*]] = arith.addi %[[UE:arg[0-9]+]], %c2
// CHECK: %[[GE:.*]] = arith.divui %[[UE1]], %c3
// CHECK: scf.for %[[E:.*]] = %c0{{.*}} to %c3{{.*}} step
// CHECK: memref.load %{{.*}}[%c1{{.*}}, %[[E]]]
// CHECK: scf.if
// CHECK: scf.for %[[G:.*]] = %[[GB]] to %[[GE]] step
// CHECK: %[[GU:.*]] = arith.muli %[[G]], %c3
// CHECK: %[[U:.*]] = arith.addi %[[GU]], %[[E]]
// CHECK: %[[LO:.*]] = arith.cmpi uge, %[[U]], %[[UB]]
// CHECK: %[[HI:.*]] = arith.cmpi ult, %[[U]], %[[UE]]
// CHECK: %[[MINE:.*]] = arith.andi %[[LO]], %[[HI]]
// CHECK: scf.if %[[MINE]] {
// CHECK: %[[GP0:.*]] = arith.muli %[[G]], %c1
// CHECK: %[[GP2:.*]] = arith.addi %[[GP0]], %c1
// CHECK: arith.minsi %[[GP2]], %c3
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<11520xi8> to memref<3x20x16xf32>
// CHECK: func.call @moe.gemm_up(
// Phase 5: GEMM 2 into Op, no finishing.
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<15360xi8> to memref<1x40x32xf32>
// CHECK: func.call @moe.gemm_down(
// Phase 6: each slot's expert bias.
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<384xi8> to memref<20xf32>
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @moe(%x: tensor<?x20xf32> {ffn.param = "input"}, %wu: tensor<3x20x40xf32> {ffn.param = "w_up"}, %wg: tensor<3x20x40xf32> {ffn.param = "w_gate"}, %wd: tensor<3x40x20xf32> {ffn.param = "w_down"}, %bd: tensor<3x20xf32> {ffn.param = "b_down"}, %wr: tensor<20x2xf32> {ffn.param = "w_router"}) -> tensor<?x20xf32> {
  %y = ffn.ffn gated silu moe <experts = 2, top_k = 1, router = softmax_topk, normalize = true, shared = 1> ins(%x : tensor<?x20xf32>) up(%wu : tensor<3x20x40xf32>) gate(%wg : tensor<3x20x40xf32>) down(%wd : tensor<3x40x20xf32>) bias_down(%bd : tensor<3x20xf32>) router(%wr : tensor<20x2xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
}

// -----

// The sparse GEMM 2 in the fused bucket (sparse_max_m <= fused_max_m): each
// chunk's needed rows listed (a nonzero test per activation) into row 0 of
// the group's list section, then a GEMM 2 function of its own that takes
// the list and its count and runs the K loop over the listed rows, one FMA
// per accumulator vector per listed k; m above the bound takes the dense
// gemm_down.
// CHECK-LABEL: func.func private @sf.gemm_down_sparse(
// CHECK-SAME: %{{[^:]*}}: memref<?x?xi32>, %{{[^:]*}}: index)
// CHECK: %[[E:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xi32>
// CHECK: arith.index_cast %[[E]] : i32 to index
// CHECK: vector.fma
// CHECK-LABEL: func.func @sf(
// CHECK-SAME: phase_units = [array<i64: 0, 0, 0, 0, 2, -1>, array<i64: 0, 2, 0, 1, 0, 0>], bucket_max_m = [2, -1]
// CHECK-SAME: m <= 2: GEMM 2 skips W_down rows of all-zero activations
// CHECK: arith.cmpf une
// CHECK: func.call @sf.gemm_down_sparse(
// CHECK: func.call @sf.gemm_down(
func.func @sf(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 32, prefetch = false, fused_max_m = 2, chunk = 32, groups = 2, sparse_max_m = 2> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// -----

// The two-pass sparse bucket (no fused one): a bucket of its own whose
// phase 2 is one unit listing the needed rows of all d_ff (the count after
// the list), before GEMM 2 over the down panels.
// CHECK-LABEL: func.func private @st.gemm_down_sparse(
// CHECK-LABEL: func.func @st(
// CHECK-SAME: phase_units = [array<i64: 0, 2, 1, 1, 0, 0>, array<i64: 0, 2, 0, 1, 0, 0>], bucket_max_m = [3, -1]
// CHECK: arith.cmpf une
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0{{.*}}, %c64] : memref<?x80xi32>
// CHECK: func.call @st.gemm_down_sparse(
// CHECK: func.call @st.gemm_down(
func.func @st(%x: tensor<?x20xf32> {ffn.param = "input"}, %w1: tensor<20x40xf32> {ffn.param = "w_up"}, %w2: tensor<40x20xf32> {ffn.param = "w_down"}) -> tensor<?x20xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x20xf32>) up(%w1 : tensor<20x40xf32>) down(%w2 : tensor<40x20xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 32, prefetch = false, fused_max_m = 0, sparse_max_m = 3> -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// -----

// A grouped FFN, 4 blocks of d_model 16, d_ff 32 (gated: up panels 16
// wide, 2 per block; one 32-wide down panel per block). Stacked parameters
// are byte buffers of the blocks' packed buffers, as for experts. Each block
// gets its own A (16 floats) and H (32) sections, block-major: 4 x (16 + 32)
// x 4 bytes = 768 per row; GEMM 2 finishes into y, so there is no O and no
// row phase after it. Phases: rows, 2 up panels x 4 blocks, 1 down panel x
// 4 blocks.
// CHECK-LABEL: func.func private @grouped.gemm_down(
// The block's column base in y comes last.
// CHECK-SAME: memref<1x32x32xf32>, %{{.*}}: memref<?x64xf32>, %{{.*}}: memref<?x64xf32>, %{{.*}}: memref<16xf32>, %{{.*}}: index)
// CHECK-LABEL: func.func @grouped(
// CHECK-SAME: %{{.*}}: memref<?x64xf32> {ffn.param = "input"}, %{{.*}}: memref<8192xi8> {ffn.param = "w_up"}, %{{.*}}: memref<8192xi8> {ffn.param = "w_gate"}, %{{.*}}: memref<16384xi8> {ffn.param = "w_down"}, %{{.*}}: memref<256xi8> {ffn.param = "b_down"}, %{{.*}}: memref<?x64xf32> {ffn.param = "output"}
// CHECK-SAME: d_model = 64, d_ff = 128, storage = f32, activation = silu, gated = true, residual = true, groups = 4,
// CHECK-SAME: #ffn.kernel_param<name = "w_up", shape = [16, 32], packed = memref<2x16x16xf32>, pack = "grouped_pack_w_up", experts = 4>
// CHECK-SAME: #ffn.kernel_param<name = "w_down", shape = [32, 16], packed = memref<1x32x32xf32>, pack = "grouped_pack_w_down", experts = 4>
// CHECK-SAME: #ffn.kernel_param<name = "b_down", shape = [16], packed = memref<16xf32>, experts = 4>
// CHECK-SAME: workspace_per_row = 768, phase_units = [array<i64: -1, 8, 0, 4, 0, 0>]
// CHECK-SAME: grouped: 4 blocks of 16 -> 32 -> 16
// Phase 0 (no pre-norm): block g's 16 columns of each row, from column
// 16 g of x, copied as one 16-lane vector into its section.
// CHECK: scf.for %[[R:.*]] = %arg8 to %arg9
// CHECK: scf.for %[[G:.*]] = %{{.*}} to %c4
// CHECK: arith.muli %[[G]], %c16
// CHECK: vector.load %arg0[%[[R]], %{{.*}}] : memref<?x64xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[R]], %{{.*}}] : memref<?x16xf32>, vector<16xf32>
// Phase 1: the blocks of units [begin, end), each one call over its panels.
// CHECK: arith.divui %{{.*}}, %c2
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<8192xi8> to memref<2x16x16xf32>
// CHECK: func.call @grouped.gemm_up(
// Phase 3: GEMM 2 finishes (mode 2) the block's columns of y.
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<16384xi8> to memref<1x32x32xf32>
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<256xi8> to memref<16xf32>
// CHECK: func.call @grouped.gemm_down(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2, %{{.*}}, %arg5, %arg0, %{{.*}}, %{{.*}})
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @grouped(%x: tensor<?x64xf32> {ffn.param = "input"}, %wu: tensor<4x16x32xf32> {ffn.param = "w_up"}, %wg: tensor<4x16x32xf32> {ffn.param = "w_gate"}, %wd: tensor<4x32x16xf32> {ffn.param = "w_down"}, %bd: tensor<4x16xf32> {ffn.param = "b_down"}) -> tensor<?x64xf32> {
  %y = ffn.ffn gated silu residual groups 4 ins(%x : tensor<?x64xf32>) up(%wu : tensor<4x16x32xf32>) gate(%wg : tensor<4x16x32xf32>) down(%wd : tensor<4x32x16xf32>) bias_down(%bd : tensor<4x16xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
}

// -----

// The same with a post-norm: GEMM 2 writes each block's O (32 floats), and
// a row phase sums the blocks' outputs and biases into the pre-norm row P
// (64 floats) and normalizes it: 4 x (16 + 32 + 32) x 4 + 64 x 4 = 1536
// bytes per row.
// CHECK-LABEL: func.func @grouped_post(
// CHECK-SAME: workspace_per_row = 1536, phase_units = [array<i64: -1, 8, 0, 4, 0, -1>]
// CHECK: func.call @grouped_post.gemm_down(
// CHECK: math.sqrt
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @grouped_post(%x: tensor<?x64xf32> {ffn.param = "input"}, %wu: tensor<4x16x32xf32> {ffn.param = "w_up"}, %wg: tensor<4x16x32xf32> {ffn.param = "w_gate"}, %wd: tensor<4x32x16xf32> {ffn.param = "w_down"}, %bd: tensor<4x16xf32> {ffn.param = "b_down"}, %s: tensor<64xf32> {ffn.param = "norm_scale"}) -> tensor<?x64xf32> {
  %y = ffn.ffn gated silu residual norm<rmsnorm, post, eps = 1.0e-05> groups 4 ins(%x : tensor<?x64xf32>) up(%wu : tensor<4x16x32xf32>) gate(%wg : tensor<4x16x32xf32>) down(%wd : tensor<4x32x16xf32>) bias_down(%bd : tensor<4x16xf32>) norm_scale(%s : tensor<64xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
}

// -----

// The same FFN with block_units: one unit per block, which runs GEMM 1 over
// all its up panels (0 to 2) and then GEMM 2 over its down panel, both on
// the H section of the thread's first block (the unit range's begin). The
// layout is the panel units' one; the phases: rows, 4 blocks, the post-norm
// rows.
// CHECK-LABEL: func.func @grouped_blocks(
// CHECK-SAME: workspace_per_row = 1536, phase_units = [array<i64: -1, 0, 0, 0, 4, -1>]
// CHECK-SAME: (units: blocks, each block's GEMM 1 and GEMM 2 back to back in one thread)
// Phase 4 over the unit range [begin, end) = [%arg9, %arg10).
// CHECK: arith.cmpi eq, %arg8, %c4
// CHECK: scf.for %{{.*}} = %arg9 to %arg10
// CHECK: func.call @grouped_blocks.gemm_up(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO:c0[_0-9]*]], %c2,
// CHECK: func.call @grouped_blocks.gemm_down(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1{{[_0-9]*}}, %{{.*}})
// CHECK: arith.cmpi eq, %arg8, %c5
// CHECK: math.sqrt
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @grouped_blocks(%x: tensor<?x64xf32> {ffn.param = "input"}, %wu: tensor<4x16x32xf32> {ffn.param = "w_up"}, %wg: tensor<4x16x32xf32> {ffn.param = "w_gate"}, %wd: tensor<4x32x16xf32> {ffn.param = "w_down"}, %bd: tensor<4x16xf32> {ffn.param = "b_down"}, %s: tensor<64xf32> {ffn.param = "norm_scale"}) -> tensor<?x64xf32> {
  %y = ffn.ffn gated silu residual norm<rmsnorm, post, eps = 1.0e-05> groups 4 ins(%x : tensor<?x64xf32>) up(%wu : tensor<4x16x32xf32>) gate(%wg : tensor<4x16x32xf32>) down(%wd : tensor<4x32x16xf32>) bias_down(%bd : tensor<4x16xf32>) norm_scale(%s : tensor<64xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0, block_units = true> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
}

// -----

// K blocks (KBlocks.cpp): d_model 40, kc = 16 (blocks of 16, 16 and 8)
// for row blocks of more than mr = 4 and at most 12 mr rows, kc_tall = 32
// (32 and 8) for taller ones (mc = 64), panels in groups of nc / nr = 2.
// Every tile runs over one K block of one panel, then of the group's next
// panel, before the next K block; its partial sums are parked in the
// block's 64 x 64 stack buffer (mc x nc) at the panel's column of the
// group: zero before the first K block, else loaded from the buffer, and
// stored back after the block. The block's first two tiles prefetch,
// half each, a row every other k, what the group reads next: the next
// panel's same rows, or after the group's last panel the first one's next
// K block. The finished rows go through the epilogue from the buffer,
// panel by panel; a block of one tile takes the whole-K tiles.
// CHECK-LABEL: func.func private @k.gemm_up(
// CHECK-SAME: %[[KA:[^:]*]]: memref<?x?xf32>, %{{[^:]*}}: memref<?x?xf32>, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[PB:[^:]*]]: index, %[[PE:[^:]*]]: index, %[[KW:[^:]*]]: memref<2x40x32xf32>)
// CHECK: %[[KTB:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x32xf32>
// CHECK: %[[KB:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK: scf.for %[[KI0:.*]] = %{{.*}} to %{{.*}} step %c64
// CHECK: %[[KEND:.*]] = arith.minsi
// CHECK: scf.for %[[P0:.*]] = %[[PB]] to %[[PE]] step %c2
// CHECK: %[[P2:.*]] = arith.addi %[[P0]], %c2
// CHECK: %[[P1:.*]] = arith.minsi %[[P2]], %[[PE]]
// CHECK: %[[KROWS:.*]] = arith.subi %[[KEND]], %[[KI0]]
// CHECK: %[[TALL:.*]] = arith.cmpi sgt, %[[KROWS]], %c48
// CHECK: %[[KC:.*]] = arith.select %[[TALL]], %c32, %c16
// CHECK: %[[MORE:.*]] = arith.cmpi sgt, %[[KROWS]], %c4
// CHECK: %[[SOME:.*]] = arith.cmpi sgt, %[[KC]], %c0
// CHECK: %[[BLOCKED:.*]] = arith.andi %[[MORE]], %[[SOME]]
// CHECK: scf.if %[[BLOCKED]] {
// CHECK: %[[BROWS:.*]] = arith.subi %[[KEND]], %[[KI0]]
// CHECK: %[[NFULL:.*]] = arith.divui %[[BROWS]], %c4
// CHECK: %[[FULLROWS:.*]] = arith.muli %[[NFULL]], %c4
// CHECK: %[[FULLEND:.*]] = arith.addi %[[KI0]], %[[FULLROWS]]
// CHECK: %[[ONEFULL:.*]] = arith.cmpi slt, %[[BROWS]], %c8
// CHECK: scf.for %[[K0:.*]] = %{{.*}} to %c40 step %[[KC]] {
// CHECK: %[[KLEFT:.*]] = arith.subi %c40, %[[K0]]
// CHECK: %[[KLEN:.*]] = arith.minsi %[[KC]], %[[KLEFT]]
// CHECK: scf.for %[[KP:.*]] = %[[P0]] to %[[P1]] step
// CHECK: scf.for %[[KROW:.*]] = %[[KI0]] to %[[FULLEND]] step %c4
// CHECK: %[[OFF:.*]] = arith.subi %[[KROW]], %[[KI0]]
// CHECK: %[[FIRSTTILE:.*]] = arith.cmpi eq, %[[OFF]], %c0
// CHECK: %[[SHARE:.*]] = arith.select %[[FIRSTTILE]], %c0{{.*}}, %c1
// CHECK: %[[TWO:.*]] = arith.cmpi slt, %[[OFF]], %c8
// CHECK: scf.if %[[TWO]] {
// CHECK: %[[BROW:.*]] = arith.subi %[[KROW]], %[[KI0]]
// CHECK: %[[GP:.*]] = arith.subi %[[KP]], %[[P0]]
// CHECK: %[[GCOL:.*]] = arith.muli %[[GP]], %c32
// CHECK: %[[FIRSTK:.*]] = arith.cmpi eq, %[[K0]], %c0
// CHECK: scf.if %[[FIRSTK]] {
// CHECK-COUNT-8: vector.store %{{.*}}, %[[KTB]]
// CHECK: } else {
// CHECK: %[[R0:.*]] = arith.addi %[[BROW]], %c0
// CHECK: %[[C0:.*]] = arith.addi %[[GCOL]], %c0
// CHECK: vector.load %[[KB]][%[[R0]], %[[C0]]]
// CHECK-COUNT-7: vector.load %[[KB]]
// CHECK: }
// CHECK: %[[HALF:.*]] = arith.shrui %[[KLEN]], %c1
// CHECK: %[[MINE:.*]] = arith.muli %[[SHARE]], %[[HALF]]
// CHECK: %[[PN:.*]] = arith.addi %[[KP]], %c1
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[PN]], %[[P1]]
// CHECK: %[[BACK:.*]] = arith.subi %[[KP]], %[[P0]]
// CHECK: %[[BACKROWS:.*]] = arith.muli %[[BACK]], %c40
// CHECK: %[[WRAP:.*]] = arith.subi %[[KLEN]], %[[BACKROWS]]
// CHECK: %[[NEXT:.*]] = arith.select %[[LAST]], %[[WRAP]], %c40
// CHECK: %[[NEXTROW:.*]] = arith.addi %[[K0]], %[[NEXT]]
// CHECK: %[[AHEAD:.*]] = arith.addi %[[NEXTROW]], %[[MINE]]
// CHECK: memref.subview %[[KA]][%[[KROW]], %[[K0]]] [4, %[[KLEN]]]
// CHECK: memref.subview %[[KW]][%[[KP]], %[[K0]], 0] [1, %[[KLEN]], 32]
// CHECK: scf.for %[[KK:.*]] = %{{.*}} to %[[KLEN]] step
// CHECK: %[[KFLAT:.*]] = memref.collapse_shape %[[KW]]
// CHECK: %[[KPROW:.*]] = arith.muli %[[KP]], %c40
// CHECK: %[[STEP2:.*]] = arith.shrui %[[KK]], %c1
// CHECK: %[[KAT0:.*]] = arith.addi %[[KPROW]], %[[AHEAD]]
// CHECK: %[[KAT:.*]] = arith.addi %[[KAT0]], %[[STEP2]]
// CHECK: %[[KLAST:.*]] = arith.minsi %[[KAT]], %c79
// CHECK: memref.prefetch %[[KFLAT]][%[[KLAST]], %c0{{.*}}]
// CHECK: memref.prefetch %[[KFLAT]][%[[KLAST]], %c16{{.*}}]
// CHECK: linalg.generic
// CHECK-SAME: attrs = {ffn.register_tile}
// CHECK: } {llvm.loop_annotation
// CHECK: %[[S0:.*]] = arith.addi %[[BROW]], %c0
// CHECK: %[[SC0:.*]] = arith.addi %[[GCOL]], %c0
// CHECK: %[[SV:.*]] = vector.load %[[KTB]]
// CHECK: vector.store %[[SV]], %[[KB]][%[[S0]], %[[SC0]]]
// CHECK-COUNT-7: vector.store %{{.*}}, %[[KB]]
// The later full-height tiles: the same without prefetches.
// CHECK: } else {
// CHECK: scf.for
// CHECK-NOT: memref.prefetch
// CHECK: linalg.generic
// CHECK: } {llvm.loop_annotation
// The last rows (fewer than mr) after each panel's full tiles: 2-row, then
// 1-row tiles. A block of one full tile runs them on this panel alone, the
// 2-row tile prefetching the second half; else a tile spans the group's
// 2 panels after the second one's full tiles (panels p and p + 1: a view
// of the panels from 1 as a second matrix, two accumulators, no
// prefetches), and a panel past the last whole span runs alone.
// CHECK: %[[AT:.*]] = arith.subi %[[KP]], %[[P0]]
// CHECK: scf.while (%{{.*}} = %[[FULLEND]])
// CHECK: ^bb0(%[[TROW:.*]]: index):
// CHECK: case 2 {
// CHECK: %[[SPANP:.*]] = arith.subi %[[P1]], %[[P0]]
// CHECK: %[[NSPANS:.*]] = arith.divui %[[SPANP]], %c2
// CHECK: %[[SPANNED:.*]] = arith.muli %[[NSPANS]], %c2
// CHECK: %[[WIDEEND:.*]] = arith.addi %[[P0]], %[[SPANNED]]
// CHECK: %[[INSPANS:.*]] = arith.cmpi slt, %[[KP]], %[[WIDEEND]]
// CHECK: %[[AT1:.*]] = arith.addi %[[AT]], %c1
// CHECK: %[[REM:.*]] = arith.remui %[[AT1]], %c2
// CHECK: %[[LASTOF:.*]] = arith.cmpi eq, %[[REM]], %c0
// CHECK: %[[ENDS:.*]] = arith.andi %[[INSPANS]], %[[LASTOF]]
// CHECK: scf.if %[[ONEFULL]] {
// CHECK: memref.subview %[[KW]][%[[KP]], %[[K0]], 0] [1, %[[KLEN]], 32]
// CHECK: scf.for
// CHECK: memref.prefetch
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : memref<2x1xf32
// CHECK: } else {
// CHECK: scf.if %[[ENDS]] {
// CHECK: %[[FIRSTP:.*]] = arith.subi %[[KP]], %c1
// CHECK: %[[FROM1:.*]] = memref.subview %[[KW]][1, 0, 0] [1, 40, 32] [1, 1, 1] : memref<2x40x32xf32> to memref<1x40x32xf32, strided<[1280, 32, 1], offset: 1280>>
// CHECK: %[[TCOL0:.*]] = arith.subi %[[FIRSTP]], %[[P0]]
// CHECK: arith.muli %[[TCOL0]], %c32
// CHECK: %[[SECONDP:.*]] = arith.addi %[[FIRSTP]], %c1
// CHECK: %[[TCOL1:.*]] = arith.subi %[[SECONDP]], %[[P0]]
// CHECK: arith.muli %[[TCOL1]], %c32
// CHECK: memref.subview %[[KW]][%[[FIRSTP]], %[[K0]], 0] [1, %[[KLEN]], 32]
// CHECK: memref.subview %[[FROM1]][%[[FIRSTP]], %[[K0]], 0] [1, %[[KLEN]], 32]
// CHECK: scf.for
// CHECK-NOT: memref.prefetch
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x1xf32, strided<[?, 1], offset: ?>>, memref<1x32xf32, strided<[32, 1], offset: ?>>, memref<1x32xf32, strided<[32, 1], offset: ?>>) outs(%{{.*}}, %{{.*}} : memref<2x32xf32, strided<[32, 1]>>, memref<2x32xf32, strided<[32, 1]>>)
// CHECK: } else {
// CHECK: scf.if %[[INSPANS]] {
// CHECK: } else {
// CHECK: memref.subview %[[KW]][%[[KP]], %[[K0]], 0] [1, %[[KLEN]], 32]
// CHECK: default {
// After the K blocks: bias-free relu over the block's rows, from the
// buffer's columns of each panel of the group.
// CHECK: scf.for %[[FP:.*]] = %[[P0]] to %[[P1]] step
// CHECK: %[[FP0:.*]] = arith.subi %[[FP]], %[[P0]]
// CHECK: %[[FCOL:.*]] = arith.muli %[[FP0]], %c32
// CHECK: %[[SUMS:.*]] = memref.subview %[[KB]][0, %[[FCOL]]] [64, 32] [1, 1]
// CHECK: scf.for %[[KR:.*]] = %c0{{.*}} to %[[BROWS]] step %c1
// CHECK: vector.load %[[SUMS]][%[[KR]], %c0{{.*}}]
// CHECK: vector.load %[[SUMS]][%[[KR]], %c16{{.*}}]
// CHECK: arith.maximumf
// A block of one tile: the group's panels one after another, K whole.
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %[[P0]] to %[[P1]] step
// CHECK: scf.while
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @k(%x: tensor<?x40xf32> {ffn.param = "input"}, %w1: tensor<40x64xf32> {ffn.param = "w_up"}, %w2: tensor<64x40xf32> {ffn.param = "w_down"}) -> tensor<?x40xf32> {
  %y = ffn.ffn relu ins(%x : tensor<?x40xf32>) up(%w1 : tensor<40x64xf32>) down(%w2 : tensor<64x40xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 64, kc = 16, kc_tall = 32, nc = 64, prefetch = true, fused_max_m = 0> -> tensor<?x40xf32>
  return %y : tensor<?x40xf32>
}
}
