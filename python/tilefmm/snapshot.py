"""HDF5 snapshots in the GADGET/SWIFT layout that `tilefmm run` writes and
`tilefmm forces --in`, `run --ic` and `run --restart` read (apps/snapshot.h):

  /Header      NumPart_ThisFile, NumPart_Total, NumPart_Total_HighWord
               (uint32[6]), MassTable (float64[6]), Time, Redshift,
               BoxSize, Omega0, OmegaLambda, HubbleParam (float64),
               NumFilesPerSnapshot, Dimension, Flag_* (int32)
  /PartType1   Coordinates, Velocities, Accelerations (float64 n x 3),
               Masses, Potentials (float64 n), ParticleIDs (uint64 n),
               TimeBins (int8 n, checkpoints of individual steps)
  /Parameters  one fixed-length string attribute per parameter
  /RunState    checkpoints: format, step, time_initial, energy_initial,
               device (and ticks, tick with individual steps)

written with h5py (imported on first use), chunked with Fletcher-32
checksums, in the HDF5 1.8 format, to a temporary file renamed over the
destination."""

import os
import tempfile
from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import _arrays

CHECKPOINT_FORMAT = "tilefmm-run-checkpoint-1"  # apps/run_state.c
NTYPES = 6
BODY_TYPE = 1  # GADGET's dark matter: collisionless, gravity only
CHUNK_BYTES = 1 << 20


def _h5py():
    try:
        import h5py
    except ImportError as e:
        raise ImportError("tilefmm.snapshot needs h5py: pip install h5py") from e
    return h5py


@dataclass
class Snapshot:
    """A snapshot's bodies; state is the restart State of a checkpoint
    (None for a plain snapshot)."""

    time: float
    positions: np.ndarray
    velocities: np.ndarray
    masses: np.ndarray
    ids: np.ndarray
    accelerations: Optional[np.ndarray]
    potentials: Optional[np.ndarray]
    parameters: dict
    state: Optional[object] = None


def _string_attr(h5py, group, name, value):
    text = str(value).encode()
    tid = h5py.h5t.C_S1.copy()
    tid.set_size(len(text) + 1)
    tid.set_strpad(h5py.h5t.STR_NULLTERM)
    tid.set_cset(h5py.h5t.CSET_UTF8)
    group.attrs.create(name, np.array(text, dtype=f"S{len(text) + 1}"),
                       dtype=h5py.Datatype(tid))


def _dataset(group, name, data, dtype):
    row_bytes = np.dtype(dtype).itemsize * (data.shape[1] if data.ndim == 2 else 1)
    rows = max(1, min(data.shape[0], CHUNK_BYTES // row_bytes))
    group.create_dataset(name, data=data, dtype=dtype, fletcher32=True,
                         chunks=(rows,) + data.shape[1:])


def _group(h5py, f, name, ordered):
    """A group whose attributes all stay in its object header (which has a
    checksum), in creation order when ordered: as apps/snapshot.c's."""
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_attr_phase_change(65535, 0)
    if ordered:
        gcpl.set_attr_creation_order(h5py.h5p.CRT_ORDER_TRACKED |
                                     h5py.h5p.CRT_ORDER_INDEXED)
    return h5py.Group(h5py.h5g.create(f.id, name.encode(), gcpl=gcpl))


def _header(h5py, f, n, time, positions):
    h = _group(h5py, f, "Header", False)
    count = np.zeros(NTYPES, np.uint32)
    high = np.zeros(NTYPES, np.uint32)
    count[BODY_TYPE] = n & 0xFFFFFFFF
    high[BODY_TYPE] = n >> 32
    a = h.attrs
    a.create("NumPart_ThisFile", count, dtype="<u4")
    a.create("NumPart_Total", count, dtype="<u4")
    a.create("NumPart_Total_HighWord", high, dtype="<u4")
    a.create("MassTable", np.zeros(NTYPES), dtype="<f8")
    for name, value in (("Time", time), ("Redshift", 0.0),
                        ("BoxSize", 2 * float(np.abs(positions).max()))):
        a.create(name, value, dtype="<f8")
    a.create("NumFilesPerSnapshot", 1, dtype="<i4")
    a.create("Dimension", 3, dtype="<i4")
    a.create("Flag_DoublePrecision", 1, dtype="<i4")
    for name, value in (("Omega0", 0.0), ("OmegaLambda", 0.0),
                        ("HubbleParam", 1.0)):
        a.create(name, value, dtype="<f8")
    for flag in ("Flag_Sfr", "Flag_Cooling", "Flag_Feedback",
                 "Flag_StellarAge", "Flag_Metals", "Flag_Entropy_ICs"):
        a.create(flag, 0, dtype="<i4")


def write(path, state, parameters=None, checkpoint=False, clock=False,
          device="cpu", time=None):
    """Writes a snapshot of state (a simulation.State, or anything with
    positions, velocities, masses, ids and optionally accelerations,
    potentials, time) to path atomically. checkpoint adds /RunState
    (and the TimeBins when clock, i.e. individual time steps)."""
    h5py = _h5py()
    pos = _arrays.vectors("positions", state.positions)
    n = pos.shape[0]
    if n >= 2**32:
        raise ValueError(f"positions: {n} bodies; a snapshot holds 1 to 2^32 - 1")
    vel = _arrays.vectors("velocities", state.velocities, n)
    mass = _arrays.masses("masses", state.masses, n)
    ids = _arrays.ids("ids", getattr(state, "ids", None), n)
    if ids is None:
        ids = np.arange(1, n + 1, dtype=np.uint64)
    acc = getattr(state, "accelerations", None)
    pot = getattr(state, "potentials", None)
    if acc is not None and not np.isfinite(acc).all():
        acc = pot = None  # forces not computed yet
    if time is None:
        time = float(getattr(state, "time", 0.0))
    if checkpoint and acc is None:
        raise ValueError("checkpoint: the forces are not computed yet "
                         "(call start() or step() first)")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tilefmm-", suffix=".hdf5.tmp", dir=directory)
    os.close(fd)
    try:
        with h5py.File(tmp, "w", libver=("v108", "v108")) as f:
            _header(h5py, f, n, time, pos)
            g = f.create_group("PartType1")
            _dataset(g, "Coordinates", pos, "<f8")
            _dataset(g, "Velocities", vel, "<f8")
            _dataset(g, "Masses", mass, "<f8")
            _dataset(g, "ParticleIDs", ids, "<u8")
            if acc is not None:
                _dataset(g, "Accelerations", np.asarray(acc, np.float64), "<f8")
                _dataset(g, "Potentials", np.asarray(pot, np.float64), "<f8")
            if checkpoint and clock and state.bins is not None:
                _dataset(g, "TimeBins", np.asarray(state.bins, np.int8), "<i1")
            params = _group(h5py, f, "Parameters", True)
            for key, value in (parameters or {}).items():
                _string_attr(h5py, params, key, value)
            if checkpoint:
                run = _group(h5py, f, "RunState", True)
                entries = [("format", CHECKPOINT_FORMAT),
                           ("step", str(int(state.step))),
                           ("time_initial", repr(float(state.time_initial))),
                           ("energy_initial", repr(float(state.energy_initial))),
                           ("device", device)]
                if clock:
                    entries += [("ticks", str(int(state.ticks))),
                                ("tick", repr(float(state.tick)))]
                for key, value in entries:
                    _string_attr(h5py, run, key, value)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _text(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray) and value.shape == ():
        return _text(value[()])
    return str(value)


def read(path, part_type=None):
    """Reads a snapshot: the bodies of PartType<part_type> (None: the
    file's one particle type), /Parameters as text, and for a checkpoint
    of tilefmm run (/RunState format tilefmm-run-checkpoint-1) the State
    a restart needs (Snapshot.state)."""
    h5py = _h5py()
    from .simulation import State
    with h5py.File(path, "r") as f:
        header = f["Header"].attrs
        # tilefmm run writes the Header as SWIFT does: one-element arrays.
        time = float(np.asarray(header["Time"]).ravel()[0])
        present = [k for k in range(NTYPES) if f"PartType{k}" in f]
        if part_type is None:
            if len(present) != 1:
                raise ValueError(f"{path}: holds particle types {present}; "
                                 "choose one with part_type=")
            part_type = present[0]
        if f"PartType{part_type}" not in f:
            raise ValueError(f"{path}: no PartType{part_type} (types {present})")
        g = f[f"PartType{part_type}"]
        pos = np.asarray(g["Coordinates"], np.float64)
        if "Shift" in header:
            # Coordinates stored shifted into [0, BoxSize), as SWIFT
            # records it (tilefmm run's snapshots, for yt): taken off.
            pos = pos - np.asarray(header["Shift"], np.float64).reshape(1, 3)
        n = pos.shape[0]
        vel = np.asarray(g["Velocities"], np.float64) if "Velocities" in g \
            else np.zeros((n, 3))
        if "Masses" in g:
            mass = np.asarray(g["Masses"], np.float64).reshape(n)
        elif "MassTable" in header and header["MassTable"][part_type] > 0:
            mass = np.full(n, float(header["MassTable"][part_type]))
        else:
            raise ValueError(f"{path}: PartType{part_type} has no Masses and "
                             "no MassTable entry")
        ids = np.asarray(g["ParticleIDs"]).astype(np.uint64) if "ParticleIDs" in g \
            else np.arange(1, n + 1, dtype=np.uint64)
        acc = np.asarray(g["Accelerations"], np.float64) if "Accelerations" in g else None
        pot = np.asarray(g["Potentials"], np.float64).reshape(n) if "Potentials" in g else None
        bins = np.asarray(g["TimeBins"], np.int8) if "TimeBins" in g else None
        params = {k: _text(v) for k, v in f["Parameters"].attrs.items()} \
            if "Parameters" in f else {}
        run = {k: _text(v) for k, v in f["RunState"].attrs.items()} \
            if "RunState" in f else None
    state = None
    if run is not None and run.get("format") == CHECKPOINT_FORMAT:
        if acc is None or pot is None:
            raise ValueError(f"{path}: a checkpoint needs Accelerations and Potentials")
        state = State(positions=pos, velocities=vel, masses=mass,
                      accelerations=acc, potentials=pot, ids=ids,
                      step=int(run["step"]),
                      time_initial=float(run["time_initial"]),
                      energy_initial=float(run["energy_initial"]),
                      ticks=int(float(run.get("ticks", 0))),
                      tick=float(run.get("tick", 0.0)),
                      bins=bins if "ticks" in run else None)
    return Snapshot(time=time, positions=pos, velocities=vel, masses=mass,
                    ids=ids, accelerations=acc, potentials=pot,
                    parameters=params, state=state)
