// RUN: ffn-opt %s --ffn-matmul-loop-order | FileCheck %s

// linalg.matmul's (m, n, k) loops become (m, k, n): the reduction sits in
// the middle and the innermost dimension walks B's and C's rows. The
// ffn.role tag survives.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @mm(
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<?x16xf32>, tensor<16x32xbf16>) outs(%{{.*}} : tensor<?x32xf32>)
// CHECK-SAME: attrs = {ffn.role = "up"}
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.matmul
func.func @mm(%a: tensor<?x16xf32>, %b: tensor<16x32xbf16>, %c: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %r = linalg.matmul {ffn.role = "up"} ins(%a, %b : tensor<?x16xf32>, tensor<16x32xbf16>) outs(%c : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}
