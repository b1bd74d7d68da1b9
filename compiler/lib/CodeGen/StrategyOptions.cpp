//===- StrategyOptions.cpp - parsing `--strategy=` ------------------------===//

#include "ffnc/CodeGen/StrategyOptions.h"

#include "ffn/Target/CPU/CostModel.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

using namespace ffnc;

mlir::ffn::StrategyOverrides ffnc::overridesOf(const ScheduleOptions &options) {
  mlir::ffn::StrategyOverrides o;
  o.mr = options.mr;
  o.nr = options.nr;
  o.mc = options.mc;
  o.prefetch = static_cast<int>(options.prefetch);
  o.fusedMaxM = options.fusedMaxM;
  o.chunk = options.chunk;
  o.groups = options.groups;
  return o;
}

std::optional<StrategyError>
ffnc::parseStrategyOptions(llvm::StringRef text, ScheduleOptions &options) {
  auto error = [&](llvm::StringRef item, const llvm::Twine &message) {
    return std::optional<StrategyError>(
        StrategyError{static_cast<size_t>(item.data() - text.data()),
                      item.size(), message.str()});
  };
  if (text.empty())
    return std::nullopt;
  if (text == "baseline") {
    options.baseline = true;
    return std::nullopt;
  }
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  llvm::StringMap<llvm::StringRef> seen;
  for (llvm::StringRef item : items) {
    auto [key, value] = item.split('=');
    if (item == "baseline")
      return error(item, "'baseline' stands alone; it takes no other keys");
    if (key.empty() || !item.contains('='))
      return error(item, "expected key=value, got '" + item + "'");
    int64_t *slot = key == "mr"            ? &options.mr
                    : key == "nr"          ? &options.nr
                    : key == "mc"          ? &options.mc
                    : key == "prefetch"    ? &options.prefetch
                    : key == "fused_max_m" ? &options.fusedMaxM
                    : key == "chunk"       ? &options.chunk
                    : key == "groups"      ? &options.groups
                                           : nullptr;
    if (!slot)
      return error(item, "unknown key '" + key +
                             "' (keys: mr, nr, mc, prefetch, fused_max_m, "
                             "chunk, groups; or 'baseline')");
    if (!seen.try_emplace(key, item).second)
      return error(item, "'" + key + "' is given twice");
    // fused_max_m and prefetch take 0; the sizes must be positive.
    bool zeroOk = key == "fused_max_m" || key == "prefetch";
    int64_t v;
    if (value.getAsInteger(10, v) || v < (zeroOk ? 0 : 1) ||
        (key == "prefetch" && v > 1))
      return error(item, key + " takes " +
                             (key == "prefetch"      ? "0 or 1"
                              : key == "fused_max_m" ? "a count >= 0"
                                                     : "a positive integer") +
                             ", got '" + value + "'");
    *slot = v;
  }
  if (std::optional<mlir::ffn::OverrideError> bad =
          mlir::ffn::checkOverrides(options.vectorBits, overridesOf(options)))
    return error(seen.lookup(bad->key), bad->key + " " + bad->message);
  return std::nullopt;
}
