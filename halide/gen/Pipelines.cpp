//===- Pipelines.cpp - the FFN's algorithms as Halide Funcs ---------------===//
//
// Every sum is f32, initialised with its bias and then one product per term
// in increasing k (ffn_ref sums in f64 in any order; one fixed order makes
// every row's bits independent of the rows beside it). Epilogues, norms and
// activations are strict_float; the GEMM updates are not, so LLVM fuses
// each product into its sum (one FMA per term).
//
//===----------------------------------------------------------------------===//

#include "Pipelines.h"

#include "Numerics.h"

using namespace Halide;

namespace ffnc::halide {

namespace {

class Builder {
public:
  Builder(const HalideKernel &k, const PipelineSpec &spec, BuiltPipeline &b)
      : k(k), b(b), T(storageType(k.dtype)), layout(layoutOf(k)),
        dModel(static_cast<int>(k.dModel)), dFf(static_cast<int>(k.dFf)),
        pu(static_cast<int>(k.schedule.upPanel)),
        nr(static_cast<int>(k.schedule.downPanel)) {
    b.spec = spec;
    // Every argument but the last (the output) is an input, in order.
    for (size_t i = 0; i + 1 < spec.args.size(); ++i) {
      const PipelineArg &a = spec.args[i];
      if (!a.isBuffer) {
        b.args.push_back(b.p0);
        continue;
      }
      ImageParam p(storageType(a.type), a.dims, a.name);
      b.buffers.emplace(a.name, p);
      b.args.push_back(p);
    }
  }

  void build() {
    switch (b.spec.role) {
    case Role::NormIn:
      return normIn();
    case Role::Up:
      return up();
    case Role::Down:
      return down();
    case Role::NormOut:
      return normOut();
    case Role::PackUp:
    case Role::PackGate:
    case Role::PackDown:
      return pack();
    case Role::Whole:
      return whole();
    }
  }

private:
  const HalideKernel &k;
  BuiltPipeline &b;
  const Type T;
  const HalideLayout layout;
  const int dModel, dFf, pu, nr;
  Var &c = b.c, &r = b.r, &q = b.q;

  /// Auto mode's inputs, clamped to their buffers: an autoscheduler may
  /// tile intermediates beyond the rows (or columns) the output needs
  /// (ShiftInwards or RoundUp on an M = 1 call); those extra values are
  /// computed from edge values and discarded, instead of reading outside
  /// the caller's buffers.
  std::map<std::string, Func> clamped;

  bool has(const char *name) const { return b.buffers.count(name) != 0; }
  ImageParam &in(const char *name) { return b.buffers.at(name); }
  Expr read(const char *name, Expr i, Expr j = Expr()) {
    std::vector<Expr> at = {std::move(i)};
    if (j.defined())
      at.push_back(std::move(j));
    if (!k.autoMode())
      return in(name)(at);
    auto found = clamped.find(name);
    if (found == clamped.end())
      found = clamped.emplace(name, BoundaryConditions::repeat_edge(in(name)))
                  .first;
    return found->second(at);
  }
  bool layer() const { return k.norm == "layernorm"; }
  bool bug(const char *name) const { return k.testBug == name; }

  // --- The buffer conventions (HalideProtocol.h, docs/halide.md) ---------

  /// A row-major [rows, columns] buffer: columns from `colMin` (and exactly
  /// `colExtent` of them, if given), rows anywhere, `rowStride` apart.
  static void rowsOf(OutputImageParam p, Expr colMin, Expr colExtent,
                     int64_t rowStride) {
    p.dim(0).set_min(std::move(colMin)).set_stride(1);
    if (colExtent.defined())
      p.dim(0).set_extent(std::move(colExtent));
    p.dim(1).set_stride(static_cast<int>(rowStride));
  }
  /// A vector of n elements, whole.
  static void vectorOf(OutputImageParam p, int n) {
    p.dim(0).set_bounds(0, n).set_stride(1);
  }
  /// A logical [in, out] matrix, unpacked: Halide (out, in).
  static void matrixOf(OutputImageParam p, int in, int out) {
    p.dim(0).set_bounds(0, out).set_stride(1);
    p.dim(1).set_bounds(0, in).set_stride(out);
  }
  /// Packed panels (lane, k, panel) of `width` lanes, `depth` k, zero-padded.
  static void panelsOf(OutputImageParam p, int width, int depth, int panels) {
    p.dim(0).set_bounds(0, width).set_stride(1);
    p.dim(1).set_bounds(0, depth).set_stride(width);
    p.dim(2).set_bounds(0, panels).set_stride(width * depth);
  }
  void constrainInputs() {
    for (auto &[name, p] : b.buffers) {
      if (name == "x")
        rowsOf(p, 0, dModel, dModel);
      else if (name == "a")
        rowsOf(p, 0, dModel, layout.aStride);
      else if (name == "h")
        rowsOf(p, 0, Expr(), layout.hStride);
      else if (name == "o")
        rowsOf(p, 0, Expr(), layout.oStride);
      else if (name == "b_up" || name == "b_gate")
        vectorOf(p, dFf);
      else if (name == "b_down" || name == "norm_scale" || name == "norm_shift")
        vectorOf(p, dModel);
      else if (k.autoMode() && (name == "w_up" || name == "w_gate"))
        matrixOf(p, dModel, dFf);
      else if (k.autoMode() && name == "w_down")
        matrixOf(p, dFf, dModel);
      else if (name == "w_up" || name == "w_gate")
        panelsOf(p, pu, dModel, static_cast<int>(layout.npUp));
      else if (name == "w_down")
        panelsOf(p, nr, dFf, static_cast<int>(layout.npDown));
      // `w` of a pack pipeline: constrained there.
    }
  }

  // --- Pieces of the algebra shared by the pipelines --------------------

  /// The norm of the rows of `x` (f32, columns [0, d_model)) as ffn_ref
  /// defines it: LayerNorm (x - mean) / sqrt(var + eps) * scale + shift with
  /// the biased variance; RMSNorm x / sqrt(mean(x^2) + eps) * scale. Sums
  /// in column order, everything strict.
  Func normalized(Func x, NormStats &st, const std::string &prefix) {
    RDom j(0, dModel, prefix + "_k");
    const float d = static_cast<float>(dModel);
    if (layer()) {
      st.sum = Func(prefix + "_sum");
      st.sum(r) = 0.0f;
      st.sum(r) = strict_float(st.sum(r) + x(j, r));
      st.mean = Func(prefix + "_mean");
      st.mean(r) = strict_float(st.sum(r) / d);
    }
    auto dev = [&](Expr col) {
      return layer() ? strict_float(x(col, r) - st.mean(r)) : x(col, r);
    };
    st.sumSq = Func(prefix + "_sumsq");
    st.sumSq(r) = 0.0f;
    st.sumSq(r) = strict_float(st.sumSq(r) + dev(j) * dev(j));
    st.inv = Func(prefix + "_inv");
    st.inv(r) =
        strict_float(1.0f / sqrt(st.sumSq(r) / d + static_cast<float>(k.eps)));
    Expr v = dev(c) * st.inv(r) * widen(read("norm_scale", c));
    if (layer())
      v = v + widen(read("norm_shift", c));
    Func out(prefix);
    out(c, r) = strict_float(v);
    return out;
  }

  /// The hidden activation from the up (and gate) sums: act(up), or
  /// act(gate) * up.
  Expr hidden(Expr upSum, Expr gateSum) {
    if (!k.gated)
      return strict_float(activate(k.activation, upSum));
    return strict_float(activate(k.activation, gateSum) * upSum);
  }

  /// GEMM 2's term for output column `col` and reduction index `j` of row
  /// `r`, with the oracle tests' deliberate bugs.
  Expr downTerm(Expr hk, Expr col, Expr j,
                const std::function<Expr(Expr, Expr)> &weight) {
    if (bug("bias-shift") && !k.biasDown)
      col = (min(col, dModel - 1) + 1) % dModel;
    Expr t = hk * weight(col, j);
    if (bug("drop-last-k-after-row-0"))
      t = select(r >= 1 && j == dFf - 1, 0.0f, t);
    return t;
  }
  Expr downBias(Expr col) {
    if (!k.biasDown)
      return 0.0f;
    Expr cc = min(col, dModel - 1);
    if (bug("bias-shift"))
      cc = (cc + 1) % dModel;
    return widen(read("b_down", cc));
  }

  // --- The pipelines ---------------------------------------------------

  void normIn() {
    constrainInputs();
    Func x("x_f32");
    x(c, r) = widen(in("x")(c, r));
    b.output = normalized(x, b.norm, "a");
    rowsOf(b.output.output_buffer(), 0, dModel, layout.aStride);
  }

  void normOut() {
    constrainInputs();
    Func o("o_in");
    o(c, r) = in("o")(c, r);
    Func normed = normalized(o, b.norm, "o_normed");
    b.output = Func("y");
    b.output(c, r) = storeAs(T, normed(c, r));
    rowsOf(b.output.output_buffer(), 0, dModel, dModel);
  }

  void up() {
    constrainInputs();
    b.panel = pu;
    b.k = RDom(0, dModel, "k");
    Func x("up_in");
    x(c, r) = k.preNorm() ? in("a")(c, r) : widen(in("x")(c, r));
    // The output's columns start at panel p0 (the stub passes whole
    // panels), so c / pu and c % pu are the panel and lane.
    auto sum = [&](const char *name, const char *weight, const char *bias) {
      Func acc(name);
      acc(c, r) = has(bias) ? widen(in(bias)(min(c, dFf - 1))) : 0.0f;
      acc(c, r) += x(b.k, r) * widen(in(weight)(c % pu, b.k, c / pu));
      return acc;
    };
    b.acc = sum("up_acc", "w_up", "b_up");
    if (k.gated)
      b.gateAcc = sum("gate_acc", "w_gate", "b_gate");
    b.output = Func("h");
    b.output(c, r) = hidden(b.acc(c, r), k.gated ? b.gateAcc(c, r) : Expr());
    rowsOf(b.output.output_buffer(), b.p0 * pu, Expr(), layout.hStride);
  }

  void down() {
    constrainInputs();
    b.panel = nr;
    b.k = RDom(0, dFf, "k");
    ImageParam w = in("w_down"), h = in("h");
    b.acc = Func("down_acc");
    b.acc(c, r) = downBias(c);
    b.acc(c, r) += downTerm(h(b.k, r), c, b.k, [&](Expr col, Expr j) {
      return widen(w(col % nr, j, col / nr));
    });
    Expr v = b.acc(c, r);
    if (k.residual)
      v = v + widen(in("x")(k.postNorm() ? min(c, dModel - 1) : c, r));
    if (k.postNorm()) {
      // Whole panels into O; the post-norm reads columns [0, d_model).
      b.output = Func("o");
      b.output(c, r) = strict_float(v);
      rowsOf(b.output.output_buffer(), b.p0 * nr, Expr(), layout.oStride);
    } else {
      // Y ends at d_model, possibly inside the last panel.
      b.output = Func("y");
      b.output(c, r) = storeAs(T, strict_float(v));
      rowsOf(b.output.output_buffer(), b.p0 * nr, Expr(), dModel);
    }
  }

  void pack() {
    const bool isDown = b.spec.role == Role::PackDown;
    const int width = isDown ? nr : pu;
    const int cols = isDown ? dModel : dFf, depth = isDown ? dFf : dModel;
    const int panels = static_cast<int>(isDown ? layout.npDown : layout.npUp);
    ImageParam w = in("w");
    matrixOf(w, depth, cols);
    b.panel = width;
    // A copy of the bits (NaN payloads included): a select on f16 values
    // may go through f32 on a target without f16 arithmetic.
    const Type bits = UInt(T.bits());
    Expr col = q * width + c;
    Expr v = reinterpret(bits, w(min(col, cols - 1), r));
    b.output = Func("p");
    b.output(c, r, q) =
        reinterpret(T, select(col < cols, v, Internal::make_zero(bits)));
    panelsOf(b.output.output_buffer(), width, depth, panels);
  }

  void whole() {
    constrainInputs();
    Func x("x_f32");
    x(c, r) = widen(read("x", c, r));
    Func a = k.preNorm() ? normalized(x, b.norm, "a") : x;
    RDom kd(0, dModel, "kd"), kf(0, dFf, "kf");
    auto sum = [&](const char *name, const char *weight, const char *bias) {
      Func acc(name);
      acc(c, r) = has(bias) ? widen(read(bias, c)) : 0.0f;
      acc(c, r) += a(kd, r) * widen(read(weight, c, kd));
      return acc;
    };
    b.acc = sum("up_acc", "w_up", "b_up");
    if (k.gated)
      b.gateAcc = sum("gate_acc", "w_gate", "b_gate");
    Func h("h");
    h(c, r) = hidden(b.acc(c, r), k.gated ? b.gateAcc(c, r) : Expr());
    Func down("down_acc");
    down(c, r) = downBias(c);
    down(c, r) += downTerm(h(kf, r), c, kf, [&](Expr col, Expr j) {
      return widen(read("w_down", col, j));
    });
    Func o("o");
    Expr v = down(c, r);
    if (k.residual)
      v = v + x(c, r);
    o(c, r) = strict_float(v);
    Func y = k.postNorm() ? normalized(o, b.postNorm, "o_normed") : o;
    b.output = Func("y");
    b.output(c, r) = storeAs(T, y(c, r));
    rowsOf(b.output.output_buffer(), 0, dModel, dModel);
  }
};

} // namespace

BuiltPipeline buildPipeline(const HalideKernel &kernel,
                            const PipelineSpec &spec) {
  BuiltPipeline b;
  Builder(kernel, spec, b).build();
  return b;
}

} // namespace ffnc::halide
