"""The shared library libtilefmm, loaded with ctypes: its structs, the
prototypes of the functions the package calls, and the checks made at
import (the library's version and, field by field, the layout of every
struct passed across)."""

import ctypes
import os
from pathlib import Path

from ._version import __version__

c_int = ctypes.c_int
c_double = ctypes.c_double
c_size_t = ctypes.c_size_t
c_int64 = ctypes.c_int64
c_uint64 = ctypes.c_uint64
c_char_p = ctypes.c_char_p
P = ctypes.POINTER

# tfmm_config.theta, .order, .mac_epsilon: chosen from accuracy.
FROM_ACCURACY = -1
LEAF_AUTO = 0


class Config(ctypes.Structure):
    """tfmm_config (include/tilefmm.h); enums are C ints."""

    _fields_ = [
        ("G", c_double),
        ("eps", c_double),
        ("softening", c_int),
        ("precision", c_int),
        ("method", c_int),
        ("device", c_int),
        ("accuracy", c_double),
        ("theta", c_double),
        ("order", c_int),
        ("mac", c_int),
        ("mac_epsilon", c_double),
        ("leaf_size", c_int),
        ("max_depth", c_int),
        ("box_min", c_double * 3),
        ("box_size", c_double),
        ("num_threads", c_int),
        ("gpu_id", c_int),
        ("schedule", c_int),
        ("tree_device", c_int),
        ("far_device", c_int),
        ("near_only", c_int),
        ("gpu_tile", c_int),
        ("gpu_threads_per_body", c_int),
        ("gpu_unroll", c_int),
        ("gpu_bodies_per_thread", c_int),
        ("measure", c_int),
        ("error_sample", c_int),
        ("verify", c_int),
        ("far_kernel", c_int),
    ]


class TreeTime(ctypes.Structure):
    _fields_ = [(name, c_double) for name in ("keys", "sort", "permute", "build", "moments")]


class MeasuredError(ctypes.Structure):
    """tfmm_stats.error: the evaluation's measured error."""

    _fields_ = [
        ("measured", c_int),
        ("samples", c_size_t),
        ("median", c_double),
        ("p99", c_double),
        ("max", c_double),
        ("p99_bound", c_double),
        ("confidence", c_double),
        ("worst_body", ctypes.c_int64),
        ("time", c_double),
        ("group_bodies", c_size_t),
        ("group_measured", c_size_t),
        ("group_median", c_double),
        ("group_p99", c_double),
        ("group_max", c_double),
    ]


PHASE_COUNT = 10


class Stats(ctypes.Structure):
    """tfmm_stats."""

    _fields_ = [
        ("method", c_int),
        ("device", c_int),
        ("n", c_size_t),
        ("interactions", c_double),
        ("m2l", c_double),
        ("m2p", c_double),
        ("tree_depth", c_int),
        ("tree_cells", c_int64),
        ("tree_leaves", c_int64),
        ("leaf_min", c_int64),
        ("leaf_max", c_int64),
        ("leaf_mean", c_double),
        ("tree_refits", c_int64),
        ("tree_growth", c_double),
        ("leaf_size", c_int),
        ("theta", c_double),
        ("order", c_int),
        ("precision", c_int),
        ("mac_epsilon", c_double),
        ("far_kernel", c_int),
        ("softening_separation", c_double),
        ("schedule", c_int),
        ("lists_device", c_int),
        ("near_device", c_int),
        ("tree_device", c_int),
        ("far_device", c_int),
        ("near_time", c_double),
        ("near_kernel_time", c_double),
        ("far_time", c_double),
        ("overlap", c_double),
        ("near_rate", c_double),
        ("tree_time", TreeTime),
        ("time", c_double * PHASE_COUNT),
        ("time_total", c_double),
        ("device_bytes", c_size_t),
        ("gpu_tile", c_int),
        ("gpu_threads_per_body", c_int),
        ("gpu_unroll", c_int),
        ("gpu_bodies_per_thread", c_int),
        ("device_name", ctypes.c_char * 128),
        ("targets", c_size_t),
        ("error", MeasuredError),
        ("plan", ctypes.c_char * 512),
    ]


class Diagnostics(ctypes.Structure):
    """tfmm_diagnostics."""

    _fields_ = [
        ("mass", c_double),
        ("kinetic", c_double),
        ("potential", c_double),
        ("total", c_double),
        ("virial_ratio", c_double),
        ("momentum", c_double * 3),
        ("angular_momentum", c_double * 3),
        ("centre_of_mass", c_double * 3),
    ]


class SimConfig(ctypes.Structure):
    """tfmm_sim_config."""

    _fields_ = [
        ("solver", Config),
        ("dt", c_double),
        ("time_initial", c_double),
        ("eta", c_double),
        ("dt_max", c_double),
        ("dt_min", c_double),
        ("keep_tree", c_int),
    ]


class Choice(ctypes.Structure):
    """tfmm_choice: what a solver's planner chose and measured."""

    _fields_ = [
        ("chosen", c_int),
        ("theta", c_double),
        ("order", c_int),
        ("factor", c_double),
        ("since", c_int),
        ("evaluations", c_uint64),
        ("n", c_size_t),
        ("accuracy", c_double),
        ("leaf", c_int),
        ("near_gpu", c_int),
        ("precision", c_int),
        ("failed_cost", c_double),
        ("epsilon", c_double),
    ]


class SimState(ctypes.Structure):
    """tfmm_sim_state."""

    _fields_ = [
        ("n", c_size_t),
        ("pos", P(c_double)),
        ("vel", P(c_double)),
        ("mass", P(c_double)),
        ("acc", P(c_double)),
        ("pot", P(c_double)),
        ("ids", P(c_uint64)),
        ("step", c_int64),
        ("time_initial", c_double),
        ("energy_initial", c_double),
        ("ticks", c_int64),
        ("tick", c_double),
        ("bins", P(ctypes.c_byte)),
        ("choice", Choice),
    ]


class StepStats(ctypes.Structure):
    """tfmm_step_stats."""

    _fields_ = [
        ("steps", c_int64),
        ("evaluations", c_int64),
        ("time_integrate", c_double),
        ("time_forces", c_double),
        ("time_total", c_double),
        ("updates", c_int64),
        ("short_steps", c_int64),
        ("time_tree", c_double),
        ("time_lists", c_double),
        ("time_near", c_double),
        ("time_far", c_double),
        ("tree_refits", c_int64),
        ("direct_substeps", c_int64),
    ]


class Plan(ctypes.Structure):
    """tfmm_plan."""

    _fields_ = [
        ("method", c_int),
        ("device", c_int),
        ("schedule", c_int),
        ("tree_device", c_int),
        ("far_device", c_int),
        ("leaf_size", c_int),
        ("theta", c_double),
        ("order", c_int),
        ("precision", c_int),
        ("mac", c_int),
        ("mac_epsilon", c_double),
        ("separation", c_double),
        ("far_kernel", c_int),
    ]


STRUCTS = {
    "tfmm_config": Config,
    "tfmm_stats": Stats,
    "tfmm_diagnostics": Diagnostics,
    "tfmm_sim_config": SimConfig,
    "tfmm_sim_state": SimState,
    "tfmm_choice": Choice,
    "tfmm_step_stats": StepStats,
    "tfmm_plan": Plan,
}

_ic = [P(c_double)] * 3
_cfg_parse = [c_char_p, P(c_int)]
_pd = P(c_double)

# name: (restype, argtypes)
PROTOTYPES = {
    "tfmm_version": (c_char_p, []),
    "tfmm_struct_layout": (c_int, [c_char_p, c_char_p, P(c_size_t), P(c_size_t)]),
    "tfmm_struct_fields": (c_int, [c_char_p, P(c_char_p), c_int]),
    "tfmm_has_cuda": (c_int, []),
    "tfmm_gpu_count": (c_int, []),
    "tfmm_status_name": (c_char_p, [c_int]),
    "tfmm_method_name": (c_char_p, [c_int]),
    "tfmm_device_name": (c_char_p, [c_int]),
    "tfmm_softening_name": (c_char_p, [c_int]),
    "tfmm_precision_name": (c_char_p, [c_int]),
    "tfmm_mac_name": (c_char_p, [c_int]),
    "tfmm_schedule_name": (c_char_p, [c_int]),
    "tfmm_far_kernel_name": (c_char_p, [c_int]),
    "tfmm_phase_name": (c_char_p, [c_int]),
    "tfmm_method_parse": (c_int, _cfg_parse),
    "tfmm_device_parse": (c_int, _cfg_parse),
    "tfmm_softening_parse": (c_int, _cfg_parse),
    "tfmm_precision_parse": (c_int, _cfg_parse),
    "tfmm_mac_parse": (c_int, _cfg_parse),
    "tfmm_schedule_parse": (c_int, _cfg_parse),
    "tfmm_far_kernel_parse": (c_int, _cfg_parse),
    "tfmm_config_defaults": (None, [P(Config)]),
    "tfmm_config_resolve": (
        c_int,
        [P(Config), _pd, P(c_int), _pd, ctypes.c_char_p, c_size_t],
    ),
    "tfmm_plan_resolve": (
        c_int, [P(Config), c_size_t, P(Plan), ctypes.c_char_p, c_size_t]),
    "tfmm_solver_create": (c_int, [P(ctypes.c_void_p), P(Config)]),
    "tfmm_solver_destroy": (None, [ctypes.c_void_p]),
    "tfmm_solver_compute": (c_int, [ctypes.c_void_p, c_size_t, _pd, _pd, _pd, _pd]),
    "tfmm_solver_reserve": (c_int, [ctypes.c_void_p, c_size_t]),
    "tfmm_host_alloc": (ctypes.c_void_p, [c_size_t]),
    "tfmm_host_free": (None, [ctypes.c_void_p]),
    "tfmm_host_pinned": (c_int, [ctypes.c_void_p]),
    "tfmm_solver_reference_at": (
        c_int,
        [ctypes.c_void_p, c_size_t, _pd, _pd, c_size_t, P(c_size_t), _pd, _pd],
    ),
    "tfmm_solver_message": (c_char_p, [ctypes.c_void_p]),
    "tfmm_solver_stats": (P(Stats), [ctypes.c_void_p]),
    "tfmm_solver_device": (c_int, [ctypes.c_void_p]),
    "tfmm_ic_plummer": (c_int, [c_size_t, c_uint64] + _ic),
    "tfmm_ic_hernquist": (c_int, [c_size_t, c_uint64] + _ic),
    "tfmm_ic_uniform": (c_int, [c_size_t, c_uint64] + _ic),
    "tfmm_ic_cold": (c_int, [c_size_t, c_uint64] + _ic),
    "tfmm_ic_merger": (c_int, [c_size_t, c_uint64] + _ic),
    "tfmm_ic_scale": (c_int, [c_size_t, ctypes.c_double, ctypes.c_double,
                              ctypes.c_double] + _ic),
    "tfmm_diagnostics_compute": (c_int, [c_size_t, _pd, _pd, _pd, _pd, P(Diagnostics)]),
    "tfmm_sim_config_defaults": (None, [P(SimConfig)]),
    "tfmm_sim_create": (
        c_int,
        [P(ctypes.c_void_p), P(SimConfig), c_size_t, _pd, _pd, _pd, P(c_uint64)],
    ),
    "tfmm_sim_restore": (c_int, [P(ctypes.c_void_p), P(SimConfig), P(SimState)]),
    "tfmm_sim_destroy": (None, [ctypes.c_void_p]),
    "tfmm_sim_start": (c_int, [ctypes.c_void_p]),
    "tfmm_sim_step": (c_int, [ctypes.c_void_p, c_int64]),
    "tfmm_sim_advance_to": (c_int, [ctypes.c_void_p, c_double]),
    "tfmm_sim_time": (c_double, [ctypes.c_void_p]),
    "tfmm_sim_steps": (c_int64, [ctypes.c_void_p]),
    "tfmm_sim_syncs": (c_int64, [ctypes.c_void_p]),
    "tfmm_sim_synchronised": (c_int, [ctypes.c_void_p]),
    "tfmm_sim_bins": (c_int, [ctypes.c_void_p, P(c_int64), c_int]),
    "tfmm_sim_step_criterion": (c_int, [ctypes.c_void_p, c_double, _pd, P(c_size_t)]),
    "tfmm_sim_count": (c_size_t, [ctypes.c_void_p]),
    "tfmm_sim_save": (c_int, [ctypes.c_void_p, P(SimState)]),
    "tfmm_sim_diagnostics": (c_int, [ctypes.c_void_p, P(Diagnostics), _pd]),
    "tfmm_sim_solver": (ctypes.c_void_p, [ctypes.c_void_p]),
    "tfmm_sim_stats": (P(StepStats), [ctypes.c_void_p]),
    "tfmm_sim_message": (c_char_p, [ctypes.c_void_p]),
}


def _candidates():
    """Where the library may be: $TILEFMM_LIBRARY (a path to
    libtilefmm.so), else the copy installed beside this file."""
    env = os.environ.get("TILEFMM_LIBRARY")
    if env:
        return [Path(env)], True
    here = Path(__file__).resolve().parent
    return sorted(here.glob("libtilefmm.so*")), False


def _load():
    paths, from_env = _candidates()
    if not paths:
        raise ImportError(
            "tilefmm: libtilefmm.so is not installed beside the package "
            f"({Path(__file__).resolve().parent}); install the package with "
            "'pip install ./python' from the repository, or set "
            "TILEFMM_LIBRARY to a built libtilefmm.so")
    path = paths[0]
    if from_env and not path.is_file():
        raise ImportError(f"tilefmm: TILEFMM_LIBRARY={path}: no such file")
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as e:
        raise ImportError(f"tilefmm: cannot load {path}: {e}") from e
    for name, (restype, argtypes) in PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ImportError(
                f"tilefmm: {path} has no {name}: the library is older than "
                f"this package ({__version__}); rebuild and reinstall both "
                "from one checkout") from None
        fn.restype = restype
        fn.argtypes = argtypes
    return lib, path


def _flat_fields(cls, prefix=""):
    """(name, offset, size) of every field of a ctypes struct, nested
    structs' members named "outer.inner" after the outer field itself."""
    out = []
    for name, ctype in cls._fields_:
        desc = getattr(cls, name)
        out.append((prefix + name, desc.offset, desc.size))
        if isinstance(ctype, type) and issubclass(ctype, ctypes.Structure) and \
                ctype is not Config:
            for sub, off, size in _flat_fields(ctype):
                out.append((prefix + name + "." + sub, desc.offset + off, size))
    return out


def layout_mismatches(lib, structs=STRUCTS):
    """What differs between the structs here and the library's, as
    readable lines; empty when they agree."""
    problems = []
    for cname, cls in structs.items():
        ctype_name = cname.encode()
        off, size = c_size_t(), c_size_t()
        if lib.tfmm_struct_layout(ctype_name, None, off, size) != 0:
            problems.append(f"{cname}: unknown to the library")
            continue
        if size.value != ctypes.sizeof(cls):
            problems.append(f"{cname}: {size.value} bytes in the library, "
                            f"{ctypes.sizeof(cls)} here")
        count = lib.tfmm_struct_fields(ctype_name, None, 0)
        names = (c_char_p * max(count, 1))()
        lib.tfmm_struct_fields(ctype_name, names, count)
        theirs = [names[k].decode() for k in range(count)]
        ours = _flat_fields(cls)
        for name, offset, fsize in ours:
            if name not in theirs:
                problems.append(f"{cname}.{name}: not in the library")
                continue
            lib.tfmm_struct_layout(ctype_name, name.encode(), off, size)
            if (off.value, size.value) != (offset, fsize):
                problems.append(
                    f"{cname}.{name}: at {off.value} ({size.value} bytes) in "
                    f"the library, at {offset} ({fsize} bytes) here")
        known = {name for name, _, _ in ours}
        problems += [f"{cname}.{name}: in the library only"
                     for name in theirs if name not in known]
    return problems


def _check(lib, path):
    version = lib.tfmm_version().decode()
    if version != __version__:
        raise ImportError(
            f"tilefmm: the library {path} is version {version}, this package "
            f"{__version__}: rebuild and reinstall both from one checkout")
    problems = layout_mismatches(lib)
    if problems:
        raise ImportError(
            f"tilefmm: the structs of {path} differ from the package's "
            "(python/tilefmm/_lib.py): " + "; ".join(problems) +
            ". Rebuild and reinstall both from one checkout")


lib, path = _load()
_check(lib, path)
