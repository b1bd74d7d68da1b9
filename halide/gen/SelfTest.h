//===- SelfTest.h - ffnc-halide-gen --self-test ----------------*- C++ -*-===//

#ifndef FFNC_HALIDE_GEN_SELFTEST_H
#define FFNC_HALIDE_GEN_SELFTEST_H

namespace ffnc::halide {

/// JIT-compiles Numerics.cpp's expressions for this host (AVX2) and judges
/// them against the f64 reference (ffn_reference.cpp): storage conversions
/// bit for bit, exp/erf and the activations at special and swept points.
/// Prints one line; returns the exit status (0 ok, 1 on the first
/// mismatch, which it names).
int runSelfTest();

} // namespace ffnc::halide

#endif // FFNC_HALIDE_GEN_SELFTEST_H
