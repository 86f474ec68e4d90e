"""Builds libtilefmm with the repository's CMake project and puts it in the
package beside the ctypes binding (python/tilefmm/_lib.py).

Where the library comes from, first match wins:
  TILEFMM_LIBRARY=/path/libtilefmm.so   that file, copied as it is
  TILEFMM_BUILD_DIR=/path/build         an existing CMake build of this
                                        repository: its target tilefmm is
                                        brought up to date and copied (no
                                        second build: CI reuses build/)
  neither                               a fresh Release build of the
                                        library alone, with the main build's
                                        options (CUDA when nvcc is found,
                                        as scripts/setup.sh), plus
                                        TILEFMM_CMAKE_ARGS (e.g.
                                        "-DTILEFMM_CUDA=OFF")
"""

import hashlib
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("TILEFMM_SOURCE_DIR", HERE.parent)).resolve()


def run(cmd):
    print("tilefmm:", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True)


def cmake_env():
    """nvcc is usually not on PATH after a toolkit install (setup.sh)."""
    env = dict(os.environ)
    if not shutil.which("nvcc") and os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
        env["PATH"] = "/usr/local/cuda/bin:" + env.get("PATH", "")
    return env


def library_in(build_dir):
    lib = Path(build_dir) / "src" / "libtilefmm.so"
    if not lib.exists():
        raise SystemExit(f"tilefmm: {lib} not found after building {build_dir}")
    return lib.resolve()


def build_library(temp):
    """The library, built (or brought up to date) by CMake."""
    jobs = str(os.cpu_count() or 1)
    given = os.environ.get("TILEFMM_BUILD_DIR")
    if given:
        build_dir = Path(given).resolve()
        if not (build_dir / "CMakeCache.txt").exists():
            raise SystemExit(f"tilefmm: TILEFMM_BUILD_DIR={given} is not a "
                             "configured CMake build (no CMakeCache.txt)")
        subprocess.run(["cmake", "--build", str(build_dir), "--target",
                        "tilefmm", "-j", jobs], check=True, env=cmake_env())
        return library_in(build_dir)
    if not (ROOT / "CMakeLists.txt").exists() or not (ROOT / "include" / "tilefmm.h").exists():
        raise SystemExit(
            f"tilefmm: the repository is not at {ROOT}: the package builds "
            "from a checkout (pip install ./python), not from an sdist; set "
            "TILEFMM_SOURCE_DIR, TILEFMM_BUILD_DIR or TILEFMM_LIBRARY")
    extra = shlex.split(os.environ.get("TILEFMM_CMAKE_ARGS", ""))
    # One build directory per set of extra arguments: a cached setting of
    # an earlier build (TILEFMM_CUDA=OFF, say) never leaks into this one.
    key = hashlib.sha256("\0".join(extra).encode()).hexdigest()[:10]
    build_dir = Path(temp) / f"cmake-{key}"
    args = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
            "-DTILEFMM_TESTS=OFF", "-DTILEFMM_BENCH=OFF"] + extra
    env = cmake_env()
    print("tilefmm:", " ".join(map(str, args)), flush=True)
    subprocess.run([str(a) for a in args], check=True, env=env)
    subprocess.run(["cmake", "--build", str(build_dir), "--target", "tilefmm",
                    "-j", jobs], check=True, env=env)
    return library_in(build_dir)


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        given = os.environ.get("TILEFMM_LIBRARY")
        if given:
            lib = Path(given).resolve()
            if not lib.is_file():
                raise SystemExit(f"tilefmm: TILEFMM_LIBRARY={given}: no such file")
        else:
            temp = Path(self.get_finalized_command("build").build_temp)
            lib = build_library(temp)
        dest = Path(self.build_lib) / "tilefmm"
        dest.mkdir(parents=True, exist_ok=True)
        for old in dest.glob("libtilefmm.so*"):
            old.unlink()
        shutil.copyfile(lib, dest / "libtilefmm.so")
        print(f"tilefmm: packaged {lib}", flush=True)


class BinaryDistribution(Distribution):
    """The wheel holds a compiled library: tagged for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
