//===- FfnGpuPtxasFeedback.cpp - assemble, and re-hint spilling kernels ---===//
//
// ptxas, given no occupancy hint, picks a kernel's register budget itself
// and now and then budgets for more resident blocks than the kernel's
// shared memory allows, spilling a few words; hints chosen in the lowering
// fix some kernels and break others (docs/gpu.md). ptxas's own report is
// the only reliable judge, so this pass assembles each module, reads
// `ptxas -v`, and gives a spilling kernel one block an SM fewer.
//
//===----------------------------------------------------------------------===//

#include "ffn/Target/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <map>

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNGPUPTXASFEEDBACK
#include "ffn/Target/GPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;

namespace {
/// What ptxas -v said of one kernel.
struct KernelReport {
  int64_t registers = 0;
  int64_t spillBytes = 0; ///< stores + loads
  int64_t stackBytes = 0;
};

/// Runs ptxas on `ptx`; returns its -v report (stderr) and, if `cubin` is
/// given, the assembled cubin. A failure returns false with the log.
bool runPtxas(StringRef ptxas, StringRef chip, int optLevel, StringRef ptx,
              std::string *cubin, std::string &report) {
  SmallString<128> input, output, log;
  if (llvm::sys::fs::createTemporaryFile("ffnc-ptxas", "ptx", input) ||
      llvm::sys::fs::createTemporaryFile("ffnc-ptxas", "cubin", output) ||
      llvm::sys::fs::createTemporaryFile("ffnc-ptxas", "log", log)) {
    report = "cannot create temporary files for ptxas";
    return false;
  }
  llvm::FileRemover removeInput(input), removeOutput(output), removeLog(log);
  {
    std::error_code error;
    llvm::raw_fd_ostream stream(input, error);
    if (error) {
      report = error.message();
      return false;
    }
    stream << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  std::string level = std::to_string(optLevel);
  SmallVector<StringRef> argv = {ptxas, arch,  "--opt-level", level,
                                 "-v",  input, "-o",          output};
  std::optional<StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(ptxas, argv, std::nullopt, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &message);
  auto logText = llvm::MemoryBuffer::getFile(log);
  report = logText ? (*logText)->getBuffer().str() : std::string();
  if (rc != 0) {
    report = "ptxas failed (" +
             (message.empty() ? "exit " + std::to_string(rc) : message) +
             "):\n" + report;
    return false;
  }
  if (cubin) {
    auto bytes = llvm::MemoryBuffer::getFile(output, /*IsText=*/false);
    if (!bytes) {
      report = "cannot read ptxas's cubin";
      return false;
    }
    *cubin = (*bytes)->getBuffer().str();
  }
  return true;
}

/// The per-kernel lines of a `ptxas -v` report.
std::map<std::string, KernelReport> parseReport(StringRef report) {
  std::map<std::string, KernelReport> kernels;
  llvm::Regex entry("Compiling entry function '([A-Za-z0-9_$]+)'");
  llvm::Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill "
                    "stores, ([0-9]+) bytes spill loads");
  llvm::Regex used("Used ([0-9]+) registers");
  std::string current;
  SmallVector<StringRef> lines, m;
  report.split(lines, '\n');
  for (StringRef line : lines) {
    if (entry.match(line, &m)) {
      current = m[1].str();
      kernels[current];
    } else if (!current.empty() && frame.match(line, &m)) {
      KernelReport &k = kernels[current];
      k.stackBytes = std::stoll(m[1].str());
      k.spillBytes = std::stoll(m[2].str()) + std::stoll(m[3].str());
    } else if (!current.empty() && used.match(line, &m)) {
      kernels[current].registers = std::stoll(m[1].str());
    }
  }
  return kernels;
}

/// The directives between `.entry name(...)` and its body: [begin, end).
std::optional<std::pair<size_t, size_t>> directives(StringRef ptx,
                                                    StringRef name) {
  size_t at = ptx.find((".entry " + name + "(").str());
  if (at == StringRef::npos)
    return std::nullopt;
  size_t close = ptx.find(')', at);
  size_t body = ptx.find("\n{", close);
  if (close == StringRef::npos || body == StringRef::npos)
    return std::nullopt;
  return std::make_pair(close + 1, body + 1);
}

int64_t directiveValue(StringRef region, StringRef directive) {
  size_t at = region.find(directive);
  if (at == StringRef::npos)
    return 0;
  int64_t value = 0;
  region.drop_front(at + directive.size()).ltrim().consumeInteger(10, value);
  return value;
}

/// The threads of a block: the product of `.maxntid x, y, z` (1 without
/// it; every kernel ffn-gpu-lower builds has one).
int64_t blockThreads(StringRef region) {
  size_t at = region.find(".maxntid");
  if (at == StringRef::npos)
    return 1;
  StringRef rest = region.drop_front(at + strlen(".maxntid"));
  int64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    int64_t n = 0;
    rest = rest.ltrim();
    if (rest.consumeInteger(10, n))
      break;
    threads *= std::max<int64_t>(n, 1);
    rest = rest.ltrim();
    if (!rest.consume_front(","))
      break;
  }
  return threads;
}

/// The blocks an SM the kernel's registers leave room for: 64 K registers
/// an SM, allocated to a thread in multiples of 8, at most 2048 threads
/// and 32 blocks an SM (sm_80 and sm_90 alike).
int64_t blocksForRegisters(int64_t registers, int64_t threads) {
  threads = std::max<int64_t>(threads, 1);
  int64_t perThread = std::max<int64_t>((registers + 7) / 8 * 8, 8);
  return std::min({65536 / (perThread * threads), 2048 / threads, int64_t(32)});
}

/// Gives the kernel whose directives are `region` (of `directives`)
/// `.minnctapersm blocks`, replacing one it has.
void setMinBlocks(std::string &ptx, std::pair<size_t, size_t> region,
                  int64_t blocks) {
  StringRef text = StringRef(ptx).slice(region.first, region.second);
  std::string line = ".minnctapersm " + std::to_string(blocks) + "\n";
  size_t old = text.find(".minnctapersm");
  if (old != StringRef::npos) {
    size_t end = text.find('\n', old);
    ptx.replace(region.first + old, end + 1 - old, line);
    return;
  }
  ptx.insert(region.second, line);
}

struct FfnGpuPtxasFeedbackPass
    : ffn::impl::FfnGpuPtxasFeedbackBase<FfnGpuPtxasFeedbackPass> {
  using Base::Base;

  void runOnOperation() override {
    if (format != "isa" && format != "bin") {
      getOperation().emitError("ffn-gpu-ptxas-feedback: format must be isa "
                               "or bin, not '")
          << format << "'";
      return signalPassFailure();
    }
    // No toolkit named (ffn-opt's default): ptxas on PATH, else the
    // usual place.
    SmallString<256> ptxas(toolkit.empty() ? std::string("/usr/local/cuda")
                                           : std::string(toolkit));
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    if (toolkit.empty())
      if (auto onPath = llvm::sys::findProgramByName("ptxas"))
        ptxas = *onPath;
    for (auto binary : getOperation().getOps<gpu::BinaryOp>())
      if (failed(assemble(binary, ptxas)))
        return signalPassFailure();
  }

  LogicalResult assemble(gpu::BinaryOp binary, StringRef ptxas) {
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    if (object.getFormat() != gpu::CompilationTarget::Assembly)
      return binary.emitError("expected PTX from gpu-module-to-binary "
                              "(format=isa) before ffn-gpu-ptxas-feedback");
    auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
    if (!nvvm)
      return binary.emitError("expected an #nvvm.target object");
    std::string chip = nvvm.getChip().str();
    std::string ptx = object.getObject().getValue().str();
    std::string cubin, report;
    // Per re-hinted kernel: ptxas's first report of it, the last hint.
    std::map<std::string, std::string> spilled;
    std::map<std::string, int64_t> hints;
    std::map<std::string, KernelReport> last;
    // Each round lowers every spilling kernel's block count by at least
    // one; the fifth assembly is the last.
    for (int round = 0;; ++round) {
      if (!runPtxas(ptxas, chip, nvvm.getO(), ptx,
                    format == "bin" ? &cubin : nullptr, report))
        return binary.emitError("ptxas could not assemble ")
               << binary.getSymName() << ": " << report;
      last = parseReport(report);
      bool changed = false;
      for (auto &[name, k] : last) {
        if (k.spillBytes == 0 && k.stackBytes == 0)
          continue;
        if (!spilled.count(name))
          spilled[name] = "ptxas spilled " + std::to_string(k.spillBytes) +
                          " bytes (" + std::to_string(k.stackBytes) +
                          "-byte stack frame) at " +
                          std::to_string(k.registers) + " registers";
        auto region = directives(ptx, name);
        if (round == 4 || !region)
          continue;
        StringRef text = StringRef(ptx).slice(region->first, region->second);
        int64_t blocks =
            blocksForRegisters(k.registers, blockThreads(text)) - 1;
        if (int64_t hinted = directiveValue(text, ".minnctapersm"))
          blocks = std::min(blocks, hinted - 1);
        if (blocks < 1)
          continue;
        setMinBlocks(ptx, *region, blocks);
        hints[name] = blocks;
        changed = true;
      }
      if (!changed)
        break;
    }
    SmallVector<Attribute> notes;
    for (auto &[name, first] : spilled) {
      std::string note = name + ": " + first;
      if (hints.count(name))
        note +=
            "; assembled for " + std::to_string(hints[name]) + " blocks an SM";
      const KernelReport &now = last[name];
      if (now.spillBytes || now.stackBytes)
        note += "; still " + std::to_string(now.spillBytes) +
                " spill bytes, a " + std::to_string(now.stackBytes) +
                "-byte stack frame";
      notes.push_back(StringAttr::get(&getContext(), note));
    }
    auto target = format == "bin" ? gpu::CompilationTarget::Binary
                                  : gpu::CompilationTarget::Assembly;
    auto rebuilt = gpu::ObjectAttr::get(
        &getContext(), object.getTarget(), target,
        StringAttr::get(&getContext(), format == "bin" ? cubin : ptx),
        object.getProperties(), object.getKernels());
    binary.setObjectsAttr(ArrayAttr::get(&getContext(), {rebuilt}));
    if (!notes.empty())
      binary->setAttr("ffn.ptxas_feedback",
                      ArrayAttr::get(&getContext(), notes));
    return success();
  }
};
} // namespace
