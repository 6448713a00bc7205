"""Builds the Python package `ltsim` (docs/python.md): setuptools for the Python files, CMake
for the extension module ltsim._ltsim, which links the same static libraries as the `ltsim`
command line.

CMake reuses the build directory $LTSIM_BUILD_DIR (default: build/, the one tools/build.sh
makes), so after tools/build.sh the module is one link away and the CLI and the package share
one build of the libraries; a fresh checkout configures that directory first. Everything comes
from Debian's packages (pybind11-dev, python3-setuptools, python3-wheel), so
`pip install --no-build-isolation --no-index .` works offline.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("LTSIM_BUILD_DIR", ROOT / "build")).resolve()


class CMakeBuild(build_ext):
    """Builds the CMake target ltsim_python_module and copies the module into the wheel."""

    def build_extension(self, ext):
        python = os.path.realpath(sys.executable)
        if not (BUILD / "CMakeCache.txt").exists():
            configure = ["cmake", "-S", str(ROOT), "-B", str(BUILD), "-DCMAKE_BUILD_TYPE=Release",
                         f"-DLTSIM_PYTHON={python}"]
            if shutil.which("ccache"):
                configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            subprocess.check_call(configure)
        jobs = os.environ.get("LTSIM_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", str(BUILD), "--target", "ltsim_python_module",
                               "-j", jobs])
        built = BUILD / "python" / "ltsim" / ("_ltsim" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not built.exists():
            sys.exit(f"setup.py: {built} was not built: {BUILD} is configured for another Python "
                     f"or without pybind11 (see LTSIM_PYTHON in its CMakeCache.txt); set "
                     f"LTSIM_BUILD_DIR to a fresh directory")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


# setuptools' own build files go under the CMake build directory, not the source tree.
(BUILD / "python-setuptools").mkdir(parents=True, exist_ok=True)
setup(
    package_dir={"": "python"},
    packages=["ltsim", "ltsim.torch", "ltsim_torch"],
    ext_modules=[Extension("ltsim._ltsim", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(BUILD / "python-setuptools")},
             "egg_info": {"egg_base": str(BUILD / "python-setuptools")}},
    zip_safe=False,
)
