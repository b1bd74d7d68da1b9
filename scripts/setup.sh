#!/usr/bin/env bash
# Installs every Debian package ffnc needs. Idempotent: packages already
# present are not touched, and apt-get update runs only when something is
# missing. Needs root (or sudo).
set -euo pipefail

PACKAGES=(
  # LLVM/MLIR 22: libMLIR.so, mlir-tblgen, lit, FileCheck, clang (for
  # libFuzzer and as the project's compiler).
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
  libclang-rt-22-dev
  # Build tools and libraries.
  cmake ninja-build python3 libfmt-dev
  # Halide 14 (the second back end, --backend=halide: ffnc-halide-gen) and
  # oneDNN (benchmark peer). Halide's CMake config refuses to load without
  # the image libraries its helpers link (libpng, zlib, libjpeg), which
  # libhalide14-0-dev does not depend on.
  # Debian's oneDNN CMake config requires OpenCL's headers and library,
  # which libdnnl-dev only recommends (and we install without recommends).
  libhalide14-0-dev libpng-dev zlib1g-dev libjpeg-dev libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
  # The Python package (pybind11 extension, `pip install .` in a venv) and
  # its tests, which compare with PyTorch's modules.
  python3-dev pybind11-dev python3-venv python3-setuptools python3-numpy
  python3-pytest python3-torch
  # A headless browser, to check that `ffnc report`'s page renders.
  chromium
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
