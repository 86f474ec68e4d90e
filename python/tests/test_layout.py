"""The checks made at import: the library's version and the layout of
every struct the binding passes (tfmm_struct_layout)."""

import ctypes
import os
import re
import subprocess
import sys
from pathlib import Path


import tilefmm
from tilefmm import _lib

ROOT = Path(__file__).resolve().parents[2]


def test_versions_agree():
    text = (ROOT / "CMakeLists.txt").read_text()
    cmake = re.search(r"project\(tilefmm VERSION ([0-9.]+)", text).group(1)
    assert tilefmm.__version__ == tilefmm.library_version() == cmake


def test_the_library_and_the_binding_agree():
    assert _lib.layout_mismatches(_lib.lib) == []


def test_a_swapped_field_is_caught():
    fields = list(_lib.Config._fields_)
    fields[2], fields[3] = fields[3], fields[2]  # softening <-> precision
    swapped = type("Swapped", (ctypes.Structure,), {"_fields_": fields})
    problems = _lib.layout_mismatches(_lib.lib, {"tfmm_config": swapped})
    assert any("tfmm_config.softening" in p for p in problems), problems
    assert any("tfmm_config.precision" in p for p in problems), problems


def test_a_missing_or_extra_field_is_caught():
    short = type("Short", (ctypes.Structure,),
                 {"_fields_": _lib.StepStats._fields_[:-1]})
    problems = _lib.layout_mismatches(_lib.lib, {"tfmm_step_stats": short})
    assert "tfmm_step_stats.direct_substeps: in the library only" in problems
    assert any("bytes in the library" in p for p in problems)
    extra = type("Extra", (ctypes.Structure,),
                 {"_fields_": _lib.Diagnostics._fields_ + [("spin", ctypes.c_double)]})
    problems = _lib.layout_mismatches(_lib.lib, {"tfmm_diagnostics": extra})
    assert "tfmm_diagnostics.spin: not in the library" in problems


def import_with(env_library):
    env = dict(os.environ, TILEFMM_LIBRARY=env_library)
    return subprocess.run([sys.executable, "-c", "import tilefmm"], env=env,
                          capture_output=True, text=True)


def test_import_fails_clearly_without_the_library(tmp_path):
    r = import_with(str(tmp_path / "libtilefmm.so"))
    assert r.returncode != 0
    assert "ImportError: tilefmm: TILEFMM_LIBRARY=" in r.stderr
    assert "no such file" in r.stderr


def test_import_fails_clearly_with_another_library():
    import _ctypes  # a shared object that is not libtilefmm
    r = import_with(_ctypes.__file__)
    assert r.returncode != 0
    assert "has no tfmm_version" in r.stderr and "rebuild" in r.stderr
