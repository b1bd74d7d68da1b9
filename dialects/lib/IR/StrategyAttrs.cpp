//===- StrategyAttrs.cpp - #ffn.target and the strategies -----------------===//
//
// The target a module is compiled for, and the per-target strategies behind
// StrategyAttrInterface (#ffn.cpu_strategy, #ffn.gpu_strategy). A strategy's
// rules live with its record in the MLIR-free cost model (checkStrategy), so
// the parser, the verifier and ffnc's `--strategy=` reject the same things with
// the same words.
//
//===----------------------------------------------------------------------===//

#include "AttrSyntax.h"

#include "ffn/IR/FfnAttrs.h"
#include "ffn/IR/FfnDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <iterator>

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
             << "unknown key '" << key << "' (keys: "
             << llvm::join(std::begin(kCpuStrategyKeys),
                           std::end(kCpuStrategyKeys), ", ")
             << ")";

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

//===----------------------------------------------------------------------===//
// #ffn.gpu_strategy
//===----------------------------------------------------------------------===//

LogicalResult
GpuStrategyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        GpuStrategy knobs) {
  if (std::optional<GpuKnobError> bad = checkGpuKnobs(knobs))
    return emitError() << "strategy " << bad->key << " " << bad->message;
  return success();
}

/// `[a, b, ...]` of integers into `out` (at most `max`).
static ParseResult parseIntegerList(AsmParser &parser, SMLoc loc, StringRef key,
                                    int64_t *out, int32_t &count, int32_t max) {
  count = 0;
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        if (count == max)
          return parser.emitError(loc)
                 << key << " takes at most " << max << " values";
        return parser.parseInteger(out[count++]);
      });
}

static ParseResult parseMma(AsmParser &parser, SMLoc loc, GpuMma &mma) {
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<GpuMma> parsed = parseGpuMma(word);
  if (!parsed)
    return parser.emitError(loc)
           << "mma is fma, mma_sync or wgmma, not '" << word << "'";
  mma = *parsed;
  return success();
}

static ParseResult parseWiden(AsmParser &parser, SMLoc loc, bool &registers) {
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  if (word != "registers" && word != "shared")
    return parser.emitError(loc)
           << "widen is registers or shared, not '" << word << "'";
  registers = word == "registers";
  return success();
}

/// One `<max_m = .., block_m = .., ...>` of a complete strategy.
static ParseResult parseBucket(AsmParser &parser, GpuBucket &b) {
  SMLoc start = parser.getCurrentLocation();
  llvm::StringSet<> given;
  auto parseValue = [&](StringRef key, SMLoc loc) -> ParseResult {
    given.insert(key);
    if (key == "mma")
      return parseMma(parser, loc, b.mma);
    if (key == "widen")
      return parseWiden(parser, loc, b.registerWiden);
    if (key == "split_k") {
      int64_t split[2];
      int32_t count;
      if (parseIntegerList(parser, loc, key, split, count, 2))
        return failure();
      if (count != 2)
        return parser.emitError(loc) << "split_k is [up, down]";
      b.splitUp = split[0];
      b.splitDown = split[1];
      return success();
    }
    int64_t *field = llvm::StringSwitch<int64_t *>(key)
                         .Case("max_m", &b.maxM)
                         .Case("block_m", &b.blockM)
                         .Case("block_n", &b.blockN)
                         .Case("warps_m", &b.warpsM)
                         .Case("warps_n", &b.warpsN)
                         .Case("block_k", &b.blockK)
                         .Case("stages", &b.stages)
                         .Case("warp_stages", &b.warpStages)
                         .Default(nullptr);
    if (!field)
      return parser.emitError(loc)
             << "unknown bucket key '" << key
             << "' (keys: max_m, block_m, block_n, warps_m, warps_n, "
                "block_k, stages, warp_stages, mma, split_k, widen)";
    return parser.parseInteger(*field);
  };
  if (parseKeyValueList(parser, parseValue))
    return failure();
  for (StringRef key : {"block_m", "block_n", "warps_m", "warps_n", "block_k",
                        "stages", "mma", "split_k"})
    if (!given.contains(key))
      return parser.emitError(start) << "a bucket needs " << key;
  return success();
}

Attribute GpuStrategyAttr::parse(AsmParser &parser, Type) {
  GpuStrategy s;
  llvm::StringMap<SMLoc> where;
  auto parseValue = [&](StringRef key, SMLoc loc) -> ParseResult {
    where[key] = loc;
    // A failed parse leaves the knob set, but fails the whole attribute.
    if (key == "mma")
      return parseMma(parser, loc, s.mma.emplace());
    if (key == "widen")
      return parseWiden(parser, loc, s.registerWiden.emplace());
    if (key == "bounds")
      return parseIntegerList(parser, loc, key, s.bounds, s.numBounds,
                              kMaxGpuBuckets - 1);
    if (key == "buckets") {
      if (parser.parseCommaSeparatedList(
              AsmParser::Delimiter::Square, [&]() -> ParseResult {
                if (s.numBuckets == kMaxGpuBuckets)
                  return parser.emitError(loc) << "buckets takes at most "
                                               << kMaxGpuBuckets << " buckets";
                return parseBucket(parser, s.buckets[s.numBuckets++]);
              }))
        return failure();
      if (s.numBuckets == 0)
        return parser.emitError(loc) << "buckets takes at least one bucket";
      return success();
    }
    std::optional<int64_t> *knob =
        llvm::StringSwitch<std::optional<int64_t> *>(key)
            .Case("sms", &s.sms)
            .Case("block_m", &s.blockM)
            .Case("block_n", &s.blockN)
            .Case("stages", &s.stages)
            .Case("warp_stages", &s.warpStages)
            .Case("split_k", &s.splitK)
            .Default(nullptr);
    if (!knob)
      return parser.emitError(loc)
             << "unknown key '" << key
             << "' (keys: sms, bounds, block_m, block_n, stages, "
                "warp_stages, split_k, mma, widen, buckets)";
    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    *knob = value;
    return success();
  };
  SMLoc start = parser.getCurrentLocation();
  if (parseKeyValueList(parser, parseValue))
    return {};
  if (std::optional<GpuKnobError> bad = checkGpuKnobs(s)) {
    SMLoc at = where.count(bad->key) ? where.lookup(bad->key) : start;
    parser.emitError(at) << bad->key << " " << bad->message;
    return {};
  }
  return get(parser.getContext(), s);
}

void GpuStrategyAttr::print(AsmPrinter &printer) const {
  printer << "<" << gpuKnobsText(getKnobs()) << ">";
}

bool GpuStrategyAttr::isComplete() const { return getKnobs().isComplete(); }

LogicalResult GpuStrategyAttr::verifyForTarget(
    Attribute attr, function_ref<InFlightDiagnostic()> emitError) const {
  auto target = dyn_cast<TargetAttr>(attr);
  if (!target)
    return emitError() << "expected an #ffn.target, got " << attr;
  std::string chip = gpuChipOfTarget(target.getIsa().str());
  if (chip.empty() || !nominalGpuDevice(chip))
    return emitError() << "a GPU strategy cannot schedule for target '"
                       << target.getIsa() << "'";
  const GpuStrategy &s = getKnobs();
  for (int i = 0; i < s.numBuckets; ++i)
    if (s.buckets[i].mma == GpuMma::Wgmma && chip != "sm_90a")
      return emitError() << "strategy bucket " << i << " multiplies with "
                         << "wgmma, which needs sm_90a, not " << chip;
  if (s.mma == GpuMma::Wgmma && chip != "sm_90a")
    return emitError() << "strategy mma wgmma needs sm_90a, not " << chip;
  return success();
}

std::string GpuStrategyAttr::describe(bool, int64_t, bool) const {
  return describeGpuStrategy(getKnobs(), "");
}
