//===- ptx-sim-run.cpp - run one PTX kernel in the interpreter -----------===//
//
// ptx-sim-run FILE.ptx KERNEL GRID BLOCK WORDS [SHARED]
//
// Gives KERNEL one parameter, a pointer to WORDS 32-bit words holding
// 0, 1, 2, ..., launches it on GRID x 1 x 1 blocks of BLOCK x 1 x 1 threads
// with SHARED bytes of dynamic shared memory, and prints the words in hex
// afterwards, or the interpreter's error (exit status 1). The interpreter's
// own lit tests (test/GPU/ptx-sim.test) use it on hand-written kernels.
//
//===----------------------------------------------------------------------===//

#include "PtxSim.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 6 || argc > 7) {
    std::fprintf(stderr, "usage: ptx-sim-run FILE.ptx KERNEL GRID BLOCK WORDS "
                         "[SHARED]\n");
    return 2;
  }
  if (const char *err = ptxsim_load(argv[1])) {
    std::fprintf(stderr, "ptx-sim-run: %s\n", err);
    return 1;
  }
  unsigned grid[3] = {static_cast<unsigned>(std::atoi(argv[3])), 1, 1};
  unsigned block[3] = {static_cast<unsigned>(std::atoi(argv[4])), 1, 1};
  size_t words = std::strtoul(argv[5], nullptr, 10);
  unsigned shared = argc > 6 ? static_cast<unsigned>(std::atoi(argv[6])) : 0;
  std::vector<uint32_t> buffer(words);
  for (size_t i = 0; i < words; ++i)
    buffer[i] = static_cast<uint32_t>(i);
  ptxsim_track(reinterpret_cast<uint64_t>(buffer.data()), words * 4);
  uint64_t pointer = reinterpret_cast<uint64_t>(buffer.data());
  void *params[] = {&pointer};
  if (const char *err = ptxsim_launch(argv[2], grid, block, shared, params)) {
    std::fprintf(stderr, "ptx-sim-run: %s\n", err);
    return 1;
  }
  for (size_t i = 0; i < words; ++i)
    std::printf("%08x%c", buffer[i], i % 8 == 7 || i + 1 == words ? '\n' : ' ');
  return 0;
}
