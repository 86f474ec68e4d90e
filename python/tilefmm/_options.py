"""Keyword options to tfmm_config and tfmm_sim_config: one keyword per
field, named as the field; strings parsed by the library's tfmm_*_parse;
every value checked before the library sees it, and the whole
configuration then checked by the library (tfmm_config_resolve), whose
message the ValueError carries."""

import ctypes
import difflib
import math
import numbers

from . import _lib
from ._lib import lib
from .errors import raise_status

# Enum options: the library's parse and name functions.
_ENUMS = {
    "method": ("tfmm_method_parse", "tfmm_method_name"),
    "device": ("tfmm_device_parse", "tfmm_device_name"),
    "tree_device": ("tfmm_device_parse", "tfmm_device_name"),
    "far_device": ("tfmm_device_parse", "tfmm_device_name"),
    "softening": ("tfmm_softening_parse", "tfmm_softening_name"),
    "precision": ("tfmm_precision_parse", "tfmm_precision_name"),
    "mac": ("tfmm_mac_parse", "tfmm_mac_name"),
    "schedule": ("tfmm_schedule_parse", "tfmm_schedule_name"),
    "far_kernel": ("tfmm_far_kernel_parse", "tfmm_far_kernel_name"),
}
_FLOATS = ("G", "eps", "accuracy", "box_size")
# May be 'auto' (or None): chosen from accuracy (leaf_size: by the solver).
_AUTO_FLOATS = {"theta": _lib.FROM_ACCURACY, "mac_epsilon": _lib.FROM_ACCURACY}
_AUTO_INTS = {"order": _lib.FROM_ACCURACY, "leaf_size": _lib.LEAF_AUTO}
_INTS = ("max_depth", "num_threads", "gpu_id", "gpu_tile",
         "gpu_threads_per_body", "gpu_unroll", "gpu_bodies_per_thread")
_BOOLS = ("near_only", "verify")
_INTS += ("error_sample",)
# tfmm_measure (tilefmm.h): when an evaluation measures its own error.
MEASURE = {"auto": 0, "always": 1, "off": 2}

SOLVER_OPTIONS = tuple(name for name, _ in _lib.Config._fields_)
SIM_OPTIONS = ("dt", "time_initial", "eta", "dt_max", "dt_min", "keep_tree")


def enum_names(option):
    """The names an enum option accepts, in the library's order."""
    name_fn = getattr(lib, _ENUMS[option][1])
    names = []
    for k in range(64):
        name = name_fn(k).decode()
        if name == "unknown":
            break
        names.append(name)
    return names


def _enum(option, value):
    if not isinstance(value, str):
        raise TypeError(f"{option}: expected one of {enum_names(option)}, "
                        f"got {value!r}")
    out = ctypes.c_int()
    parse = getattr(lib, _ENUMS[option][0])
    if parse(value.encode(), ctypes.byref(out)) != 0:
        raise ValueError(f"{option}: '{value}' is not one of "
                         + ", ".join(enum_names(option)))
    return out.value


def _real(option, value, what="a number"):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{option}: expected {what}, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{option}: must be finite, got {value}")
    return value


def _integer(option, value, what="an integer"):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{option}: expected {what}, got {value!r}")
    value = int(value)
    if not -2**31 <= value < 2**31:
        raise ValueError(f"{option}: {value} is out of range")
    return value


def _is_auto(value):
    return value is None or (isinstance(value, str) and value == "auto")


def _convert(option, value):
    """The C value of one solver option."""
    if option in _ENUMS:
        return _enum(option, value)
    if option == "measure":
        if not isinstance(value, str) or value not in MEASURE:
            raise ValueError(f"measure: expected one of {', '.join(MEASURE)}, "
                             f"got {value!r}")
        return MEASURE[value]
    if option in _FLOATS:
        return _real(option, value)
    if option in _AUTO_FLOATS:
        return _AUTO_FLOATS[option] if _is_auto(value) else \
            _real(option, value, "a number or 'auto'")
    if option in _AUTO_INTS:
        return _AUTO_INTS[option] if _is_auto(value) else \
            _integer(option, value, "an integer or 'auto'")
    if option in _INTS:
        return _integer(option, value)
    if option in _BOOLS:
        if not isinstance(value, (bool, numbers.Integral)) or value not in (0, 1):
            raise TypeError(f"{option}: expected True or False, got {value!r}")
        return int(bool(value))
    if option == "box_min":
        try:
            corner = [_real(option, v) for v in value]
        except TypeError:
            raise TypeError(f"{option}: expected 3 numbers, got {value!r}") from None
        if len(corner) != 3:
            raise ValueError(f"{option}: expected 3 numbers, got {len(corner)}")
        return (ctypes.c_double * 3)(*corner)
    raise AssertionError(option)


def unknown_option(option, known):
    close = difflib.get_close_matches(option, known, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return TypeError(f"unknown option '{option}'{hint}; the options are: "
                     + ", ".join(known))


def config(options, extra=()):
    """A checked tfmm_config from keyword options (a dict); names in extra
    are left for the caller. Raises TypeError for an unknown option or a
    value of the wrong type, ValueError for one out of range (with the
    library's message)."""
    cfg = _lib.Config()
    lib.tfmm_config_defaults(ctypes.byref(cfg))
    for option, value in options.items():
        if option in extra:
            continue
        if option not in SOLVER_OPTIONS:
            raise unknown_option(option, SOLVER_OPTIONS + tuple(extra))
        setattr(cfg, option, _convert(option, value))
    check(cfg)
    return cfg


def check(cfg):
    """The library's check of a whole tfmm_config (tfmm_config_resolve)."""
    theta, order, sep = ctypes.c_double(), ctypes.c_int(), ctypes.c_double()
    msg = ctypes.create_string_buffer(512)
    status = lib.tfmm_config_resolve(ctypes.byref(cfg), theta, order, sep,
                                     msg, len(msg))
    if status != 0:
        raise_status(status, msg.value.decode(errors="replace"))
    return theta.value, order.value


def sim_config(options):
    """A tfmm_sim_config from keyword options: the solver's and dt,
    time_initial, eta, dt_max, dt_min, keep_tree (True or False). The
    library checks the step settings when the simulation is created."""
    cfg = _lib.SimConfig()
    lib.tfmm_sim_config_defaults(ctypes.byref(cfg))
    cfg.solver = config(options, extra=SIM_OPTIONS)
    for option in SIM_OPTIONS:
        if option not in options:
            continue
        value = options[option]
        if option == "keep_tree":
            if not isinstance(value, (bool, numbers.Integral)) or \
                    value not in (0, 1):
                raise TypeError(f"keep_tree: expected True or False, got {value!r}")
            cfg.keep_tree = int(bool(value))
        else:
            setattr(cfg, option, _real(option, value))
    return cfg


def describe(cfg):
    """A tfmm_config as a dict of Python values (enums by name)."""
    out = {}
    for option in SOLVER_OPTIONS:
        value = getattr(cfg, option)
        if option in _ENUMS:
            value = getattr(lib, _ENUMS[option][1])(value).decode()
        elif option == "measure":
            value = {v: k for k, v in MEASURE.items()}.get(value, value)
        elif option == "box_min":
            value = tuple(value)
        elif option in _BOOLS:
            value = bool(value)
        elif (option in _AUTO_FLOATS and value == _AUTO_FLOATS[option]) or \
                (option in _AUTO_INTS and value == _AUTO_INTS[option]):
            value = "auto"
        out[option] = value
    return out


def plan(n=0, **options):
    """What the library makes of these options on this machine for n bodies
    (tfmm_plan_resolve): device, schedule, tree_device, far_device,
    leaf_size, theta, order, precision, mac, mac_epsilon, separation,
    far_kernel, as a
    dict (enums by name). Raises as config() does, and NoDeviceError when
    the GPU asked for cannot be had."""
    cfg = config(options)
    out = _lib.Plan()
    msg = ctypes.create_string_buffer(512)
    status = lib.tfmm_plan_resolve(ctypes.byref(cfg), int(n), ctypes.byref(out),
                                   msg, len(msg))
    if status != 0:
        raise_status(status, msg.value.decode(errors="replace"))
    names = {"method": "tfmm_method_name", "device": "tfmm_device_name",
             "schedule": "tfmm_schedule_name", "tree_device": "tfmm_device_name",
             "far_device": "tfmm_device_name",
             "precision": "tfmm_precision_name", "mac": "tfmm_mac_name",
             "far_kernel": "tfmm_far_kernel_name"}
    result = {}
    for field, _ in _lib.Plan._fields_:
        value = getattr(out, field)
        if field in names:
            value = getattr(lib, names[field])(value).decode()
        result[field] = value
    return result


def defaults():
    """The library's defaults (tfmm_config_defaults), as a dict."""
    cfg = _lib.Config()
    lib.tfmm_config_defaults(ctypes.byref(cfg))
    return describe(cfg)
