//===- MachineProfile.cpp - what the cost models know of a machine --------===//

#include "ffnc/Analysis/MachineProfile.h"

#include "ffnc/Analysis/MachineProbe.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

using namespace ffnc;

namespace {
/// A figure for `threads` threads between the one-thread and all-core
/// measurements (linear in between; past the cores, all of them).
double between(double one, double all, unsigned threads, unsigned cores) {
  if (threads <= 1 || cores <= 1)
    return one;
  if (threads >= cores)
    return all;
  return one + (all - one) * double(threads - 1) / double(cores - 1);
}

/// The profile's keys, in the order they are printed.
struct Field {
  const char *key;
  double MachineProfile::*value;
  const char *comment;
};
constexpr Field kFields[] = {
    {"peak_gflops_1", &MachineProfile::peak1, "f32 FMA peak, one thread"},
    {"peak_gflops_all", &MachineProfile::peakAll, "all cores"},
    {"dram_gbs_1", &MachineProfile::dram1,
     "read bandwidth from memory, one thread"},
    {"dram_gbs_all", &MachineProfile::dramAll, "all cores"},
    {"cache_gbs_1", &MachineProfile::cache1,
     "read bandwidth from cache, one thread"},
    {"cache_gbs_all", &MachineProfile::cacheAll, "all cores"},
    {"sync_us", &MachineProfile::syncMicros,
     "one phase hand-off of the thread pool, all cores"},
};
} // namespace

MachineModel MachineProfile::roofline(unsigned threads) const {
  return MachineModel{between(peak1, peakAll, threads, cores),
                      between(dram1, dramAll, threads, cores),
                      between(cache1, cacheAll, threads, cores)};
}

mlir::ffn::MachineAssumptions
MachineProfile::assumptions(unsigned threads) const {
  threads = std::max(threads, 1u);
  MachineModel m = roofline(threads);
  mlir::ffn::MachineAssumptions a;
  // Per-thread figures where the cost model divides the work per thread.
  unsigned running = std::min(threads, std::max(cores, 1u));
  a.peakGflops = m.peakGflops / running;
  a.dramGBs = m.bandwidthGBs;
  a.cacheGBs = m.cacheBandwidthGBs / running;
  a.syncSeconds = syncMicros * 1e-6;
  a.threads = threads;
  return a;
}

MachineProfile ffnc::nominalMachine(unsigned cores) {
  mlir::ffn::MachineAssumptions n;
  MachineProfile p;
  p.cores = std::max(cores, 1u);
  p.peak1 = n.peakGflops;
  p.peakAll = n.peakGflops * p.cores;
  p.dram1 = p.dramAll = n.dramGBs;
  p.cache1 = n.cacheGBs;
  p.cacheAll = n.cacheGBs * p.cores;
  p.syncMicros = n.syncSeconds * 1e6;
  p.source = "nominal";
  return p;
}

MachineProfile ffnc::measureMachine(bool avx512) {
  MachineProfile p;
  p.cores = std::max(1u, std::thread::hardware_concurrency());
  p.peak1 = measurePeakGflops(1, avx512);
  p.peakAll = measurePeakGflops(p.cores, avx512);
  p.dram1 = measureReadBandwidth(1);
  p.dramAll = measureReadBandwidth(p.cores);
  p.cache1 = measureCacheReadBandwidth(1);
  p.cacheAll = measureCacheReadBandwidth(p.cores);
  p.syncMicros = measureSyncMicros(p.cores);
  p.source = "measured";
  return p;
}

std::string ffnc::printMachineProfile(const MachineProfile &p,
                                      llvm::StringRef description) {
  std::string out =
      fmt::format("# ffnc machine profile: {}\n# Written by `ffnc probe`; "
                  "read by --machine=FILE.\n",
                  description.str());
  out += fmt::format("{:<16} = {:<10} # threads the _all figures ran on\n",
                     "cores", p.cores);
  for (const Field &f : kFields)
    out += fmt::format("{:<16} = {:<10.2f} # {}\n", f.key, p.*(f.value),
                       f.comment);
  return out;
}

llvm::Expected<MachineProfile> ffnc::readMachineProfile(llvm::StringRef path) {
  auto fail = [&](unsigned line, const llvm::Twine &message) {
    std::string where = line ? fmt::format("{}:{}: ", path.str(), line)
                             : fmt::format("{}: ", path.str());
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   where + message.str());
  };
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return fail(0, "cannot read the machine profile: " +
                       buffer.getError().message());
  MachineProfile p;
  p.source = "profile " + path.str();
  bool seenCores = false;
  bool seen[std::size(kFields)] = {};
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (unsigned n = 0; n < lines.size(); ++n) {
    llvm::StringRef line = lines[n].split('#').first.trim();
    if (line.empty())
      continue;
    std::pair<llvm::StringRef, llvm::StringRef> keyValue = line.split('=');
    llvm::StringRef key = keyValue.first.trim();
    llvm::StringRef value = keyValue.second.trim();
    if (!line.contains('=') || key.empty() || value.empty())
      return fail(n + 1, "expected 'key = value', got '" + line + "'");
    if (key == "cores") {
      unsigned cores;
      if (value.getAsInteger(10, cores) || cores < 1 || cores > 1024)
        return fail(n + 1, "cores must be a whole number in [1, 1024], got '" +
                               value + "'");
      if (seenCores)
        return fail(n + 1, "'cores' is given twice");
      p.cores = cores;
      seenCores = true;
      continue;
    }
    const Field *field =
        std::find_if(std::begin(kFields), std::end(kFields),
                     [&](const Field &f) { return key == f.key; });
    if (field == std::end(kFields))
      return fail(n + 1, "unknown key '" + key + "'");
    size_t index = field - std::begin(kFields);
    if (seen[index])
      return fail(n + 1, "'" + key + "' is given twice");
    double number;
    // sync_us may be 0 (a pool that costs nothing); the rates may not.
    bool zeroOk = field->value == &MachineProfile::syncMicros;
    if (value.getAsDouble(number) || !std::isfinite(number) || number < 0 ||
        (number == 0 && !zeroOk) || number > 1e9)
      return fail(n + 1, "'" + key + "' must be a " +
                             (zeroOk ? "non-negative" : "positive") +
                             " number, got '" + value + "'");
    p.*(field->value) = number;
    seen[index] = true;
  }
  if (!seenCores)
    return fail(0, "missing 'cores'");
  for (size_t i = 0; i < std::size(kFields); ++i)
    if (!seen[i])
      return fail(0, llvm::Twine("missing '") + kFields[i].key + "'");
  return p;
}
