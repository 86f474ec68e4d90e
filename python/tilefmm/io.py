"""Snapshot files through the library (tilefmm.h, "Snapshot files";
docs/formats.md): HDF5 in the GADGET/SWIFT layout (read and written, as
`tilefmm run` writes it: SWIFT's units, the shift into the box), GADGET-2
binary (format 1 and 2) and Tipsy (read).

    snap = tilefmm.read("snapshot_0010.hdf5")      # or a Tipsy, GADGET-2 file
    snap.positions, snap.velocities, snap.masses, snap.ids, snap.units

The library tells the format from the file's first bytes. Failures raise
tilefmm.FileError (or UnsupportedError for HDF5 in a library built without
it) with the library's message, which names the file and what is wrong in
it: the dataset, the block and byte offset, the body."""

import ctypes
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from . import _arrays, _isolated, _lib
from ._snapshot_c import (PROTOTYPES, STRUCTS, AttrC, ReadOptionsC,
                          SnapshotC, SnapshotOutputC, UnitSystemC)
from .errors import raise_status

c_int = ctypes.c_int
c_double = ctypes.c_double
c_size_t = ctypes.c_size_t
c_char_p = ctypes.c_char_p
P = ctypes.POINTER

FORMATS = {1: "hdf5", 2: "gadget2", 3: "tipsy"}
FORMAT_CODES = {name: code for code, name in FORMATS.items()}
UNITS_SOURCES = {0: None, 1: "nbody", 2: "swift", 3: "gadget4"}
TYPES_ALL = 2**64 - 1
VELOCITIES, ACCELERATIONS, POTENTIALS = 1, 2, 4
MESSAGE_SIZE = 8192
NTYPES_MAX = 64
FILE_ERROR = 9  # TFMM_ERR_FILE


def _bind():
    lib = _lib.lib
    for name, (restype, argtypes) in PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ImportError(
                f"tilefmm: {_lib.path} has no {name}: the library is older "
                "than this package; rebuild and reinstall both from one "
                "checkout") from None
        fn.restype = restype
        fn.argtypes = argtypes
    problems = _lib.layout_mismatches(lib, STRUCTS)
    if problems:
        raise ImportError(
            f"tilefmm: the snapshot structs of {_lib.path} differ from the "
            "package's (python/tilefmm/io.py): " + "; ".join(problems))
    return lib


lib = _bind()


@dataclass
class Units:
    """A unit system in cgs, as SWIFT's InternalUnitSystem: grams,
    centimetres, centimetres per second (the time unit is length /
    velocity); current and temperature as SWIFT's files carry them."""

    mass: float
    length: float
    velocity: float
    current: float = 1.0
    temperature: float = 1.0

    @property
    def time(self):
        """The time unit in seconds."""
        return self.length / self.velocity


@dataclass
class Bodies:
    """What tilefmm.read gives: numpy copies of a snapshot's bodies.
    units is None for N-body units or a file without any (Tipsy,
    GADGET-2); units_source says where units came from ("swift",
    "gadget4", "nbody" or None). accelerations and potentials are None
    unless the file holds them (HDF5); parameters and state are the
    /Parameters and /RunState text of an HDF5 file (state None without
    /RunState)."""

    positions: np.ndarray
    velocities: np.ndarray
    masses: np.ndarray
    ids: np.ndarray
    time: float
    units: Optional[Units]
    units_source: Optional[str]
    format: str
    accelerations: Optional[np.ndarray] = None
    potentials: Optional[np.ndarray] = None
    bins: Optional[np.ndarray] = None
    parameters: dict = field(default_factory=dict)
    state: Optional[dict] = None
    note: Optional[str] = None

    def __len__(self):
        return self.positions.shape[0]


def _types_mask(types):
    if types is None:
        return 0
    if isinstance(types, str) and types == "all":
        return TYPES_ALL
    if isinstance(types, int):
        types = [types]
    mask = 0
    for k in types:
        k = int(k)
        if not 0 <= k < NTYPES_MAX:
            raise ValueError(f"types: {k} is not a particle type (0 to 63)")
        mask |= 1 << k
    return mask


def _array(ptr, shape, dtype):
    if not ptr:
        return None
    count = int(np.prod(shape))
    flat = np.ctypeslib.as_array(ptr, shape=(count,))
    return flat.astype(dtype, copy=True).reshape(shape)


def _attrs(ptr, count):
    return {ptr[k].name.decode(): ptr[k].value.decode() for k in range(count)}


def _is_hdf5(path, code):
    """Whether path is read by libhdf5 (else by tilefmm's own readers):
    told by the signature alone, which tilefmm's code looks for."""
    if code:
        return code == FORMAT_CODES["hdf5"]
    return lib.tfmm_snapshot_probe(str(path).encode()) == FORMAT_CODES["hdf5"]


def _bodies_of(got):
    """The Bodies of what an isolated read sent: (head, arrays), or the
    message of a child that did not finish (a FileError)."""
    if isinstance(got, str):
        raise_status(FILE_ERROR, got)
    head, a = got
    if head["status"] != 0:
        raise_status(head["status"], head["message"])
    u = head["units"]
    return Bodies(
        positions=a.get("pos"), velocities=a.get("vel"),
        masses=a.get("mass"), ids=a.get("ids"), time=head["time"],
        units=Units(*u) if u[0] > 0 else None,
        units_source=UNITS_SOURCES.get(head["units_source"]),
        format=FORMATS.get(head["format"], "unknown"),
        accelerations=a.get("acc"), potentials=a.get("pot"),
        bins=a.get("bins"), parameters=dict(head["params"]),
        state=dict(head["state"]) if head["state"] is not None else None,
        note=head["note"])


def read(path, types=None, attributes=True, format=None):
    """Reads the snapshot at path (HDF5, GADGET-2 or Tipsy, told from its
    first bytes unless format says "hdf5", "gadget2" or "tipsy"). types:
    None reads the file's one particle type (not gas); a type, a list of
    types (0 gas, 1 dark matter, 4 stars, ...) or "all" reads those,
    concatenated in type order. attributes: read /Parameters and /RunState
    too (HDF5). Returns a Bodies.

    An HDF5 file is read in a child process (tilefmm._isolated), as the
    command line reads it: a damaged file that crashes libhdf5, or sends
    it round a loop past its bound of CPU time, raises FileError ("PATH:
    damaged HDF5 file: the reader crashed (signal 11, ...)") instead of
    ending the interpreter. TILEFMM_READ_ISOLATION=off reads in process;
    TILEFMM_READ_CPU_LIMIT=S sets the bound (default 60 s plus 1 s per 4
    MiB). The other formats are read by tilefmm's own code, in process."""
    code = 0 if format is None else FORMAT_CODES[format]
    mask = _types_mask(types)
    if _isolated.wanted() and _is_hdf5(path, code):
        got = _isolated.read(_lib.path, path, code, mask, attributes)
        if got is not None:
            return _bodies_of(got)
    options = ReadOptionsC(format=code, types=mask,
                           attributes=1 if attributes else 0, flag=b"types")
    snap = SnapshotC()
    message = ctypes.create_string_buffer(MESSAGE_SIZE)
    status = lib.tfmm_snapshot_read(str(path).encode(), ctypes.byref(options),
                                    ctypes.byref(snap), message, MESSAGE_SIZE)
    try:
        if status != 0:
            raise_status(status, message.value.decode(errors="replace"))
        n = snap.n
        u = snap.units
        units = Units(u.mass, u.length, u.velocity, u.current,
                      u.temperature) if u.mass > 0 else None
        return Bodies(
            positions=_array(snap.pos, (n, 3), np.float64),
            velocities=_array(snap.vel, (n, 3), np.float64),
            masses=_array(snap.mass, (n,), np.float64),
            ids=_array(snap.ids, (n,), np.uint64),
            time=snap.time, units=units,
            units_source=UNITS_SOURCES.get(snap.units_source),
            format=FORMATS.get(snap.format, "unknown"),
            accelerations=_array(snap.acc, (n, 3), np.float64),
            potentials=_array(snap.pot, (n,), np.float64),
            bins=_array(snap.bins, (n,), np.int8),
            parameters=_attrs(snap.params, snap.nparams),
            state=_attrs(snap.state, snap.nstate) if snap.nstate else None,
            note=snap.note.decode() if snap.note else None)
    finally:
        lib.tfmm_snapshot_free(ctypes.byref(snap))


def _attr_array(items):
    """A tfmm_attr array of (name, value) text pairs, and the bytes it
    points to (kept alive by the caller)."""
    keep = [(str(k).encode(), str(v).encode()) for k, v in items]
    arr = (AttrC * max(len(keep), 1))()
    for i, (k, v) in enumerate(keep):
        arr[i].name, arr[i].value = k, v
    return arr, keep


def write(path, positions, velocities, masses, ids=None, time=0.0,
          accelerations=None, potentials=None, bins=None, parameters=None,
          state=None, units=None, G=0.0, checkpoint=False, fields="all",
          single=False, compression=0):
    """Writes an HDF5 snapshot at path in the layout and units `tilefmm
    run` writes (tfmm_snapshot_write): atomically, through a temporary
    renamed over path. units: None for N-body units (G = 1), else a Units
    (cgs). G: newton_G in /PhysicalConstants (0: not written). parameters,
    state: {name: value} for /Parameters and /RunState (text). checkpoint:
    every dataset exact (no shift, double precision, no compression), as a
    restart needs; otherwise a snapshot for readers: coordinates shifted
    into the box (Header Shift), fields ("all" or a list of
    "Velocities", "Accelerations", "Potentials"), single precision and
    gzip compression as asked."""
    pos = _arrays.vectors("positions", positions)
    n = pos.shape[0]
    vel = _arrays.vectors("velocities", velocities, n)
    mass = _arrays.masses("masses", masses, n)
    ident = _arrays.ids("ids", ids, n)
    if ident is None:
        ident = np.arange(1, n + 1, dtype=np.uint64)
    acc = None if accelerations is None else \
        _arrays.vectors("accelerations", accelerations, n)
    pot = None if potentials is None else \
        _arrays.scalars("potentials", potentials, n)
    tb = None if bins is None else np.ascontiguousarray(bins, dtype=np.int8)
    if tb is not None and tb.shape != (n,):
        raise ValueError(f"bins: expected shape ({n},), got {tb.shape}")
    params, keep_p = _attr_array((parameters or {}).items())
    run, keep_s = _attr_array((state or {}).items())
    u = UnitSystemC(0, 0, 0, 1, 1) if units is None else UnitSystemC(
        units.mass, units.length, units.velocity, units.current,
        units.temperature)
    snap = SnapshotC(
        n=n, time=float(time), pos=_arrays.pointer(pos),
        vel=_arrays.pointer(vel), mass=_arrays.pointer(mass),
        acc=None if acc is None else _arrays.pointer(acc),
        pot=None if pot is None else _arrays.pointer(pot),
        ids=_arrays.pointer(ident),
        bins=None if tb is None else tb.ctypes.data_as(P(ctypes.c_byte)),
        params=ctypes.cast(params, P(AttrC)), nparams=len(keep_p),
        state=ctypes.cast(run, P(AttrC)), nstate=len(keep_s),
        units=u, G=float(G))
    output = None
    if not checkpoint:
        names = {"Velocities": VELOCITIES, "Accelerations": ACCELERATIONS,
                 "Potentials": POTENTIALS}
        mask = VELOCITIES | ACCELERATIONS | POTENTIALS if fields == "all" else 0
        if fields != "all":
            for name in fields:
                if name not in names and name not in (
                        "Coordinates", "Masses", "ParticleIDs"):
                    raise ValueError(f"fields: unknown dataset {name!r}")
                mask |= names.get(name, 0)
        output = SnapshotOutputC(fields=mask, single=1 if single else 0,
                                 compression=int(compression))
    message = ctypes.create_string_buffer(MESSAGE_SIZE)
    status = lib.tfmm_snapshot_write(
        str(path).encode(), ctypes.byref(snap),
        None if output is None else ctypes.byref(output), message,
        MESSAGE_SIZE)
    if status != 0:
        raise_status(status, message.value.decode(errors="replace"))


def probe(path):
    """The format of the file at path, told by its first bytes: "hdf5",
    "gadget2", "tipsy", or None."""
    return FORMATS.get(lib.tfmm_snapshot_probe(str(path).encode()))


def has_hdf5():
    """Whether the library was built with HDF5 (HDF5 snapshots)."""
    return bool(lib.tfmm_has_hdf5())
