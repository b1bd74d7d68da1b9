//===- MoeBaseline.cpp - a mixture of experts from cuBLASLt ---------------===//

#include "MoeBaseline.h"

#include "ffn_reference.h"

#include <cmath>
#include <cstring>
#include <string>

using namespace gpu_bench;

MoeBaseline::MoeBaseline(const Device &d, const Lt &lt, CUmodule elementwise,
                         const ffn_kernel_desc &desc,
                         const std::vector<ffn_ref::Buffer> &params,
                         CUfunction glu, LtEpilogue plainUp)
    : d(d), lt(lt), desc(desc), params(params), glu(glu), plainUp(plainUp) {
  type = desc.dtype == FFN_DTYPE_BF16  ? CUDA_R_16BF
         : desc.dtype == FFN_DTYPE_F16 ? CUDA_R_16F
                                       : CUDA_R_32F;
  eb = desc.dtype == FFN_DTYPE_F32 ? 4 : 2;
  dm = desc.d_model;
  dff = desc.d_ff;
  k = desc.top_k;
  slots = desc.top_k + desc.shared_experts;
  gated = desc.gated != 0;
  std::string t = desc.dtype == FFN_DTYPE_BF16  ? "bf16"
                  : desc.dtype == FFN_DTYPE_F16 ? "f16"
                                                : "f32";
  d.check(d.ModuleGetFunction(&gather, elementwise,
                              ("ffn_bench_gather_" + t).c_str()),
          "cuModuleGetFunction (gather)");
  d.check(d.ModuleGetFunction(&combine, elementwise,
                              ("ffn_bench_combine_" + t).c_str()),
          "cuModuleGetFunction (combine)");
  auto load = [&](const char *name, Buffer &to) {
    if (const ffn_ref::Buffer *p = find(name))
      to = upload(p->bytes.data(), p->bytes.size());
  };
  load("w_up", wUp);
  load("w_gate", wGate);
  load("w_down", wDown);
  load("b_up", bUp);
  load("b_gate", bGate);
  load("b_down", bDown);
}

Buffer MoeBaseline::upload(const void *host, size_t bytes) const {
  Buffer b(d, bytes);
  d.check(d.MemcpyHtoD(b.get(), host, bytes), "cuMemcpyHtoD");
  return b;
}

const ffn_ref::Buffer *MoeBaseline::find(const char *name) const {
  for (int64_t i = 0; i < desc.num_params; ++i)
    if (std::strcmp(desc.params[i].name, name) == 0)
      return &params[i];
  return nullptr;
}

const void *MoeBaseline::slice(const Buffer &b, int64_t e,
                               int64_t perExpert) const {
  if (!b.get())
    return nullptr;
  return reinterpret_cast<const void *>(b.get() + e * perExpert * eb);
}

void MoeBaseline::launch(CUfunction f, int64_t threads, void **args) const {
  unsigned blocks = static_cast<unsigned>((threads + 255) / 256);
  d.check(
      d.LaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, d.stream, args, nullptr),
      "cuLaunchKernel (the mixture baseline)");
}

void MoeBaseline::prepare(int64_t rowsToRun, const ffn_ref::Buffer &x,
                          const void *xDev) {
  m = rowsToRun;
  const int64_t E = desc.experts, S = desc.shared_experts;
  std::vector<const double *> values;
  for (const ffn_ref::Buffer &p : params)
    values.push_back(p.values.data());
  // The reference's selection; its weights from the f64 logits.
  ffn_ref::Routing routing = ffn_ref::route(desc, m, x.values.data(), values);
  const double *wr = find("w_router")->values.data();
  std::vector<float> gHost(m * k);
  for (int64_t r = 0; r < m; ++r) {
    std::vector<double> l(E, 0.0);
    for (int64_t i = 0; i < dm; ++i)
      for (int64_t e = 0; e < E; ++e)
        l[e] += x.values[r * dm + i] * wr[i * E + e];
    const int64_t *sel = &routing.selected[r * k];
    double top = l[sel[0]], sum = 0.0, chosen = 0.0;
    if (desc.router == FFN_ROUTER_TOPK_SOFTMAX) {
      for (int64_t j = 0; j < k; ++j)
        sum += std::exp(l[sel[j]] - top);
    } else {
      for (int64_t e = 0; e < E; ++e)
        sum += std::exp(l[e] - top);
      for (int64_t j = 0; j < k; ++j)
        chosen += std::exp(l[sel[j]] - top) / sum;
    }
    for (int64_t j = 0; j < k; ++j) {
      double w = std::exp(l[sel[j]] - top) / sum;
      if (desc.router == FFN_ROUTER_SOFTMAX_TOPK && desc.router_normalize)
        w /= chosen;
      gHost[r * k + j] = static_cast<float>(w);
    }
  }
  // Each expert's rows in row order, one block after another; each row's
  // slots point into them.
  std::vector<int> rowsHost, posHost(m * slots);
  experts.clear();
  for (int64_t e = 0; e < E + S; ++e) {
    Expert ex;
    ex.index = e;
    ex.first = static_cast<int64_t>(rowsHost.size());
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < slots; ++j) {
        bool takes = e < E ? (j < k && routing.selected[r * k + j] == e)
                           : j == k + (e - E);
        if (!takes)
          continue;
        posHost[r * slots + j] = static_cast<int>(rowsHost.size());
        rowsHost.push_back(static_cast<int>(r));
      }
    ex.rows = static_cast<int64_t>(rowsHost.size()) - ex.first;
    if (ex.rows > 0)
      experts.push_back(std::move(ex));
  }
  active = static_cast<int64_t>(experts.size());
  total = static_cast<int64_t>(rowsHost.size());
  rows = upload(rowsHost.data(), rowsHost.size() * sizeof(int));
  pos = upload(posHost.data(), posHost.size() * sizeof(int));
  weights = upload(gHost.data(), gHost.size() * sizeof(float));
  xg = Buffer(d, total * dm * eb);
  g = Buffer(d, total * dff * eb);
  u = Buffer(d, total * dff * eb);
  h = Buffer(d, total * dff * eb);
  ys = Buffer(d, total * dm * eb);
  // The gathered rows exist before the GEMMs are tuned on them.
  gatherRows(xDev);
  for (Expert &ex : experts) {
    int64_t e = ex.index;
    auto at = [&](const Buffer &b, int64_t width) {
      return rowsAt(b, ex, width);
    };
    LtEpilogue upEpilogue =
        gated ? (bUp.get() ? LtEpilogue::Bias : LtEpilogue::None) : plainUp;
    ex.up = std::make_unique<LtGemm>(lt, d, type, ex.rows, dm, dff, upEpilogue,
                                     false);
    ex.up->tune(at(xg, dm), slice(wUp, e, dm * dff), slice(bUp, e, dff),
                nullptr, gated ? at(u, dff) : at(h, dff), 3);
    if (gated) {
      ex.gate = std::make_unique<LtGemm>(
          lt, d, type, ex.rows, dm, dff,
          bGate.get() ? LtEpilogue::Bias : LtEpilogue::None, false);
      ex.gate->tune(at(xg, dm), slice(wGate, e, dm * dff), slice(bGate, e, dff),
                    nullptr, at(g, dff), 3);
    }
    ex.down = std::make_unique<LtGemm>(
        lt, d, type, ex.rows, dff, dm,
        bDown.get() ? LtEpilogue::Bias : LtEpilogue::None, false);
    ex.down->tune(at(h, dff), slice(wDown, e, dff * dm), slice(bDown, e, dm),
                  nullptr, at(ys, dm), 3);
  }
}

void MoeBaseline::gatherRows(const void *xDev) const {
  long long n = total, width = dm;
  void *xp = const_cast<void *>(xDev), *rp = rows.raw(), *gp = xg.raw();
  void *gatherArgs[] = {&xp, &rp, &gp, &n, &width};
  launch(gather, total * dm / (16 / eb), gatherArgs);
}

void *MoeBaseline::rowsAt(const Buffer &b, const Expert &ex,
                          int64_t width) const {
  return reinterpret_cast<void *>(b.get() + ex.first * width * eb);
}

void MoeBaseline::run(const void *xDev, void *y, bool heuristicFirst) const {
  gatherRows(xDev);
  long long rowsIn = total, width = dm, hidden = dff;
  void *xp = const_cast<void *>(xDev);
  auto at = [&](const Expert &ex, const Buffer &b, int64_t w) {
    return rowsAt(b, ex, w);
  };
  for (const Expert &ex : experts) {
    int64_t e = ex.index;
    if (gated) {
      ex.gate->run(at(ex, xg, dm), slice(wGate, e, dm * dff),
                   slice(bGate, e, dff), nullptr, at(ex, g, dff),
                   heuristicFirst);
      ex.up->run(at(ex, xg, dm), slice(wUp, e, dm * dff), slice(bUp, e, dff),
                 nullptr, at(ex, u, dff), heuristicFirst);
    } else {
      ex.up->run(at(ex, xg, dm), slice(wUp, e, dm * dff), slice(bUp, e, dff),
                 nullptr, at(ex, h, dff), heuristicFirst);
    }
  }
  if (gated) {
    // act(g) * u over every gathered row at once.
    void *gp = g.raw(), *up = u.raw(), *hp = h.raw();
    void *gluArgs[] = {&gp, &up, &hp, &rowsIn, &hidden};
    launch(glu, total * dff / (16 / eb), gluArgs);
  }
  for (const Expert &ex : experts)
    ex.down->run(at(ex, h, dff), slice(wDown, ex.index, dff * dm),
                 slice(bDown, ex.index, dm), nullptr, at(ex, ys, dm),
                 heuristicFirst);
  long long rowsOut = m;
  int kk = static_cast<int>(k), ss = static_cast<int>(slots);
  void *ysp = ys.raw(), *pp = pos.raw(), *wp = weights.raw(), *yp = y;
  void *residual = desc.residual ? xp : nullptr;
  void *combineArgs[] = {&ysp,     &pp,    &wp, &residual, &yp,
                         &rowsOut, &width, &kk, &ss};
  launch(combine, m * dm, combineArgs);
}

double MoeBaseline::activeWeightBytes() const {
  double expert = double(dm) * dff * (gated ? 3 : 2) * eb;
  if (bUp.get())
    expert += double(dff) * eb;
  if (bGate.get())
    expert += double(dff) * eb;
  if (bDown.get())
    expert += double(dm) * eb;
  return active * expert + double(dm) * desc.experts * eb;
}
