"""HDF5 snapshots in the GADGET/SWIFT layout that `tilefmm run` writes and
`tilefmm forces --in`, `run --ic` and `run --restart` read, written and
read through the library (tfmm_snapshot_write, tfmm_snapshot_read; see
tilefmm.io and docs/formats.md): the same layout, units and shift as the
CLI's, /Parameters as fixed-length strings in order, and for a checkpoint
/RunState (format, step, time_initial, energy_initial, device, ticks,
tick with individual steps, and the planner's state as Choice*: the
CLI's names) with every dataset exact."""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import io
from .state import CHOICE_FIELDS, State

CHECKPOINT_FORMAT = "tilefmm-run-checkpoint-1"  # apps/run_state.c


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
    units: Optional[io.Units] = None


def _choice_name(key):
    """tfmm_choice's field as /RunState names it (apps/run_state.c):
    near_gpu is ChoiceNearGpu."""
    return "Choice" + "".join(w.capitalize() for w in key.split("_"))


def _choice_attrs(choice):
    """The planner's state as /RunState text: integers whole, doubles with
    repr (they read back to the same bits); None: all zero."""
    return {_choice_name(k): repr(float((choice or {}).get(k, 0)))
            if kind is float else str(int((choice or {}).get(k, 0)))
            for k, kind in CHOICE_FIELDS}


def _choice_of(run):
    """The planner's state of a checkpoint's /RunState, None when it has
    none (one older than the planner: the restart chooses afresh)."""
    if _choice_name("chosen") not in run:
        return None
    # ChoiceFailedCost came after the first checkpoints with a choice:
    # without it, nothing measured a miss (-1).
    run = dict(run)
    run.setdefault(_choice_name("failed_cost"), "-1")
    # ChoiceEpsilon came with the error criterion's planned epsilon: without
    # it, another criterion (0).
    run.setdefault(_choice_name("epsilon"), "0")
    return {k: kind(float(run[_choice_name(k)])) if kind is float
            else int(run[_choice_name(k)]) for k, kind in CHOICE_FIELDS}


def write(path, state, parameters=None, checkpoint=False, clock=False,
          device="cpu", time=None, units=None, G=0.0):
    """Writes a snapshot of state (a tilefmm.State, or anything with
    positions, velocities, masses, ids and optionally accelerations,
    potentials, time) to path atomically, as `tilefmm run` does. checkpoint
    adds /RunState (and the TimeBins when clock, i.e. individual time
    steps) and keeps every dataset exact; otherwise the coordinates are
    stored shifted into the box, as SWIFT and yt want them. units: None
    for N-body units, else a tilefmm.io.Units; G: newton_G written in
    /PhysicalConstants (0: none)."""
    acc = getattr(state, "accelerations", None)
    pot = getattr(state, "potentials", None)
    if acc is not None and not np.isfinite(acc).all():
        acc = pot = None  # forces not computed yet
    if time is None:
        time = float(getattr(state, "time", 0.0))
    if checkpoint and acc is None:
        raise ValueError("checkpoint: the forces are not computed yet "
                         "(call start() or step() first)")
    run = None
    bins = None
    if checkpoint:
        run = {"format": CHECKPOINT_FORMAT,
               "step": str(int(state.step)),
               "time_initial": repr(float(state.time_initial)),
               "energy_initial": repr(float(state.energy_initial)),
               "device": device}
        run.update(_choice_attrs(getattr(state, "choice", None)))
        if clock:
            run["ticks"] = str(int(state.ticks))
            run["tick"] = repr(float(state.tick))
            bins = state.bins
    io.write(path, state.positions, state.velocities, state.masses,
             ids=getattr(state, "ids", None), time=time, accelerations=acc,
             potentials=pot, bins=bins, parameters=parameters, state=run,
             units=units, G=G, checkpoint=checkpoint)


def read(path, part_type=None):
    """Reads a snapshot (HDF5, or a GADGET-2 or Tipsy file): the bodies of
    PartType<part_type> (None: the file's one particle type), /Parameters
    as text, and for a checkpoint of tilefmm run (/RunState format
    tilefmm-run-checkpoint-1) the State a restart needs (Snapshot.state)."""
    b = io.read(path, types=part_type)
    run = b.state
    state = None
    if run is not None and run.get("format") == CHECKPOINT_FORMAT:
        if b.accelerations is None or b.potentials is None:
            raise ValueError(f"{path}: a checkpoint needs Accelerations and Potentials")
        state = State(positions=b.positions, velocities=b.velocities,
                      masses=b.masses, accelerations=b.accelerations,
                      potentials=b.potentials, ids=b.ids,
                      step=int(run["step"]),
                      time_initial=float(run["time_initial"]),
                      energy_initial=float(run["energy_initial"]),
                      ticks=int(float(run.get("ticks", 0))),
                      tick=float(run.get("tick", 0.0)),
                      bins=b.bins if "ticks" in run else None,
                      choice=_choice_of(run))
    return Snapshot(time=b.time, positions=b.positions,
                    velocities=b.velocities, masses=b.masses, ids=b.ids,
                    accelerations=b.accelerations, potentials=b.potentials,
                    parameters=b.parameters, state=state, units=b.units)
