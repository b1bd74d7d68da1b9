//===- HalideProtocol.h - what ffnc asks ffnc-halide-gen for ---*- C++ -*-===//
//
// The request ffnc writes for its Halide back end and the generator reads:
// one record per dense FFN (the model, the schedule's knobs, the Halide
// target), and the pipelines each FFN is made of, with the exact argument
// list of each. This file and HalideProtocol.cpp are compiled into both
// processes (ffnc, which links LLVM 22, and ffnc-halide-gen, which links
// Halide 14 and its LLVM 14), so they depend on neither: plain C++17, no
// exceptions (ffnc builds with -fno-exceptions), errors by return value.
//
// Both sides derive the pipelines from the same function (pipelinesOf);
// the request also lists them, and the generator refuses a request whose
// list differs from its own derivation (a generator and an ffnc from
// different builds).
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_HALIDE_PROTOCOL_H
#define FFNC_HALIDE_PROTOCOL_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ffnc::halide {

/// Bumped whenever the text or the pipelines' arguments change.
constexpr int kProtocolVersion = 1;

/// Packed weights are laid out by the Halide back end's own pack pipelines
/// (panel-major, zero-padded): the `pack_layout` of their #ffn.kernel_abi,
/// which the kernel glue adds to the pack signature.
constexpr const char *kPackLayout = "halide-panels-1";

/// How a kernel's pipelines are scheduled.
struct Schedule {
  /// "strategy": ffnc's cost model chose the knobs below (two-pass,
  /// packed weights, phases split by ffnc's runtime); "auto": one pipeline
  /// for the whole FFN on unpacked weights, scheduled by `autoscheduler`.
  std::string mode = "strategy";
  // Strategy mode: f32 lanes per vector (vector_bits / 32), rows per
  // register tile, the up GEMM's panel width (upPanelWidth(nr, ...)), the
  // down GEMM's (nr), rows per call of a panel pipeline, next-panel
  // prefetch.
  int64_t lanes = 16, mr = 8, upPanel = 16, downPanel = 32, mc = 256;
  bool prefetch = false;
  // Auto mode: "mullapudi2016" | "li2018" | "adams2019", the threads the
  // schedule is made for (Halide's own pool), the M of the estimates.
  std::string autoscheduler;
  int64_t parallelism = 1, mEstimate = 64;
};

/// One dense FFN: y = [x +] down(act(up(norm?(x)))) as ffn.ffn defines it.
struct HalideKernel {
  std::string name; ///< the spec's name (an identifier)
  int64_t dModel = 0, dFf = 0;
  std::string dtype = "f32"; ///< storage: "f32" | "bf16" | "f16"
  std::string activation =
      "relu";         ///< relu gelu gelu_tanh silu sigmoid identity
  bool gated = false; ///< act(gate) * up
  bool biasUp = false, biasGate = false, biasDown = false;
  bool residual = false;
  std::string norm = "none";        ///< "none" | "layernorm" | "rmsnorm"
  std::string normPosition = "pre"; ///< "pre" | "post"
  double eps = 0;
  bool batchInvariant = false;
  Schedule schedule;
  /// Tests of the oracle only (a hidden ffnc option): "" |
  /// "drop-last-k-after-row-0" | "bias-shift".
  std::string testBug;

  bool preNorm() const { return norm != "none" && normPosition == "pre"; }
  bool postNorm() const { return norm != "none" && normPosition == "post"; }
  bool autoMode() const { return schedule.mode == "auto"; }
};

enum class Role {
  NormIn,
  Up,
  Down,
  NormOut,
  PackUp,
  PackGate,
  PackDown,
  Whole
};
/// How the kernel stub calls a pipeline: over a range of rows, over a
/// range of panels (its first argument is the first panel, p0), once per
/// packed parameter, or once for everything.
enum class UnitKind { Rows, Panels, Pack, Whole };

struct PipelineArg {
  std::string name; ///< x a h o y w_up w_gate w_down b_up ... norm_scale p0 p
  bool isBuffer = true; ///< false: an int32 scalar
  std::string type;     ///< buffers: "f32" | "bf16" | "f16"; scalars: "i32"
  int dims = 0;         ///< buffers: rank (innermost first, as Halide)
  bool operator==(const PipelineArg &o) const {
    return name == o.name && isBuffer == o.isBuffer && type == o.type &&
           dims == o.dims;
  }
};

struct PipelineSpec {
  std::string symbol; ///< __ffnh_<kernel>_<role>
  Role role = Role::Up;
  UnitKind unit = UnitKind::Rows;
  /// In call order; the last one is the output buffer.
  std::vector<PipelineArg> args;
};

/// Every pipeline of `k`, in the order the stub uses them. Strategy mode:
///   norm_in  (x:T[2], norm_scale:T[1], [norm_shift:T[1]]) -> a:f32[2]
///   (pre-norm only) up       (p0:i32, x:T[2] | a:f32[2], w_up:T[3],
///   [w_gate:T[3]],
///             [b_up:T[1]], [b_gate:T[1]]) -> h:f32[2]
///   down     (p0:i32, h:f32[2], w_down:T[3], [b_down:T[1]], [x:T[2]])
///             -> y:T[2] | o:f32[2] (post-norm)
///   norm_out (o:f32[2], norm_scale:T[1], [norm_shift:T[1]]) -> y:T[2]
///   (post-norm only) pack_w_up, pack_w_gate (gated), pack_w_down: (w:T[2]) ->
///   p:T[3]
/// Auto mode: one `whole` (x:T[2], then every parameter in ffnc's kernel
/// parameter order: w_up, [w_gate], w_down, [b_up], [b_gate], [b_down],
/// [norm_scale], [norm_shift]; matrices unpacked [in, out] = Halide
/// (out, in)) -> y:T[2].
/// Buffers are innermost-first: x is (column, row); a packed weight is
/// (lane, k, panel).
std::vector<PipelineSpec> pipelinesOf(const HalideKernel &k);

/// Role's name in symbols and in the request ("up", "pack_w_down", ...).
const char *roleName(Role role);

/// The workspace a strategy-mode kernel needs per row of x, and where its
/// sections start: A (pre-normed rows, f32), H (hidden activations, f32),
/// O (post-norm input, f32), each row padded to 16 floats (64 bytes).
struct HalideLayout {
  int64_t npUp = 0, npDown = 0;                  ///< panels of the two GEMMs
  int64_t aStride = 0, hStride = 0, oStride = 0; ///< floats per row
  int64_t workspacePerRow = 0;                   ///< bytes; 0 in auto mode
  /// Byte offsets of the sections in a workspace of m rows.
  int64_t aOffset(int64_t) const { return 0; }
  int64_t hOffset(int64_t m) const { return 4 * aStride * m; }
  int64_t oOffset(int64_t m) const { return 4 * (aStride + hStride) * m; }
};
HalideLayout layoutOf(const HalideKernel &k);

/// The Halide target string for ffnc's CPU target row `isa`
/// ("x86-64-avx512" ...): never the host's, so a kernel runs on every CPU
/// of its row. Empty for a target the back end does not build.
std::string halideTargetFor(std::string_view isa);

struct HalideRequest {
  int protocol = kProtocolVersion;
  std::string target; ///< halideTargetFor(...)
  std::vector<HalideKernel> kernels;
  /// Parsed only: the pipelines the writer declared for kernel i.
  std::vector<std::vector<PipelineSpec>> declared;

  /// The request's text (it declares pipelinesOf() of every kernel).
  std::string print() const;
  /// Parses `text` strictly (unknown keys, missing fields, bad numbers are
  /// errors); false with `error` = "request line N: ...".
  static bool parse(std::string_view text, HalideRequest &out,
                    std::string &error);
};

} // namespace ffnc::halide

#endif // FFNC_HALIDE_PROTOCOL_H
