// RUN: split-file %s %t
// RUN: ffn-opt %t/pre.mlir --ffn-halide-lower | FileCheck %s
// RUN: ffn-opt %t/post.mlir --ffn-halide-lower | FileCheck %s --check-prefix=POST
// RUN: ffn-opt %t/auto.mlir --ffn-halide-lower="schedule=mullapudi2016 threads=2 m-estimate=16" | FileCheck %s --check-prefix=AUTO

// ffn-halide-lower replaces each FFN function by a kernel stub in the CPU
// back end's calling convention that fills halide_buffer_t structs and calls
// the Halide pipelines ffnc-halide-gen compiles from the module's request.
//
// The worked example of docs/plans/halide-backend.md §3: d_model 64, d_ff
// 200, SwiGLU, residual, pre-RMSNorm, f32, on x86-64-avx512 with
// mr = 8, nr = 32, mc = 256. Up panels are upPanelWidth(32, 512, gated) = 16
// wide (gate and up share the tile's 32 columns): 13 of them; down panels
// are nr = 32 wide: 2. Workspace per row: A (64 floats) + H (13 * 16 = 208
// floats) = 1088 bytes.

// The request for the generator, on the module: the Halide target of the
// module's row (Skylake's AVX-512 subset, never the host's), the kernel and
// its pipelines with their arguments.
// CHECK-LABEL: module attributes {ffn.halide_request = "protocol 1\0Atarget x86-64-linux-sse41-avx-avx2-fma-f16c-avx512-avx512_skylake-no_runtime-large_buffers-disable_llvm_loop_opt\0Akernel k\0A
// CHECK-SAME: pipeline __ffnh_k_norm_in x:f32:2 norm_scale:f32:1 a:f32:2\0A
// CHECK-SAME: pipeline __ffnh_k_up p0:i32:0 a:f32:2 w_up:f32:3 w_gate:f32:3 h:f32:2\0A
// CHECK-SAME: pipeline __ffnh_k_down p0:i32:0 h:f32:2 w_down:f32:3 x:f32:2 y:f32:2\0A

// A pack adapter per weight matrix, the pack function the glue calls: the
// [in, out] matrix and the panel-major buffer [np][in][pw] as two Halide
// buffers. The structs live in the entry block, with every field that is
// the same at each call; the call stores the host pointers.
// CHECK-LABEL: func.func private @k_pack_w_up(
// CHECK-SAME: %[[W:[^:]*]]: memref<64x200xf32>, %[[P:[^:]*]]: memref<13x64x16xf32>)
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// The packed buffer: halide_buffer_t is 56 bytes, three dimensions 16 each;
// its type f32 (code 2 | 32 bits << 8 | 1 lane << 16) at byte 32, its rank
// at 36, its dimensions at 40.
// CHECK: %[[PBUF:.*]] = llvm.alloca %[[ONE]] x !llvm.array<56 x i8> {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT: %[[PDIM:.*]] = llvm.alloca %[[ONE]] x !llvm.array<48 x i8> {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK: %[[F32:.*]] = arith.constant 73730 : i32
// CHECK-NEXT: %[[AT32:.*]] = llvm.getelementptr inbounds %[[PBUF]][32] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %[[F32]], %[[AT32]] : i32, !llvm.ptr
// CHECK-NEXT: %[[RANK:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[AT36:.*]] = llvm.getelementptr inbounds %[[PBUF]][36] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %[[RANK]], %[[AT36]] : i32, !llvm.ptr
// CHECK-NEXT: %[[AT40:.*]] = llvm.getelementptr inbounds %[[PBUF]][40] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %[[PDIM]], %[[AT40]] : !llvm.ptr, !llvm.ptr
// (lane, k, panel): the panels, 13 of them, 64 * 16 floats apart.
// CHECK: %[[NP:.*]] = arith.constant 13 : i32
// CHECK-NEXT: %[[D2EXT:.*]] = llvm.getelementptr inbounds %[[PDIM]][36] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %[[NP]], %[[D2EXT]] : i32, !llvm.ptr
// CHECK-NEXT: %[[PSTRIDE:.*]] = arith.constant 1024 : i32
// CHECK-NEXT: %[[D2STR:.*]] = llvm.getelementptr inbounds %[[PDIM]][40] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %[[PSTRIDE]], %[[D2STR]] : i32, !llvm.ptr
// The source, [in, out] row-major, is Halide's (out, in): rows of 200.
// CHECK: %[[WBUF:.*]] = llvm.alloca %[[ONE]] x !llvm.array<56 x i8> {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT: %[[WDIM:.*]] = llvm.alloca %[[ONE]] x !llvm.array<32 x i8> {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK: %[[D1STR:.*]] = llvm.getelementptr inbounds %[[WDIM]][24] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %c200_i32{{(_[0-9]+)?}}, %[[D1STR]] : i32, !llvm.ptr
// CHECK: %[[WADDR:.*]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK-NEXT: %[[WINT:.*]] = arith.index_cast %[[WADDR]] : index to i64
// CHECK-NEXT: %[[WPTR:.*]] = llvm.inttoptr %[[WINT]] : i64 to !llvm.ptr
// CHECK: %[[WHOST:.*]] = llvm.getelementptr inbounds %[[WBUF]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %[[WPTR]], %[[WHOST]] : !llvm.ptr, !llvm.ptr
// A nonzero result aborts: Halide's handler has printed the error.
// CHECK: %[[RC:.*]] = llvm.call @__ffnh_k_pack_w_up(%[[WBUF]], %[[PBUF]]) : (!llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[BAD:.*]] = arith.cmpi ne, %[[RC]], %[[ZERO]] : i32
// CHECK-NEXT: scf.if %[[BAD]] {
// CHECK-NEXT: llvm.call @abort() : () -> ()
// CHECK-LABEL: func.func private @k_pack_w_gate(
// CHECK-SAME: memref<64x200xf32>, %{{[^:]*}}: memref<13x64x16xf32>)
// CHECK: llvm.call @__ffnh_k_pack_w_gate(
// CHECK-LABEL: func.func private @k_pack_w_down(
// CHECK-SAME: memref<200x64xf32>, %{{[^:]*}}: memref<2x200x32xf32>)
// CHECK: llvm.call @__ffnh_k_pack_w_down(

// The kernel: ffn-lower-packed's convention, the packed weights panel-major
// and laid out by Halide (pack_layout), four phases: pre-norm rows, 13 up
// panels, 2 down panels, no post-norm.
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x64xf32> {ffn.param = "input"}, %{{[^:]*}}: memref<13x64x16xf32> {ffn.param = "w_up"}, %{{[^:]*}}: memref<13x64x16xf32> {ffn.param = "w_gate"}, %{{[^:]*}}: memref<2x200x32xf32> {ffn.param = "w_down"}, %{{[^:]*}}: memref<64xf32> {ffn.param = "norm_scale"}, %[[Y:[^:]*]]: memref<?x64xf32> {ffn.param = "output"}, %[[WS:[^:]*]]: memref<?xi8> {ffn.param = "workspace"}, %[[PHASE:[^:]*]]: index {ffn.param = "phase"}, %[[BEGIN:[^:]*]]: index {ffn.param = "begin"}, %[[END:[^:]*]]: index {ffn.param = "end"})
// CHECK-SAME: ffn.kernel_abi = #ffn.kernel_abi<d_model = 64, d_ff = 200, storage = f32, activation = silu, gated = true, residual = true, norm = <rmsnorm, pre, eps = 1.0e-05>, pack_layout = "halide-panels-1", operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [64, 200], packed = memref<13x64x16xf32>, pack = "k_pack_w_up">, #ffn.kernel_param<name = "w_gate", shape = [64, 200], packed = memref<13x64x16xf32>, pack = "k_pack_w_gate">, #ffn.kernel_param<name = "w_down", shape = [200, 64], packed = memref<2x200x32xf32>, pack = "k_pack_w_down">, #ffn.kernel_param<name = "norm_scale", shape = [64], packed = memref<64xf32>>], workspace_per_row = 1088, phase_units = [array<i64: -1, 13, 2, 0>], bucket_max_m = [-1], strategy = "halide 14 two-pass: 512-bit vectors, register tile 8x32 (gate+up 16+16), 256-row blocks, no prefetch, phases split by the runtime's threads; f32 sums, strict epilogues">
// CHECK: %[[M:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x64xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: %[[XP:.*]] = llvm.inttoptr
// CHECK: memref.extract_aligned_pointer_as_index %[[WS]]
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: %[[WSP:.*]] = llvm.inttoptr
// CHECK: scf.index_switch %[[PHASE]]
// Phase 0, rows [begin, end) in calls of at most 2^30 rows (Halide's
// extents are int32): A = rmsnorm(x), A's rows 64 floats apart at the
// workspace's start. Coordinates are absolute: the crop's first row is its
// min, and the host pointer points at it.
// CHECK-NEXT: case 0 {
// CHECK-NEXT: %[[CHUNK:.*]] = arith.constant 1073741824 : index
// CHECK-NEXT: scf.for %[[R0:.*]] = %[[BEGIN]] to %[[END]] step %[[CHUNK]] {
// CHECK: %[[R1:.*]] = arith.minsi %{{.*}}, %[[END]] : index
// CHECK: %[[XROW:.*]] = arith.muli %[[R0]], %c256{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[XOFF:.*]] = arith.index_cast %[[XROW]] : index to i64
// CHECK-NEXT: %[[XHOST:.*]] = llvm.getelementptr %[[XP]][%[[XOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: %[[XROWS:.*]] = arith.subi %[[R1]], %[[R0]] : index
// CHECK-NEXT: %[[XBUFHOST:.*]] = llvm.getelementptr inbounds %[[XBUF:.*]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %[[XHOST]], %[[XBUFHOST]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[XMIN:.*]] = arith.index_cast %[[R0]] : index to i32
// CHECK-NEXT: %[[XD1MIN:.*]] = llvm.getelementptr inbounds %[[XDIM:.*]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %[[XMIN]], %[[XD1MIN]] : i32, !llvm.ptr
// CHECK-NEXT: %[[XEXT:.*]] = arith.index_cast %[[XROWS]] : index to i32
// CHECK-NEXT: %[[XD1EXT:.*]] = llvm.getelementptr inbounds %[[XDIM]][20] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %[[XEXT]], %[[XD1EXT]] : i32, !llvm.ptr
// CHECK: llvm.call @__ffnh_k_norm_in(%[[XBUF]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.call @abort()
// Phase 1, up panels [begin, end): one call per block of mc = 256 rows
// (Halide's schedule has no cache block of its own), p0 = begin, into H's
// columns [16 begin, 16 end) of the block's rows; H starts after A
// (4 * 64 * m bytes), its rows 208 floats apart.
// CHECK: case 1 {
// CHECK: scf.for %[[RB:.*]] = %{{.*}} to %[[M]] step %c256{{(_[0-9]+)?}} {
// CHECK: %[[RE:.*]] = arith.minsi %{{.*}}, %[[M]] : index
// CHECK-NEXT: %[[P0:.*]] = arith.index_cast %[[BEGIN]] : index to i32
// CHECK: %[[HC0:.*]] = arith.muli %[[BEGIN]], %c16{{(_[0-9]+)?}} : index
// CHECK: %[[HC1:.*]] = arith.muli %[[END]], %c16{{(_[0-9]+)?}} : index
// CHECK: %[[HAT:.*]] = arith.muli %[[M]], %c256{{(_[0-9]+)?}} : index
// CHECK: %[[HROW:.*]] = arith.muli %[[RB]], %c208{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[HEL:.*]] = arith.addi %[[HROW]], %[[HC0]] : index
// CHECK: %[[HBYTES:.*]] = arith.muli %[[HEL]], %c4{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[HOFF:.*]] = arith.addi %[[HAT]], %[[HBYTES]] : index
// CHECK-NEXT: %[[HOFF64:.*]] = arith.index_cast %[[HOFF]] : index to i64
// CHECK-NEXT: %[[HHOST:.*]] = llvm.getelementptr %[[WSP]][%[[HOFF64]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: %[[HCOLS:.*]] = arith.subi %[[HC1]], %[[HC0]] : index
// CHECK: llvm.store %[[HHOST]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[HMIN:.*]] = arith.index_cast %[[HC0]] : index to i32
// CHECK-NEXT: llvm.store %[[HMIN]], %[[HDIM:.*]] : i32, !llvm.ptr
// CHECK-NEXT: %[[HEXT:.*]] = arith.index_cast %[[HCOLS]] : index to i32
// CHECK-NEXT: %[[HD0EXT:.*]] = llvm.getelementptr inbounds %[[HDIM]][4] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: llvm.store %[[HEXT]], %[[HD0EXT]] : i32, !llvm.ptr
// CHECK: llvm.call @__ffnh_k_up(%[[P0]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.call @abort()
// Phase 2, down panels: y's crop is the panels' columns inside d_model,
// [32 begin, min(32 end, 64)), with the residual x's rows.
// CHECK: case 2 {
// CHECK: scf.for %[[DB:.*]] = %{{.*}} to %[[M]] step %c256{{(_[0-9]+)?}} {
// CHECK: %[[YE:.*]] = arith.muli %[[END]], %c32{{(_[0-9]+)?}} : index
// CHECK: %[[YC1:.*]] = arith.minsi %[[YE]], %c64{{(_[0-9]+)?}} : index
// CHECK: %[[YC0:.*]] = arith.muli %[[BEGIN]], %c32{{(_[0-9]+)?}} : index
// CHECK: %[[YROW:.*]] = arith.muli %[[DB]], %c64{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[YEL:.*]] = arith.addi %[[YROW]], %[[YC0]] : index
// CHECK: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: %[[YCOLS:.*]] = arith.subi %[[YC1]], %[[YC0]] : index
// CHECK: llvm.call @__ffnh_k_down(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.call @abort()
// CHECK-NOT: case 3
// CHECK: default {
// The pipelines, declared once: Halide's AOT signatures, scalars by value.
// CHECK-DAG: llvm.func @__ffnh_k_pack_w_up(!llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @abort()
// CHECK-DAG: llvm.func @__ffnh_k_norm_in(!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @__ffnh_k_up(i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @__ffnh_k_down(i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32

// A post-LayerNorm bf16 FFN with biases on AVX2 (8 lanes, 16-wide panels
// of d_ff 84 and d_model 60): 6 up and 4 down panels, phases (none, 6, 4,
// rows). Down writes whole f32 panels into O (4 * 16 = 64 floats a row,
// after H's 96), and norm_out writes y. bf16 is Halide's bfloat (code 4 |
// 16 << 8 | 1 << 16).
// POST: ffn.halide_request = "protocol 1\0Atarget x86-64-linux-sse41-avx-avx2-fma-f16c-no_runtime-large_buffers-disable_llvm_loop_opt\0Akernel p\0A
// POST-LABEL: func.func private @p_pack_w_up(
// POST-SAME: memref<60x84xbf16>, %{{[^:]*}}: memref<6x60x16xbf16>)
// POST: arith.constant 69636 : i32
// POST-LABEL: func.func private @p_pack_w_down(
// POST-SAME: memref<84x60xbf16>, %{{[^:]*}}: memref<4x84x16xbf16>)
// POST-LABEL: func.func @p(
// POST-SAME: memref<?x60xbf16> {ffn.param = "input"}
// POST-SAME: pack_layout = "halide-panels-1"
// POST-SAME: #ffn.kernel_param<name = "b_up", shape = [84], packed = memref<84xbf16>>
// POST-SAME: workspace_per_row = 640, phase_units = [array<i64: 0, 6, 4, -1>], bucket_max_m = [-1], strategy = "halide 14 two-pass: 256-bit vectors, register tile 6x16, 252-row blocks, next-panel prefetch,
// POST: scf.index_switch
// POST-NOT: case 0
// POST: case 1 {
// POST: llvm.call @__ffnh_p_up(
// POST: case 2 {
// POST: %[[OC0:.*]] = arith.muli %{{.*}}, %c16{{(_[0-9]+)?}} : index
// POST: %[[OC1:.*]] = arith.muli %{{.*}}, %c16{{(_[0-9]+)?}} : index
// POST: %[[OAT:.*]] = arith.muli %{{.*}}, %c384{{(_[0-9]+)?}} : index
// POST: %[[OROW:.*]] = arith.muli %{{.*}}, %c64{{(_[0-9]+)?}} : index
// POST-NEXT: arith.addi %[[OROW]], %[[OC0]] : index
// POST: arith.subi %[[OC1]], %[[OC0]] : index
// POST: llvm.call @__ffnh_p_down(
// POST: case 3 {
// POST: llvm.call @__ffnh_p_norm_out(
// POST: default {

// Autoscheduled: one phase of rows (each call on Halide's own pool of
// `threads`), the whole FFN in one pipeline on unpacked parameters, no
// workspace, no pack functions and no pack_layout.
// AUTO: ffn.halide_request = "protocol 1\0A
// AUTO-SAME: autoscheduler mullapudi2016\0A
// AUTO-SAME: pipeline __ffnh_a_whole x:f32:2 w_up:f32:2 w_gate:f32:2 w_down:f32:2 norm_scale:f32:1 y:f32:2\0A
// AUTO-NOT: func.func private
// AUTO-LABEL: func.func @a(
// AUTO-SAME: memref<64x200xf32> {ffn.param = "w_up"}
// AUTO-SAME: #ffn.kernel_abi<d_model = 64, d_ff = 200, storage = f32, activation = silu, gated = true, residual = true, norm = <rmsnorm, pre, eps = 1.0e-05>, operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [64, 200], packed = memref<64x200xf32>>,
// AUTO-SAME: workspace_per_row = 0, phase_units = [array<i64: 1>], bucket_max_m = [-1], strategy = "halide 14 autoscheduled (Mullapudi2016) for 2 threads of Halide's own thread pool per call, M estimate 16, unpacked weights; one unit of work (Halide's pool, not the runtime's threads, runs it in parallel)">
// AUTO: scf.index_switch
// AUTO-NEXT: case 0 {
// AUTO-NEXT: %[[T:.*]] = arith.constant 2 : i32
// AUTO-NEXT: llvm.call @halide_set_num_threads(%[[T]]) : (i32) -> i32
// AUTO: scf.for
// AUTO: llvm.call @__ffnh_a_whole(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// AUTO: llvm.call @abort()
// AUTO: llvm.func @halide_set_num_threads(i32) -> i32

//--- pre.mlir
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @k(%x: tensor<?x64xf32> {ffn.param = "input"}, %wu: tensor<64x200xf32> {ffn.param = "w_up"}, %wg: tensor<64x200xf32> {ffn.param = "w_gate"}, %wd: tensor<200x64xf32> {ffn.param = "w_down"}, %s: tensor<64xf32> {ffn.param = "norm_scale"}) -> tensor<?x64xf32> {
  %y = ffn.ffn gated silu residual norm<rmsnorm, pre, eps = 1.0e-05> ins(%x : tensor<?x64xf32>) up(%wu : tensor<64x200xf32>) gate(%wg : tensor<64x200xf32>) down(%wd : tensor<200x64xf32>) norm_scale(%s : tensor<64xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
}

//--- post.mlir
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 1, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @p(%x: tensor<?x60xbf16> {ffn.param = "input"}, %wu: tensor<60x84xbf16> {ffn.param = "w_up"}, %wd: tensor<84x60xbf16> {ffn.param = "w_down"}, %bu: tensor<84xbf16> {ffn.param = "b_up"}, %bd: tensor<60xbf16> {ffn.param = "b_down"}, %s: tensor<60xbf16> {ffn.param = "norm_scale"}, %t: tensor<60xbf16> {ffn.param = "norm_shift"}) -> tensor<?x60xbf16> {
  %y = ffn.ffn gelu residual norm<layernorm, post, eps = 1.0e-12> ins(%x : tensor<?x60xbf16>) up(%wu : tensor<60x84xbf16>) down(%wd : tensor<84x60xbf16>) bias_up(%bu : tensor<84xbf16>) bias_down(%bd : tensor<60xbf16>) norm_scale(%s : tensor<60xbf16>) norm_shift(%t : tensor<60xbf16>) strategy #ffn.cpu_strategy<vector_bits = 256, mr = 6, nr = 16, mc = 252, prefetch = true, fused_max_m = 0> -> tensor<?x60xbf16>
  return %y : tensor<?x60xbf16>
}
}

//--- auto.mlir
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 2, peak_gflops = 112.0, dram_gbs = 20.0, cache_gbs = 60.0, sync_us = 1.0>} {
func.func @a(%x: tensor<?x64xf32> {ffn.param = "input"}, %wu: tensor<64x200xf32> {ffn.param = "w_up"}, %wg: tensor<64x200xf32> {ffn.param = "w_gate"}, %wd: tensor<200x64xf32> {ffn.param = "w_down"}, %s: tensor<64xf32> {ffn.param = "norm_scale"}) -> tensor<?x64xf32> {
  %y = ffn.ffn gated silu residual norm<rmsnorm, pre, eps = 1.0e-05> ins(%x : tensor<?x64xf32>) up(%wu : tensor<64x200xf32>) gate(%wg : tensor<64x200xf32>) down(%wd : tensor<200x64xf32>) norm_scale(%s : tensor<64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
}
