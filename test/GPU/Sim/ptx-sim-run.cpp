//===- ptx-sim-run.cpp - run one PTX kernel in the interpreter -----------===//
//
// ptx-sim-run [--driver=LIBCUDA --tensor-map=SPEC...] FILE.ptx KERNEL GRID
//             BLOCK WORDS [SHARED]
//
// Gives KERNEL one parameter, a pointer to WORDS 32-bit words holding
// 0, 1, 2, ..., launches it on GRID x 1 x 1 blocks of BLOCK x 1 x 1 threads
// with SHARED bytes of dynamic shared memory, and prints the words in hex
// afterwards, or the interpreter's error (exit status 1). The interpreter's
// own lit tests (test/GPU/ptx-sim.test) use it on hand-written kernels.
//
// Each --tensor-map adds a 128-byte parameter after the pointer: a tensor
// map over the words, encoded by cuTensorMapEncodeTiled of the stand-in
// driver LIBCUDA (which logs the call). SPEC is TYPE:DIMS:STRIDES:BOX:SWIZZLE
// with TYPE u8, u16, u32, f16, bf16 or f32, DIMS and BOX in elements and
// STRIDES in bytes (dimensions 1 and up; "-" for rank 1) written like
// 16x8, and SWIZZLE 0, 32, 64 or 128 (bytes).
//
//===----------------------------------------------------------------------===//

#include "PtxSim.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace {

using EncodeTiled = int (*)(void *, int, uint32_t, void *, const uint64_t *,
                            const uint64_t *, const uint32_t *,
                            const uint32_t *, int, int, int, int);

struct alignas(64) TensorMap {
  unsigned char bytes[128];
};

std::vector<uint64_t> numbers(const std::string &s) {
  std::vector<uint64_t> out;
  if (s == "-")
    return out;
  for (size_t start = 0; start <= s.size();) {
    size_t end = s.find('x', start);
    end = end == std::string::npos ? s.size() : end;
    out.push_back(
        std::strtoull(s.substr(start, end - start).c_str(), nullptr, 10));
    start = end + 1;
  }
  return out;
}

/// The stand-in driver's cuTensorMapEncodeTiled, through the one symbol it
/// exports, as the runtime finds it.
EncodeTiled loadEncoder(const char *driver) {
  void *lib = dlopen(driver, RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return nullptr;
  using GetProc = int (*)(const char *, void **, int, uint64_t, int *);
  auto getProc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  void *fn = nullptr;
  if (!getProc || getProc("cuTensorMapEncodeTiled", &fn, 12000, 0, nullptr))
    return nullptr;
  return reinterpret_cast<EncodeTiled>(fn);
}

/// Encodes SPEC over `base` into `map`; an error message, or empty.
std::string encode(EncodeTiled encoder, const std::string &spec, void *base,
                   TensorMap &map) {
  std::vector<std::string> f;
  for (size_t start = 0; start <= spec.size();) {
    size_t end = spec.find(':', start);
    end = end == std::string::npos ? spec.size() : end;
    f.push_back(spec.substr(start, end - start));
    start = end + 1;
  }
  const char *types[] = {"u8", "u16", "u32", "f16", "f32", "bf16"};
  const int codes[] = {0, 1, 2, 6, 7, 9};
  int type = -1;
  for (int i = 0; i < 6 && f.size() == 5; ++i)
    if (f[0] == types[i])
      type = codes[i];
  if (type < 0)
    return "bad tensor map '" + spec + "'";
  std::vector<uint64_t> dims = numbers(f[1]), strides = numbers(f[2]),
                        box64 = numbers(f[3]);
  std::vector<uint32_t> box(box64.begin(), box64.end()),
      ones(box.size() > 5 ? box.size() : 5, 1);
  unsigned long swizzle = std::strtoul(f[4].c_str(), nullptr, 10);
  int mode = swizzle == 128 ? 3 : swizzle == 64 ? 2 : swizzle == 32 ? 1 : 0;
  if (box.size() != dims.size() || strides.size() + 1 != dims.size())
    return "bad tensor map '" + spec + "'";
  int r = encoder(map.bytes, type, static_cast<uint32_t>(dims.size()), base,
                  dims.data(), strides.data(), box.data(), ones.data(),
                  /*interleave=*/0, mode, /*l2Promotion=*/0, /*oobFill=*/0);
  return r ? "cuTensorMapEncodeTiled failed with " + std::to_string(r) : "";
}

} // namespace

int main(int argc, char **argv) {
  const char *driver = nullptr;
  std::vector<std::string> specs;
  int first = 1;
  for (; first < argc && std::strncmp(argv[first], "--", 2) == 0; ++first) {
    if (std::strncmp(argv[first], "--driver=", 9) == 0)
      driver = argv[first] + 9;
    else if (std::strncmp(argv[first], "--tensor-map=", 13) == 0)
      specs.push_back(argv[first] + 13);
    else
      first = argc; // an unknown option: the usage below
  }
  int positional = argc - first;
  if (positional < 5 || positional > 6 || (!specs.empty() && !driver)) {
    std::fprintf(stderr, "usage: ptx-sim-run [--driver=LIBCUDA "
                         "--tensor-map=SPEC...] FILE.ptx KERNEL GRID BLOCK "
                         "WORDS [SHARED]\n");
    return 2;
  }
  char **args = argv + first;
  if (const char *err = ptxsim_load(args[0])) {
    std::fprintf(stderr, "ptx-sim-run: %s\n", err);
    return 1;
  }
  unsigned grid[3] = {static_cast<unsigned>(std::atoi(args[2])), 1, 1};
  unsigned block[3] = {static_cast<unsigned>(std::atoi(args[3])), 1, 1};
  size_t words = std::strtoul(args[4], nullptr, 10);
  unsigned shared =
      positional > 5 ? static_cast<unsigned>(std::atoi(args[5])) : 0;
  std::vector<uint32_t> buffer(words);
  for (size_t i = 0; i < words; ++i)
    buffer[i] = static_cast<uint32_t>(i);
  ptxsim_track(reinterpret_cast<uint64_t>(buffer.data()), words * 4);
  uint64_t pointer = reinterpret_cast<uint64_t>(buffer.data());
  std::vector<void *> params = {&pointer};
  std::vector<TensorMap> maps(specs.size());
  EncodeTiled encoder = driver ? loadEncoder(driver) : nullptr;
  if (driver && !encoder) {
    std::fprintf(stderr, "ptx-sim-run: no cuTensorMapEncodeTiled in %s\n",
                 driver);
    return 1;
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string err = encode(encoder, specs[i], buffer.data(), maps[i]);
    if (!err.empty()) {
      std::fprintf(stderr, "ptx-sim-run: %s\n", err.c_str());
      return 1;
    }
    params.push_back(maps[i].bytes);
  }
  if (const char *err =
          ptxsim_launch(args[1], grid, block, shared, params.data())) {
    std::fprintf(stderr, "ptx-sim-run: %s\n", err);
    return 1;
  }
  for (size_t i = 0; i < words; ++i)
    std::printf("%08x%c", buffer[i], i % 8 == 7 || i + 1 == words ? '\n' : ' ');
  return 0;
}
