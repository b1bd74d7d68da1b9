// RUN: ffn-opt %s --ffn-gpu-lower="chip=sm_80" | FileCheck %s
// RUN: ffn-opt %s --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=F32
// RUN: sed 's/x60xf32/x200xf32/g; s/<60x100xf32>/<200x100xf32>/; s/<100x60xf32>/<100x200xf32>/; s/<60xf32>/<200xf32>/g' %s | ffn-opt --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=F32BIG
// RUN: ffn-opt %S/Inputs/wgmma.mlir --ffn-gpu-lower="chip=sm_90a" | FileCheck %s --check-prefix=WG
// The lowering builds what the op's #ffn.gpu_strategy says (the buckets
// here are spelled out, not chosen: ffn-gpu-select-strategy.mlir tests the
// choice), and refuses what it cannot build.
// RUN: not ffn-opt %S/Inputs/wgmma.mlir --ffn-gpu-lower="chip=sm_90" 2>&1 | FileCheck %s --check-prefix=NOWG
// NOWG: error: 'ffn.ffn' op strategy buckets bucket 1: wgmma needs sm_90a and the 128x256 or 128x128 tile
// RUN: sed 's/ strategy #ffn.gpu_strategy<.*]>//' %S/Inputs/wgmma.mlir | not ffn-opt --ffn-gpu-lower="chip=sm_90a" 2>&1 | FileCheck %s --check-prefix=NOSTRATEGY
// NOSTRATEGY: error: 'ffn.ffn' op needs a complete #ffn.gpu_strategy (run ffn-gpu-select-strategy first)
// RUN: ffn-opt %S/Inputs/grouped.mlir --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=GRP
// The decode bucket's register stream (stages = 0): A's K slice staged in
// shared memory once (cp.async, one wait, one barrier), the weights loaded
// 16 bytes a lane straight into mma.sync operands with predicated
// ld.global.nc (no ring, no ldmatrix, no barrier in the loop), which
// carries the next iteration's weights; four blocks an SM told to ptxas
// where the slice is long, two here (one K tile).
// RUN: sed 's/block_k = 64, stages = 4, mma = mma_sync, split_k = \[1, 1\]>, <max_m = 64/block_k = 64, stages = 0, mma = mma_sync, split_k = [1, 1]>, <max_m = 64/' %s | ffn-opt --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=STREAM
// STREAM-LABEL: gpu.func @g_up_m16(
// STREAM-SAME: nvvm.minctasm = 2
// STREAM: nvgpu.device_async_copy
// STREAM: nvgpu.device_async_wait
// STREAM: gpu.barrier
// STREAM: scf.for {{.*}} iter_args
// STREAM-NOT: nvgpu.ldmatrix
// STREAM-NOT: gpu.barrier
// STREAM: llvm.inline_asm {{.*}}@p ld.global.nc.L1::no_allocate.v4.u32
// STREAM-NOT: nvgpu.ldmatrix
// STREAM-NOT: gpu.barrier
// STREAM: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// STREAM-NOT: nvgpu.ldmatrix
// STREAM-NOT: gpu.barrier
// STREAM: nvvm.mma.sync
// STREAM: scf.yield
// STREAM-LABEL: gpu.func @g_down_m16(
// The stream through warp rings (warp_stages = 3): A staged as above, the
// ring's first two stages filled (four 16-byte cp.async a lane each, one
// group a stage) and A waited for with those two pending; in the loop no
// global load and no block barrier: the stage's group waited for with one
// pending, the warp met, the next stage refilled, the weights read from
// shared memory; the last groups drained after the loop.
// RUN: sed 's/block_k = 64, stages = 4, mma = mma_sync, split_k = \[1, 1\]>, <max_m = 64/block_k = 64, stages = 0, warp_stages = 3, mma = mma_sync, split_k = [1, 1]>, <max_m = 64/' %s | ffn-opt --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=WARPRING
// WARPRING-LABEL: gpu.func @g_up_m16(
// WARPRING: nvgpu.device_async_copy {{.*}} to memref<16x96xbf16, #gpu.address_space<workgroup>>
// WARPRING: nvgpu.device_async_create_group
// WARPRING-COUNT-4: nvgpu.device_async_copy {{.*}} to memref<384x64xbf16, #gpu.address_space<workgroup>>
// WARPRING-NEXT: nvgpu.device_async_create_group
// WARPRING-COUNT-4: nvgpu.device_async_copy {{.*}} to memref<384x64xbf16, #gpu.address_space<workgroup>>
// WARPRING-NEXT: %[[LAST:.*]] = nvgpu.device_async_create_group
// WARPRING-NEXT: nvgpu.device_async_wait %[[LAST]] {numGroups = 2 : i32}
// WARPRING-NEXT: gpu.barrier
// WARPRING: scf.for {{.*}} iter_args
// WARPRING-NEXT: nvgpu.device_async_wait %[[LAST]] {numGroups = 1 : i32}
// WARPRING-NOT: gpu.barrier
// WARPRING: nvvm.bar.warp.sync
// WARPRING-NOT: ld.global
// WARPRING-NOT: gpu.barrier
// WARPRING-COUNT-4: nvgpu.device_async_copy {{.*}} to memref<384x64xbf16, #gpu.address_space<workgroup>>
// WARPRING-NOT: ld.global
// WARPRING: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// WARPRING-NOT: ld.global
// WARPRING: nvvm.mma.sync
// WARPRING: scf.yield
// WARPRING-NEXT: }
// WARPRING-NEXT: nvgpu.device_async_wait %[[LAST]] {numGroups = 0 : i32}
// WARPRING-LABEL: gpu.func @g_down_m16(
// The stream is the 16-row tile's, for weights in the dtype.
// RUN: sed 's/max_m = 64, block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4/max_m = 64, block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 0/' %s | not ffn-opt --ffn-gpu-lower="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=NOSTREAM
// NOSTREAM: error: 'ffn.ffn' op strategy stages bucket 1: stages = 0 (the register stream) is the 16-row tile's on tensor cores, for weights in the dtype and not a mixture of experts
// RUN: ffn-opt %S/Inputs/quant.mlir --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=QNT
// Groups that are not a multiple of the MMA's K step (16) cannot be summed
// apart: each weight s q (exact in f32) is converted into hi = bf16(s q)
// and lo = bf16(s q - hi), both exact, into two more converted tiles (4 in
// all), and both tiles' fragments go through mma.sync into the same
// accumulators (no group sums, no flushes); the strategy text says so.
// RUN: sed 's/group = 128>/group = 24>/' %S/Inputs/quant.mlir | ffn-opt --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=QGROUP
// QGROUP: note: quantization groups of 24 rows are not a multiple of the tensor cores' K step (16)
// QGROUP-LABEL: gpu.func @q8_up_mlarge(
// QGROUP: memref<4x128x72xbf16, #gpu.address_space<workgroup>>
// QGROUP: arith.mulf {{.*}} : vector<8xf32>
// QGROUP: %[[HI:.*]] = arith.truncf %[[SQ:.*]] : vector<16xf32> to vector<16xbf16>
// QGROUP: vector.store {{.*}}, %{{.*}}[%[[BUF:.*]], %{{.*}}, %{{.*}}] {{.*}} : memref<4x128x72xbf16
// QGROUP: %[[BACK:.*]] = arith.extf %[[HI]] : vector<16xbf16> to vector<16xf32>
// QGROUP: %[[LO:.*]] = arith.subf %[[SQ]], %[[BACK]] : vector<16xf32>
// QGROUP: arith.truncf %[[LO]] : vector<16xf32> to vector<16xbf16>
// QGROUP: %[[D:.*]] = nvvm.mma.sync
// QGROUP: %[[E:.*]] = llvm.extractvalue %[[D]][0]
// QGROUP-NOT: scf.if
// QGROUP: nvvm.mma.sync {{.*}} C[%[[E]],
// QGROUP: gpu.return
// Widened in registers (widen = registers; f16 int4 with zero points,
// groups of 32): the ring holds A's rows padded to 192 bytes and the
// integer tiles only (no converted tile, one barrier a K tile); the copies
// store each row's 16-byte chunks XOR-swizzled, each warp loads its A
// operands 16 bytes and its B integers 4 bytes at a time, widens them with
// prmt and feeds mma.sync; the strategy and the path note say so. An
// int8 bf16 FFN cannot (its integers do not fit bf16's significand).
// RUN: sed 's/stages = 4, mma = mma_sync, split_k = \[1, 1\]>\]> -> tensor<?x80xf16>/stages = 4, mma = mma_sync, split_k = [1, 1], widen = registers>]> -> tensor<?x80xf16>/' %S/Inputs/quant.mlir | ffn-opt --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=WIDEN
// WIDEN-LABEL: func.func private @q4zp(
// WIDEN-SAME: widen = registers>
// WIDEN-SAME: widening in registers
// WIDEN-SAME: widen each warp's B fragments to the dtype in registers
// WIDEN-LABEL: gpu.func @q4zp_up_mlarge(
// WIDEN-NOT: x72xf16
// WIDEN: memref.view {{.*}} to memref<4x64x96xf16, #gpu.address_space<workgroup>>
// WIDEN-NEXT: arith.constant 49152 : index
// WIDEN-NEXT: arith.addi
// WIDEN-NEXT: memref.view {{.*}} to memref<4x128x32xi8, #gpu.address_space<workgroup>>
// WIDEN: %[[SLOT:.*]] = arith.xori
// WIDEN-NEXT: arith.constant 16 : index
// WIDEN-NEXT: %[[AT:.*]] = arith.muli %[[SLOT]],
// WIDEN-NEXT: nvgpu.device_async_copy {{.*}}, %[[AT]]], 16, {{.*}} to memref<4x128x32xi8, #gpu.address_space<workgroup>>
// WIDEN: scf.for
// WIDEN-COUNT-1: gpu.barrier
// WIDEN-NOT: gpu.barrier
// WIDEN: vector.load {{.*}} : memref<4x64x96xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// WIDEN: vector.load {{.*}} : memref<4x128x32xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// WIDEN: nvvm.prmt
// WIDEN: llvm.intr.fma
// WIDEN: nvvm.mma.sync
// WIDEN-NOT: vector.store
// WIDEN-NOT: nvgpu.ldmatrix
// WIDEN: scf.yield
// RUN: sed 's/split_k = \[2, 2\]>/split_k = [2, 2], widen = registers>/' %S/Inputs/quant.mlir | not ffn-opt --ffn-gpu-lower="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=NOWIDEN
// NOWIDEN: error: 'ffn.ffn' op strategy widen bucket 0: registers needs int4 weights on bf16 (int8 is exact in f16's significand, not bf16's)
// int8 activations: the input kernel quantizes x per row and group (max |x|,
// a barrier, roundeven clamped to +-127 by maxnum/minnum), GEMM 1 writes f32
// h, a quantize_h launch per bucket quantizes it for GEMM 2, and each GEMM's
// group flush reads its rows' scales from the table argument before m.
// RUN: sed 's/group = 128>/group = 128, int8_activations = true>/' %S/Inputs/quant.mlir | ffn-opt --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=QINT8
// QINT8: operand_type = i8
// QINT8-SAME: launches = [#ffn.device_launch<kernel = "q8_input"
// QINT8-SAME: kernel = "q8_up_m16",
// QINT8-SAME: kernel = "q8_quantize_h",
// QINT8-SAME: kernel = "q8_down_m16",
// QINT8-SAME: kernel = "q8_up_mlarge",
// QINT8-SAME: kernel = "q8_quantize_h",
// QINT8-SAME: kernel = "q8_down_mlarge",
// QINT8: gpu.func @q8_input(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: i64)
// QINT8: math.absf
// QINT8: arith.maximumf
// QINT8: gpu.barrier
// QINT8: math.roundeven
// QINT8: arith.maxnumf
// QINT8: arith.minnumf
// QINT8: gpu.func @q8_up_m16({{.*}}, %[[H:.*]]: memref<?xf32>, %{{.*}}: memref<?xi32>, %[[SX:.*]]: memref<?xf32>, %{{.*}}: i64)
// QINT8: memref.load %[[SX]]
// QINT8: gpu.func @q8_quantize_h(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: i64)
// QINT8: math.roundeven
// A mixture's int8 activations: x quantized once per token, GEMM 1 writing
// each slot's f32 h, quantize_h quantizing a token row's k + S = 3 slot
// pieces apart, and each expert GEMM's flush reading the scales of the A
// rows it gathered, not of its tile rows: token = slot / 3, times x's 3
// groups (d_model 40, groups of 16) in GEMM 1; the slot times h's 5 groups
// (d_ff 72) in GEMM 2.
// RUN: sed 's/eps = 1.0e-06> moe/eps = 1.0e-06> weights <int8, group = 16, int8_activations = true> moe/' %S/Inputs/moe.mlir | ffn-opt --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=QINT8MOE
// QINT8MOE: launches = [#ffn.device_launch<kernel = "mix_input"
// QINT8MOE-SAME: kernel = "mix_route"
// QINT8MOE-SAME: kernel = "mix_group"
// QINT8MOE-SAME: kernel = "mix_up_m16"
// QINT8MOE-SAME: kernel = "mix_quantize_h"
// QINT8MOE-SAME: kernel = "mix_down_m16"
// QINT8MOE-SAME: kernel = "mix_combine_m16"
// QINT8MOE-LABEL: gpu.func @mix_up_m16(
// QINT8MOE-SAME: %[[SX:[a-z0-9]+]]: memref<?xf32>, %{{[a-z0-9]+}}: i64)
// The copy's A row (a token), then the first fragment row's scale row:
// QINT8MOE: arith.divui %{{[0-9]+}}, %c3{{[_0-9]*}} : index
// QINT8MOE-NEXT: arith.addi
// QINT8MOE: %[[TOKEN:[0-9]+]] = arith.divui %{{[0-9]+}}, %c3{{[_0-9]*}} : index
// QINT8MOE-NEXT: %[[G3:.*]] = arith.constant 3 : index
// QINT8MOE-NEXT: %[[ROW:.*]] = arith.muli %[[TOKEN]], %[[G3]] : index
// QINT8MOE: nvvm.mma.sync
// QINT8MOE: %[[AT:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// QINT8MOE-NEXT: memref.load %[[SX]][%[[AT]]] : memref<?xf32>
// QINT8MOE-LABEL: gpu.func @mix_quantize_h(
// QINT8MOE: math.roundeven
// QINT8MOE-LABEL: gpu.func @mix_down_m16(
// QINT8MOE-SAME: %[[SH:[a-z0-9]+]]: memref<?xf32>, %{{[a-z0-9]+}}: i64)
// QINT8MOE: %[[ROW2:[0-9]+]] = arith.muli %{{[0-9]+}}, %c5_{{[0-9]+}} : index
// QINT8MOE: nvvm.mma.sync
// QINT8MOE: %[[AT2:.*]] = arith.addi %[[ROW2]], %{{.*}} : index
// QINT8MOE-NEXT: memref.load %[[SH]][%[[AT2]]] : memref<?xf32>
// RUN: ffn-opt %S/Inputs/moe.mlir --ffn-gpu-lower="chip=sm_80" | FileCheck %s --check-prefix=MOE
// RUN: sed 's/split_k = \[1, 2\]>/split_k = [2, 2]>/' %S/Inputs/moe.mlir | not ffn-opt --ffn-gpu-lower="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=MOESPLIT
// MOESPLIT: error: 'ffn.ffn' op strategy split_k bucket 0: a mixture of experts' GEMM 1 does not split K (only GEMM 2's slices are added, by the combine kernel)

// Mixtures of experts: the experts' parameters stacked (7 = 6 routed + 1
// shared), the router one plain matrix; the workspace holds xn, the
// choices and weights (k = 2 each), the expert lists (E = 6 per row), their
// counts, h and the f32 results of 3 slots per row, and the decode
// bucket's two K slices of GEMM 2 (2 x 3 slots x 256 f32). Launch order:
// input, route (on x: the pre-norm is recomputed in f32), group (one block
// per routed expert at any m), then per bucket the expert GEMMs over
// grid.z = 7 experts (GEMM 2 at decode: 7 x 2 slices, partials) and the
// combine (at decode: the slices, the choices for each slot's expert, and
// b_down). Only the decode bucket's split GEMM 2 and combine reach the
// partials (8384 bytes a row); every other launch, and so a run of m > 16,
// needs the 2240 bytes before them.
// MOE-LABEL: func.func private @mix(memref<?x40xbf16>, memref<229376xi8>, memref<229376xi8>, memref<917504xi8>, memref<3584xi8>, memref<3584xi8>, memref<3584xi8>, memref<40xbf16>, memref<40x6xbf16>, memref<?x40xbf16>, memref<?xi8>)
// MOE-SAME: moe = <experts = 6, top_k = 2, router = softmax_topk, normalize = true, shared = 1>
// MOE-SAME: #ffn.kernel_param<name = "w_up", shape = [40, 72], packed = memref<256x64xbf16>, pack = "mix_pack_0", experts = 7>
// MOE-SAME: #ffn.kernel_param<name = "b_down", shape = [40], packed = memref<256xbf16>, pack = "mix_pack_5", experts = 7>
// MOE-SAME: #ffn.kernel_param<name = "norm_scale", shape = [40], packed = memref<40xbf16>>
// MOE-SAME: #ffn.kernel_param<name = "w_router", shape = [40, 6], packed = memref<40x6xbf16>>
// MOE-SAME: workspace_per_row = 8384
// MOE-SAME: note: mixture of experts: GEMM 1 never splits K
// MOE-SAME: kernel = "mix_input", {{[^>]*}} args = [1, 0, 4, 0, 3, 6, 0, 0]
// MOE-SAME: kernel = "mix_route", {{[^>]*}} shared_bytes = 1064, workspace_per_row = 2240, args = [1, 0, 3, 7, 3, 6, 4, 128, 4, 144, 0, 0]
// MOE-SAME: kernel = "mix_group", min_m = 1, max_m = 9223372036854775807, rows_per_block = 1099511627776, grid_y = 6, grid_z = 1, threads = 256, shared_bytes = 32, workspace_per_row = 2240, args = [4, 128, 4, 160, 4, 192, 0, 0]
// The expert GEMMs' grid.x walks a tile list: at most the m * 3 slot rows
// in 16-row tiles plus a partial tile for each of the 7 experts
// (ceil((3 m + 7 * 15) / 16) blocks); grid.z is the K split.
// MOE-SAME: kernel = "mix_up_m16", min_m = 1, max_m = 16, rows_per_block = 16, grid_y = 4, grid_z = 1, {{[^>]*}} args = [4, 0, 3, 1, 3, 0, 4, 224, 3, 3, 3, 4, 4, 160, 4, 192, 0, 0], grid_m_scale = 3, grid_rows_extra = 105>
// MOE-SAME: kernel = "mix_down_m16", min_m = 1, max_m = 16, rows_per_block = 16, grid_y = 2, grid_z = 2, {{[^>]*}} workspace_per_row = 8384, args = [4, 224, 3, 2, 4, 2240, 4, 160, 4, 192, 0, 0], grid_m_scale = 3, grid_rows_extra = 105>
// MOE-SAME: kernel = "mix_combine_m16", min_m = 1, max_m = 16, {{[^>]*}} workspace_per_row = 8384, args = [4, 2240, 4, 144, 4, 128, 3, 5, 1, 0, 2, 0, 0, 0]
// MOE-SAME: kernel = "mix_up_mlarge", min_m = 17, {{[^>]*}} workspace_per_row = 2240,
// MOE-SAME: kernel = "mix_down_mlarge", min_m = 17, {{[^>]*}} grid_z = 1, {{[^>]*}} workspace_per_row = 2240, args = [4, 224, 3, 2, 4, 1760, 3, 5, 4, 160, 4, 192, 0, 0], grid_m_scale = 3, grid_rows_extra = 441>
// MOE-SAME: kernel = "mix_combine_mlarge", min_m = 17, {{[^>]*}} args = [4, 1760, 4, 144, 1, 0, 2, 0, 0, 0]
// A post-norm: the combine, which owns its row, writes the f32 z and
// normalizes it into the output with the scale and shift (params 2, 3): no
// output kernel. The router reads x directly (36 f32 columns are aligned:
// no input kernel).
// MOE-LABEL: func.func private @post(
// MOE-SAME: launches = [#ffn.device_launch<kernel = "post_route"
// MOE-SAME: kernel = "post_combine_mlarge", {{[^>]*}} shared_bytes = 32, {{[^>]*}} args = [4, 1120, 4, 16, 4, 1264, 2, 0, 3, 2, 3, 3, 0, 0]>]
// MOE-NOT: post_output

// The route kernel: the pre-norm's statistics, the logits in shared memory,
// then warp 0's k rounds of a warp arg-max (value and index shuffled).
// MOE: gpu.func @mix_route(
// MOE: math.rsqrt
// MOE: gpu.barrier
// MOE: scf.for
// MOE: gpu.shuffle  xor {{.*}} : f32
// MOE: gpu.shuffle  xor {{.*}} : i32
// MOE: memref.store {{.*}} : memref<?xi32>
// The group kernel: a ballot per warp, the lanes below counted, the slot
// r * 3 + j stored at its place in expert e's list.
// MOE: gpu.func @mix_group(
// MOE: gpu.block_id  y
// MOE: nvvm.vote.sync  ballot
// MOE: llvm.intr.ctpop
// MOE: arith.muli %{{.*}}, %c3
// MOE: memref.store {{.*}} : memref<?xi32>
// The expert GEMM: block x finds its expert and row tile in the list of
// every expert's tiles (the routed experts' row counts from the group
// kernel, the shared one's m); blocks past the list leave; A rows gathered
// from the lists (the token: slot / 3).
// MOE: gpu.func @mix_up_m16(
// MOE: %[[T:.*]] = gpu.block_id  x
// MOE: scf.for %{{.*}} = %{{.*}} to %c7 step
// MOE: memref.load %arg7
// MOE: arith.cmpi sle, %{{.*}}, %[[T]]
// MOE: scf.yield
// MOE: memref.load %arg7
// MOE: scf.if
// MOE: memref.load %arg6
// MOE: arith.divui %{{.*}}, %c3
// MOE: nvgpu.device_async_copy
// GEMM 2 reads h rows by slot (no division); at decode block z is the K
// slice, and the slice's partials hold m * 3 slot rows.
// MOE: gpu.func @mix_down_m16(
// MOE: %[[Z:.*]] = gpu.block_id  z
// MOE: arith.muli %[[Z]], %c128
// MOE: scf.for
// MOE: memref.load %arg4
// MOE-NOT: arith.divui %{{.*}}, %c3
// MOE: nvgpu.device_async_copy
// MOE: arith.muli %{{.*}}, %c3
// MOE: vector.store {{.*}} : memref<?xf32>, vector<2xf32>
// The decode combine: slot j's expert is its choice (the shared slot's is
// expert 6), its two slices added, then its b_down (stride 256).
// MOE: gpu.func @mix_combine_m16(
// MOE: memref.load %arg2{{.*}} : memref<?xi32>
// MOE: arith.muli %{{.*}}, %c256
// MOE: arith.muli %c6{{.*}}, %c256
// MOE: arith.addf
// MOE: memref.load %arg3{{.*}} : memref<?xbf16>
// MOE: gpu.func @mix_combine_mlarge(
// MOE: arith.mulf
// MOE: math.fma
// MOE: arith.addf
// MOE: memref.store {{.*}} : memref<?xbf16>
// The post-norm's combine: z stored, a barrier, the row's statistics, the
// normalized row stored.
// MOE: gpu.func @post_combine_mlarge(
// MOE: memref.store {{.*}} : memref<?xf32>
// MOE: gpu.barrier
// MOE: math.rsqrt
// MOE: memref.store
// MOE: gpu.return

// Quantized weights: each matrix one byte buffer (integers [rows][K bytes],
// scales [rows][groups], zero points) packed by a quantizing pack function
// and, from blocks quantized elsewhere, a second one; the kernels take the
// buffer twice, as bytes and as the dtype (its scales).
// QNT-LABEL: func.func private @q8(memref<?x256xbf16>, memref<66560xi8>, memref<66560xi8>, memref<66560xi8>,
// QNT-SAME: #ffn.kernel_param<name = "w_up", shape = [256, 200], packed = memref<66560xi8>, pack = "q8_pack_0", pack_quantized = "q8_pack_quantized_0">
// QNT-SAME: kernel = "q8_up_m16", min_m = 1, max_m = 16, rows_per_block = 16, grid_y = 4, grid_z = 2
// QNT-LABEL: func.func private @q4zp(
// QNT-SAME: #ffn.kernel_param<name = "w_up", shape = [40, 48], packed = memref<9728xi8>, pack = "q4zp_pack_0", pack_quantized = "q4zp_pack_quantized_0", experts = 2>
// QNT-LABEL: func.func private @qf32(
// QNT-SAME: #ffn.kernel_param<name = "w_down", shape = [45, 61], packed = memref<40960xi8>

// bf16 int8, gated: gate bytes, gate scales, up bytes, up scales. The
// integer tiles stream through their own ring; each is widened into one of
// two bf16 tiles (a barrier before the MMAs read it). The MMAs add into the
// group's sums; a group of 128 ends on every second tile (a branch), where
// the sums times the scales join the totals.
// QNT: gpu.func @q8_up_m16(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xi8>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xi8>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>, %{{.*}}: i64)
// QNT: nvgpu.device_async_copy {{.*}} : memref<?xi8> to memref<4x128x64xi8, #gpu.address_space<workgroup>>
// QNT: scf.for
// QNT: vector.load {{.*}} : memref<4x128x64xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// QNT: arith.extsi {{.*}} : vector<16xi8> to vector<16xi32>
// QNT: arith.sitofp {{.*}} : vector<16xi32> to vector<16xf32>
// QNT: arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// QNT: vector.store {{.*}} : memref<2x128x72xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// QNT: gpu.barrier
// QNT: nvvm.mma.sync
// QNT: arith.remui %{{.*}}, %c128
// QNT: scf.if %{{.*}} -> (f32,
// QNT: math.fma
// QNT: scf.yield
// QNT: scf.yield
// The slice's last group after the loop, then the partials.
// QNT: nvgpu.device_async_wait
// QNT: math.fma
// QNT: gpu.return

// int4 with zero points: unsigned nibbles interleaved into k order, q - z
// (exact), K past the block's 40 rows forced to 0 (z is not), f16; block 1
// of 2 reads its buffer 9728 bytes on. A group of 32 ends twice a tile: no
// branch.
// QNT: gpu.func @q4zp_up_mlarge(
// QNT: arith.muli %{{.*}}, %c9728
// int4 on f16 widens by bit operations (GemmWiden.cpp): each zero point
// -(1024 + z) in both halves of a word, the chunk's words masked, or'ed
// with 1024, put in k order by byte permutes and summed with it by one
// f16x2 FMA a pair; the padding past K kept zero.
// QNT: arith.extui {{.*}} : i8 to i32
// QNT: vector.bitcast {{.*}} : vector<16xi8> to vector<4xi32>
// QNT-NOT: arith.sitofp
// QNT-NOT: arith.uitofp
// QNT: nvvm.prmt <default> %c21520_i32
// QNT: nvvm.prmt <default> %c30258_i32
// QNT: llvm.intr.fma({{.*}}) : (vector<2xf16>, vector<2xf16>, vector<2xf16>) -> vector<2xf16>
// QNT-NOT: arith.truncf
// QNT: arith.cmpi slt, {{.*}} : vector<8xi32>
// QNT: vector.store {{.*}} vector<8xf16>
// QNT-NOT: scf.if
// QNT: math.fma
// QNT: gpu.return

// f32: signed nibbles (shifted up, then back arithmetically), each run of
// two k times its scale (groups of 6), exact in f32; no group sums.
// QNT: gpu.func @qf32_up_mlarge(
// QNT: arith.shli {{.*}} : vector<16xi8>
// QNT: arith.shrsi {{.*}} : vector<16xi8>
// QNT: arith.divui %{{.*}}, %c6
// QNT: arith.mulf {{.*}} : vector<2xf32>
// QNT-NOT: arith.truncf
// QNT: vector.store {{.*}} : memref<2x128x36xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// QNT: gpu.return

// Grouped FFNs: every block's parameters stacked (the runtime packs each
// block into its own slot), grid.y over the blocks' column tiles, and the
// blocks' pieces of each row padded to whole tiles in the workspace.
// GRP-LABEL: func.func private @grp(memref<?x48xf16>, memref<65536xi8>, memref<65536xi8>, memref<262144xi8>, memref<1024xi8>, memref<1024xi8>, memref<1024xi8>, memref<?x48xf16>, memref<?xi8>)
// GRP-SAME: groups = 2
// GRP-SAME: #ffn.kernel_param<name = "w_up", shape = [24, 80], packed = memref<256x64xf16>, pack = "grp_pack_0", experts = 2>
// GRP-SAME: #ffn.kernel_param<name = "w_down", shape = [80, 24], packed = memref<256x256xf16>, pack = "grp_pack_2", experts = 2>
// GRP-SAME: #ffn.kernel_param<name = "b_down", shape = [24], packed = memref<256xf16>, pack = "grp_pack_5", experts = 2>
// h: 2 blocks x 256 f16 columns; the K slices' partials: 2 slices x 2
// blocks x 256 f32 columns, reached only by the decode bucket's split
// GEMM 2, which reduces its own 16x128 tiles (after the partials: the
// output, b_down, x, the tile counters): a run of m > 16 needs h's 1024
// bytes a row.
// GRP-SAME: workspace_per_row = 5120
// GRP-SAME: kernel = "grp_up_m16", min_m = 1, max_m = 16, rows_per_block = 16, grid_y = 8, grid_z = 1, {{[^>]*}} workspace_per_row = 1024,
// GRP-SAME: kernel = "grp_down_m16", min_m = 1, max_m = 16, rows_per_block = 16, grid_y = 4, grid_z = 2, {{[^>]*}} workspace_per_row = 5120, args = [4, 0, 3, 2, 4, 1024, 2, 0, 3, 5, 1, 0, 6, 0, 0, 0]>,
// GRP-SAME: kernel = "grp_up_mlarge", {{[^>]*}} workspace_per_row = 1024,
// GRP-SAME: kernel = "grp_down_mlarge", {{[^>]*}} workspace_per_row = 1024,
// GRP-LABEL: func.func private @pre(
// GRP-SAME: #ffn.kernel_param<name = "norm_scale", shape = [60], packed = memref<60xbf16>>
// GRP-SAME: note: d_model / groups = 20 columns per block are not a multiple of 16 bytes
// GRP-SAME: kernel = "pre_up_mlarge", min_m = 1, max_m = 9223372036854775807, rows_per_block = 64, grid_y = 6
// The block of a tile is grid.y / column tiles per block (4: gate and up
// of 256 padded columns in 128-wide tiles).
// GRP: gpu.func @grp_up_m16(
// GRP: %[[Y:.*]] = gpu.block_id  y
// GRP: arith.divui %[[Y]], %c4
// GRP: arith.remui %[[Y]], %c4
// The split GEMM 2 stores its slice's partials, fences, and counts the
// block on its tile's counter; the block that completes the tile fences
// again and reduces it, finding an output column's block and its padded
// partials.
// GRP: gpu.func @grp_down_m16(
// GRP: nvvm.memory.barrier <gpu>
// GRP: gpu.barrier
// GRP: memref.atomic_rmw addi %{{.*}}, %{{.*}}[%{{.*}}] : (i32, memref<?xi32>) -> i32
// GRP: gpu.barrier
// GRP: nvvm.memory.barrier <gpu>
// GRP: arith.divui %{{.*}}, %c24
// GRP: arith.remui %{{.*}}, %c24
// GRP: arith.muli %{{.*}}, %c256
// GRP-NOT: gpu.func @grp_down_m16_reduce(
// The pre-norm writes each block's 20 columns into its own 64-column piece
// and zeroes the 44 padding columns after each.
// GRP: gpu.func @pre_input(
// GRP: arith.divui %{{.*}}, %c20
// GRP: scf.for %{{.*}} = %thread_id_x to %c132 step %c256
// GRP: arith.divui %{{.*}}, %c44
// GRP: gpu.func @pre_up_mlarge(

// A gated bf16 FFN with every bias and a residual, and a plain f32 FFN with
// a post-LayerNorm and a d_model (60) that is no multiple of any tile.

// The function keeps the kernel's calling convention (packed parameter
// shapes: weights K-major, padded to 256-row tiles) with its launch plan.
// CHECK-LABEL: func.func private @g(memref<?x64xbf16>, memref<256x64xbf16>, memref<256x64xbf16>, memref<256x256xbf16>, memref<256xbf16>, memref<256xbf16>, memref<64xbf16>, memref<?x64xbf16>, memref<?xi8>)
// Its contract: the model, bf16 operands on tensor cores, each parameter's
// logical shape, packed buffer and pack function, the workspace, and the
// launch plan.
// CHECK-SAME: ffn.kernel_abi = #ffn.kernel_abi<d_model = 64, d_ff = 96, storage = bf16, activation = silu, gated = true, residual = true, operand_type = bf16
// CHECK-SAME: params = [#ffn.kernel_param<name = "w_up", shape = [64, 96], packed = memref<256x64xbf16>, pack = "g_pack_0">, #ffn.kernel_param<name = "w_gate", shape = [64, 96], packed = memref<256x64xbf16>, pack = "g_pack_1">, #ffn.kernel_param<name = "w_down", shape = [96, 64], packed = memref<256x256xbf16>, pack = "g_pack_2">, #ffn.kernel_param<name = "b_up", shape = [96], packed = memref<256xbf16>, pack = "g_pack_3">, #ffn.kernel_param<name = "b_gate", shape = [96], packed = memref<256xbf16>, pack = "g_pack_4">, #ffn.kernel_param<name = "b_down", shape = [64], packed = memref<64xbf16>>]
// CHECK-SAME: workspace_per_row = 512
// CHECK-SAME: device_module = "g_device"
// CHECK-SAME: launches = [#ffn.device_launch<kernel = "g_up_m16", min_m = 1, max_m = 16, rows_per_block = 16, grid_y = 4, grid_z = 1, threads = 256, shared_bytes = 82944, workspace_per_row = 512, args = [1, 0, 3, 1, 3, 0, 4, 0, 3, 3, 3, 4, 0, 0]>
// CHECK-SAME: kernel = "g_down_m16"
// CHECK-SAME: kernel = "g_up_m64", min_m = 17, max_m = 64, rows_per_block = 64
// CHECK-SAME: kernel = "g_up_m256", min_m = 65, max_m = 256, rows_per_block = 128
// CHECK-SAME: kernel = "g_up_m1024", min_m = 257, max_m = 1024, rows_per_block = 128
// CHECK-SAME: kernel = "g_up_mlarge", min_m = 1025, max_m = 9223372036854775807, rows_per_block = 128

// CHECK: gpu.module @g_device [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">]
// The up GEMM reads x, then the gate and up weights (interleaved per tile)
// CHECK: gpu.func @g_up_m16(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: i64) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// Two of its 81 KiB rings fit an A100's 164 KiB (1 KiB reserved a block):
// ptxas is told so, and budgets registers for two blocks, not more.
// CHECK-SAME: nvvm.minctasm = 2
// Operands stream through a 4-stage ring of padded shared-memory tiles.
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<4x16x72xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1} : memref<?xbf16> to memref<4x16x72xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}
// CHECK: gpu.barrier
// Fragments by ldmatrix, products on tensor cores with f32 accumulators.
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<4x16x72xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// The epilogue in registers: the biases of a fragment's two adjacent
// columns in one load, SiLU(gate) * up with the SM's ex2 and reciprocal
// (no division), then the pair converted to bf16 and stored at once.
// CHECK: vector.load %{{.*}} {alignment = 4 : i64} : memref<?xbf16>, vector<2xbf16>
// CHECK-NOT: arith.divf
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: nvvm.rcp.approx.ftz.f
// CHECK-NOT: arith.divf
// CHECK: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<?xbf16>, vector<2xbf16>
// CHECK: gpu.func @g_down_m16(
// 108 KiB a block at m = 17-64: one fits.
// CHECK: gpu.func @g_up_m64(
// CHECK-SAME: nvvm.minctasm = 1
// CHECK: gpu.func @g_up_mlarge(
// CHECK: memref<3x128x72xbf16, #gpu.address_space<workgroup>>
// CHECK: memref<3x256x72xbf16, #gpu.address_space<workgroup>>
// Host pack functions: [in, out] to K-major, zero-padded.
// CHECK: func.func @g_pack_0(%{{.*}}: memref<64x96xbf16>, %{{.*}}: memref<256x64xbf16>)
// CHECK: func.func @g_pack_3(%{{.*}}: memref<96xbf16>, %{{.*}}: memref<256xbf16>)

// sm_90a: the wide-tile buckets multiply on warpgroup MMAs from 128-byte
// swizzled, 1024-byte aligned shared memory (one 128 x 256 tile of bf16 per
// stage) that TMA fills: a producer warpgroup (one thread's copies, 56
// registers) and two consumer warpgroups (224 registers) meet at a full and
// an empty mbarrier per stage; each consumer keeps one MMA group in flight
// and releases the stage the previous group read. The tensor maps are
// by-value arguments (their positions among the lowered arguments listed
// for ffn-gpu-tensor-map-params) and the launch plan says how to encode
// them: A over the input ([m][64], 128-byte rows), the gate and up over
// their packed [256][64]; 128-row boxes of 64 columns, 128-byte swizzle.
// The launch is persistent: at most a block per SM (max_blocks), each
// walking the tiles blockIdx.x, + gridDim.x, ... (the outer loops of both
// warpgroups), and a consumer releases the last K tile's stage before its
// epilogue, so the producer fills the next tile meanwhile.
// WG: ffn.gpu_strategy = #ffn.gpu_strategy<sms = 132, buckets = [<max_m = 64, block_m = 16, block_n = 128, {{.*}}, mma = mma_sync, split_k = [1, 1]>, <block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>]>
// WG-SAME: strategy = "gpu sm_90a (132 SMs): m 1-64 16x128 tiles mma_sync 4 stages; m >= 65 128x256 tiles wgmma 4 stages; wgmma tiles fed by TMA into an mbarrier ring (a producer warpgroup), the others by a cp.async ring"
// WG-SAME: #ffn.device_launch<kernel = "g_up_mlarge", min_m = 65, max_m = 9223372036854775807, rows_per_block = 128, grid_y = 2, grid_z = 1, threads = 384, shared_bytes = 197696, workspace_per_row = 512, args = [1, 0, 3, 1, 3, 0, 4, 0, 3, 3, 3, 4, 5, 0, 5, 1, 5, 2, 0, 0], maps = [1, 0, 2, 64, 0, 1, 128, 0, 64, 128, 1, 128, 3, 1, 2, 64, 256, 1, 128, 0, 64, 128, 1, 128, 3, 0, 2, 64, 256, 1, 128, 0, 64, 128, 1, 128], max_blocks = 132>
// WG-SAME: kernel = "g_down_mlarge", {{[^>]*}} max_blocks = 132>
// WG: gpu.module @g_device [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// WG: gpu.func @g_up_m64(
// WG-NOT: nvvm.wgmma
// WG-NOT: nvvm.mbarrier
// WG: gpu.func @g_up_mlarge({{.*}}, %[[AMAP:.*]]: !llvm.ptr, %[[GMAP:.*]]: !llvm.ptr, %[[UMAP:.*]]: !llvm.ptr, %{{.*}}: i64) kernel attributes {ffn.tensor_map_args = array<i64: 30, 31, 32>, known_block_size = array<i32: 384, 1, 1>
// WG: memref.extract_aligned_pointer_as_index
// WG-COUNT-8: nvvm.mbarrier.init
// WG: nvvm.fence.mbarrier.init
// WG: gpu.barrier
// WG: nvvm.setmaxregister  decrease 56
// WG: gpu.grid_dim  x
// WG: scf.for
// WG: scf.for
// WG: nvvm.mbarrier.try_wait.parity
// WG: nvvm.mbarrier.arrive.expect_tx
// WG: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[AMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// WG: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[GMAP]],
// WG: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[UMAP]],
// WG: nvvm.setmaxregister  increase 224
// WG: gpu.grid_dim  x
// WG: scf.for
// WG: scf.for
// WG: nvvm.mbarrier.try_wait.parity
// WG: nvvm.wgmma.fence.aligned
// WG-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// WG: nvvm.wgmma.commit.group.sync.aligned
// WG: nvvm.wgmma.wait.group.sync.aligned 1
// WG: nvvm.mbarrier.arrive
// WG: nvvm.wgmma.wait.group.sync.aligned 0
// WG: nvvm.mbarrier.arrive
// WG: arith.mulf
// WG-NOT: nvgpu.device_async_copy
// WG: gpu.func @g_down_mlarge(

// The ping-pong tile (block_n = 128 with wgmma): each consumer warpgroup
// multiplies a whole 128 x 128 tile as two m64 n128 slabs (two
// accumulator structs), the warpgroups taking the block's tiles in turns
// (the tile loop starts at the warpgroup and steps by two). A stage is
// released by the four warps that read it; two more barriers order the
// main loops: a warpgroup waits on its own before its K loop and, its
// MMAs done, releases the stage it read last and arrives on the other's.
// RUN: sed 's/block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma/block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma/' %S/Inputs/wgmma.mlir | ffn-opt --ffn-gpu-lower="chip=sm_90a" | FileCheck %s --check-prefix=PP
// PP: strategy = "gpu sm_90a (132 SMs): m 1-64 16x128 tiles mma_sync 4 stages; m >= 65 128x128 tiles wgmma ping-pong 4 stages;
// PP-SAME: kernel = "g_up_mlarge", {{[^>]*}} rows_per_block = 128, grid_y = 4, grid_z = 1, threads = 384, shared_bytes = 132176, {{[^>]*}} max_blocks = 132>
// PP: gpu.func @g_up_mlarge(
// PP: nvvm.mbarrier.init %{{.*}}, %c1_i32
// PP: nvvm.mbarrier.init %{{.*}}, %c4_i32
// PP: nvvm.mbarrier.init %{{.*}}, %c1_i32
// PP: nvvm.mbarrier.init %{{.*}}, %c4_i32
// PP: nvvm.mbarrier.init %{{.*}}, %c1_i32
// PP: nvvm.mbarrier.init %{{.*}}, %c4_i32
// PP: nvvm.mbarrier.init %{{.*}}, %c1_i32
// PP: nvvm.mbarrier.init %{{.*}}, %c4_i32
// PP: nvvm.mbarrier.init %{{.*}}, %c4_i32
// PP: nvvm.mbarrier.init %{{.*}}, %c4_i32
// PP-NOT: nvvm.mbarrier.init
// PP: nvvm.fence.mbarrier.init
// PP: nvvm.setmaxregister  decrease 56
// PP: nvvm.setmaxregister  increase 224
// PP: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2 {
// PP: nvvm.mbarrier.try_wait.parity
// PP: scf.for {{.*}} -> (!llvm.struct<({{(f32, )+}}f32)>, !llvm.struct<({{(f32, )+}}f32)>)
// PP: nvvm.mbarrier.try_wait.parity
// PP: nvvm.wgmma.fence.aligned
// PP-COUNT-8: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>
// PP: nvvm.wgmma.commit.group.sync.aligned
// PP: nvvm.wgmma.wait.group.sync.aligned 1
// PP: nvvm.mbarrier.arrive
// PP: nvvm.wgmma.wait.group.sync.aligned 0
// PP: nvvm.mbarrier.arrive
// PP: nvvm.mbarrier.arrive
// PP: arith.mulf
// PP: gpu.func @g_down_mlarge(

// f32 keeps exact products (FMA, no tensor cores). The post-norm's input is
// an f32 workspace row z; at d_model 60 every bucket's row band (16 x 60,
// 128 x 60 elements) is small enough for GEMM 2 to normalize it: after
// its epilogue each block counts its tile on the band's counter (after the
// tiles', at grid.x * grid.y + block x), and the last one's warps
// normalize a row each into the output (arguments: counters, output,
// scale, shift). No output kernel.
// F32: func.func private @p(
// F32-SAME: post-norm fused into GEMM 2 at m 1+ (the block
// F32-SAME: kernel = "p_down_m16", {{[^>]*}} args = [4, 0, 3, 1, 4, 1024, 3, 3, 6, 0, 2, 0, 3, 4, 3, 5, 0, 0]
// F32-SAME: kernel = "p_down_mlarge", min_m = 17, {{[^>]*}} args = [4, 0, 3, 1, 4, 1024, 3, 3, 6, 0, 2, 0, 3, 4, 3, 5, 0, 0]
// F32-NOT: p_output
// F32: gpu.module @p_device
// F32: gpu.func @p_up_m16(
// F32-NOT: nvvm.mma.sync
// F32: math.fma
// F32: gpu.func @p_down_m16(
// F32: math.fma
// F32: nvvm.memory.barrier <gpu>
// F32: gpu.barrier
// F32: gpu.grid_dim  x
// F32: gpu.grid_dim  y
// F32: memref.atomic_rmw addi
// F32: nvvm.memory.barrier <gpu>
// F32: gpu.shuffle  xor
// F32: math.rsqrt
// F32: gpu.return
// F32-NOT: gpu.func @p_output
// At d_model 200 the 128-row bands (25600 elements) keep the output kernel
// (m >= 17); the decode bucket's 16-row bands still fuse.
// F32BIG: func.func private @p(
// F32BIG-SAME: post-norm fused into GEMM 2 at m 1-16 (the block finishing a row band's last tile normalizes it); post-norm by a row kernel after GEMM 2 at m 17+
// F32BIG-SAME: kernel = "p_down_m16", {{[^>]*}} args = [4, 0, 3, 1, 4, 1024, 3, 3, 6, 0, 2, 0, 3, 4, 3, 5, 0, 0]
// F32BIG-SAME: kernel = "p_down_mlarge", min_m = 17, {{[^>]*}} args = [4, 0, 3, 1, 4, 1024, 3, 3, 0, 0]
// F32BIG-SAME: kernel = "p_output", min_m = 17, max_m = 9223372036854775807, {{[^>]*}} args = [4, 1024, 2, 0, 3, 4, 3, 5, 0, 0]

module {
  func.func @g(%arg0: tensor<?x64xbf16> {ffn.param = "input"}, %arg1: tensor<64x96xbf16> {ffn.param = "w_up"}, %arg2: tensor<64x96xbf16> {ffn.param = "w_gate"}, %arg3: tensor<96x64xbf16> {ffn.param = "w_down"}, %arg4: tensor<96xbf16> {ffn.param = "b_up"}, %arg5: tensor<96xbf16> {ffn.param = "b_gate"}, %arg6: tensor<64xbf16> {ffn.param = "b_down"}) -> tensor<?x64xbf16> {
    %0 = ffn.ffn gated silu residual ins(%arg0 : tensor<?x64xbf16>) up(%arg1 : tensor<64x96xbf16>) gate(%arg2 : tensor<64x96xbf16>) down(%arg3 : tensor<96x64xbf16>) bias_up(%arg4 : tensor<96xbf16>) bias_gate(%arg5 : tensor<96xbf16>) bias_down(%arg6 : tensor<64xbf16>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<max_m = 16, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>, <max_m = 64, block_m = 64, block_n = 128, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>, <max_m = 256, block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 3, mma = mma_sync, split_k = [1, 1]>, <max_m = 1024, block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 3, mma = mma_sync, split_k = [1, 1]>, <block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 3, mma = mma_sync, split_k = [1, 1]>]> -> tensor<?x64xbf16>
    return %0 : tensor<?x64xbf16>
  }
  func.func @p(%arg0: tensor<?x60xf32> {ffn.param = "input"}, %arg1: tensor<60x100xf32> {ffn.param = "w_up"}, %arg2: tensor<100x60xf32> {ffn.param = "w_down"}, %arg3: tensor<100xf32> {ffn.param = "b_up"}, %arg4: tensor<60xf32> {ffn.param = "b_down"}, %arg5: tensor<60xf32> {ffn.param = "norm_scale"}, %arg6: tensor<60xf32> {ffn.param = "norm_shift"}) -> tensor<?x60xf32> {
    %0 = ffn.ffn gelu norm<layernorm, post, eps = 1.0e-05> ins(%arg0 : tensor<?x60xf32>) up(%arg1 : tensor<60x100xf32>) down(%arg2 : tensor<100x60xf32>) bias_up(%arg3 : tensor<100xf32>) bias_down(%arg4 : tensor<60xf32>) norm_scale(%arg5 : tensor<60xf32>) norm_shift(%arg6 : tensor<60xf32>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<max_m = 16, block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 32, stages = 4, mma = fma, split_k = [1, 1]>, <block_m = 128, block_n = 128, warps_m = 2, warps_n = 4, block_k = 32, stages = 4, mma = fma, split_k = [1, 1]>]> -> tensor<?x60xf32>
    return %0 : tensor<?x60xf32>
  }
}

