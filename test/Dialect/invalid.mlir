// RUN: ffn-opt %s -split-input-file -verify-diagnostics
// Every verifier rule of ffn.ffn, #ffn.norm and #ffn.kernel_abi, one case
// each.

func.func @input_rank(%x: tensor<16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{input must be a rank-2 tensor [M, d_model]}}
  %y = ffn.ffn relu ins(%x : tensor<16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<16xf32>
  return
}

// -----

func.func @dynamic_weights(%x: tensor<?x16xf32>, %w1: tensor<16x?xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{w_up must be a static rank-2 tensor [d_model, d_ff]}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x?xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @input_width(%x: tensor<?x8xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{input has 8 columns but w_up has 16 rows (d_model)}}
  %y = ffn.ffn relu ins(%x : tensor<?x8xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @result_type(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{result type 'tensor<4x16xf32>' must equal the input type 'tensor<?x16xf32>'}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @down_shape(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<16x64xf32>) {
  // expected-error @+1 {{w_down must have shape [64, 16], got [16, 64]}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<16x64xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @mixed_dtypes(%x: tensor<?x16xf32>, %w1: tensor<16x64xbf16>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{w_up has element type 'bf16' but the input has 'f32'}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xbf16>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @unsupported_dtype(%x: tensor<?x16xf64>, %w1: tensor<16x64xf64>, %w2: tensor<64x16xf64>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf64>) up(%w1 : tensor<16x64xf64>) down(%w2 : tensor<64x16xf64>) -> tensor<?x16xf64>
  return
}

// -----

func.func @gated_without_gate(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{a gated FFN needs a w_gate operand}}
  %y = ffn.ffn gated silu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @gate_on_plain(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{w_gate is only allowed on a gated FFN}}
  %y = ffn.ffn silu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) gate(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @gate_bias_on_plain(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{b_gate is only allowed on a gated FFN}}
  %y = ffn.ffn silu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) bias_gate(%b : tensor<64xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @gate_shape(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %wg: tensor<16x32xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{w_gate must have shape [16, 64], got [16, 32]}}
  %y = ffn.ffn gated silu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) gate(%wg : tensor<16x32xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @bias_up_shape(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{b_up must have shape [64], got [16]}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) bias_up(%b : tensor<16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @bias_down_shape(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{b_down must have shape [16], got [64]}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) bias_down(%b : tensor<64xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @norm_params_without_norm(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %s: tensor<16xf32>) {
  // expected-error @+1 {{norm parameters given without a norm}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) norm_scale(%s : tensor<16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @norm_without_scale(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{a norm needs a norm_scale operand}}
  %y = ffn.ffn relu norm<rmsnorm, pre, eps = 1.0e-6> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @layernorm_without_shift(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %s: tensor<16xf32>) {
  // expected-error @+1 {{a layernorm needs a norm_shift operand}}
  %y = ffn.ffn relu norm<layernorm, pre, eps = 1.0e-5> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) norm_scale(%s : tensor<16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @rmsnorm_with_shift(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %s: tensor<16xf32>) {
  // expected-error @+1 {{an rmsnorm has no norm_shift operand}}
  %y = ffn.ffn relu norm<rmsnorm, pre, eps = 1.0e-5> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) norm_scale(%s : tensor<16xf32>) norm_shift(%s : tensor<16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @norm_scale_shape(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %s: tensor<64xf32>) {
  // expected-error @+1 {{norm_scale must have shape [16], got [64]}}
  %y = ffn.ffn relu norm<rmsnorm, post, eps = 1.0e-5> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) norm_scale(%s : tensor<64xf32>) -> tensor<?x16xf32>
  return
}

// -----

// expected-error @+1 {{norm eps must be positive and finite, got 0}}
func.func @zero_eps() attributes {n = #ffn.norm<rmsnorm, pre, eps = 0.0>} {
  return
}

// -----

// expected-error @+1 {{norm eps must be positive and finite, got -1}}
func.func @negative_eps() attributes {n = #ffn.norm<rmsnorm, pre, eps = -1.0>} {
  return
}

// -----

// expected-error @+1 {{unknown norm kind 'batchnorm' (expected layernorm or rmsnorm)}}
func.func @bad_kind() attributes {n = #ffn.norm<batchnorm, pre, eps = 1.0>} {
  return
}

// -----

// expected-error @+1 {{unknown norm position 'middle' (expected pre or post)}}
func.func @bad_position() attributes {n = #ffn.norm<layernorm, middle, eps = 1.0>} {
  return
}

// -----

func.func @bad_activation(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{unknown activation 'tanh'}}
  %y = ffn.ffn tanh ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @invariant_but_fused(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{is batch_invariant, but its strategy takes the fused schedule for m <= 8 (a row's reduction order would depend on m)}}
  %y = ffn.ffn relu batch_invariant ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 8, chunk = 32, groups = 2> -> tensor<?x16xf32>
  return
}

// -----

func.func @sparsity_not_relu(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{activation_sparsity needs an activation that makes exact zeros (relu, gated or not), got gelu}}
  %y = ffn.ffn gelu activation_sparsity 0.5 ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @sparsity_range(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{activation_sparsity must be in [0, 1), got 1.5}}
  %y = ffn.ffn relu activation_sparsity 1.5 ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @sparse_bucket_range(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{sparse_max_m must be in [0, mc = 256], got 300}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0, sparse_max_m = 300> -> tensor<?x16xf32>
  return
}

// -----

// The kernel contract names the function's arguments: input, params,
// output, workspace, phase range.
// expected-error @+1 {{kernel contract names 3 arguments, the function takes 2}}
func.func @contract_arity(%x: memref<?x8xf32>, %y: memref<?x8xf32>)
    attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = relu, gated = false, residual = false, operand_type = f32, params = [], workspace_per_row = 64, strategy = "s">} {
  return
}

// -----

// Each parameter arrives in the packed type its contract declares.
// expected-error @+1 {{parameter 'w_up' is 'memref<8x8xf32>', its contract says 'memref<1x8x8xf32>'}}
func.func @contract_packed_type(%x: memref<?x8xf32>, %w: memref<8x8xf32>, %y: memref<?x8xf32>)
    attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = relu, gated = false, residual = false, operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [8, 8], packed = memref<1x8x8xf32>, pack = "p">], strategy = "s">} {
  return
}

// -----

// In the LLVM dialect each memref is its descriptor's fields: input and
// output 7 each, the [1, 8, 8] parameter 9, the workspace 5.
// expected-error @+1 {{kernel contract names 28 expanded arguments, the function takes 3}}
llvm.func @contract_expanded(%a: !llvm.ptr, %b: !llvm.ptr, %c: i64)
    attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = relu, gated = false, residual = false, operand_type = f32, params = [#ffn.kernel_param<name = "w_up", shape = [8, 8], packed = memref<1x8x8xf32>, pack = "p">], workspace_per_row = 64, strategy = "s">} {
  llvm.return
}

// -----

// expected-error @+1 {{parameter 'w_up': packed must be a static, row-major memref of whole bytes, got 'memref<?x8xf32>'}}
func.func private @param_dynamic() attributes {a = #ffn.kernel_param<name = "w_up", shape = [8, 8], packed = memref<?x8xf32>, pack = "p">}

// -----

// expected-error @+1 {{parameter 'b_up' is not packed, so packed must have its shape}}
func.func private @param_unpacked() attributes {a = #ffn.kernel_param<name = "b_up", shape = [8], packed = memref<16xf32>>}

// -----

// expected-error @+1 {{parameter 'w' must be a vector or a matrix of positive size}}
func.func private @param_rank() attributes {a = #ffn.kernel_param<name = "w", shape = [2, 2, 2], packed = memref<2x2x2xf32>, pack = "p">}

// -----

// expected-error @+1 {{phase_units and bucket_max_m go together}}
func.func private @contract_buckets() attributes {a = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = relu, gated = false, residual = false, operand_type = f32, params = [], phase_units = [array<i64: 1>], strategy = "s">}

// -----

// expected-error @+1 {{phase_units must be i64 arrays of one length per bucket}}
func.func private @contract_ragged() attributes {a = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = relu, gated = false, residual = false, operand_type = f32, params = [], phase_units = [array<i64: 1, 2>, array<i64: 1>], bucket_max_m = [4, -1], strategy = "s">}

// -----

// expected-error @+1 {{storage must be f32, bf16 or f16, got 'i8'}}
func.func private @contract_storage() attributes {a = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = i8, activation = relu, gated = false, residual = false, operand_type = f32, params = [], strategy = "s">}

// -----

// expected-error @+1 {{operand_type must be f32, the storage type or i8}}
func.func private @contract_operands() attributes {a = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = bf16, activation = relu, gated = false, residual = false, operand_type = f16, params = [], strategy = "s">}

// -----

// expected-error @+1 {{device_module and launches go together}}
func.func private @contract_device() attributes {a = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f16, activation = relu, gated = false, residual = false, operand_type = f16, params = [], strategy = "s", device_module = "m">}

// -----

// expected-error @+1 {{'ffn.kernel_abi' belongs on a function}}
module attributes {ffn.kernel_abi = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = relu, gated = false, residual = false, operand_type = f32, params = [], strategy = "s">} {}

// -----
// The target and the strategies.

// expected-error @+1 {{'ffn.target' belongs on a module}}
func.func private @target_on_func() attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 1>}

// -----

// expected-error @+1 {{target vector_bits must be 256 or 512 on a CPU, got 128}}
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 128, threads = 1>} {}

// -----

// expected-error @+1 {{target vector_bits must be 0 off the CPU, got 512}}
module attributes {ffn.target = #ffn.target<isa = "nvptx-sm90", vector_bits = 512, threads = 1>} {}

// -----

// expected-error @+1 {{a target needs isa, vector_bits and threads}}
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2">} {}

// -----

// expected-error @+1 {{target dram_gbs must be positive and finite, got 0}}
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 1, dram_gbs = 0.0>} {}

// -----

// expected-error @+1 {{unknown key 'tile' (keys: vector_bits, mr, nr, mc, kc, kc_tall, nc, prefetch, fused_max_m, chunk, groups, bf16_dot, sparse_max_m, block_units)}}
module attributes {x = #ffn.cpu_strategy<tile = 8>} {}

// -----

// expected-error @+1 {{'mr' is given twice}}
module attributes {x = #ffn.cpu_strategy<mr = 8, mr = 4>} {}

// -----

// expected-error @+1 {{groups needs the fused schedule, but fused_max_m = 0 turns it off}}
module attributes {x = #ffn.cpu_strategy<fused_max_m = 0, groups = 2>} {}

// -----

// expected-error @+1 {{prefetch takes true or false (or 1 or 0)}}
module attributes {x = #ffn.cpu_strategy<prefetch = 2>} {}

// -----

// An override may leave knobs out; the strategy on an op may not.
func.func @incomplete(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{strategy #ffn.cpu_strategy<mr = 8> leaves knobs undecided}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) strategy #ffn.cpu_strategy<mr = 8> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// A 512-bit strategy does not run on an AVX2 target.
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx2", vector_bits = 256, threads = 1>} {
  func.func @too_wide(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<?x16xf32> {
    // expected-error @+1 {{strategy does not fit the module's target: strategy vector_bits must be at most the target's (256), got 512}}
    %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 8, nr = 32, mc = 256, prefetch = false, fused_max_m = 0> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
}

// -----

// A CPU strategy does not schedule for a GPU target.
module attributes {ffn.target = #ffn.target<isa = "nvptx-sm90", vector_bits = 0, threads = 1>} {
  func.func @cpu_on_gpu(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<?x16xf32> {
    // expected-error @+1 {{a CPU strategy cannot schedule for target 'nvptx-sm90'}}
    %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) strategy #ffn.cpu_strategy<vector_bits = 256, mr = 6, nr = 16, mc = 252, prefetch = false, fused_max_m = 0> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
}

// -----

// A weight_quant group is even (int4 packs two input rows to a byte).
func.func @odd_group(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{weight_quant group must be even and in [2, 65536], got 3}}
  %y = ffn.ffn relu weights <int8, group = 3> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// Quantized activations come in whole 16-byte vectors per group.
func.func @act_group(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{weight_quant with int8_activations needs a group that is a multiple of 16, got 24}}
  %y = ffn.ffn relu weights <int8, group = 24, int8_activations = true> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// A contract's i8 operands go with quantized weights that allow them.
// expected-error @+1 {{operand_type = i8 goes with a weight_quant that has int8_activations}}
func.func private @contract_i8() attributes {a = #ffn.kernel_abi<d_model = 8, d_ff = 8, storage = f32, activation = relu, gated = false, residual = false, operand_type = i8, params = [], strategy = "s">}

// -----

// Zero points are an int4 option.
func.func @zp8(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{weight_quant zero_points are for int4}}
  %y = ffn.ffn relu weights <int8, group = 32, zero_points = true> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @moe_unstacked(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %wr: tensor<16x2xf32>) {
  // expected-error @+1 {{w_up must be a static rank-3 tensor [experts + shared, d_model, d_ff]}}
  %y = ffn.ffn relu moe <experts = 2, top_k = 1, router = softmax_topk> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) router(%wr : tensor<16x2xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_expert_count(%x: tensor<?x16xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>, %wr: tensor<16x2xf32>) {
  // expected-error @+1 {{w_up must have shape [3, 16, 64], got [2, 16, 64]}}
  %y = ffn.ffn relu moe <experts = 2, top_k = 1, router = softmax_topk, shared = 1> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) router(%wr : tensor<16x2xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_bias_shape(%x: tensor<?x16xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>, %b1: tensor<64xf32>, %wr: tensor<16x2xf32>) {
  // expected-error @+1 {{b_up must have shape [2, 64], got [64]}}
  %y = ffn.ffn relu moe <experts = 2, top_k = 1, router = softmax_topk> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) bias_up(%b1 : tensor<64xf32>) router(%wr : tensor<16x2xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_no_router(%x: tensor<?x16xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>) {
  // expected-error @+1 {{a mixture of experts needs a router operand}}
  %y = ffn.ffn relu moe <experts = 2, top_k = 1, router = softmax_topk> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_router_shape(%x: tensor<?x16xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>, %wr: tensor<16x3xf32>) {
  // expected-error @+1 {{router must have shape [16, 2], got [16, 3]}}
  %y = ffn.ffn relu moe <experts = 2, top_k = 1, router = softmax_topk> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) router(%wr : tensor<16x3xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @router_without_moe(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %wr: tensor<16x2xf32>) {
  // expected-error @+1 {{router is only allowed with moe}}
  %y = ffn.ffn relu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) router(%wr : tensor<16x2xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_top_k(%x: tensor<?x16xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>, %wr: tensor<16x2xf32>) {
  // expected-error @+1 {{moe top_k must be in [1, experts = 2], got 3}}
  %y = ffn.ffn relu moe <experts = 2, top_k = 3, router = softmax_topk> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) router(%wr : tensor<16x2xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_zero_experts(%x: tensor<?x16xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>, %wr: tensor<16x2xf32>) {
  // expected-error @+1 {{moe experts must be in [1, 1024], got 0}}
  %y = ffn.ffn relu moe <experts = 0, top_k = 1, router = softmax_topk> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) router(%wr : tensor<16x2xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @moe_fused(%x: tensor<?x16xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>, %wr: tensor<16x2xf32>) {
  // expected-error @+1 {{is a mixture of experts, whose experts take the two-pass schedule; its strategy takes the fused one for m <= 8}}
  %y = ffn.ffn relu moe <experts = 2, top_k = 1, router = softmax_topk> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) router(%wr : tensor<16x2xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 64, prefetch = false, fused_max_m = 8, chunk = 64, groups = 1> -> tensor<?x16xf32>
  return
}

// -----

func.func @grouped_one(%x: tensor<?x16xf32>, %w1: tensor<1x16x64xf32>, %w2: tensor<1x64x16xf32>) {
  // expected-error @+1 {{attribute 'groups' failed to satisfy constraint}}
  %y = ffn.ffn relu groups 1 ins(%x : tensor<?x16xf32>) up(%w1 : tensor<1x16x64xf32>) down(%w2 : tensor<1x64x16xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @grouped_moe(%x: tensor<?x16xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>, %wr: tensor<16x2xf32>) {
  // expected-error @+1 {{groups cannot be combined with moe}}
  %y = ffn.ffn relu moe <experts = 2, top_k = 1, router = softmax_topk> groups 2 ins(%x : tensor<?x16xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) router(%wr : tensor<16x2xf32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @grouped_unstacked(%x: tensor<?x32xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) {
  // expected-error @+1 {{w_up must be a static rank-3 tensor [groups, d_model/groups, d_ff/groups]}}
  %y = ffn.ffn relu groups 2 ins(%x : tensor<?x32xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x32xf32>
  return
}

// -----

func.func @grouped_count(%x: tensor<?x48xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<3x64x16xf32>) {
  // expected-error @+1 {{w_up must have shape [3, 16, 64], got [2, 16, 64]}}
  %y = ffn.ffn relu groups 3 ins(%x : tensor<?x48xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<3x64x16xf32>) -> tensor<?x48xf32>
  return
}

// -----

func.func @grouped_input(%x: tensor<?x30xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>) {
  // expected-error @+1 {{input has 30 columns but groups x w_up rows has 32 rows (d_model)}}
  %y = ffn.ffn relu groups 2 ins(%x : tensor<?x30xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) -> tensor<?x30xf32>
  return
}

// -----

func.func @grouped_bias(%x: tensor<?x32xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>, %b2: tensor<32xf32>) {
  // expected-error @+1 {{b_down must have shape [2, 16], got [32]}}
  %y = ffn.ffn relu groups 2 ins(%x : tensor<?x32xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) bias_down(%b2 : tensor<32xf32>) -> tensor<?x32xf32>
  return
}

// -----

func.func @grouped_norm(%x: tensor<?x32xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>, %s: tensor<2x16xf32>) {
  // expected-error @+1 {{norm_scale must have shape [32], got [2, 16]}}
  %y = ffn.ffn relu norm<rmsnorm, pre, eps = 1.000000e-05> groups 2 ins(%x : tensor<?x32xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) norm_scale(%s : tensor<2x16xf32>) -> tensor<?x32xf32>
  return
}

// -----

func.func @grouped_fused(%x: tensor<?x32xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>) {
  // expected-error @+1 {{is a grouped FFN, whose blocks take the two-pass schedule; its strategy takes the fused one for small m}}
  %y = ffn.ffn relu groups 2 ins(%x : tensor<?x32xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) strategy #ffn.cpu_strategy<vector_bits = 512, mr = 4, nr = 32, mc = 64, prefetch = false, fused_max_m = 8, chunk = 64, groups = 1> -> tensor<?x32xf32>
  return
}

// -----

// expected-error @+1 {{unknown key 'tile' (keys: sms, bounds, block_m, block_n, stages, warp_stages, split_k, mma, widen, buckets)}}
module attributes {x = #ffn.gpu_strategy<tile = 8>} {}

// -----

// expected-error @+1 {{bounds must be positive and ascending}}
module attributes {x = #ffn.gpu_strategy<bounds = [64, 16]>} {}

// -----

// expected-error @+1 {{block_n needs block_m and block_n together (the tile)}}
module attributes {x = #ffn.gpu_strategy<block_n = 128>} {}

// -----

// expected-error @+1 {{mma is fma, mma_sync or wgmma, not 'tf32'}}
module attributes {x = #ffn.gpu_strategy<mma = tf32>} {}

// -----

// expected-error @+1 {{buckets make a complete strategy: it takes only sms beside them}}
module attributes {x = #ffn.gpu_strategy<stages = 3, buckets = [<block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>]>} {}

// -----

// expected-error @+1 {{buckets bucket 0 needs a max_m (only the last bucket is unbounded)}}
module attributes {x = #ffn.gpu_strategy<sms = 132, buckets = [<block_m = 16, block_n = 128, warps_m = 1, warps_n = 8, block_k = 64, stages = 4, mma = mma_sync, split_k = [1, 1]>, <block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma, split_k = [1, 1]>]>} {}

// -----

// expected-error @+1 {{a bucket needs split_k}}
module attributes {x = #ffn.gpu_strategy<sms = 132, buckets = [<block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 4, mma = wgmma>]>} {}

// -----

// A wgmma bucket on a module for sm_80.
module attributes {ffn.target = #ffn.target<isa = "nvptx-sm80", vector_bits = 0, threads = 1>} {
  func.func @g(%x: tensor<?x64xbf16>, %wu: tensor<64x96xbf16>, %wd: tensor<96x64xbf16>) {
    // expected-error @+1 {{strategy does not fit the module's target: strategy bucket 0 multiplies with wgmma, which needs sm_90a, not sm_80}}
    %y = ffn.ffn relu ins(%x : tensor<?x64xbf16>) up(%wu : tensor<64x96xbf16>) down(%wd : tensor<96x64xbf16>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 3, mma = wgmma, split_k = [1, 1]>]> -> tensor<?x64xbf16>
    return
  }
}

// -----

// A GPU strategy cannot schedule a CPU target's FFN.
module attributes {ffn.target = #ffn.target<isa = "x86-64-avx512", vector_bits = 512, threads = 1>} {
  func.func @g(%x: tensor<?x64xbf16>, %wu: tensor<64x96xbf16>, %wd: tensor<96x64xbf16>) {
    // expected-error @+1 {{a GPU strategy cannot schedule for target 'x86-64-avx512'}}
    %y = ffn.ffn relu ins(%x : tensor<?x64xbf16>) up(%wu : tensor<64x96xbf16>) down(%wd : tensor<96x64xbf16>) strategy #ffn.gpu_strategy<sms = 108, buckets = [<block_m = 128, block_n = 256, warps_m = 2, warps_n = 4, block_k = 64, stages = 3, mma = mma_sync, split_k = [1, 1]>]> -> tensor<?x64xbf16>
    return
  }
}
