//===- OneDnnFfn.cpp - the same FFN built from oneDNN primitives ----------===//

#include "OneDnnFfn.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <stdexcept>
#include <unordered_map>

using namespace dnnl;

namespace ffn_bench {} // namespace ffn_bench

// From GNU OpenMP, which oneDNN runs on (declared here: clang ships no
// omp.h for it).
extern "C" void omp_set_num_threads(int);

namespace ffn_bench {

void setOneDnnThreads(int threads) { omp_set_num_threads(threads); }

struct OneDnnFfn::Impl {
  engine eng{engine::kind::cpu, 0};
  stream strm{eng};
  Config cfg;
  // Projections: up (plain: the first matmul), gate (gated), down.
  matmul up, gate, down;
  matmul::primitive_desc upPd, gatePd, downPd;
  memory upW, gateW, downW, upB, downB;
  memory hidden, gateOut; // [m, d_ff]
  std::string chosen;

  memory::data_type type() const {
    return cfg.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  }
  memory reorderWeights(const memory::desc &wanted, const void *data,
                        int64_t in, int64_t out) {
    memory::desc user({in, out}, type(), memory::format_tag::ab);
    memory src(user, eng, const_cast<void *>(data));
    memory dst(wanted, eng);
    reorder(src, dst).execute(strm, src, dst);
    strm.wait();
    return dst;
  }
  memory copyBias(const void *data, int64_t n) {
    memory::desc d({1, n}, type(), memory::format_tag::ab);
    memory m(d, eng);
    std::memcpy(m.get_data_handle(), data, d.get_size());
    return m;
  }
};

OneDnnFfn::OneDnnFfn(const Config &config,
                     const std::vector<const void *> &weights)
    : impl(std::make_unique<Impl>()) {
  Impl &s = *impl;
  s.cfg = config;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  int64_t m = config.m, d = config.dModel, f = config.dFF;
  dt t = s.type();
  memory::desc xDesc({m, d}, t, tag::ab);
  memory::desc hDesc({m, f}, t, tag::ab);
  memory::desc yDesc({m, d}, t, tag::ab);
  memory::desc w1Any({d, f}, t, tag::any);
  memory::desc w2Any({f, d}, t, tag::any);
  memory::desc b1({1, f}, t, tag::ab), b2({1, d}, t, tag::ab);

  size_t next = 0;
  const void *wUp = weights.at(next++);
  const void *wGate = config.gated ? weights.at(next++) : nullptr;
  const void *wDown = weights.at(next++);
  const void *bUp = config.bias ? weights.at(next++) : nullptr;
  const void *bDown = config.bias ? weights.at(next++) : nullptr;

  if (config.gated) {
    // gate = swish(x Wg); h = (x Wu) * gate
    post_ops gateOps;
    gateOps.append_eltwise(1.f, algorithm::eltwise_swish, 1.f, 0.f);
    primitive_attr gateAttr;
    gateAttr.set_post_ops(gateOps);
    s.gatePd = matmul::primitive_desc(matmul::desc(xDesc, w1Any, hDesc),
                                      gateAttr, s.eng);
    post_ops upOps;
    upOps.append_binary(algorithm::binary_mul, hDesc);
    primitive_attr upAttr;
    upAttr.set_post_ops(upOps);
    s.upPd = matmul::primitive_desc(matmul::desc(xDesc, w1Any, hDesc), upAttr,
                                    s.eng);
    s.gate = matmul(s.gatePd);
    s.gateW = s.reorderWeights(s.gatePd.weights_desc(), wGate, d, f);
    s.gateOut = memory(hDesc, s.eng);
  } else {
    post_ops ops;
    ops.append_eltwise(1.f,
                       config.activation == "relu"
                           ? algorithm::eltwise_relu
                           : algorithm::eltwise_gelu_erf,
                       0.f, 0.f);
    primitive_attr attr;
    attr.set_post_ops(ops);
    s.upPd = config.bias
                 ? matmul::primitive_desc(matmul::desc(xDesc, w1Any, b1, hDesc),
                                          attr, s.eng)
                 : matmul::primitive_desc(matmul::desc(xDesc, w1Any, hDesc),
                                          attr, s.eng);
  }
  s.up = matmul(s.upPd);
  s.upW = s.reorderWeights(s.upPd.weights_desc(), wUp, d, f);
  s.downPd =
      config.bias
          ? matmul::primitive_desc(matmul::desc(hDesc, w2Any, b2, yDesc), s.eng)
          : matmul::primitive_desc(matmul::desc(hDesc, w2Any, yDesc), s.eng);
  s.down = matmul(s.downPd);
  s.downW = s.reorderWeights(s.downPd.weights_desc(), wDown, f, d);
  if (config.bias) {
    s.upB = s.copyBias(bUp, f);
    s.downB = s.copyBias(bDown, d);
  }
  s.hidden = memory(hDesc, s.eng);
  s.chosen = std::string(s.upPd.impl_info_str());
}

OneDnnFfn::~OneDnnFfn() = default;

std::string OneDnnFfn::implementation() const { return impl->chosen; }

void OneDnnFfn::run(const void *x, void *y) {
  Impl &s = *impl;
  memory xm(s.upPd.src_desc(), s.eng, const_cast<void *>(x));
  memory ym(s.downPd.dst_desc(), s.eng, y);
  if (s.cfg.gated) {
    s.gate.execute(s.strm, {{DNNL_ARG_SRC, xm},
                            {DNNL_ARG_WEIGHTS, s.gateW},
                            {DNNL_ARG_DST, s.gateOut}});
    s.up.execute(s.strm, {{DNNL_ARG_SRC, xm},
                          {DNNL_ARG_WEIGHTS, s.upW},
                          {DNNL_ARG_DST, s.hidden},
                          {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                           s.gateOut}});
  } else {
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, xm},
                                            {DNNL_ARG_WEIGHTS, s.upW},
                                            {DNNL_ARG_DST, s.hidden}};
    if (s.cfg.bias)
      args[DNNL_ARG_BIAS] = s.upB;
    s.up.execute(s.strm, args);
  }
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, s.hidden},
                                          {DNNL_ARG_WEIGHTS, s.downW},
                                          {DNNL_ARG_DST, ym}};
  if (s.cfg.bias)
    args[DNNL_ARG_BIAS] = s.downB;
  s.down.execute(s.strm, args);
  s.strm.wait();
}

} // namespace ffn_bench
