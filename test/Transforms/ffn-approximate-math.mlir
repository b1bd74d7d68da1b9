// RUN: ffn-opt %s --ffn-approximate-math | FileCheck %s

// exp, tanh and erf become polynomial arithmetic: no math op (and so no libm
// call) is left, for scalars and vectors alike.
// CHECK-LABEL: func.func @activations(
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: arith.mulf
// CHECK: return
func.func @activations(%x: f32, %v: vector<16xf32>) -> (f32, f32, vector<16xf32>) {
  %e = math.exp %x : f32
  %t = math.tanh %x : f32
  %r = math.erf %v : vector<16xf32>
  return %e, %t, %r : f32, f32, vector<16xf32>
}

// Narrow float math is widened to f32 and approximated there.
// CHECK-LABEL: func.func @bf16_exp(
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: math.exp
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @bf16_exp(%x: bf16) -> bf16 {
  %e = math.exp %x : bf16
  return %e : bf16
}
