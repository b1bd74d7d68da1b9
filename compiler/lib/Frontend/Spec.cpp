//===- Spec.cpp - names of the spec's enumerations ------------------------===//

#include "ffnc/Frontend/Spec.h"

#include "llvm/ADT/StringSwitch.h"

using namespace ffnc;

// The tables below are the single source of the DSL's spelling of each
// enumerator; parse and print both read them.
static const llvm::StringRef kActivationNames[] = {
    "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "identity"};
static const llvm::StringRef kGateNames[] = {"none",  "glu",    "reglu",
                                             "geglu", "swiglu", "bilinear"};
static const llvm::StringRef kNormNames[] = {"none", "layernorm", "rmsnorm"};
static const llvm::StringRef kPositionNames[] = {"pre", "post"};
static const llvm::StringRef kDTypeNames[] = {"f32", "bf16", "f16"};
static const llvm::StringRef kRouterNames[] = {"softmax_topk", "topk_softmax"};

template <typename Enum, size_t N>
static std::optional<Enum> lookup(const llvm::StringRef (&names)[N],
                                  llvm::StringRef s) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s)
      return static_cast<Enum>(i);
  return std::nullopt;
}

llvm::StringRef ffnc::toString(Activation a) {
  return kActivationNames[static_cast<int>(a)];
}
llvm::StringRef ffnc::toString(Gate g) {
  return kGateNames[static_cast<int>(g)];
}
llvm::StringRef ffnc::toString(NormKind n) {
  return kNormNames[static_cast<int>(n)];
}
llvm::StringRef ffnc::toString(NormPosition p) {
  return kPositionNames[static_cast<int>(p)];
}
llvm::StringRef ffnc::toString(WeightQuant q) {
  switch (q) {
  case WeightQuant::None:
    return "none";
  case WeightQuant::Int8:
    return "int8";
  case WeightQuant::Int4:
    return "int4";
  }
  return "none";
}

llvm::StringRef ffnc::toString(Router r) {
  return kRouterNames[static_cast<int>(r)];
}
std::optional<Router> ffnc::parseRouter(llvm::StringRef s) {
  return lookup<Router>(kRouterNames, s);
}
llvm::ArrayRef<llvm::StringRef> ffnc::routerNames() { return kRouterNames; }

llvm::StringRef ffnc::toString(DType d) {
  return kDTypeNames[static_cast<int>(d)];
}

std::optional<Activation> ffnc::parseActivation(llvm::StringRef s) {
  return lookup<Activation>(kActivationNames, s);
}
std::optional<Gate> ffnc::parseGate(llvm::StringRef s) {
  std::optional<Gate> g = lookup<Gate>(kGateNames, s);
  if (g == Gate::None) // 'none' is not something a user writes for a gate.
    return std::nullopt;
  return g;
}
std::optional<NormKind> ffnc::parseNormKind(llvm::StringRef s) {
  return lookup<NormKind>(kNormNames, s);
}
std::optional<NormPosition> ffnc::parseNormPosition(llvm::StringRef s) {
  return lookup<NormPosition>(kPositionNames, s);
}
std::optional<DType> ffnc::parseDType(llvm::StringRef s) {
  return lookup<DType>(kDTypeNames, s);
}

llvm::ArrayRef<llvm::StringRef> ffnc::activationNames() {
  return kActivationNames;
}
llvm::ArrayRef<llvm::StringRef> ffnc::gateNames() {
  return llvm::ArrayRef(kGateNames).drop_front();
}
llvm::ArrayRef<llvm::StringRef> ffnc::normKindNames() { return kNormNames; }
llvm::ArrayRef<llvm::StringRef> ffnc::dtypeNames() { return kDTypeNames; }

Activation ffnc::gateActivation(Gate g) {
  switch (g) {
  case Gate::Glu:
    return Activation::Sigmoid;
  case Gate::Reglu:
    return Activation::Relu;
  case Gate::Geglu:
    return Activation::Gelu;
  case Gate::Swiglu:
    return Activation::Silu;
  case Gate::Bilinear:
  case Gate::None:
    return Activation::Identity;
  }
  return Activation::Identity;
}

unsigned ffnc::byteWidth(DType d) { return d == DType::F32 ? 4 : 2; }

std::vector<ParamInfo> ffnc::kernelParams(const FfnSpec &spec) {
  // A grouped FFN's matrices and biases are one block's (stacked below);
  // its norm parameters span the whole row.
  int64_t d = spec.blockDModel(), f = spec.blockDFF();
  std::vector<ParamInfo> params;
  params.push_back({"w_up", d, f});
  if (spec.isGated())
    params.push_back({"w_gate", d, f});
  params.push_back({"w_down", f, d});
  if (spec.biasUp)
    params.push_back({"b_up", f, 0});
  if (spec.hasBiasGate())
    params.push_back({"b_gate", f, 0});
  if (spec.biasDown)
    params.push_back({"b_down", d, 0});
  if (spec.norm != NormKind::None)
    params.push_back({"norm_scale", spec.dModel, 0});
  if (spec.norm == NormKind::LayerNorm)
    params.push_back({"norm_shift", spec.dModel, 0});
  if (spec.isMoe()) {
    for (ParamInfo &p : params)
      if (p.name != "norm_scale" && p.name != "norm_shift")
        p.experts = spec.totalExperts();
    params.push_back({"w_router", d, spec.experts});
  }
  if (spec.isGrouped())
    for (ParamInfo &p : params)
      if (p.name != "norm_scale" && p.name != "norm_shift")
        p.experts = spec.groups;
  return params;
}
