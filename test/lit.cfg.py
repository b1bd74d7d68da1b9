# lit configuration for ffnc: one folder per stage (Frontend, Dialect,
# Driver, Fuzz, ...). Run through `ninja -C build check-ffnc` or
# scripts/test.sh, which configure lit.site.cfg.py first.
import os
import shutil

import lit.formats

config.name = "ffnc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ffn", ".mlir", ".test"]
config.excludes = ["Inputs", "Sim", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ffnc_obj_root, "test")

# Our tools first, then LLVM 22's (FileCheck, not, count, split-file).
path = [config.ffnc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])]
config.environment["PATH"] = os.pathsep.join(path)
# Diagnostics are compared as plain text.
config.environment["TERM"] = "dumb"

config.substitutions.append(("%ffnc_src_root", config.ffnc_src_root))
config.substitutions.append(("%ffnc_obj_root", config.ffnc_obj_root))
config.substitutions.append(("%examples", os.path.join(config.ffnc_src_root, "examples")))
config.substitutions.append(("%python", config.python_executable))

# The front-end fuzzer needs clang's libFuzzer; built when the compiler is clang.
if os.path.exists(os.path.join(config.ffnc_tools_dir, "ffnc-spec-fuzzer")):
    config.available_features.add("fuzzer")
# The Python package is built when pybind11 is installed; its tests also
# need numpy and PyTorch in the interpreter lit runs under.
if os.path.exists(os.path.join(config.ffnc_obj_root, "python", "ffnc", "__init__.py")):
    import importlib.util
    if all(importlib.util.find_spec(m) for m in ("numpy", "torch", "pytest")):
        config.available_features.add("python-ffnc")
# A headless browser for `ffnc report`'s page (scripts/setup.sh installs
# Debian's chromium).
import shutil
if shutil.which("chromium"):
    config.available_features.add("chromium")
# The Halide back end's generator is built when Halide 14 is installed
# (FFNC_HALIDE, cmake/FfncHalide.cmake).
if os.path.exists(os.path.join(config.ffnc_tools_dir, "ffnc-halide-gen")):
    config.available_features.add("halide")
# ffn-bench is built when oneDNN is installed.
if os.path.exists(os.path.join(config.ffnc_tools_dir, "ffn-bench")):
    config.available_features.add("ffn-bench")
# ffn-gpu-bench (ffnc against cuBLASLt on a GPU) is built where the CUDA
# toolkit's nvcc and cublasLt.h are.
if os.path.exists(os.path.join(config.ffnc_tools_dir, "ffn-gpu-bench")):
    config.available_features.add("ffn-gpu-bench")

# A build of ffnc under ASan + UBSan (FFNC_SANITIZE): every sanitizer
# report fails the test; leaks of LLVM's and MLIR's process-lifetime
# singletons are not ffnc's. LLVM's headers, inlined into our instrumented
# code, poison allocator slabs that the uninstrumented libMLIR then uses:
# manual poisoning is off (allow_user_poisoning=0). Address-space limits
# (ulimit -v) and ASan's shadow memory do not mix: such tests say
# UNSUPPORTED: asan.
if getattr(config, "ffnc_sanitized", False):
    config.available_features.add("asan")
    config.environment["ASAN_OPTIONS"] = "detect_leaks=0:allow_user_poisoning=0"
    config.environment["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"

# Which x86 vector ISAs this machine runs: kernels for a target only run
# where the CPU has it.
try:
    with open("/proc/cpuinfo") as f:
        flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
except OSError:
    flags = []
if {"avx2", "fma", "f16c"} <= set(flags):
    config.available_features.add("avx2")
if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= set(flags):
    config.available_features.add("avx512")
    # The x86-64-avx512-bf16 target: AVX-512 BF16 and VNNI.
    if {"avx512_bf16", "avx512_vnni"} <= set(flags):
        config.available_features.add("avx512-bf16")


config.substitutions.append(("%runtime_include", os.path.join(config.ffnc_src_root, "runtime", "include")))
# Every source of the runtime (C API, executors, thread pool), for tests that
# compile it again under a sanitizer.
import glob
config.substitutions.append(("%runtime_sources", " ".join(sorted(
    glob.glob(os.path.join(config.ffnc_src_root, "runtime", "lib", "**", "*.cpp"),
              recursive=True)))))
config.substitutions.append(("%reference_include", os.path.join(config.ffnc_src_root, "runtime", "reference")))
config.substitutions.append(("%ffnc_lib_dir", os.path.join(config.ffnc_obj_root, "lib")))
# The stand-in CUDA driver with the PTX interpreter (test/GPU/Sim).
config.substitutions.append(("%fake_cuda_dir", os.path.join(config.ffnc_obj_root, "lib", "fake-cuda")))
config.substitutions.append(("%cxx", os.path.join(config.llvm_tools_dir, "clang++")))
config.substitutions.append(("%cc", os.path.join(config.llvm_tools_dir, "clang")))
# The two commands that need most of this machine's memory (the example
# mixture of experts' f64 reference, about 16 GiB; ffn-bench, about 7 GiB)
# take this lock, so lit's workers never run them at the same time.
config.substitutions.append(("%big_memory", "flock " + os.path.join(config.ffnc_obj_root, "test", "big-memory.lock")))

# NVIDIA targets. ptxas (from the CUDA toolkit, which setup installs on
# these machines) assembles the generated PTX: the `ptxas` feature. The
# GPU numerics tests need a GPU and its driver: the `cuda-device` feature,
# present when nvidia-smi lists a GPU; elsewhere they report UNSUPPORTED.
cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
ptxas = os.path.join(cuda_home, "bin", "ptxas")
if os.access(ptxas, os.X_OK) and os.path.exists(os.path.join(cuda_home, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    config.substitutions.append(("%cuda_home", cuda_home))
try:
    import subprocess
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    if listed.returncode == 0 and "GPU" in listed.stdout:
        config.available_features.add("cuda-device")
except (OSError, subprocess.SubprocessError):
    pass
