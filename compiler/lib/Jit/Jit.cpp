//===- Jit.cpp - ffn_kernel_compile: a spec to a loaded kernel ------------===//
//
// The JIT is ffnc's pipeline behind the runtime's C API: the spec text goes
// through the same front end, checks and back end as `ffnc --emit=so`, into
// a shared library in an on-disk cache, which the runtime then loads. The
// cache entry <key>.so is complete or absent (buildSharedLibrary writes it
// atomically); <key>.sum, written after it the same way, holds a checksum
// of its bytes, verified before every use, so a damaged entry is rebuilt
// rather than loaded. Two processes that miss at once both build and
// rename; each rename is atomic and the builds are interchangeable.
//
//===----------------------------------------------------------------------===//

#include "ffn/jit.h"

#include "ffnc/CodeGen/Compile.h"
#include "ffnc/CodeGen/SpecFit.h"
#include "ffnc/CodeGen/StrategyOptions.h"
#include "ffnc/Frontend/Diagnostics.h"
#include "ffnc/Frontend/Sema.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdlib>
#include <string>

using namespace ffnc;

namespace {

std::atomic<int64_t> cacheHits{0}, cacheBuilds{0};

/// 64-bit FNV-1a, for cache keys and entry checksums.
uint64_t fnv1a(llvm::StringRef bytes, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

struct JitOptions {
  std::string target = "host";
  std::string strategy;
  int64_t threads = 0;
  bool batchInvariant = false;
  std::string cacheDir;
};

/// Parses ffn_kernel_compile's options; "" or what is wrong.
std::string parseOptions(llvm::StringRef text, JitOptions &o) {
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [key, value] = item.split('=');
    bool hasValue = item.contains('=');
    if (key == "--target" && hasValue && !value.empty()) {
      o.target = value.str();
    } else if (key == "--strategy" && hasValue) {
      o.strategy = value.str();
    } else if (key == "--kernel-threads" && hasValue) {
      if (value.getAsInteger(10, o.threads) || o.threads < 0 ||
          o.threads > 1024)
        return "--kernel-threads must be an integer in [0, 1024], got '" +
               value.str() + "'";
    } else if (key == "--batch-invariant" && !hasValue) {
      o.batchInvariant = true;
    } else if (key == "--cache-dir" && hasValue && !value.empty()) {
      o.cacheDir = value.str();
    } else {
      return "unknown option '" + item.str() +
             "' (options: --target=, --strategy=, --kernel-threads=, "
             "--batch-invariant, --cache-dir=)";
    }
  }
  return "";
}

/// The cache directory: --cache-dir, $FFNC_CACHE_DIR, $XDG_CACHE_HOME/ffnc
/// or $HOME/.cache/ffnc.
std::string cacheDirectory(const JitOptions &o) {
  if (!o.cacheDir.empty())
    return o.cacheDir;
  if (const char *dir = std::getenv("FFNC_CACHE_DIR"); dir && *dir)
    return dir;
  llvm::SmallString<256> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    path = xdg;
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    path = home;
    llvm::sys::path::append(path, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(path, "ffnc");
  return path.str().str();
}

/// Writes `text` to `path` atomically (a temporary file renamed over it).
llvm::Error writeAtomically(llvm::StringRef path, llvm::StringRef text) {
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << text;
    return llvm::Error::success();
  });
}

/// Whether `library` is a complete entry: its checksum file names its
/// bytes' checksum.
bool entryIntact(llvm::StringRef library, llvm::StringRef sumPath) {
  auto bytes = llvm::MemoryBuffer::getFile(library, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  auto sum = llvm::MemoryBuffer::getFile(sumPath);
  if (!bytes || !sum)
    return false;
  return (*sum)->getBuffer().trim() ==
         llvm::utohexstr(fnv1a((*bytes)->getBuffer()), /*LowerCase=*/true);
}

ffn_status report(ffn_context *ctx, ffn_status status,
                  const std::string &message) {
  return ffn_context_set_error(ctx, status, message.c_str());
}

ffn_status compile(ffn_context *ctx, const char *specText, const char *name,
                   const char *optionText, ffn_kernel **out) {
  const std::string caller = "ffn_kernel_compile: ";
  JitOptions o;
  if (std::string bad = parseOptions(optionText ? optionText : "", o);
      !bad.empty())
    return report(ctx, FFN_ERROR_INVALID_ARGUMENT, caller + bad);

  // The front end, its diagnostics into the error message.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(specText, "<spec>"), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  DiagnosticEngine diags(sourceMgr, diagStream);
  // Locations point into the SourceMgr's copy, which diagnostics print.
  llvm::StringRef text =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  std::vector<FfnSpec> specs = compileSpecBuffer(text, diags);
  if (diags.hadError())
    return report(ctx, FFN_ERROR_INVALID_ARGUMENT, diagnostics);
  bool found = false;
  for (FfnSpec &spec : specs) {
    found |= spec.name == name;
    if (o.batchInvariant)
      spec.batchInvariant = true;
  }
  if (!found) {
    std::string names;
    for (const FfnSpec &spec : specs)
      names += (names.empty() ? "" : ", ") + spec.name;
    return report(ctx, FFN_ERROR_NOT_FOUND,
                  caller + "no ffn block named '" + name +
                      "' in the spec (blocks: " + names + ")");
  }

  llvm::Expected<TargetInfo> target = resolveTarget(o.target);
  if (!target)
    return report(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  caller + llvm::toString(target.takeError()));
  if (target->isGpu())
    return report(ctx, FFN_ERROR_UNSUPPORTED,
                  caller + "'" + target->name +
                      "' is an NVIDIA target; the JIT builds CPU kernels "
                      "(compile device kernels with ffnc --emit=so)");
  if (!hostCanRun(*target))
    return report(ctx, FFN_ERROR_UNSUPPORTED,
                  caller + "this CPU cannot run code for target '" +
                      target->name + "'");
  ScheduleOptions schedule;
  schedule.isa = target->name;
  schedule.vectorBits = target->vectorBits;
  schedule.threads = o.threads;
  if (std::optional<StrategyError> bad =
          parseStrategyOptions(o.strategy, schedule))
    return report(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  caller + "--strategy: " + bad->message);
  if (!checkSpecsFit(specs, *target, schedule, diags))
    return report(ctx, FFN_ERROR_INVALID_ARGUMENT, diagnostics);

  // The key: everything the library's bytes depend on.
  std::string key;
  llvm::raw_string_ostream keyText(key);
  keyText << FFNC_VERSION << '\n'
          << FFN_KERNEL_ABI_VERSION << '\n'
          << target->name << ' ' << target->cpu << ' ' << target->features
          << '\n'
          << o.strategy << '\n'
          << tunedThreads(schedule) << ' ' << o.batchInvariant << '\n'
          << specText;
  std::string dir = cacheDirectory(o);
  if (dir.empty())
    return report(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  caller + "no cache directory: set --cache-dir, "
                           "FFNC_CACHE_DIR, XDG_CACHE_HOME or HOME");
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return report(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  caller + "cannot create the cache directory '" + dir +
                      "': " + ec.message());
  std::string stem = llvm::utohexstr(fnv1a(key), /*LowerCase=*/true);
  llvm::SmallString<256> library(dir), sum(dir);
  llvm::sys::path::append(library, stem + ".so");
  llvm::sys::path::append(sum, stem + ".sum");

  if (entryIntact(library, sum) &&
      ffn_kernel_load_library(ctx, library.c_str(), name, out) == FFN_OK) {
    ++cacheHits;
    return FFN_OK;
  }
  // Missing, damaged or unloadable: build it (again).
  if (llvm::Error err =
          buildSharedLibrary(specs, sourceMgr, *target, schedule, library))
    return report(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  caller + llvm::toString(std::move(err)));
  auto bytes = llvm::MemoryBuffer::getFile(library, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bytes)
    return report(ctx, FFN_ERROR_LOAD_FAILED,
                  caller + "cannot read back '" + library.str().str() +
                      "': " + bytes.getError().message());
  if (llvm::Error err = writeAtomically(
          sum, llvm::utohexstr(fnv1a((*bytes)->getBuffer()), true) + "\n"))
    return report(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  caller + "cannot write '" + sum.str().str() +
                      "': " + llvm::toString(std::move(err)));
  ++cacheBuilds;
  return ffn_kernel_load_library(ctx, library.c_str(), name, out);
}

} // namespace

extern "C" {

ffn_status ffn_kernel_compile(ffn_context *ctx, const char *spec,
                              const char *name, const char *options,
                              ffn_kernel **out) {
  if (!ctx)
    return FFN_ERROR_INVALID_ARGUMENT;
  if (!spec || !name || !out)
    return report(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  "ffn_kernel_compile: spec, name and out must not be null");
  *out = nullptr;
  return compile(ctx, spec, name, options, out);
}

void ffn_jit_cache_stats(int64_t *hits, int64_t *builds) {
  if (hits)
    *hits = cacheHits.load();
  if (builds)
    *builds = cacheBuilds.load();
}

} // extern "C"
