//===- RunCommand.cpp - `ffnc run` ----------------------------------------===//

#include "RunCommand.h"

#include "Commands.h"
#include "Options.h"

#include "ffnc/Analysis/FfnInfo.h"
#include "ffnc/CodeGen/Compile.h"

#include "ffn/runtime.h"
#include "ffn_harness.h"
#include "ffn_reference.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace ffnc;

namespace {

using ffn_ref::Buffer;
using ffn_ref::makeBuffer;
using ffn_ref::Random;

struct ContextDeleter {
  void operator()(ffn_context *c) const { ffn_context_destroy(c); }
};
struct KernelDeleter {
  void operator()(ffn_kernel *k) const { ffn_kernel_destroy(k); }
};

/// The "<key>: N kB" line of a /proc file, in bytes; none if absent.
std::optional<double> procKilobytes(const char *path, const char *key) {
  std::optional<double> bytes;
  if (FILE *f = std::fopen(path, "r")) {
    char line[256];
    size_t keyLength = std::strlen(key);
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, key, keyLength) == 0 && line[keyLength] == ':')
        bytes = std::strtod(line + keyLength + 1, nullptr) * 1024.0;
    std::fclose(f);
  }
  return bytes;
}

/// Bytes this process may still allocate: the smaller of the memory the
/// system reports available and what the address-space limit leaves.
double availableBytes() {
  double available =
      procKilobytes("/proc/meminfo", "MemAvailable").value_or(INFINITY);
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    available = std::min(
        available,
        double(limit.rlim_cur) -
            procKilobytes("/proc/self/status", "VmSize").value_or(0.0));
  return available;
}

/// What a run of the largest token count needs, before anything is
/// allocated: an FFN too big for this machine is an error, not an abort.
std::optional<std::string> checkMemory(const ffn_kernel_desc &desc,
                                       const RunOptions &options) {
  double esize = desc.dtype == FFN_DTYPE_F32 ? 4 : 2;
  double need = 0;
  for (int64_t i = 0; i < desc.num_params; ++i) {
    const ffn_param_desc &p = desc.params[i];
    double n = double(ffn_ref::elementCount(p));
    // Our values (doubles and storage), a transposed copy, the packed copy.
    need += n * (8 + 2 * esize) + double(p.packed_bytes);
    if (options.testPermuteGroups) // the rotated copy
      need += n * (8 + esize);
  }
  uint64_t m = *std::max_element(options.tokens.begin(), options.tokens.end());
  // x and y (doubles and storage), with --check three more double arrays,
  // and the kernel's workspace.
  need +=
      double(m) * desc.d_model * (2 * (8 + esize) + (options.check ? 24 : 0)) +
      double(m) * desc.workspace_per_row;
  double available = availableBytes();
  if (need <= available)
    return std::nullopt;
  return fmt::format("ffn {}: running M = {} needs about {:.1f} GiB (weights, "
                     "inputs, outputs{}), but only {:.1f} GiB can be "
                     "allocated here",
                     desc.name, m, need / (1 << 30),
                     options.check ? ", reference" : "", available / (1 << 30));
}

/// Sets every parameter of `kernel` from options.weightsFile (through
/// ffn_kernel_set_params_safetensors, tensors named by options.weightMap)
/// and replaces `params` by the same values, [in, out], for the reference.
/// Reports and returns false on an error.
bool loadWeights(ffn_context *ctx, ffn_kernel *kernel,
                 const ffn_kernel_desc &desc, const RunOptions &options,
                 std::vector<Buffer> &params) {
  auto report = [&] {
    llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
    return false;
  };
  ffn_safetensors *raw = nullptr;
  if (ffn_safetensors_open(ctx, options.weightsFile.c_str(), &raw) != FFN_OK)
    return report();
  std::unique_ptr<ffn_safetensors, void (*)(ffn_safetensors *)> file(
      raw, ffn_safetensors_close);
  // --map param=tensor, for this kernel's parameters.
  std::vector<std::string> names(static_cast<size_t>(desc.num_params));
  for (const auto &[param, tensor] : options.weightMap) {
    int64_t i = 0;
    while (i < desc.num_params && param != desc.params[i].name)
      ++i;
    if (i == desc.num_params) {
      std::string known;
      for (int64_t j = 0; j < desc.num_params; ++j)
        known += std::string(j ? ", " : "") + desc.params[j].name;
      llvm::errs() << "ffnc: error: --map " << param << "=" << tensor
                   << ": ffn '" << desc.name << "' has no parameter '" << param
                   << "' (its parameters: " << known << ")\n";
      return false;
    }
    names[static_cast<size_t>(i)] = tensor;
  }
  std::vector<const char *> pointers;
  for (const std::string &n : names)
    pointers.push_back(n.empty() ? nullptr : n.c_str());
  ffn_weight_layout layout =
      options.outInLayout ? FFN_LAYOUT_OUT_IN : FFN_LAYOUT_IN_OUT;
  if (ffn_kernel_set_params_safetensors(kernel, file.get(), pointers.data(),
                                        layout) != FFN_OK)
    return report();
  // The same values for the reference, each matrix [in, out].
  for (int64_t i = 0; i < desc.num_params; ++i) {
    const ffn_param_desc &p = desc.params[i];
    ffn_tensor_info t;
    ffn_safetensors_tensor(file.get(), pointers[i] ? pointers[i] : p.name, &t);
    size_t stacks = static_cast<size_t>(std::max<int64_t>(p.experts, 1));
    size_t rows = static_cast<size_t>(p.shape[0]);
    size_t cols = static_cast<size_t>(p.rank == 2 ? p.shape[1] : 1);
    Buffer b = makeBuffer(desc.dtype, stacks * rows * cols);
    bool transposed = p.rank == 2 && layout == FFN_LAYOUT_OUT_IN;
    size_t esize = b.bytes.size() / b.values.size();
    const unsigned char *src = static_cast<const unsigned char *>(t.data);
    for (size_t s = 0; s < stacks; ++s)
      for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < cols; ++c) {
          size_t to = (s * rows + r) * cols + c;
          size_t from =
              s * rows * cols + (transposed ? c * rows + r : r * cols + c);
          std::memcpy(&b.bytes[to * esize], src + from * esize, esize);
          b.values[to] = ffn_ref::load(desc.dtype, b.bytes.data(), to);
        }
    params[static_cast<size_t>(i)] = std::move(b);
  }
  llvm::outs() << "  parameters from " << options.weightsFile << "\n";
  return true;
}

/// A mixture of experts: the tokens each routed expert receives in the
/// f64 reference's routing of input x, and the rows whose routing an f32
/// router may decide otherwise (which --check judges against every
/// plausible selection).
void printRouting(const ffn_kernel_desc &desc, uint64_t m, const Buffer &x,
                  const std::vector<Buffer> &params,
                  const RunOptions &options) {
  // The router and the norm are never quantized (ffn_ref::isQuantized).
  std::vector<const double *> values;
  for (const Buffer &p : params)
    values.push_back(p.values.data());
  ffn_ref::ForwardOptions reference;
  reference.model = options.boundModel;
  ffn_ref::Routing routing =
      ffn_ref::route(desc, m, x.values.data(), values, reference);
  std::string counts;
  for (int64_t n : routing.tokensPerExpert)
    counts += fmt::format(" {}", n);
  std::string unresolved =
      routing.unresolvedRows
          ? fmt::format(", {} with more than {} other plausible selections",
                        routing.unresolvedRows, ffn_ref::kMaxAlternatives)
          : "";
  llvm::outs() << fmt::format(
      "  routing: tokens per expert{} (top {} of {}); ambiguous rows {}{}\n",
      counts, routing.topK, desc.experts, routing.ambiguousRows, unresolved);
}

int runOne(const FfnSpec &spec, ffn_context *ctx, llvm::StringRef library,
           const RunOptions &options) {
  ffn_kernel *raw = nullptr;
  if (ffn_kernel_load_library(ctx, library.str().c_str(), spec.name.c_str(),
                              &raw) != FFN_OK) {
    llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
    return 1;
  }
  std::unique_ptr<ffn_kernel, KernelDeleter> kernel(raw);
  const ffn_kernel_desc &desc = *ffn_kernel_descriptor(kernel.get());
  if (std::optional<std::string> tooBig = checkMemory(desc, options)) {
    llvm::errs() << "ffnc: error: " << *tooBig << "\n";
    return 1;
  }
  int64_t dtype = desc.dtype;
  Random rng(options.seed);

  // The harness's seeded parameters (ffn_harness.h), handed over in the
  // layout asked for.
  std::vector<Buffer> params = ffn_ref::makeParams(desc, rng);
  ffn_ref::shapeRouting(desc, params, options.routing);
  if (options.prequantized && desc.weight_quant == FFN_WEIGHTS_DTYPE)
    llvm::WithColor::warning(llvm::errs(), "ffnc")
        << "ffn '" << desc.name
        << "' has unquantized weights: --prequantized does not apply\n";
  // A block that shares another's weights (`share`): the owner's kernel is
  // given the parameters (the same seeded values: the same parameter list)
  // and this one is bound to its packed buffers.
  std::unique_ptr<ffn_kernel, KernelDeleter> owner;
  ffn_kernel *target = kernel.get();
  if (!spec.share.empty()) {
    ffn_kernel *rawOwner = nullptr;
    if (ffn_kernel_load_library(ctx, library.str().c_str(), spec.share.c_str(),
                                &rawOwner) != FFN_OK) {
      llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
      return 1;
    }
    owner.reset(rawOwner);
    target = owner.get();
  }
  // Test only: the kernel gets each stacked parameter's blocks rotated
  // (block g holds block g + 1's), the reference keeps them in place.
  // (A copy only then: a large model's parameters are gigabytes.)
  std::vector<Buffer> permuted;
  if (options.testPermuteGroups && desc.kind == FFN_KIND_GROUPED)
    permuted = params;
  const std::vector<Buffer> &given = permuted.empty() ? params : permuted;
  if (!permuted.empty())
    for (int64_t i = 0; i < desc.num_params; ++i) {
      int64_t blocks = desc.params[i].experts;
      if (blocks < 2)
        continue;
      Buffer &p = permuted[i];
      size_t values = p.values.size() / blocks, bytes = p.bytes.size() / blocks;
      std::rotate(p.values.begin(), p.values.begin() + values, p.values.end());
      std::rotate(p.bytes.begin(), p.bytes.begin() + bytes, p.bytes.end());
    }
  if (!options.weightsFile.empty()) {
    // The parameters from a safetensors file: the kernel through the
    // runtime's loader, the reference from the same tensors.
    if (!loadWeights(ctx, target, desc, options, params))
      return 1;
  } else if (ffn_ref::setParams(target, given, options.outInLayout,
                                options.prequantized) != FFN_OK) {
    llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
    return 1;
  }
  if (owner) {
    if (ffn_kernel_share_params(kernel.get(), owner.get()) != FFN_OK) {
      llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
      return 1;
    }
    // One copy: every packed buffer is the owner's.
    uint64_t bytes = 0;
    for (int64_t i = 0; i < desc.num_params; ++i) {
      const char *name = desc.params[i].name;
      if (ffn_kernel_packed_param(kernel.get(), name) !=
          ffn_kernel_packed_param(owner.get(), name)) {
        llvm::errs() << "ffnc: error: parameter '" << name << "' of ffn '"
                     << spec.name << "' is not the one of '" << spec.share
                     << "'\n";
        return 1;
      }
      bytes += static_cast<uint64_t>(desc.params[i].packed_bytes) *
               std::max<int64_t>(desc.params[i].experts, 1);
    }
    llvm::outs() << "  shares the packed parameters of '" << spec.share << "' ("
                 << bytes << " bytes, held once)\n";
  }

  int status = 0;
  for (uint64_t m : options.tokens) {
    size_t n = m * desc.d_model;
    Buffer x =
        ffn_ref::makeInput(desc, m, rng, options.inputScale, options.routing);
    if (options.injectNonFinite) {
      const double special[] = {NAN, INFINITY, -INFINITY};
      for (size_t k = 0; k < 3 && k < m; ++k) {
        size_t i = k * desc.d_model + k % desc.d_model;
        x.values[i] = special[k];
        ffn_ref::store(dtype, x.bytes.data(), i, special[k]);
      }
    }
    Buffer y = makeBuffer(dtype, n);

    // One warm-up run, then the best and the median of `repeat`: the best
    // is the kernel's speed, the median also shows what the phase
    // hand-offs between threads cost typically.
    std::vector<double> times;
    times.reserve(options.repeat + 1);
    for (unsigned r = 0; r <= options.repeat; ++r) {
      auto start = std::chrono::steady_clock::now();
      if (ffn_kernel_run(kernel.get(), m, x.bytes.data(), y.bytes.data()) !=
          FFN_OK) {
        llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
        return 1;
      }
      std::chrono::duration<double> t =
          std::chrono::steady_clock::now() - start;
      if (r > 0 || options.repeat == 0)
        times.push_back(t.count());
    }
    std::sort(times.begin(), times.end());
    double best = times.front(), median = times[times.size() / 2];
    double gflops = static_cast<double>(flopsPerToken(spec)) * m / best / 1e9;
    llvm::outs() << fmt::format(
        "ffn {}  target {}  M = {}  threads {}\n  time {:.3f} ms (best of {}; "
        "median {:.3f} ms), {:.2f} GFLOP/s\n",
        spec.name, desc.target, m, ffn_context_threads(ctx), best * 1e3,
        times.size(), median * 1e3, gflops);
    if (desc.kind == FFN_KIND_MOE)
      printRouting(desc, m, x, params, options);
    if (options.digest) {
      // FNV-1a over the output's bytes: equal digests, equal bits.
      uint64_t h = 0xcbf29ce484222325ull;
      for (uint8_t byte : y.bytes)
        h = (h ^ byte) * 0x100000001b3ull;
      llvm::outs() << fmt::format("  output digest {:016x}\n", h);
    }

    if (!options.check)
      continue;
    ffn_ref::ForwardOptions reference;
    reference.model = options.boundModel;
    reference.activationError = options.testActivationError;
    ffn_ref::Check c =
        ffn_ref::checkOutput(desc, m, x, y.bytes.data(), params, reference);
    const ffn_ref::Comparison &r = c.result;
    const std::vector<double> &got = c.got, &ref = c.ref;
    size_t row = r.worst / desc.d_model, col = r.worst % desc.d_model;
    llvm::outs() << fmt::format(
        "  check vs f64 reference ({} bound): max abs err {:.3e}, max "
        "err/bound {:.3g}\n",
        options.boundModel == ffn_ref::BoundModel::WorstCase ? "worst-case"
                                                             : "probabilistic",
        r.maxAbs, r.maxRatio);
    llvm::outs() << fmt::format(
        "  worst element [{}, {}]: got {:.9g}, expected {:.9g}, allowed "
        "+-{:.3e}\n",
        row, col, got[r.worst], ref[r.worst], r.worstAllowed);
    if (c.quantized)
      llvm::outs() << fmt::format(
          "  quantization error vs the unquantized FFN (not judged): max "
          "abs {:.3e}, relative RMS {:.3e}\n",
          c.quantMaxAbs, c.quantRelRms);

    if (r.rowsOnAlternative)
      llvm::outs() << fmt::format(
          "  rows matching another plausible routing than the reference's: "
          "{}\n",
          r.rowsOnAlternative);
    if (r.nonFiniteMatches)
      llvm::outs() << fmt::format(
          "  non-finite outputs matching the reference: {}\n",
          r.nonFiniteMatches);
    if (r.nonFiniteMismatches) {
      size_t i = r.firstMismatch;
      llvm::outs() << fmt::format(
          "  {} non-finite mismatches; first [{}, {}]: got {}, expected {}\n",
          r.nonFiniteMismatches, i / desc.d_model, i % desc.d_model, got[i],
          ref[i]);
    }
    llvm::outs() << (r.pass ? "  PASS\n" : "  FAIL\n");
    if (!r.pass)
      status = 1;
  }
  return status;
}

} // namespace

int ffnc::runSpecs(llvm::ArrayRef<FfnSpec> specs,
                   const llvm::SourceMgr &sourceMgr,
                   const RunOptions &options) {
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("ffnc-run", dir)) {
    llvm::errs() << "ffnc: error: cannot create a temporary directory: "
                 << ec.message() << "\n";
    return 1;
  }
  llvm::SmallString<128> library(dir);
  llvm::sys::path::append(library, "kernels.so");
  int status = 0;
  if (llvm::Error err = buildSharedLibrary(specs, sourceMgr, options.target,
                                           options.schedule, library)) {
    llvm::errs() << "ffnc: error: " << llvm::toString(std::move(err)) << "\n";
    status = 1;
  } else {
    ffn_context *raw = nullptr;
    ffn_context_create(&raw);
    std::unique_ptr<ffn_context, ContextDeleter> ctx(raw);
    if (ffn_context_set_threads(ctx.get(), static_cast<int>(options.threads)) !=
        FFN_OK) {
      llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx.get())
                   << "\n";
      status = 1;
    } else {
      for (const FfnSpec &spec : specs)
        status |= runOne(spec, ctx.get(), library, options);
    }
  }
  llvm::sys::fs::remove(library);
  llvm::sys::fs::remove(dir);
  return status;
}

int ffnc::runMain(Session &s) {
  TargetInfo target;
  if (std::optional<int> rc = openTarget(opts::targetName, target))
    return *rc;
  if (std::optional<int> rc = rejectCpuStrategy(target))
    return *rc;
  RunOptions options;
  if (std::optional<int> rc = resolveSchedule(s, target, opts::threadCount,
                                              "--threads", options.schedule))
    return *rc;
  options.tokens.assign(opts::tokenCounts.begin(), opts::tokenCounts.end());
  if (options.tokens.empty())
    options.tokens = {17};
  for (uint64_t m : options.tokens)
    if (m == 0 || m > (1u << 20))
      return fail("--tokens: token counts must be in [1, 1048576]");
  if (!(opts::inputScale > 0) || !std::isfinite(opts::inputScale))
    return fail("--input-scale must be positive and finite");
  if (target.isGpu())
    return fail("ffnc run runs CPU kernels; '" + target.name +
                "' is an NVIDIA target: build it with --emit=so and run it "
                "with ffn-gpu-run on a machine with the GPU");
  if (!hostCanRun(target))
    return fail("this machine cannot run code for target '" + target.name +
                "'");
  options.target = target;
  options.check = opts::checkResults;
  options.seed = opts::seed;
  if (opts::repeat > 1000000)
    return fail("--repeat must be at most 1000000");
  options.repeat = opts::repeat;
  options.outInLayout = opts::outInLayout;
  options.prequantized = opts::prequantized;
  options.threads = opts::threadCount;
  options.inputScale = opts::inputScale;
  options.injectNonFinite = opts::injectNonFinite;
  options.digest = opts::printDigest;
  if (opts::routingData.getNumOccurrences())
    for (const FfnSpec &spec : s.specs)
      if (!spec.isMoe())
        return fail("--routing applies to mixtures of experts, and ffn '" +
                    spec.name +
                    "' is a dense FFN (select the mixtures with --ffn)");
  options.routing = opts::routingData;
  options.boundModel = opts::checkBound;
  if (!std::isfinite(opts::testActivationError) ||
      std::fabs(opts::testActivationError) >= 1)
    return fail("--test-activation-error must be in (-1, 1)");
  options.testActivationError = opts::testActivationError;
  options.testPermuteGroups = opts::testPermuteGroups;
  if (opts::weightMap.getNumOccurrences() && opts::weightsFile.empty())
    return fail("--map names tensors of a --weights file; give --weights");
  if (!opts::weightsFile.empty()) {
    // One FFN's parameters: the map and the file are for one block.
    if (s.specs.size() != 1)
      return fail("--weights sets one FFN's parameters, and the spec has " +
                  std::to_string(s.specs.size()) +
                  " blocks: select one with --ffn");
    if (options.prequantized || opts::routingData.getNumOccurrences() ||
        options.testPermuteGroups)
      return fail("--weights takes the parameters from the file: "
                  "--prequantized, --routing and --test-permute-groups do "
                  "not apply");
    options.weightsFile = opts::weightsFile;
    for (const std::string &entry : opts::weightMap) {
      size_t eq = entry.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size())
        return fail("--map " + entry +
                    ": expected param=tensor (e.g. "
                    "w_up=model.layers.0.mlp.up_proj.weight)");
      options.weightMap.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
  }
  return runSpecs(s.specs, s.sourceMgr, options);
}
