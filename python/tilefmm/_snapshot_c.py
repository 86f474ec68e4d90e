"""The snapshot structs of include/tilefmm.h as ctypes sees them, and the
prototypes of the snapshot calls: in a module that imports nothing but
ctypes, so that the child process that reads an HDF5 file for
tilefmm.read (_read_child.py) loads it without numpy or the package."""

import ctypes

c_int = ctypes.c_int
c_double = ctypes.c_double
c_size_t = ctypes.c_size_t
c_char_p = ctypes.c_char_p
P = ctypes.POINTER


class UnitSystemC(ctypes.Structure):
    """tfmm_unit_system."""

    _fields_ = [(name, c_double) for name in
                ("mass", "length", "velocity", "current", "temperature")]


class AttrC(ctypes.Structure):
    """tfmm_attr."""

    _fields_ = [("name", c_char_p), ("value", c_char_p)]


class SnapshotC(ctypes.Structure):
    """tfmm_snapshot."""

    _fields_ = [
        ("n", c_size_t),
        ("time", c_double),
        ("pos", P(c_double)),
        ("vel", P(c_double)),
        ("mass", P(c_double)),
        ("acc", P(c_double)),
        ("pot", P(c_double)),
        ("ids", P(ctypes.c_uint64)),
        ("bins", P(ctypes.c_byte)),
        ("params", P(AttrC)),
        ("nparams", c_size_t),
        ("state", P(AttrC)),
        ("nstate", c_size_t),
        ("units", UnitSystemC),
        ("units_source", c_int),
        ("G", c_double),
        ("format", c_int),
        ("note", c_char_p),
        ("files", P(c_char_p)),
        ("nfiles", c_size_t),
    ]


class SnapshotOutputC(ctypes.Structure):
    """tfmm_snapshot_output."""

    _fields_ = [("fields", ctypes.c_uint), ("single", c_int),
                ("compression", c_int)]


class ReadOptionsC(ctypes.Structure):
    """tfmm_read_options."""

    _fields_ = [("format", c_int), ("types", ctypes.c_uint64),
                ("attributes", c_int), ("flag", c_char_p)]


STRUCTS = {
    "tfmm_unit_system": UnitSystemC,
    "tfmm_attr": AttrC,
    "tfmm_snapshot": SnapshotC,
    "tfmm_snapshot_output": SnapshotOutputC,
    "tfmm_read_options": ReadOptionsC,
}

PROTOTYPES = {
    "tfmm_has_hdf5": (c_int, []),
    "tfmm_snapshot_probe": (c_int, [c_char_p]),
    "tfmm_snapshot_read": (
        c_int, [c_char_p, P(ReadOptionsC), P(SnapshotC), c_char_p, c_size_t]),
    "tfmm_snapshot_write": (
        c_int, [c_char_p, P(SnapshotC), P(SnapshotOutputC), c_char_p, c_size_t]),
    "tfmm_snapshot_free": (None, [P(SnapshotC)]),
}
