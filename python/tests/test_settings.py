"""One place for every setting: the package's defaults are the library's
(tfmm_config_defaults, read here through ctypes on a fresh handle of the
library, not through the package's helpers), the command-line tool's help
gives the same, and what the library plans (tfmm_plan_resolve) is what a
solver then runs."""

import ctypes
import os
import re
import subprocess

import numpy as np
import pytest

import tilefmm
from tilefmm import _lib


def _library_defaults():
    clib = ctypes.CDLL(str(tilefmm.library_path))
    cfg = _lib.Config()
    clib.tfmm_config_defaults.restype = None
    clib.tfmm_config_defaults(ctypes.byref(cfg))
    return clib, cfg


_ENUM_NAMES = {"method": "tfmm_method_name", "device": "tfmm_device_name",
               "tree_device": "tfmm_device_name",
               "far_device": "tfmm_device_name",
               "softening": "tfmm_softening_name",
               "precision": "tfmm_precision_name", "mac": "tfmm_mac_name",
               "schedule": "tfmm_schedule_name",
               "far_kernel": "tfmm_far_kernel_name"}


def _enum_name(clib, field, value):
    fn = getattr(clib, _ENUM_NAMES[field])
    fn.restype = ctypes.c_char_p
    return fn(value).decode()


def test_python_defaults_are_the_library_s():
    clib, cfg = _library_defaults()
    py = tilefmm.defaults()
    assert set(py) == {name for name, _ in _lib.Config._fields_}
    for name, _ in _lib.Config._fields_:
        value = getattr(cfg, name)
        want = py[name]
        if name in _ENUM_NAMES:
            assert _enum_name(clib, name, value) == want, name
        elif want == "auto":
            assert value in (_lib.FROM_ACCURACY, _lib.LEAF_AUTO), name
        elif name == "box_min":
            assert tuple(value) == want
        else:
            assert value == want, name
    # A solver given no option runs the library's defaults.
    with tilefmm.Solver() as s:
        assert s.config == py


def test_cli_defaults_are_python_s():
    """Every '(default: ...)' of 'tilefmm forces --help' against the
    package's default of the same field."""
    cli = os.environ.get("TILEFMM_CLI")
    if not cli:
        pytest.skip("TILEFMM_CLI is not set: no tool to compare with")
    text = subprocess.run([cli, "forces", "--help"], capture_output=True,
                          text=True, check=True).stdout
    py = tilefmm.defaults()
    flag_field = {"--method": "method", "--device": "device", "--eps": "eps",
                  "--softening": "softening", "--G": "G",
                  "--precision": "precision", "--accuracy": "accuracy",
                  "--threads": "num_threads", "--theta": "theta",
                  "--order": "order", "--mac": "mac", "--leaf": "leaf_size",
                  "--max-depth": "max_depth", "--schedule": "schedule",
                  "--tree-device": "tree_device", "--far-device": "far_device",
                  "--gpu-tile": "gpu_tile",
                  "--gpu-threads-per-body": "gpu_threads_per_body",
                  "--gpu-unroll": "gpu_unroll",
                  "--gpu-bodies-per-thread": "gpu_bodies_per_thread",
                  "--measure": "measure", "--error-sample": "error_sample",
                  "--far-kernel": "far_kernel"}
    entries = re.split(r"\n  (?=--)", text)
    seen = set()
    for entry in entries:
        flag = entry.split()[0]
        if flag not in flag_field:
            continue
        said = re.search(r"\(default: ([^)]*)\)", entry.replace("\n", " "))
        assert said, f"{flag}: no default in its help"
        word = said.group(1).split(":")[0].strip()
        want = py[flag_field[flag]]
        if isinstance(want, str):
            assert word == want, flag
        else:
            assert float(word) == want, flag
        seen.add(flag)
    assert seen == set(flag_field)


def test_plan_is_what_the_solver_runs(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    pos = rng.standard_normal((n, 3))
    mass = rng.uniform(0.5, 1.5, n)
    # The plan's theta and order are the planner's first guess; measuring,
    # the solver may move from it (tests/test_plan.c): with measure off
    # both come from the calibration alone, as the plan says.
    for options in ({}, {"leaf_size": "auto"}, {"accuracy": 1e-5},
                    {"method": "bh", "leaf_size": 16},
                    {"eps": 0.05, "far_kernel": "softened"}):
        options["measure"] = "off"
        plan = tilefmm.plan(n, **options)
        with tilefmm.Solver(**options) as s:
            assert plan["device"] == s.device
            s.forces(pos, mass)
            st = s.stats
        for key in ("leaf_size", "theta", "order", "precision", "schedule",
                    "tree_device", "far_device", "far_kernel"):
            assert plan[key] == st[key], (options, key)
    assert tilefmm.plan(method="reference")["device"] == "cpu"
    assert tilefmm.plan(method="direct")["precision"] == "single"
    with pytest.raises(ValueError, match="accuracy"):
        tilefmm.plan(accuracy=1.0)
