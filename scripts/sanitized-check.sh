#!/usr/bin/env bash
# Builds ffnc and ffn-opt with AddressSanitizer + UBSan into ./build-asan
# (FFNC_SANITIZE=ON) and runs the compiler's lit suites with them: every bad
# input the driver tests throw at ffnc (hostile-input, strategy-errors,
# cli-errors, the front end's negative tests, ...) must end without a
# sanitizer report; Target/GPU's lowering tests build every kind of GPU
# kernel in ffn-opt (a dangling strategy reference in ffn-gpu-lower went
# unseen until a Driver test lowered one). The runtime's own tests run
# under the sanitizers in the main suite (Runtime/, Fuzz/). Ends with "N
# passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build-asan}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DFFNC_SANITIZE=ON -DFFNC_ENABLE_FUZZER=OFF >/dev/null || exit 1
fi
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" --target ffnc ffn-opt ffn-doc \
  || exit 1
BUILD_DIR="$BUILD_DIR" bash scripts/test.sh Driver Frontend MLIRGen Dialect \
  Transforms Conversion Target/CPU Target/GPU Pipelines
