"""Builds the ffnc Python package with the project's CMake build: the _ffnc
extension target (runtime/python/CMakeLists.txt) in ./build (configured as
scripts/build.sh does, for this interpreter, if it is not yet), then the
package, the extension and the two libraries it loads (libffnc_jit.so and
libffn_runtime.so, found beside it through its $ORIGIN run path)."""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("BUILD_DIR", os.path.join(ROOT, "build"))
        if not os.path.exists(os.path.join(build, "build.ninja")):
            subprocess.check_call([
                "cmake", "-G", "Ninja", "-S", ROOT, "-B", build,
                "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_COMPILER=clang-22",
                "-DCMAKE_CXX_COMPILER=clang++-22",
                "-DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir",
                "-DPython3_EXECUTABLE=" + sys.executable])
        subprocess.check_call(["cmake", "--build", build, "--target",
                               "ffnc_python_package"])
        target = os.path.dirname(self.get_ext_fullpath(ext.name))
        os.makedirs(target, exist_ok=True)
        built = glob.glob(os.path.join(build, "python", "ffnc", "_ffnc*.so"))
        if len(built) != 1:
            raise RuntimeError("expected one _ffnc module in %s, found %s"
                               % (build, built))
        shutil.copy2(built[0], self.get_ext_fullpath(ext.name))
        for lib in ("libffnc_jit.so", "libffn_runtime.so"):
            shutil.copy2(os.path.join(build, "lib", lib), target)


setup(
    packages=["ffnc"],
    package_dir={"ffnc": "runtime/python/ffnc"},
    ext_modules=[Extension("ffnc._ffnc", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
