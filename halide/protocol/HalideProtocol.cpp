//===- HalideProtocol.cpp - the request's text and its pipelines ----------===//
//
// Compiled into ffnc (-fno-exceptions, LLVM 22 around it) and into
// ffnc-halide-gen (Halide 14): standard C++17 only, no exceptions thrown or
// caught, numbers parsed with strtoll/strtod (std::stoll throws).
//
//===----------------------------------------------------------------------===//

#include "HalideProtocol.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

namespace ffnc::halide {

namespace {

// The value sets the request may name. The parser refuses anything else,
// so the generator never meets an activation or dtype it does not build.
const char *const kDtypes[] = {"f32", "bf16", "f16"};
const char *const kActivations[] = {"relu", "gelu",    "gelu_tanh",
                                    "silu", "sigmoid", "identity"};
const char *const kNorms[] = {"none", "layernorm", "rmsnorm"};
const char *const kPositions[] = {"pre", "post"};
const char *const kModes[] = {"strategy", "auto"};
const char *const kAutoschedulers[] = {"adams2019", "li2018", "mullapudi2016"};
const char *const kTestBugs[] = {"drop-last-k-after-row-0", "bias-shift"};

template <size_t N>
bool oneOf(const std::string &v, const char *const (&set)[N]) {
  for (const char *s : set)
    if (v == s)
      return true;
  return false;
}

template <size_t N> std::string listOf(const char *const (&set)[N]) {
  std::string out;
  for (const char *s : set)
    out += (out.empty() ? "" : ", ") + std::string(s);
  return out;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

PipelineArg buffer(const char *name, const std::string &type, int dims) {
  return PipelineArg{name, true, type, dims};
}
PipelineArg scalar(const char *name) {
  return PipelineArg{name, false, "i32", 0};
}

bool isIdentifier(const std::string &s) {
  if (s.empty() ||
      !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

/// The request's text says "none" for an empty string (no autoscheduler,
/// no test bug): a line always has a key and a value.
std::string orNone(const std::string &s) { return s.empty() ? "none" : s; }

std::string argText(const PipelineArg &a) {
  return a.name + ":" + a.type + ":" + std::to_string(a.dims);
}

} // namespace

const char *roleName(Role role) {
  switch (role) {
  case Role::NormIn:
    return "norm_in";
  case Role::Up:
    return "up";
  case Role::Down:
    return "down";
  case Role::NormOut:
    return "norm_out";
  case Role::PackUp:
    return "pack_w_up";
  case Role::PackGate:
    return "pack_w_gate";
  case Role::PackDown:
    return "pack_w_down";
  case Role::Whole:
    return "whole";
  }
  return "?";
}

std::vector<PipelineSpec> pipelinesOf(const HalideKernel &k) {
  const std::string &t = k.dtype;
  const bool layer = k.norm == "layernorm";
  std::vector<PipelineSpec> out;
  auto add = [&](Role role, UnitKind unit, std::vector<PipelineArg> args) {
    PipelineSpec p;
    p.symbol = "__ffnh_" + k.name + "_" + roleName(role);
    p.role = role;
    p.unit = unit;
    p.args = std::move(args);
    out.push_back(std::move(p));
  };

  if (k.autoMode()) {
    std::vector<PipelineArg> args = {buffer("x", t, 2), buffer("w_up", t, 2)};
    if (k.gated)
      args.push_back(buffer("w_gate", t, 2));
    args.push_back(buffer("w_down", t, 2));
    if (k.biasUp)
      args.push_back(buffer("b_up", t, 1));
    if (k.gated && k.biasGate)
      args.push_back(buffer("b_gate", t, 1));
    if (k.biasDown)
      args.push_back(buffer("b_down", t, 1));
    if (k.norm != "none")
      args.push_back(buffer("norm_scale", t, 1));
    if (layer)
      args.push_back(buffer("norm_shift", t, 1));
    args.push_back(buffer("y", t, 2));
    add(Role::Whole, UnitKind::Whole, std::move(args));
    return out;
  }

  auto normArgs = [&](PipelineArg in, PipelineArg result) {
    std::vector<PipelineArg> args = {std::move(in), buffer("norm_scale", t, 1)};
    if (layer)
      args.push_back(buffer("norm_shift", t, 1));
    args.push_back(std::move(result));
    return args;
  };
  if (k.preNorm())
    add(Role::NormIn, UnitKind::Rows,
        normArgs(buffer("x", t, 2), buffer("a", "f32", 2)));

  std::vector<PipelineArg> up = {
      scalar("p0"), k.preNorm() ? buffer("a", "f32", 2) : buffer("x", t, 2),
      buffer("w_up", t, 3)};
  if (k.gated)
    up.push_back(buffer("w_gate", t, 3));
  if (k.biasUp)
    up.push_back(buffer("b_up", t, 1));
  if (k.gated && k.biasGate)
    up.push_back(buffer("b_gate", t, 1));
  up.push_back(buffer("h", "f32", 2));
  add(Role::Up, UnitKind::Panels, std::move(up));

  std::vector<PipelineArg> down = {scalar("p0"), buffer("h", "f32", 2),
                                   buffer("w_down", t, 3)};
  if (k.biasDown)
    down.push_back(buffer("b_down", t, 1));
  if (k.residual)
    down.push_back(buffer("x", t, 2));
  down.push_back(k.postNorm() ? buffer("o", "f32", 2) : buffer("y", t, 2));
  add(Role::Down, UnitKind::Panels, std::move(down));

  if (k.postNorm())
    add(Role::NormOut, UnitKind::Rows,
        normArgs(buffer("o", "f32", 2), buffer("y", t, 2)));

  add(Role::PackUp, UnitKind::Pack, {buffer("w", t, 2), buffer("p", t, 3)});
  if (k.gated)
    add(Role::PackGate, UnitKind::Pack, {buffer("w", t, 2), buffer("p", t, 3)});
  add(Role::PackDown, UnitKind::Pack, {buffer("w", t, 2), buffer("p", t, 3)});
  return out;
}

HalideLayout layoutOf(const HalideKernel &k) {
  HalideLayout l;
  const Schedule &s = k.schedule;
  if (k.autoMode() || s.upPanel <= 0 || s.downPanel <= 0)
    return l;
  l.npUp = ceilDiv(k.dFf, s.upPanel);
  l.npDown = ceilDiv(k.dModel, s.downPanel);
  l.aStride = k.preNorm() ? roundUp(k.dModel, 16) : 0;
  // Up writes whole panels (its loops have no column tail), so H has room
  // for npUp panels even where d_ff ends inside the last one; Down, before
  // a post-norm, likewise writes whole panels into O.
  l.hStride = roundUp(l.npUp * s.upPanel, 16);
  l.oStride = k.postNorm() ? roundUp(l.npDown * s.downPanel, 16) : 0;
  l.workspacePerRow = 4 * (l.aStride + l.hStride + l.oStride);
  return l;
}

std::string halideTargetFor(std::string_view isa) {
  // ffnc's CPU rows (ffn/cpu_targets.def) as Halide features, never more
  // than the row has: Halide's avx512_cannonlake/sapphirerapids add IFMA,
  // VBMI and BF16 dot products that Cooper Lake (an x86-64-avx512-bf16
  // CPU) lacks, and v1 uses no bf16 dot product, so both AVX-512 rows get
  // the Skylake subset (F, CD, BW, DQ, VL).
  const char *const suffix = "-no_runtime-large_buffers-disable_llvm_loop_opt";
  const std::string avx2 = "x86-64-linux-sse41-avx-avx2-fma-f16c";
  if (isa == "x86-64-avx2")
    return avx2 + suffix;
  if (isa == "x86-64-avx512" || isa == "x86-64-avx512-bf16")
    return avx2 + "-avx512-avx512_skylake" + suffix;
  return "";
}

std::string HalideRequest::print() const {
  std::string out;
  auto line = [&](const std::string &indent, const char *key,
                  const std::string &value) {
    out += indent + key + " " + value + "\n";
  };
  auto num = [](int64_t v) { return std::to_string(v); };
  auto flag = [](bool v) { return std::string(v ? "1" : "0"); };
  line("", "protocol", num(protocol));
  line("", "target", target);
  for (const HalideKernel &k : kernels) {
    const Schedule &s = k.schedule;
    const std::string in = "  ";
    line("", "kernel", k.name);
    line(in, "d_model", num(k.dModel));
    line(in, "d_ff", num(k.dFf));
    line(in, "dtype", k.dtype);
    line(in, "activation", k.activation);
    line(in, "gated", flag(k.gated));
    line(in, "bias_up", flag(k.biasUp));
    line(in, "bias_gate", flag(k.biasGate));
    line(in, "bias_down", flag(k.biasDown));
    line(in, "residual", flag(k.residual));
    line(in, "norm", k.norm);
    line(in, "norm_position", k.normPosition);
    char eps[64];
    std::snprintf(eps, sizeof eps, "%.17g", k.eps);
    line(in, "eps", eps);
    line(in, "batch_invariant", flag(k.batchInvariant));
    line(in, "test_bug", orNone(k.testBug));
    line(in, "mode", s.mode);
    line(in, "lanes", num(s.lanes));
    line(in, "mr", num(s.mr));
    line(in, "up_panel", num(s.upPanel));
    line(in, "down_panel", num(s.downPanel));
    line(in, "mc", num(s.mc));
    line(in, "prefetch", flag(s.prefetch));
    line(in, "autoscheduler", orNone(s.autoscheduler));
    line(in, "parallelism", num(s.parallelism));
    line(in, "m_estimate", num(s.mEstimate));
    for (const PipelineSpec &p : pipelinesOf(k)) {
      std::string text = p.symbol;
      for (const PipelineArg &a : p.args)
        text += " " + argText(a);
      line(in, "pipeline", text);
    }
    out += "end\n";
  }
  return out;
}

namespace {

/// One `key value...` record of the request.
struct Record {
  int line = 0;
  std::string key;
  std::vector<std::string> values;
};

std::vector<Record> records(std::string_view text) {
  std::vector<Record> out;
  int number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos)
      eol = text.size();
    std::string_view l = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++number;
    Record r;
    r.line = number;
    size_t i = 0;
    std::vector<std::string> words;
    while (i < l.size()) {
      while (i < l.size() && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r'))
        ++i;
      size_t start = i;
      while (i < l.size() && l[i] != ' ' && l[i] != '\t' && l[i] != '\r')
        ++i;
      if (i > start)
        words.emplace_back(l.substr(start, i - start));
    }
    // Blank lines and `#` comments are for people writing requests by hand
    // (the tests do).
    if (words.empty() || words[0][0] == '#')
      continue;
    r.key = words[0];
    r.values.assign(words.begin() + 1, words.end());
    out.push_back(std::move(r));
  }
  return out;
}

/// Parses requests into HalideRequest, stopping at the first error.
class Parser {
public:
  Parser(HalideRequest &out, std::string &error) : out(out), error(error) {}

  bool run(std::string_view text) {
    std::vector<Record> rs = records(text);
    size_t i = 0;
    int lastLine = 0;
    for (const Record &r : rs)
      lastLine = r.line;
    if (rs.empty())
      return fail(1, "empty request (expected 'protocol " +
                         std::to_string(kProtocolVersion) + "')");
    // protocol, then target, then kernels: the version decides how the
    // rest is read, so it comes first.
    const Record &p = rs[i++];
    if (p.key != "protocol")
      return fail(p.line, "expected 'protocol', got '" + p.key + "'");
    int64_t version = 0;
    if (!oneValue(p) || !integer(p, p.values[0], version))
      return false;
    if (version != kProtocolVersion)
      return fail(p.line, "protocol " + p.values[0] +
                              ", but this build speaks protocol " +
                              std::to_string(kProtocolVersion));
    out.protocol = static_cast<int>(version);
    if (i == rs.size() || rs[i].key != "target")
      return fail(i == rs.size() ? lastLine + 1 : rs[i].line,
                  "expected 'target' after 'protocol'");
    const Record &t = rs[i++];
    // An empty target is a target ffnc does not build for Halide.
    if (!oneValue(t))
      return false;
    out.target = t.values[0];

    std::set<std::string> names;
    while (i < rs.size()) {
      const Record &k = rs[i++];
      if (k.key != "kernel")
        return fail(k.line, "expected 'kernel', got '" + k.key + "'");
      if (!oneValue(k))
        return false;
      if (!isIdentifier(k.values[0]))
        return fail(k.line,
                    "kernel name '" + k.values[0] + "' is not an identifier");
      if (!names.insert(k.values[0]).second)
        return fail(k.line, "kernel '" + k.values[0] + "' appears twice");
      HalideKernel kernel;
      kernel.name = k.values[0];
      std::vector<PipelineSpec> declared;
      std::vector<int> declaredLines;
      if (!kernelBody(rs, i, k.line, lastLine, kernel, declared, declaredLines))
        return false;
      out.kernels.push_back(std::move(kernel));
      out.declared.push_back(std::move(declared));
    }
    return true;
  }

private:
  HalideRequest &out;
  std::string &error;

  bool fail(int line, const std::string &what) {
    error = "request line " + std::to_string(line) + ": " + what;
    return false;
  }

  bool oneValue(const Record &r) {
    if (r.values.size() == 1)
      return true;
    return fail(r.line, "'" + r.key + "' takes one value, got " +
                            std::to_string(r.values.size()));
  }

  bool integer(const Record &r, const std::string &s, int64_t &v) {
    errno = 0;
    char *end = nullptr;
    long long parsed = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || errno == ERANGE || s[0] == '+' ||
        std::isspace(static_cast<unsigned char>(s[0])))
      return fail(r.line, "'" + r.key + "': '" + s + "' is not an integer");
    v = parsed;
    return true;
  }

  bool positive(const Record &r, int64_t &v, int64_t max) {
    if (!oneValue(r) || !integer(r, r.values[0], v))
      return false;
    if (v < 1 || v > max)
      return fail(r.line, "'" + r.key + "' must be in [1, " +
                              std::to_string(max) + "], got " + r.values[0]);
    return true;
  }

  bool boolean(const Record &r, bool &v) {
    if (!oneValue(r))
      return false;
    if (r.values[0] != "0" && r.values[0] != "1")
      return fail(r.line,
                  "'" + r.key + "' must be 0 or 1, got '" + r.values[0] + "'");
    v = r.values[0] == "1";
    return true;
  }

  template <size_t N>
  bool word(const Record &r, std::string &v, const char *const (&set)[N],
            bool noneIsEmpty = false) {
    if (!oneValue(r))
      return false;
    v = r.values[0];
    if (noneIsEmpty && v == "none") {
      v.clear();
      return true;
    }
    if (!oneOf(v, set))
      return fail(r.line, "'" + r.key + "' must be one of " + listOf(set) +
                              (noneIsEmpty ? ", none" : "") + ", got '" + v +
                              "'");
    return true;
  }

  bool real(const Record &r, double &v) {
    if (!oneValue(r))
      return false;
    const std::string &s = r.values[0];
    errno = 0;
    char *end = nullptr;
    v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v) ||
        v < 0)
      return fail(r.line,
                  "'" + r.key + "': '" + s + "' is not a finite number >= 0");
    return true;
  }

  bool pipeline(const Record &r, const HalideKernel &k, PipelineSpec &p) {
    if (r.values.size() < 2)
      return fail(r.line, "'pipeline' takes a symbol and its arguments");
    p.symbol = r.values[0];
    const std::string prefix = "__ffnh_" + k.name + "_";
    bool known = false;
    if (p.symbol.compare(0, prefix.size(), prefix) == 0) {
      std::string role = p.symbol.substr(prefix.size());
      const Role roles[] = {Role::NormIn,   Role::Up,     Role::Down,
                            Role::NormOut,  Role::PackUp, Role::PackGate,
                            Role::PackDown, Role::Whole};
      for (Role candidate : roles)
        if (role == roleName(candidate)) {
          p.role = candidate;
          known = true;
        }
    }
    if (!known)
      return fail(r.line, "pipeline symbol '" + p.symbol + "' is not __ffnh_" +
                              k.name +
                              "_<norm_in|up|down|norm_out|pack_w_up|"
                              "pack_w_gate|pack_w_down|whole>");
    switch (p.role) {
    case Role::NormIn:
    case Role::NormOut:
      p.unit = UnitKind::Rows;
      break;
    case Role::Up:
    case Role::Down:
      p.unit = UnitKind::Panels;
      break;
    case Role::Whole:
      p.unit = UnitKind::Whole;
      break;
    default:
      p.unit = UnitKind::Pack;
      break;
    }
    for (size_t i = 1; i < r.values.size(); ++i) {
      const std::string &v = r.values[i];
      size_t c1 = v.find(':'), c2 = v.rfind(':');
      if (c1 == std::string::npos || c1 == c2)
        return fail(r.line, "pipeline argument '" + v +
                                "' is not <name>:<type>:<dims>");
      PipelineArg a;
      a.name = v.substr(0, c1);
      a.type = v.substr(c1 + 1, c2 - c1 - 1);
      a.isBuffer = a.type != "i32";
      int64_t dims = 0;
      if (!integer(r, v.substr(c2 + 1), dims))
        return false;
      a.dims = static_cast<int>(dims);
      if (a.name.empty() || (a.isBuffer && !oneOf(a.type, kDtypes)) ||
          (a.isBuffer ? dims < 1 || dims > 4 : dims != 0))
        return fail(r.line, "pipeline argument '" + v +
                                "' is not <name>:<f32|bf16|f16>:<1-4> or "
                                "<name>:i32:0");
      p.args.push_back(std::move(a));
    }
    return true;
  }

  /// The records of one kernel after its `kernel` line, up to `end`.
  bool kernelBody(const std::vector<Record> &rs, size_t &i, int kernelLine,
                  int lastLine, HalideKernel &k,
                  std::vector<PipelineSpec> &declared,
                  std::vector<int> &declaredLines) {
    Schedule &s = k.schedule;
    std::map<std::string, int> seen;
    const char *const required[] = {"d_model",
                                    "d_ff",
                                    "dtype",
                                    "activation",
                                    "gated",
                                    "bias_up",
                                    "bias_gate",
                                    "bias_down",
                                    "residual",
                                    "norm",
                                    "norm_position",
                                    "eps",
                                    "batch_invariant",
                                    "test_bug",
                                    "mode",
                                    "lanes",
                                    "mr",
                                    "up_panel",
                                    "down_panel",
                                    "mc",
                                    "prefetch",
                                    "autoscheduler",
                                    "parallelism",
                                    "m_estimate"};
    // Sizes beyond these are not FFNs ffnc builds; they keep products such
    // as d_model * up_panel far from overflow.
    constexpr int64_t kMaxDim = int64_t(1) << 24;
    constexpr int64_t kMaxRows = int64_t(1) << 30;
    while (true) {
      if (i == rs.size())
        return fail(lastLine + 1, "kernel '" + k.name + "' (line " +
                                      std::to_string(kernelLine) +
                                      ") has no 'end'");
      const Record &r = rs[i++];
      if (r.key == "end") {
        if (!r.values.empty())
          return fail(r.line, "'end' takes no value");
        for (const char *key : required)
          if (!seen.count(key))
            return fail(r.line, "kernel '" + k.name + "' has no '" + key + "'");
        return check(k, r.line) &&
               checkPipelines(k, declared, declaredLines, r.line);
      }
      if (r.key == "pipeline") {
        PipelineSpec p;
        if (!pipeline(r, k, p))
          return false;
        declared.push_back(std::move(p));
        declaredLines.push_back(r.line);
        continue;
      }
      if (r.key == "kernel" || r.key == "protocol" || r.key == "target")
        return fail(r.line, "'" + r.key + "' inside kernel '" + k.name +
                                "' (no 'end' before it)");
      auto [at, fresh] = seen.emplace(r.key, r.line);
      if (!fresh)
        return fail(r.line, "'" + r.key + "' given twice (first on line " +
                                std::to_string(at->second) + ")");
      bool ok = true;
      if (r.key == "d_model")
        ok = positive(r, k.dModel, kMaxDim);
      else if (r.key == "d_ff")
        ok = positive(r, k.dFf, kMaxDim);
      else if (r.key == "dtype")
        ok = word(r, k.dtype, kDtypes);
      else if (r.key == "activation")
        ok = word(r, k.activation, kActivations);
      else if (r.key == "gated")
        ok = boolean(r, k.gated);
      else if (r.key == "bias_up")
        ok = boolean(r, k.biasUp);
      else if (r.key == "bias_gate")
        ok = boolean(r, k.biasGate);
      else if (r.key == "bias_down")
        ok = boolean(r, k.biasDown);
      else if (r.key == "residual")
        ok = boolean(r, k.residual);
      else if (r.key == "norm")
        ok = word(r, k.norm, kNorms);
      else if (r.key == "norm_position")
        ok = word(r, k.normPosition, kPositions);
      else if (r.key == "eps")
        ok = real(r, k.eps);
      else if (r.key == "batch_invariant")
        ok = boolean(r, k.batchInvariant);
      else if (r.key == "test_bug")
        ok = word(r, k.testBug, kTestBugs, /*noneIsEmpty=*/true);
      else if (r.key == "mode")
        ok = word(r, s.mode, kModes);
      else if (r.key == "lanes")
        ok = positive(r, s.lanes, 64);
      else if (r.key == "mr")
        ok = positive(r, s.mr, 64);
      else if (r.key == "up_panel")
        ok = positive(r, s.upPanel, 4096);
      else if (r.key == "down_panel")
        ok = positive(r, s.downPanel, 4096);
      else if (r.key == "mc")
        ok = positive(r, s.mc, kMaxRows);
      else if (r.key == "prefetch")
        ok = boolean(r, s.prefetch);
      else if (r.key == "autoscheduler")
        ok = word(r, s.autoscheduler, kAutoschedulers, /*noneIsEmpty=*/true);
      else if (r.key == "parallelism")
        ok = positive(r, s.parallelism, 4096);
      else if (r.key == "m_estimate")
        ok = positive(r, s.mEstimate, kMaxRows);
      else
        return fail(r.line,
                    "unknown key '" + r.key + "' in kernel '" + k.name + "'");
      if (!ok)
        return false;
    }
  }

  /// What no single field can say: fields that contradict each other.
  bool check(const HalideKernel &k, int line) {
    const Schedule &s = k.schedule;
    auto bad = [&](const std::string &what) {
      return fail(line, "kernel '" + k.name + "': " + what);
    };
    if (k.biasGate && !k.gated)
      return bad("bias_gate 1 without a gate");
    if (k.norm != "none" && !(k.eps > 0))
      return bad("a norm needs eps > 0");
    if (k.autoMode() != !s.autoscheduler.empty())
      return bad(k.autoMode() ? "mode auto needs an autoscheduler"
                              : "mode strategy takes autoscheduler none");
    if (s.lanes & (s.lanes - 1))
      return bad("lanes must be a power of two, got " +
                 std::to_string(s.lanes));
    // Each panel is a whole number of vectors.
    if (s.upPanel % s.lanes || s.downPanel % s.lanes)
      return bad("up_panel and down_panel must be multiples of lanes (" +
                 std::to_string(s.lanes) + "), got " +
                 std::to_string(s.upPanel) + " and " +
                 std::to_string(s.downPanel));
    return true;
  }

  /// The generator builds the pipelines pipelinesOf() derives; a request
  /// that declares others was written by a different protocol's ffnc.
  bool checkPipelines(const HalideKernel &k,
                      const std::vector<PipelineSpec> &declared,
                      const std::vector<int> &lines, int endLine) {
    std::vector<PipelineSpec> derived = pipelinesOf(k);
    auto text = [](const PipelineSpec &p) {
      std::string t = p.symbol;
      for (const PipelineArg &a : p.args)
        t += " " + argText(a);
      return t;
    };
    for (size_t j = 0; j < derived.size() || j < declared.size(); ++j) {
      if (j < derived.size() && j < declared.size() &&
          declared[j].symbol == derived[j].symbol &&
          declared[j].args == derived[j].args)
        continue;
      int line = j < declared.size() ? lines[j] : endLine;
      std::string want = j < derived.size()
                             ? "'pipeline " + text(derived[j]) + "'"
                             : "no further pipeline";
      std::string got = j < declared.size()
                            ? "'pipeline " + text(declared[j]) + "'"
                            : "'end'";
      return fail(line, "kernel '" + k.name + "': expected " + want +
                            " (protocol " + std::to_string(kProtocolVersion) +
                            "), got " + got);
    }
    return true;
  }
};

} // namespace

bool HalideRequest::parse(std::string_view text, HalideRequest &out,
                          std::string &error) {
  out = HalideRequest();
  out.kernels.clear();
  Parser parser(out, error);
  return parser.run(text);
}

} // namespace ffnc::halide
