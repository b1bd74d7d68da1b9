// RUN: ffn-opt %s --convert-ffn-to-linalg --split-input-file --verify-diagnostics | FileCheck %s

// A plain FFN with biases: two f32-accumulating matmuls and two epilogues.
// CHECK-LABEL: func.func @plain_gelu(
// CHECK-SAME: %[[X:.*]]: tensor<?x16xf32>, %[[W1:.*]]: tensor<16x64xf32>, %[[W2:.*]]: tensor<64x16xf32>, %[[B1:.*]]: tensor<64xf32>, %[[B2:.*]]: tensor<16xf32>)
// CHECK: %[[M:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x16xf32>
// CHECK: %[[E1:.*]] = tensor.empty(%[[M]]) : tensor<?x64xf32>
// CHECK: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<?x64xf32>)
// CHECK: %[[U:.*]] = linalg.matmul {ffn.role = "up"} ins(%[[X]], %[[W1]] : tensor<?x16xf32>, tensor<16x64xf32>) outs(%[[Z1]] : tensor<?x64xf32>)
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[U]], %[[B1]] : tensor<?x64xf32>, tensor<64xf32>) {{.*}} attrs = {ffn.role = "act"}
// CHECK:   arith.addf
// CHECK:   math.erf
// CHECK: %[[D:.*]] = linalg.matmul {ffn.role = "down"} ins(%[[H]], %[[W2]] : tensor<?x64xf32>, tensor<64x16xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[D]], %[[B2]] : tensor<?x16xf32>, tensor<16xf32>) {{.*}} attrs = {ffn.role = "out"}
// CHECK: return %[[Y]]
func.func @plain_gelu(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %b1: tensor<64xf32>, %b2: tensor<16xf32>) -> tensor<?x16xf32> {
  %y = ffn.ffn gelu ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) bias_up(%b1 : tensor<64xf32>) bias_down(%b2 : tensor<16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// SwiGLU in bf16: the input is widened once, the matmuls take bf16 weights
// with an f32 accumulator, the gate's activation multiplies the up
// projection, and the result is rounded back to bf16.
// CHECK-LABEL: func.func @swiglu_bf16(
// CHECK: %[[X32:.*]] = linalg.generic {{.*}} attrs = {ffn.role = "in"}
// CHECK:   arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[U:.*]] = linalg.matmul {ffn.role = "up"} ins(%[[X32]], %{{.*}} : tensor<?x16xf32>, tensor<16x48xbf16>) outs(%{{.*}} : tensor<?x48xf32>)
// CHECK: %[[G:.*]] = linalg.matmul {ffn.role = "gate"} ins(%[[X32]], %{{.*}} : tensor<?x16xf32>, tensor<16x48xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[U]], %[[G]] : tensor<?x48xf32>, tensor<?x48xf32>) {{.*}} attrs = {ffn.role = "act"}
// CHECK:   ^bb0(%[[UP:.*]]: f32, %[[GATE:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[NEG:.*]] = arith.negf %[[GATE]]
// CHECK:   %[[EXP:.*]] = math.exp %[[NEG]]
// CHECK:   %[[DEN:.*]] = arith.addf %[[EXP]]
// CHECK:   %[[SILU:.*]] = arith.divf %[[GATE]], %[[DEN]]
// CHECK:   arith.mulf %[[SILU]], %[[UP]]
// CHECK: linalg.matmul {ffn.role = "down"}
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x16xbf16>) attrs = {ffn.role = "out"}
// CHECK:   arith.truncf %{{.*}} : f32 to bf16
func.func @swiglu_bf16(%x: tensor<?x16xbf16>, %wu: tensor<16x48xbf16>, %wg: tensor<16x48xbf16>, %wd: tensor<48x16xbf16>) -> tensor<?x16xbf16> {
  %y = ffn.ffn gated silu ins(%x : tensor<?x16xbf16>) up(%wu : tensor<16x48xbf16>) gate(%wg : tensor<16x48xbf16>) down(%wd : tensor<48x16xbf16>) -> tensor<?x16xbf16>
  return %y : tensor<?x16xbf16>
}

// -----

// Post-LayerNorm around a residual: mean and variance reductions over
// d_model, then the normalization writes the result.
// CHECK-LABEL: func.func @post_layernorm_residual(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK: linalg.matmul {ffn.role = "up"}
// CHECK: linalg.generic {{.*}} attrs = {ffn.role = "act"}
// CHECK:   arith.maximumf
// CHECK: %[[D:.*]] = linalg.matmul {ffn.role = "down"}
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%[[D]], %[[X]] : tensor<4x8xf32>, tensor<4x8xf32>) {{.*}} attrs = {ffn.role = "out"}
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[F]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4xf32>) attrs = {ffn.role = "norm"}
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<4xf32>) {{.*}} attrs = {ffn.role = "norm"}
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[F]], %[[MEAN]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: %[[RSTD:.*]] = linalg.generic {{.*}} ins(%[[VAR]] : tensor<4xf32>)
// CHECK:   math.sqrt
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[F]], %[[RSTD]], %{{.*}}, %[[MEAN]], %{{.*}} : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>)
// CHECK: return %[[Y]]
func.func @post_layernorm_residual(%x: tensor<4x8xf32>, %w1: tensor<8x32xf32>, %w2: tensor<32x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = ffn.ffn relu residual norm<layernorm, post, eps = 1.0e-12> ins(%x : tensor<4x8xf32>) up(%w1 : tensor<8x32xf32>) down(%w2 : tensor<32x8xf32>) norm_scale(%g : tensor<8xf32>) norm_shift(%b : tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Pre-RMSNorm: one reduction (sum of squares); the residual adds the raw
// input, not the normalized one.
// CHECK-LABEL: func.func @pre_rmsnorm_residual(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x8xf32>
// CHECK: %[[SS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x8xf32>) {{.*}} attrs = {ffn.role = "norm"}
// CHECK: %[[RSTD:.*]] = linalg.generic {{.*}} ins(%[[SS]] : tensor<?xf32>)
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[RSTD]], %{{.*}} : tensor<?x8xf32>, tensor<?xf32>, tensor<8xf32>) {{.*}} attrs = {ffn.role = "norm"}
// CHECK: linalg.matmul {ffn.role = "up"} ins(%[[N]],
// CHECK: linalg.matmul {ffn.role = "gate"} ins(%[[N]],
// CHECK: %[[D:.*]] = linalg.matmul {ffn.role = "down"}
// CHECK: linalg.generic {{.*}} ins(%[[D]], %[[X]] : tensor<?x8xf32>, tensor<?x8xf32>) {{.*}} attrs = {ffn.role = "out"}
func.func @pre_rmsnorm_residual(%x: tensor<?x8xf32>, %wu: tensor<8x24xf32>, %wg: tensor<8x24xf32>, %wd: tensor<24x8xf32>, %g: tensor<8xf32>) -> tensor<?x8xf32> {
  %y = ffn.ffn gated sigmoid residual norm<rmsnorm, pre, eps = 1.0e-06> ins(%x : tensor<?x8xf32>) up(%wu : tensor<8x24xf32>) gate(%wg : tensor<8x24xf32>) down(%wd : tensor<24x8xf32>) norm_scale(%g : tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Quantized weights have no reference lowering: refused, not dropped.
func.func @quantized(%x: tensor<?x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{has quantized weights (#ffn.weight_quant), which only ffn-lower-packed lowers}}
  %y = ffn.ffn relu weights <int8, group = 16> ins(%x : tensor<?x16xf32>) up(%w1 : tensor<16x64xf32>) down(%w2 : tensor<64x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// Nor have grouped FFNs: refused, not lowered as one dense FFN.
func.func @grouped(%x: tensor<?x32xf32>, %w1: tensor<2x16x64xf32>, %w2: tensor<2x64x16xf32>) -> tensor<?x32xf32> {
  // expected-error @+1 {{is a grouped FFN (groups = 2), which only ffn-lower-packed lowers}}
  %y = ffn.ffn relu groups 2 ins(%x : tensor<?x32xf32>) up(%w1 : tensor<2x16x64xf32>) down(%w2 : tensor<2x64x16xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}
