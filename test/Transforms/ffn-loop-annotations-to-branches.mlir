// RUN: ffn-opt %s --ffn-loop-annotations-to-branches | FileCheck %s

// The annotation scf-to-cf left on the back edge as a discardable attribute
// becomes the branch's own loop_annotation, which LLVM IR translation reads.
#nounroll = #llvm.loop_annotation<unroll = <disable = true>>

// CHECK-LABEL: llvm.func @loop(
// CHECK: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #loop_annotation}
// CHECK-NOT: llvm.loop_annotation
// CHECK: llvm.return
llvm.func @loop(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %more = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %more, ^bb2, ^bb3
^bb2:
  %next = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%next : i64) {llvm.loop_annotation = #nounroll}
^bb3:
  llvm.return
}

// A branch without one is untouched.
// CHECK-LABEL: llvm.func @straight(
// CHECK: llvm.br ^bb1{{$}}
llvm.func @straight() {
  llvm.br ^bb1
^bb1:
  llvm.return
}
