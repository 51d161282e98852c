"""Builds the Python package mha_lab for `pip install .` and `python3 -m build --wheel`
(pyproject.toml holds the metadata; docs/python.md the commands).

The extension mha_lab._core is built by the project's own CMake build (CMakeLists.txt, target
mha_python_core: the C++ layers and cpp/bindings/python/module.cpp) for the Python that runs this
script, in build/pip/<that Python's extension suffix>/, which later builds reuse. The element's
scripts mha-attention.js and mha_wasm_core.js, which ./scripts/build.sh writes to dist/, go into
mha_lab/web/, where show() finds them (view.py _asset_dirs).

With MHA_BUILD_DIR set to an existing CMake build of this tree configured for the same Python
(./scripts/test.sh passes build/native), the module is built there instead, with that build's
settings. CMake options beyond the defaults below come from the environment variable CMAKE_ARGS,
e.g. CMAKE_ARGS="-DMHA_NATIVE_ARCH=OFF" for a wheel that runs on other x86-64 machines than the
one that built it (by default the module is compiled for this machine's CPU, as the native build
is).
"""

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
WEB_ASSETS = ("mha-attention.js", "mha_wasm_core.js")


class CMakeBuildExt(build_ext):
    """Builds mha_lab._core with CMake and copies it to where setuptools packs it."""

    def build_extension(self, ext):
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        build_dir = os.path.join(ROOT, "build", "pip", suffix.strip(".").replace(".", "-"))
        args = [
            "-DCMAKE_BUILD_TYPE=Release",
            "-DMHA_PYTHON=ON",
            "-DMHA_BUILD_TESTS=OFF",
            "-DMHA_WARNINGS_AS_ERRORS=OFF",
            # Compiled for this machine's CPU, as the native build is (the same bits as the CLI's);
            # CMAKE_ARGS="-DMHA_NATIVE_ARCH=OFF" gives a wheel for any x86-64 machine.
            "-DMHA_NATIVE_ARCH=ON",
            f"-DPython3_EXECUTABLE={sys.executable}",
        ]
        try:
            import pybind11

            args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass  # CMake looks for pybind11's config itself (Debian: python3-pybind11)
        args += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        jobs = str(os.cpu_count() or 2)
        existing = os.environ.get("MHA_BUILD_DIR")
        if existing:
            # An existing CMake build of this tree for this Python (./scripts/test.sh passes
            # build/native): only its target is brought up to date, its settings are left alone.
            build_dir = os.path.abspath(existing)
        else:
            subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, *args], check=True)
        subprocess.run(
            ["cmake", "--build", build_dir, "--target", "mha_python_core", "-j", jobs], check=True
        )
        built = os.path.join(build_dir, "python", "mha_lab", "_core" + suffix)
        if not os.path.isfile(built):
            raise SystemExit(f"setup.py: the CMake build did not write {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


class BuildPyWithWeb(build_py):
    """The package's Python files, and the element's scripts from dist/ in mha_lab/web/."""

    def run(self):
        # The package is assembled afresh each time: a file left from an earlier build (a module
        # since removed) must not ship in this wheel.
        shutil.rmtree(os.path.join(self.build_lib, "mha_lab"), ignore_errors=True)
        super().run()
        missing = [n for n in WEB_ASSETS if not os.path.isfile(os.path.join(ROOT, "dist", n))]
        if missing:
            raise SystemExit(
                f"setup.py: dist/ lacks {', '.join(missing)}, which show() needs: "
                "run ./scripts/build.sh first (it writes dist/), then build the package again"
            )
        web = os.path.join(self.build_lib, "mha_lab", "web")
        os.makedirs(web, exist_ok=True)
        for name in WEB_ASSETS:
            shutil.copyfile(os.path.join(ROOT, "dist", name), os.path.join(web, name))


setup(
    ext_modules=[Extension("mha_lab._core", sources=[])],
    cmdclass={"build_ext": CMakeBuildExt, "build_py": BuildPyWithWeb},
    # setuptools' own build folders inside build/pip/, not beside the project's builds in build/.
    options={"build": {"build_base": os.path.join("build", "pip", "setuptools")}},
)
