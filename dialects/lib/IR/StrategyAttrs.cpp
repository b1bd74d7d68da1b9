//===- StrategyAttrs.cpp - #ffn.target and the strategies -----------------===//
//
// The target a module is compiled for, and the per-target strategies behind
// StrategyAttrInterface (#ffn.cpu_strategy so far). A strategy's rules live
// with its record in the MLIR-free cost model (checkStrategy), so the
// parser, the verifier and ffnc's `--strategy=` reject the same things with
// the same words.
//
//===----------------------------------------------------------------------===//

#include "AttrSyntax.h"

#include "ffn/IR/FfnAttrs.h"
#include "ffn/IR/FfnDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ffn;

#include "ffn/IR/FfnAttrInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// #ffn.target
//===----------------------------------------------------------------------===//

TargetAttr TargetAttr::lookup(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto target = op->getAttrOfType<TargetAttr>(kAttrName))
      return target;
  return {};
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef isa, int64_t vectorBits,
                                 int64_t threads, APFloat peakGflops,
                                 APFloat dramGBs, APFloat cacheGBs,
                                 APFloat syncMicros) {
  if (isa.empty())
    return emitError() << "target isa must not be empty";
  bool cpu = isa.starts_with("x86-64");
  if (cpu ? vectorBits != 256 && vectorBits != 512 : vectorBits != 0)
    return emitError() << "target vector_bits must be "
                       << (cpu ? "256 or 512 on a CPU" : "0 off the CPU")
                       << ", got " << vectorBits;
  if (threads < 1 || threads > 1024)
    return emitError() << "target threads must be in [1, 1024], got "
                       << threads;
  for (auto [value, name, zeroOk] :
       {std::tuple{peakGflops, "peak_gflops", false},
        std::tuple{dramGBs, "dram_gbs", false},
        std::tuple{cacheGBs, "cache_gbs", false},
        std::tuple{syncMicros, "sync_us", true}}) {
    double v = value.convertToDouble();
    if (!std::isfinite(v) || v < 0 || (v == 0 && !zeroOk))
      return emitError() << "target " << name << " must be "
                         << (zeroOk ? "non-negative" : "positive")
                         << " and finite, got " << v;
  }
  return success();
}

Attribute TargetAttr::parse(AsmParser &parser, Type) {
  MachineAssumptions nominal;
  std::string isa;
  int64_t vectorBits = -1, threads = -1;
  double figures[4] = {nominal.peakGflops, nominal.dramGBs, nominal.cacheGBs,
                       nominal.syncSeconds * 1e6};
  static constexpr const char *kFigures[4] = {"peak_gflops", "dram_gbs",
                                              "cache_gbs", "sync_us"};
  auto parseValue = [&](StringRef key, SMLoc loc) -> ParseResult {
    if (key == "isa")
      return parser.parseString(&isa);
    if (key == "vector_bits")
      return parser.parseInteger(vectorBits);
    if (key == "threads")
      return parser.parseInteger(threads);
    for (auto [i, name] : llvm::enumerate(kFigures))
      if (key == name)
        return parser.parseFloat(figures[i]);
    return parser.emitError(loc)
           << "unknown key '" << key
           << "' (keys: isa, vector_bits, threads, peak_gflops, dram_gbs, "
              "cache_gbs, sync_us)";
  };
  SMLoc loc = parser.getCurrentLocation();
  if (parseKeyValueList(parser, parseValue))
    return {};
  if (isa.empty() || vectorBits < 0 || threads < 0) {
    parser.emitError(loc, "a target needs isa, vector_bits and threads");
    return {};
  }
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    StringRef(isa), vectorBits, threads, APFloat(figures[0]),
                    APFloat(figures[1]), APFloat(figures[2]),
                    APFloat(figures[3]));
}

void TargetAttr::print(AsmPrinter &printer) const {
  printer << "<isa = \"" << getIsa() << "\", vector_bits = " << getVectorBits()
          << ", threads = " << getThreads() << ", peak_gflops = "
          << floatLiteral(getPeakGflops().convertToDouble())
          << ", dram_gbs = " << floatLiteral(getDramGbs().convertToDouble())
          << ", cache_gbs = " << floatLiteral(getCacheGbs().convertToDouble())
          << ", sync_us = " << floatLiteral(getSyncUs().convertToDouble())
          << ">";
}

MachineAssumptions TargetAttr::machine() const {
  MachineAssumptions m;
  m.peakGflops = getPeakGflops().convertToDouble();
  m.dramGBs = getDramGbs().convertToDouble();
  m.cacheGBs = getCacheGbs().convertToDouble();
  m.syncSeconds = getSyncUs().convertToDouble() * 1e-6;
  m.threads = getThreads();
  return m;
}

//===----------------------------------------------------------------------===//
// #ffn.cpu_strategy
//===----------------------------------------------------------------------===//

LogicalResult
CpuStrategyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        CpuStrategy knobs) {
  if (std::optional<KnobError> bad = checkStrategy(knobs))
    return emitError() << "strategy " << bad->key << " " << bad->message;
  return success();
}

Attribute CpuStrategyAttr::parse(AsmParser &parser, Type) {
  CpuStrategy s;
  llvm::StringMap<SMLoc> where;
  auto parseValue = [&](StringRef key, SMLoc loc) -> ParseResult {
    where[key] = loc;
    if (std::optional<bool> *flag = booleanKnob(s, key)) {
      // true/false; 1/0 as --strategy= has always taken it.
      StringRef word;
      int64_t bit = -1;
      if (succeeded(parser.parseOptionalKeyword(&word)))
        bit = word == "true" ? 1 : word == "false" ? 0 : -1;
      else if (parser.parseInteger(bit))
        return failure();
      if (bit != 0 && bit != 1)
        return parser.emitError(loc)
               << key << " takes true or false (or 1 or 0)";
      *flag = bit == 1;
      return success();
    }
    std::optional<int64_t> *knob = integerKnob(s, key);
    if (!knob)
      return parser.emitError(loc)
             << "unknown key '" << key
             << "' (keys: vector_bits, mr, nr, mc, prefetch, fused_max_m, "
                "chunk, groups, bf16_dot, sparse_max_m)";

    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    *knob = value;
    return success();
  };
  if (parseKeyValueList(parser, parseValue))
    return {};
  if (std::optional<KnobError> bad = checkStrategy(s)) {
    parser.emitError(where.lookup(bad->key)) << bad->key << " " << bad->message;
    return {};
  }
  return get(parser.getContext(), s);
}

void CpuStrategyAttr::print(AsmPrinter &printer) const {
  printer << "<" << knobsText(getKnobs()) << ">";
}

bool CpuStrategyAttr::isComplete() const { return getKnobs().isComplete(); }

LogicalResult CpuStrategyAttr::verifyForTarget(
    Attribute attr, function_ref<InFlightDiagnostic()> emitError) const {
  auto target = dyn_cast<TargetAttr>(attr);
  if (!target)
    return emitError() << "expected an #ffn.target, got " << attr;
  if (!target.isCpu())
    return emitError() << "a CPU strategy cannot schedule for target '"
                       << target.getIsa() << "'";
  if (std::optional<KnobError> bad =
          checkStrategy(getKnobs(), target.getVectorBits()))
    return emitError() << "strategy " << bad->key << " " << bad->message;
  return success();
}

std::string CpuStrategyAttr::describe(bool gated, int64_t dFf,
                                      bool batchInvariant) const {
  return describeStrategy(getKnobs(), gated, dFf, batchInvariant);
}
