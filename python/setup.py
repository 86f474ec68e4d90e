"""Builds libtilefmm with the repository's CMake project and puts it in the
package beside the ctypes binding (python/tilefmm/_lib.py). Where the
library comes from and how it is built: python/build_library.py."""

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # build_library.py beside this file
import build_library  # noqa: E402


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = build_library.given_library()
        if lib is None:
            root = build_library.user_path("TILEFMM_SOURCE_DIR") or HERE.parent
            temp = Path(self.get_finalized_command("build").build_temp)
            lib = build_library.build_library(root, temp)
        dest = Path(self.build_lib) / "tilefmm"
        dest.mkdir(parents=True, exist_ok=True)
        for old in dest.glob("libtilefmm.so*"):
            old.unlink()
        shutil.copyfile(lib, dest / "libtilefmm.so")
        build_library.say(f"packaged {lib}")


class BinaryDistribution(Distribution):
    """The wheel holds a compiled library: tagged for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
