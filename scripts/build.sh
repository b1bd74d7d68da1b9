#!/usr/bin/env bash
# Configures (once) and builds ffnc into ./build with clang-22 and Ninja.
# Re-running only rebuilds what changed. BUILD_DIR and JOBS override the
# defaults (./build, all cores).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release -DFFNC_HALIDE=ON \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
cmake --build "$BUILD_DIR" -j "$JOBS"
