//===- StrategyOptions.cpp - parsing `--strategy=` ------------------------===//
//
// `--strategy=mr=4,nr=64` is the text of `#ffn.cpu_strategy<mr=4,nr=64>`:
// the attribute's own parser reads it (one spelling of the knobs), and its
// diagnostics are mapped back onto the option as typed.
//
//===----------------------------------------------------------------------===//

#include "ffnc/CodeGen/StrategyOptions.h"

#include "ffn/IR/FfnAttrs.h"
#include "ffn/IR/FfnDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

using namespace ffnc;

/// The item of `text` (between commas) that starts at or contains `offset`.
static StrategyError itemError(llvm::StringRef text, size_t offset,
                               std::string message) {
  offset = std::min(offset, text.size());
  // StringRef::rfind(c, n) looks in the first n characters.
  size_t begin = text.rfind(',', offset);
  begin = begin == llvm::StringRef::npos ? 0 : begin + 1;
  size_t end = text.find(',', begin);
  if (end == llvm::StringRef::npos)
    end = text.size();
  return StrategyError{begin, end - begin, std::move(message)};
}

/// The item that sets `key`.
static StrategyError keyError(llvm::StringRef text, llvm::StringRef key,
                              std::string message) {
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  for (llvm::StringRef item : items)
    if (item.split('=').first.trim() == key)
      return StrategyError{static_cast<size_t>(item.data() - text.data()),
                           item.size(), std::move(message)};
  return StrategyError{0, text.size(), std::move(message)};
}

/// The item of `text` around `offset`, brackets kept whole (`bounds = [16,
/// 64]` is one item).
static StrategyError bracketItemError(llvm::StringRef text, size_t offset,
                                      std::string message) {
  offset = std::min(offset, text.size());
  size_t begin = 0;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (c == ',' && depth == 0) {
      if (i >= offset)
        return StrategyError{begin, i - begin, std::move(message)};
      begin = i + 1;
    }
  }
  return StrategyError{begin, text.size() - begin, std::move(message)};
}

/// Parses `prefix` + `text` + ">" with the attribute parser (one spelling of
/// the knobs for the option and the IR) and hands the attribute to `use`
/// while its context lives. The parser's first diagnostic, or text it left
/// unread, becomes an error at the item of `text` it concerns, as `itemAt`
/// delimits items.
template <typename AttrT>
static std::optional<StrategyError>
parseOverride(llvm::StringRef text, const std::string &prefix,
              StrategyError (*itemAt)(llvm::StringRef, size_t, std::string),
              llvm::function_ref<std::optional<StrategyError>(AttrT)> use) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.getOrLoadDialect<mlir::ffn::FfnDialect>();
  std::string source = prefix + text.str() + ">";
  std::optional<StrategyError> error;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (error)
      return mlir::success();
    size_t column = 0;
    if (auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
      column = loc.getColumn();
    size_t offset = column > prefix.size() ? column - 1 - prefix.size() : 0;
    error = itemAt(text, offset, d.str());
    return mlir::success();
  });
  size_t numRead = 0;
  mlir::Attribute parsed =
      mlir::parseAttribute(source, &context, mlir::Type(), &numRead);
  if (error)
    return error;
  auto attr = llvm::dyn_cast_or_null<AttrT>(parsed);
  if (!attr || numRead != source.size())
    return itemAt(text, numRead > prefix.size() ? numRead - prefix.size() : 0,
                  "expected key=value items separated by ','");
  return use(attr);
}

/// An NVIDIA target's --strategy: the knobs of an #ffn.gpu_strategy
/// override, read by the attribute's parser.
static std::optional<StrategyError>
parseGpuStrategyOptions(llvm::StringRef text, ScheduleOptions &options) {
  if (text.trim() == "baseline")
    return StrategyError{0, text.size(),
                         "'baseline' is the CPU back end's unscheduled "
                         "path; an NVIDIA target has none"};
  return parseOverride<mlir::ffn::GpuStrategyAttr>(
      text, "#ffn.gpu_strategy<", bracketItemError,
      [&](mlir::ffn::GpuStrategyAttr strategy) -> std::optional<StrategyError> {
        if (strategy.isComplete() || strategy.getKnobs().numBuckets)
          return StrategyError{
              0, text.size(),
              "--strategy sets knobs (sms, bounds, block_m, "
              "block_n, stages, warp_stages, split_k, mma, widen); "
              "the buckets "
              "are the cost model's"};
        options.gpuOverrides = strategy.getKnobs();
        return std::nullopt;
      });
}

std::optional<StrategyError>
ffnc::parseStrategyOptions(llvm::StringRef text, ScheduleOptions &options) {
  if (text.empty())
    return std::nullopt;
  if (llvm::StringRef(options.isa).starts_with("nvptx-"))
    return parseGpuStrategyOptions(text, options);
  if (text == "baseline") {
    options.baseline = true;
    return std::nullopt;
  }
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  bool givesWidth = false;
  for (llvm::StringRef item : items) {
    if (item.trim() == "baseline")
      return itemError(text, item.data() - text.data(),
                       "'baseline' stands alone; it takes no other keys");
    givesWidth |= item.split('=').first.trim() == "vector_bits";
  }

  // The target's width goes in front, so that the parser's lane rules are
  // the target's (a vector_bits the user gives is checked against it below).
  const std::string prefix =
      "#ffn.cpu_strategy<" +
      (givesWidth
           ? std::string()
           : "vector_bits = " + std::to_string(options.vectorBits) + ", ");
  if (std::optional<StrategyError> error =
          parseOverride<mlir::ffn::CpuStrategyAttr>(
              text, prefix, itemError,
              [&](mlir::ffn::CpuStrategyAttr strategy)
                  -> std::optional<StrategyError> {
                options.overrides = strategy.getKnobs();
                return std::nullopt;
              }))
    return error;
  // The lane rules need the target's width, which the attribute alone does
  // not know.
  if (!givesWidth)
    options.overrides.vectorBits.reset();
  if (std::optional<mlir::ffn::KnobError> bad =
          mlir::ffn::checkStrategy(options.overrides, options.vectorBits))
    return keyError(text, bad->key, bad->key + " " + bad->message);
  if (options.overrides.bf16Dot.value_or(false) &&
      !mlir::ffn::cpuTargetHasFeature(options.isa, "avx512bf16"))
    return keyError(text, "bf16_dot",
                    "bf16_dot needs a target with avx512bf16 "
                    "(x86-64-avx512-bf16), not '" +
                        options.isa + "'");
  return std::nullopt;
}
