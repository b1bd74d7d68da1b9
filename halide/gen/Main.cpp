//===- Main.cpp - ffnc-halide-gen, the Halide back end's generator --------===//
//
//   ffnc-halide-gen --request=R --out-dir=D [--stmt]
//       Builds every pipeline of every kernel of request R (HalideProtocol.h)
//       into D/<symbol>.o and writes D/manifest.txt: `object <path>` per
//       object, then `runtime <path>` (the standalone Halide runtime all
//       objects share). --stmt also writes D/<symbol>.stmt (and, for an
//       autoscheduled pipeline, D/<symbol>.schedule.h).
//   ffnc-halide-gen --runtime=PATH     the standalone runtime (at build time)
//   ffnc-halide-gen --version          one line: protocol, Halide, plugins
//   ffnc-halide-gen --self-test        numerics against the f64 reference
//
// Exit status: 0 success; 1 usage error or a request the parser refuses
// (first stderr line `ffnc-halide-gen: request line N: ...`); 2 Halide
// refused to compile a pipeline (`ffnc-halide-gen: kernel 'K': <message>`);
// 3 an autoscheduler's plugin is missing.
//
//===----------------------------------------------------------------------===//

#include "HalideProtocol.h"
#include "Pipelines.h"
#include "Schedules.h"
#include "SelfTest.h"

#include "ffn/Target/Halide/HalideBufferLayout.h"

#include "Halide.h"

#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

// ffnc's stub fills halide_buffer_t through these offsets (it cannot
// include HalideRuntime.h); this is the one place that sees both, so a
// stale offset stops the build instead of corrupting a kernel's call.
namespace layout = ffnc::halide;
static_assert(sizeof(halide_buffer_t) == layout::kBufferBytes, "size");
static_assert(alignof(halide_buffer_t) == layout::kBufferAlignment, "align");
static_assert(offsetof(halide_buffer_t, device) == layout::kBufferDevice,
              "device");
static_assert(offsetof(halide_buffer_t, device_interface) ==
                  layout::kBufferDeviceInterface,
              "device_interface");
static_assert(offsetof(halide_buffer_t, host) == layout::kBufferHost, "host");
static_assert(offsetof(halide_buffer_t, flags) == layout::kBufferFlags,
              "flags");
static_assert(offsetof(halide_buffer_t, type) == layout::kBufferType, "type");
static_assert(offsetof(halide_buffer_t, dimensions) ==
                  layout::kBufferDimensions,
              "dimensions");
static_assert(offsetof(halide_buffer_t, dim) == layout::kBufferDim, "dim");
static_assert(offsetof(halide_buffer_t, padding) == layout::kBufferPadding,
              "padding");
static_assert(sizeof(halide_dimension_t) == layout::kDimensionBytes,
              "dimension size");
static_assert(offsetof(halide_dimension_t, min) == layout::kDimensionMin,
              "dimension min");
static_assert(offsetof(halide_dimension_t, extent) == layout::kDimensionExtent,
              "dimension extent");
static_assert(offsetof(halide_dimension_t, stride) == layout::kDimensionStride,
              "dimension stride");
static_assert(offsetof(halide_dimension_t, flags) == layout::kDimensionFlags,
              "dimension flags");
// The type word: {u8 code, u8 bits, u16 lanes}, little-endian.
static_assert(sizeof(halide_type_t) == 4 &&
                  offsetof(halide_type_t, code) == 0 &&
                  offsetof(halide_type_t, bits) == 1 &&
                  offsetof(halide_type_t, lanes) == 2,
              "halide_type_t");
static constexpr int typeCode(int c) { return c; }
static_assert(typeCode(halide_type_int) == layout::kTypeInt &&
                  typeCode(halide_type_uint) == layout::kTypeUInt &&
                  typeCode(halide_type_float) == layout::kTypeFloat &&
                  typeCode(halide_type_handle) == layout::kTypeHandle &&
                  typeCode(halide_type_bfloat) == layout::kTypeBFloat,
              "halide_type_code_t");

using namespace ffnc::halide;

namespace {

constexpr const char *kTool = "ffnc-halide-gen";

int usage(const std::string &what) {
  std::cerr << kTool << ": " << what << "\n"
            << "usage: " << kTool << " --request=FILE --out-dir=DIR [--stmt]\n"
            << "       " << kTool << " --runtime=FILE\n"
            << "       " << kTool << " --version | --self-test\n";
  return 1;
}

/// Halide's messages span lines ("Error:\n..."): one line for ffnc's
/// diagnostic, which quotes the first line of our stderr.
std::string oneLine(const std::string &text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string executableDir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return ".";
  std::string path(buf, static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// The absolute, canonical form of an existing path; "" if it does not
/// exist.
std::string canonical(const std::string &path) {
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf))
    return "";
  return buf;
}

bool readFile(const std::string &path, std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream s;
  s << in.rdbuf();
  text = s.str();
  return true;
}

int version() {
  std::cout << kTool << " protocol " << kProtocolVersion << ", Halide "
            << FFNC_HALIDE_VERSION << " (LLVM " << FFNC_HALIDE_LLVM_MAJOR
            << "); autoschedulers:";
  std::vector<std::string> names = availableAutoschedulers();
  for (const std::string &n : names)
    std::cout << " " << n;
  if (names.empty())
    std::cout << " none";
  std::cout << "\n";
  return 0;
}

int writeRuntime(const std::string &path) {
  try {
    // No ISA features: the runtime runs wherever the kernels do.
    Halide::compile_standalone_runtime(path, Halide::Target("x86-64-linux"));
  } catch (const Halide::Error &e) {
    std::cerr << kTool << ": runtime: " << oneLine(e.what()) << "\n";
    return 2;
  }
  return 0;
}

/// Compiles the pipelines of one kernel into `dir`, appending the objects'
/// paths; returns the exit status.
int compileKernel(const HalideKernel &k, const Halide::Target &target,
                  const std::string &dir, bool stmt,
                  std::vector<std::string> &objects) {
  if (k.autoMode()) {
    std::string error;
    if (!loadAutoscheduler(k.schedule.autoscheduler, error)) {
      std::cerr << kTool << ": kernel '" << k.name << "': " << error << "\n";
      return 3;
    }
  }
  try {
    for (const PipelineSpec &spec : pipelinesOf(k)) {
      BuiltPipeline p = buildPipeline(k, spec);
      std::string schedule = schedulePipeline(p, k, target);
      std::string base = dir + "/" + spec.symbol;
      std::map<Halide::OutputFileType, std::string> outputs = {
          {Halide::OutputFileType::object, base + ".o"}};
      if (stmt)
        outputs[Halide::OutputFileType::stmt] = base + ".stmt";
      p.output.compile_to(outputs, p.args, spec.symbol, target);
      if (stmt && !schedule.empty())
        std::ofstream(base + ".schedule.h") << schedule;
      objects.push_back(base + ".o");
    }
  } catch (const Halide::Error &e) {
    std::cerr << kTool << ": kernel '" << k.name << "': " << oneLine(e.what())
              << "\n";
    return 2;
  }
  return 0;
}

int generate(const std::string &requestPath, const std::string &outDir,
             bool stmt) {
  std::string text, error;
  if (!readFile(requestPath, text))
    return usage("cannot read request '" + requestPath + "'");
  HalideRequest request;
  if (!HalideRequest::parse(text, request, error)) {
    std::cerr << kTool << ": " << error << "\n";
    return 1;
  }
  // parse() already refuses both; a generator trusts nothing the request
  // declares that it derives itself (protocol skew).
  if (request.protocol != kProtocolVersion) {
    std::cerr << kTool << ": request: protocol " << request.protocol
              << ", this generator speaks " << kProtocolVersion << "\n";
    return 1;
  }
  for (size_t i = 0; i < request.kernels.size(); ++i) {
    std::vector<PipelineSpec> derived = pipelinesOf(request.kernels[i]);
    bool same = derived.size() == request.declared[i].size();
    for (size_t j = 0; same && j < derived.size(); ++j)
      same = derived[j].symbol == request.declared[i][j].symbol &&
             derived[j].args == request.declared[i][j].args;
    if (!same) {
      std::cerr << kTool << ": kernel '" << request.kernels[i].name
                << "': the declared pipelines differ from protocol "
                << kProtocolVersion << "'s\n";
      return 1;
    }
  }
  if (request.target.empty() ||
      !Halide::Target::validate_target_string(request.target)) {
    std::cerr << kTool << ": request: target '" << request.target
              << "' is not a Halide target\n";
    return 1;
  }
  Halide::Target target(request.target);

  const std::string runtime =
      canonical(executableDir() + "/../lib/ffnc-halide/halide_runtime.o");
  if (runtime.empty()) {
    std::cerr << kTool << ": no Halide runtime at " << executableDir()
              << "/../lib/ffnc-halide/halide_runtime.o (a broken build: it is "
                 "written when ffnc-halide-gen is built)\n";
    return 1;
  }
  ::mkdir(outDir.c_str(), 0777);
  const std::string dir = canonical(outDir);
  if (dir.empty())
    return usage("cannot create the output directory '" + outDir + "'");
  const std::string manifest = dir + "/manifest.txt";
  // A manifest means success: never leave one from an earlier run.
  ::unlink(manifest.c_str());

  std::vector<std::string> objects;
  for (const HalideKernel &k : request.kernels)
    if (int status = compileKernel(k, target, dir, stmt, objects))
      return status;

  std::string out;
  for (const std::string &o : objects)
    out += "object " + o + "\n";
  out += "runtime " + runtime + "\n";
  std::ofstream file(manifest + ".tmp", std::ios::binary);
  file << out;
  file.close();
  if (!file || ::rename((manifest + ".tmp").c_str(), manifest.c_str()) != 0)
    return usage("cannot write '" + manifest + "'");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string request, outDir, runtime;
  bool stmt = false, showVersion = false, selfTest = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag, std::string &into) {
      std::string prefix = std::string(flag) + "=";
      if (a.compare(0, prefix.size(), prefix) != 0)
        return false;
      into = a.substr(prefix.size());
      return true;
    };
    if (value("--request", request) || value("--out-dir", outDir) ||
        value("--runtime", runtime))
      continue;
    if (a == "--stmt")
      stmt = true;
    else if (a == "--version")
      showVersion = true;
    else if (a == "--self-test")
      selfTest = true;
    else
      return usage("unknown argument '" + a + "'");
  }
  const int modes = showVersion + selfTest + !runtime.empty() +
                    (!request.empty() || !outDir.empty());
  if (modes != 1)
    return usage(modes ? "give one of --request, --runtime, --version, "
                         "--self-test"
                       : "nothing to do");
  if (showVersion)
    return version();
  if (selfTest)
    return runSelfTest();
  if (!runtime.empty())
    return writeRuntime(runtime);
  if (request.empty() || outDir.empty())
    return usage("--request and --out-dir go together");
  return generate(request, outDir, stmt);
}
