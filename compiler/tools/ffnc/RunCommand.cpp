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
/// `oracle`: the oracle's kernel of the same FFN, if any.
std::optional<std::string> checkMemory(const ffn_kernel_desc &desc,
                                       const ffn_kernel_desc *oracle,
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
  // The oracle's packed copy, output and workspace, and both outputs as
  // doubles for comparing them (its reference rows are few).
  if (oracle) {
    for (int64_t i = 0; i < oracle->num_params; ++i)
      need += double(oracle->params[i].packed_bytes);
    need += double(m) * desc.d_model * (esize + 16) +
            double(m) * oracle->workspace_per_row;
  }
  double available = availableBytes();
  if (need <= available)
    return std::nullopt;
  std::string also = std::string(options.check ? ", reference" : "") +
                     (oracle ? ", the oracle's kernel" : "");
  return fmt::format("ffn {}: running M = {} needs about {:.1f} GiB (weights, "
                     "inputs, outputs{}), but only {:.1f} GiB can be "
                     "allocated here",
                     desc.name, m, need / (1 << 30), also,
                     available / (1 << 30));
}

/// The name a back end goes by in run's report.
const char *backendName(Backend backend) {
  return backend == Backend::Halide ? "halide" : "ffnc";
}

/// One FFN's kernel from a library, and for a block that shares another's
/// weights (`share`) the owner's kernel, which is given the parameters and
/// whose packed buffers the kernel is bound to.
struct LoadedKernel {
  std::unique_ptr<ffn_kernel, KernelDeleter> kernel, owner;

  const ffn_kernel_desc &desc() const {
    return *ffn_kernel_descriptor(kernel.get());
  }
  /// The kernel the parameters are set on.
  ffn_kernel *paramTarget() const { return owner ? owner.get() : kernel.get(); }
};

/// Loads `spec`'s kernel (and its owner's) from `library`; reports and
/// returns false on an error.
bool loadKernel(ffn_context *ctx, llvm::StringRef library, const FfnSpec &spec,
                LoadedKernel &loaded) {
  auto load = [&](const std::string &name,
                  std::unique_ptr<ffn_kernel, KernelDeleter> &into) {
    ffn_kernel *raw = nullptr;
    if (ffn_kernel_load_library(ctx, library.str().c_str(), name.c_str(),
                                &raw) != FFN_OK) {
      llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
      return false;
    }
    into.reset(raw);
    return true;
  };
  return load(spec.name, loaded.kernel) &&
         (spec.share.empty() || load(spec.share, loaded.owner));
}

/// Binds a sharing kernel to its owner's packed buffers and checks that
/// every one is the owner's. Returns the bytes now held once, or none
/// (reported) on an error.
std::optional<uint64_t> bindShared(ffn_context *ctx, const LoadedKernel &loaded,
                                   const FfnSpec &spec) {
  if (ffn_kernel_share_params(loaded.kernel.get(), loaded.owner.get()) !=
      FFN_OK) {
    llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
    return std::nullopt;
  }
  const ffn_kernel_desc &desc = loaded.desc();
  uint64_t bytes = 0;
  for (int64_t i = 0; i < desc.num_params; ++i) {
    const char *name = desc.params[i].name;
    if (ffn_kernel_packed_param(loaded.kernel.get(), name) !=
        ffn_kernel_packed_param(loaded.owner.get(), name)) {
      llvm::errs() << "ffnc: error: parameter '" << name << "' of ffn '"
                   << spec.name << "' is not the one of '" << spec.share
                   << "'\n";
      return std::nullopt;
    }
    bytes += static_cast<uint64_t>(desc.params[i].packed_bytes) *
             std::max<int64_t>(desc.params[i].experts, 1);
  }
  return bytes;
}

/// The first field in which two back ends' kernels of the same FFN describe
/// different models; none if they agree. Both come from one spec, so a
/// difference is a back end's bug, and comparing their outputs would judge
/// nothing.
std::optional<std::string> contractDifference(const ffn_kernel_desc &a,
                                              const ffn_kernel_desc &b) {
  const std::pair<const char *, bool> fields[] = {
      {"kind", a.kind == b.kind},
      {"d_model", a.d_model == b.d_model},
      {"d_ff", a.d_ff == b.d_ff},
      {"dtype", a.dtype == b.dtype},
      {"activation", a.activation == b.activation},
      {"gated", a.gated == b.gated},
      {"residual", a.residual == b.residual},
      {"norm", a.norm == b.norm},
      {"norm_position", a.norm_position == b.norm_position},
      {"norm_eps", a.norm_eps == b.norm_eps},
      {"weight_quant", a.weight_quant == b.weight_quant},
      {"num_params", a.num_params == b.num_params}};
  for (const auto &[field, same] : fields)
    if (!same)
      return std::string(field);
  for (int64_t i = 0; i < a.num_params; ++i) {
    const ffn_param_desc &p = a.params[i], &q = b.params[i];
    if (std::strcmp(p.name, q.name) != 0 || p.rank != q.rank ||
        p.shape[0] != q.shape[0] || (p.rank == 2 && p.shape[1] != q.shape[1]) ||
        p.experts != q.experts)
      return fmt::format("parameter {} ('{}')", i, p.name);
  }
  return std::nullopt;
}

/// One warm-up run of `kernel`, then `repeat` timed ones (one when repeat
/// is 0): their times in seconds, sorted; empty if a run failed (reported).
std::vector<double> timeRuns(ffn_context *ctx, ffn_kernel *kernel, uint64_t m,
                             const Buffer &x, Buffer &y, unsigned repeat) {
  std::vector<double> times;
  times.reserve(repeat + 1);
  for (unsigned r = 0; r <= repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (ffn_kernel_run(kernel, m, x.bytes.data(), y.bytes.data()) != FFN_OK) {
      llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
      return {};
    }
    std::chrono::duration<double> t = std::chrono::steady_clock::now() - start;
    if (r > 0 || repeat == 0)
      times.push_back(t.count());
  }
  std::sort(times.begin(), times.end());
  return times;
}

/// How far the oracle's tolerance goes beyond the reference's bound: each
/// kernel lies within the bound B of the f64 value, so the two differ by
/// at most 2B on a row whose bound is B; the rows are i.i.d. draws
/// (makeInput), so a row's bound is within a small factor of the largest
/// on the sampled rows, and the other factor of 2 covers that
/// (docs/numerics.md).
constexpr double kOracleKappa = 4.0;

/// The rows --oracle checks against the reference, sorted: with
/// --inject-nonfinite always the three it changes (their class is what is
/// judged there); then, until min(m, oracleRows) are taken, the first row,
/// the last, and distinct rows drawn from their own seeded stream ("oracle"
/// in ASCII, so that the data's draws do not move).
std::vector<uint64_t> oracleSample(uint64_t m, const RunOptions &options) {
  std::vector<char> taken(m, 0);
  std::vector<uint64_t> rows;
  auto take = [&](uint64_t r) {
    if (r < m && !taken[r]) {
      taken[r] = 1;
      rows.push_back(r);
    }
  };
  if (options.injectNonFinite)
    for (uint64_t r = 0; r < 3; ++r)
      take(r);
  const uint64_t want = std::min<uint64_t>(m, options.oracleRows);
  if (want == m) {
    for (uint64_t r = 0; r < m; ++r)
      take(r);
  } else {
    for (uint64_t r : {uint64_t(0), m - 1})
      if (rows.size() < want)
        take(r);
    // want < m: a row not taken yet always remains.
    Random rng(options.seed ^ 0x6f7261636c65ull);
    while (rows.size() < want) {
      double draw = rng.uniform(0, static_cast<double>(m));
      take(std::min<uint64_t>(m - 1, static_cast<uint64_t>(draw)));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

/// Rows `rows` of a buffer of rows of `rowLength` elements of `dtype`.
Buffer gatherRows(const Buffer &from, int64_t dtype, size_t rowLength,
                  const std::vector<uint64_t> &rows) {
  Buffer out = makeBuffer(dtype, rows.size() * rowLength);
  const size_t esize = dtype == FFN_DTYPE_F32 ? 4 : 2;
  for (size_t k = 0; k < rows.size(); ++k) {
    const size_t src = rows[k] * rowLength, dst = k * rowLength;
    std::memcpy(&out.bytes[dst * esize], &from.bytes[src * esize],
                rowLength * esize);
    std::copy_n(from.values.begin() + src, rowLength, out.values.begin() + dst);
  }
  return out;
}

/// --oracle: one run's outputs, `yA` of the kernel under test and `yB` of
/// the oracle's kernel for input x, judged twice. (1) Sampled rows of both
/// against the f64 reference, with its exact bounds. (2) Every row of one
/// against the other, column c within kOracleKappa times the largest bound
/// of column c on the sampled rows, plus one output ulp. The reference
/// costs a pass over the weights in f64 per row: (1) keeps it to a few
/// rows where m is large, and (2) still looks at every row. Prints each
/// verdict at the end of its line; returns whether both pass.
bool judgeAgainstOracle(const ffn_kernel_desc &desc, uint64_t m,
                        const Buffer &x, const Buffer &yA, const Buffer &yB,
                        const std::vector<Buffer> &params,
                        const RunOptions &options) {
  const char *nameA = backendName(options.schedule.backend);
  const char *nameB = backendName(*options.oracle);
  const size_t d = static_cast<size_t>(desc.d_model);
  const int64_t dtype = desc.dtype;

  // (1) The sampled rows against the reference.
  std::vector<uint64_t> rows = oracleSample(m, options);
  Buffer xs = gatherRows(x, dtype, d, rows);
  Buffer ysA = gatherRows(yA, dtype, d, rows);
  Buffer ysB = gatherRows(yB, dtype, d, rows);
  ffn_ref::ForwardOptions reference;
  reference.model = options.boundModel;
  reference.activationError = options.testActivationError;
  const int64_t k = static_cast<int64_t>(rows.size());
  ffn_ref::Check cA =
      ffn_ref::checkOutput(desc, k, xs, ysA.bytes.data(), params, reference);
  ffn_ref::Check cB =
      ffn_ref::checkOutput(desc, k, xs, ysB.bytes.data(), params, reference);
  const bool sampledPass = cA.result.pass && cB.result.pass;
  llvm::outs() << fmt::format(
      "  reference on {} of {} rows: {} err/bound {:.3g}, {} err/bound "
      "{:.3g}: {}\n",
      rows.size(), m, nameA, cA.result.maxRatio, nameB, cB.result.maxRatio,
      sampledPass ? "PASS" : "FAIL");
  // A failure names its element; indices into the sampled rows are
  // reported as the rows they are.
  auto explain = [&](const char *name, const ffn_ref::Check &c) {
    const ffn_ref::Comparison &r = c.result;
    if (r.pass)
      return;
    if (r.nonFiniteMismatches) {
      size_t i = r.firstMismatch;
      llvm::outs() << fmt::format(
          "  {}: {} non-finite mismatches; first [{}, {}]: got {}, expected "
          "{}\n",
          name, r.nonFiniteMismatches, rows[i / d], i % d, c.got[i], c.ref[i]);
    }
    size_t i = r.worst;
    llvm::outs() << fmt::format(
        "  {}: worst element [{}, {}]: got {:.9g}, expected {:.9g}, allowed "
        "+-{:.3e}\n",
        name, rows[i / d], i % d, c.got[i], c.ref[i], r.worstAllowed);
  };
  explain(nameA, cA);
  explain(nameB, cB);

  // (2) Every row, one kernel against the other. A column's tolerance comes
  // from the sampled rows where the reference and its bound are finite (a
  // non-finite row says nothing about the others' error); a column with
  // none takes the largest of the other columns', and with none at all,
  // every sampled row being non-finite, only the ulp is allowed.
  std::vector<double> tolerance(d, 0.0);
  std::vector<char> seen(d, 0);
  double widest = 0;
  for (size_t s = 0; s < rows.size(); ++s)
    for (size_t c = 0; c < d; ++c) {
      double b = cA.bound[s * d + c];
      if (!std::isfinite(b) || !std::isfinite(cA.ref[s * d + c]))
        continue;
      tolerance[c] = std::max(tolerance[c], b);
      seen[c] = 1;
      widest = std::max(widest, b);
    }
  for (size_t c = 0; c < d; ++c)
    tolerance[c] = kOracleKappa * (seen[c] ? tolerance[c] : widest);
  const size_t n = static_cast<size_t>(m) * d;
  std::vector<double> gotA(n), gotB(n);
  for (size_t i = 0; i < n; ++i) {
    gotA[i] = ffn_ref::load(dtype, yA.bytes.data(), i);
    gotB[i] = ffn_ref::load(dtype, yB.bytes.data(), i);
  }
  ffn_ref::Comparison r = ffn_ref::compareKernels(dtype, gotA, gotB, tolerance);
  llvm::outs() << fmt::format(
      "  {} vs {} on all {} rows: max |diff| {:.3e}, max diff/tolerance "
      "{:.3g}, worst [{}, {}]: {:.9g} vs {:.9g} (+-{:.3e}): {}\n",
      nameA, nameB, m, r.maxAbs, r.maxRatio, r.worst / d, r.worst % d,
      gotA[r.worst], gotB[r.worst], r.worstAllowed, r.pass ? "PASS" : "FAIL");
  if (r.nonFiniteMatches)
    llvm::outs() << fmt::format("  non-finite outputs alike in both: {}\n",
                                r.nonFiniteMatches);
  if (r.nonFiniteMismatches) {
    size_t i = r.firstMismatch;
    llvm::outs() << fmt::format(
        "  {} non-finite mismatches; first [{}, {}]: {} {} vs {} {}\n",
        r.nonFiniteMismatches, i / d, i % d, nameA, gotA[i], nameB, gotB[i]);
  }
  return sampledPass && r.pass;
}

/// Sets every parameter of `kernel` from options.weightsFile (through
/// ffn_kernel_set_params_safetensors, tensors named by options.weightMap)
/// and, if `params` is given, replaces it by the same values, [in, out],
/// for the reference (an oracle's kernel needs no second copy). Reports
/// and returns false on an error.
bool loadWeights(ffn_context *ctx, ffn_kernel *kernel,
                 const ffn_kernel_desc &desc, const RunOptions &options,
                 std::vector<Buffer> *params) {
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
  if (!params)
    return true;
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
    (*params)[static_cast<size_t>(i)] = std::move(b);
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
           llvm::StringRef oracleLibrary, const RunOptions &options) {
  LoadedKernel loaded;
  if (!loadKernel(ctx, library, spec, loaded))
    return 1;
  ffn_kernel *kernel = loaded.kernel.get();
  const ffn_kernel_desc &desc = loaded.desc();
  // The oracle's kernel of the same FFN, from the other back end's library.
  LoadedKernel oracle;
  if (options.oracle) {
    if (!loadKernel(ctx, oracleLibrary, spec, oracle))
      return 1;
    if (std::optional<std::string> field =
            contractDifference(desc, oracle.desc())) {
      llvm::errs() << "ffnc: error: ffn '" << spec.name << "': the "
                   << backendName(*options.oracle)
                   << " oracle's kernel describes another FFN than the "
                      "kernel under test ("
                   << *field << " differs)\n";
      return 1;
    }
  }
  if (std::optional<std::string> tooBig = checkMemory(
          desc, options.oracle ? &oracle.desc() : nullptr, options)) {
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
  ffn_kernel *target = loaded.paramTarget();
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
    if (!loadWeights(ctx, target, desc, options, &params))
      return 1;
  } else if (ffn_ref::setParams(target, given, options.outInLayout,
                                options.prequantized) != FFN_OK) {
    llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
    return 1;
  }
  if (loaded.owner) {
    // One copy: every packed buffer is the owner's.
    std::optional<uint64_t> bytes = bindShared(ctx, loaded, spec);
    if (!bytes)
      return 1;
    llvm::outs() << "  shares the packed parameters of '" << spec.share << "' ("
                 << *bytes << " bytes, held once)\n";
  }
  if (options.oracle) {
    // The same values, through the same entry points and layout (the
    // oracle builds no quantized or grouped kernels: no prequantized or
    // rotated parameters).
    ffn_kernel *oracleTarget = oracle.paramTarget();
    if (!options.weightsFile.empty()) {
      if (!loadWeights(ctx, oracleTarget, oracle.desc(), options, nullptr))
        return 1;
    } else if (ffn_ref::setParams(oracleTarget, params, options.outInLayout) !=
               FFN_OK) {
      llvm::errs() << "ffnc: error: " << ffn_context_last_error(ctx) << "\n";
      return 1;
    }
    if (oracle.owner && !bindShared(ctx, oracle, spec))
      return 1;
  }

  int status = 0;
  for (uint64_t m : options.tokens) {
    size_t n = m * desc.d_model;
    Buffer x =
        ffn_ref::makeInput(desc, m, rng, options.inputScale, options.routing);
    if (options.injectNonFinite)
      ffn_ref::injectNonFinite(desc, static_cast<int64_t>(m), x);
    Buffer y = makeBuffer(dtype, n);

    // One warm-up run, then the best and the median of `repeat`: the best
    // is the kernel's speed, the median also shows what the phase
    // hand-offs between threads cost typically.
    std::vector<double> times = timeRuns(ctx, kernel, m, x, y, options.repeat);
    if (times.empty())
      return 1;
    double best = times.front(), median = times[times.size() / 2];
    double gflops = static_cast<double>(flopsPerToken(spec)) * m / best / 1e9;
    llvm::outs() << fmt::format(
        "ffn {}  target {}  M = {}  threads {}\n  time {:.3f} ms (best of {}; "
        "median {:.3f} ms), {:.2f} GFLOP/s\n",
        spec.name, desc.target, m, ffn_context_threads(ctx), best * 1e3,
        times.size(), median * 1e3, gflops);
    // The oracle's kernel on the same input, timed the same way.
    Buffer yOracle;
    if (options.oracle) {
      yOracle = makeBuffer(dtype, n);
      std::vector<double> oracleTimes =
          timeRuns(ctx, oracle.kernel.get(), m, x, yOracle, options.repeat);
      if (oracleTimes.empty())
        return 1;
      double oracleBest = oracleTimes.front();
      llvm::outs() << fmt::format(
          "  oracle {}: time {:.3f} ms (best of {}; median {:.3f} ms), "
          "{:.2f} GFLOP/s\n",
          backendName(*options.oracle), oracleBest * 1e3, oracleTimes.size(),
          oracleTimes[oracleTimes.size() / 2] * 1e3,
          static_cast<double>(flopsPerToken(spec)) * m / oracleBest / 1e9);
    }
    if (desc.kind == FFN_KIND_MOE)
      printRouting(desc, m, x, params, options);
    if (options.digest) {
      // FNV-1a over the output's bytes: equal digests, equal bits.
      uint64_t h = 0xcbf29ce484222325ull;
      for (uint8_t byte : y.bytes)
        h = (h ^ byte) * 0x100000001b3ull;
      llvm::outs() << fmt::format("  output digest {:016x}\n", h);
    }

    if (options.oracle &&
        !judgeAgainstOracle(desc, m, x, y, yOracle, params, options))
      status = 1;
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
  llvm::SmallString<128> library(dir), oracleLibrary;
  llvm::sys::path::append(library, "kernels.so");
  // The oracle's kernels: a second library in the same directory, removed
  // with it on every path.
  if (options.oracle) {
    oracleLibrary = dir;
    llvm::sys::path::append(oracleLibrary, "oracle.so");
  }
  int status = 0;
  if (llvm::Error err = buildSharedLibrary(specs, sourceMgr, options.target,
                                           options.schedule, library))
    status = reportError(std::move(err));
  if (status == 0 && options.oracle) {
    if (llvm::Error err =
            buildSharedLibrary(specs, sourceMgr, options.target,
                               options.oracleSchedule, oracleLibrary)) {
      status = reportError(std::move(err));
      llvm::WithColor::note(llvm::errs(), "ffnc")
          << "while building the --oracle=" << backendName(*options.oracle)
          << " kernels\n";
    }
  }
  if (status == 0) {
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
        status |= runOne(spec, ctx.get(), library, oracleLibrary, options);
    }
  }
  llvm::sys::fs::remove(library);
  if (!oracleLibrary.empty())
    llvm::sys::fs::remove(oracleLibrary);
  llvm::sys::fs::remove(dir);
  return status;
}

int ffnc::runMain(Session &s) {
  TargetInfo target;
  if (std::optional<int> rc = openTarget(opts::targetName, target))
    return *rc;
  // --oracle's own mistakes first: they need no back end to be found.
  const bool oracle = opts::oracleOption.getNumOccurrences() != 0;
  if (opts::oracleRows.getNumOccurrences() && !oracle)
    return fail("--oracle-rows sets how many rows --oracle checks against the "
                "f64 reference: give --oracle=halide");
  if (oracle) {
    if (opts::backendOption.getValue() == opts::oracleOption.getValue())
      return fail("--oracle=" +
                  std::string(backendName(opts::oracleOption.getValue())) +
                  " compares two back ends; the kernel under test is already "
                  "--backend=" +
                  backendName(opts::backendOption.getValue()));
    if (opts::prequantized)
      return fail("--oracle builds kernels with unquantized weights only: "
                  "--prequantized does not apply");
    if (opts::oracleRows < 1)
      return fail("--oracle-rows must be at least 1");
  }
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
  if (oracle) {
    options.oracle = opts::oracleOption.getValue();
    options.oracleRows = opts::oracleRows;
    if (std::optional<int> rc = resolveOracleSchedule(
            s, target, options.schedule, options.oracleSchedule))
      return *rc;
  }
  return runSpecs(s.specs, s.sourceMgr, options);
}
