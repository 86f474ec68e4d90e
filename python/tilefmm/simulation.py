"""The library's simulation (tfmm_sim): it owns the bodies, their forces,
the step and the solver, and advances them with the kick-drift-kick
leapfrog (one global step dt, or individual steps with eta > 0), on the
GPU from one step to the next when the solver runs there."""

import ctypes
from dataclasses import dataclass

import numpy as np

from . import _arrays, _lib, _options, snapshot
from ._forces import stats_dict
from ._handle import Handle
from ._lib import lib
from .errors import raise_status
from .state import CHOICE_FIELDS, State


@dataclass
class Diagnostics:
    """tfmm_diagnostics at a synchronisation point, and the relative
    energy error (E - E_initial) / |E_initial|."""

    mass: float
    kinetic: float
    potential: float
    total: float
    virial_ratio: float
    momentum: np.ndarray
    angular_momentum: np.ndarray
    centre_of_mass: np.ndarray
    energy_error: float


def _choice_in(choice):
    """A State's choice (a dict of tfmm_choice's fields, or None) as the
    library's struct; None or missing fields: zero (chosen afresh)."""
    c = _lib.Choice()
    for k, kind in CHOICE_FIELDS:
        setattr(c, k, kind((choice or {}).get(k, 0)))
    return c


def _auto_or(kind):
    return lambda text: "auto" if text == "auto" else kind(text)


def _flag(text):
    if text not in ("true", "false"):
        raise ValueError(f"expected true or false, got {text!r}")
    return text == "true"


# A checkpoint's /Parameters (tilefmm run's names, apps/run_options_params.c)
# and the option each restores here, parsed from its text.
_RESTART_KEYS = {
    "TimeIntegration:dt": ("dt", float),
    "TimeIntegration:dt_max": ("dt_max", float),
    "TimeIntegration:dt_min": ("dt_min", float),
    "Gravity:eta": ("eta", float),
    "Gravity:G": ("G", float),
    "Gravity:eps": ("eps", float),
    "Gravity:softening": ("softening", str),
    "Gravity:method": ("method", str),
    "Gravity:precision": ("precision", str),
    "Gravity:accuracy": ("accuracy", float),
    "Gravity:measure": ("measure", str),
    "Gravity:error_sample": ("error_sample", int),
    "Gravity:verify": ("verify", _flag),
    "Gravity:theta": ("theta", _auto_or(float)),
    "Gravity:order": ("order", _auto_or(int)),
    "Gravity:mac": ("mac", str),
    "Gravity:far_kernel": ("far_kernel", str),
    "Gravity:leaf_size": ("leaf_size", _auto_or(int)),
    "Gravity:max_depth": ("max_depth", int),
    "Gravity:device": ("device", str),
    "Gravity:schedule": ("schedule", str),
    "Gravity:tree_device": ("tree_device", str),
    "Gravity:far_device": ("far_device", str),
    "GPU:tile": ("gpu_tile", int),
    "GPU:threads_per_body": ("gpu_threads_per_body", int),
    "GPU:unroll": ("gpu_unroll", int),
    "GPU:bodies_per_thread": ("gpu_bodies_per_thread", int),
    "Scheduler:threads": ("num_threads", int),
}
# What a restart may change, as `tilefmm run --restart` lets it: where and
# on how many threads the forces run. The rest is the run's physics and
# solver, which the continuation must keep to be the same run.
_RESTART_FREE = {"device", "schedule", "tree_device", "far_device",
                 "num_threads", "gpu_id"}
# The settings a checkpoint of an older tilefmm lacks, and the values it ran
# with (apps/run_options_saved.c: legacy, before_time_bins, before_measure).
_RESTART_LEGACY = {
    "Gravity:softening": "plummer", "Gravity:precision": "single",
    "Gravity:accuracy": "0.001", "Gravity:mac": "geometric",
    "Gravity:eta": "0", "TimeIntegration:dt_max": "0",
    "TimeIntegration:dt_min": "0", "Gravity:measure": "auto",
    "Gravity:error_sample": "0", "Gravity:verify": "false",
    "Gravity:far_kernel": "newton"}


def _same_setting(option, a, b):
    if option in _options.SIM_OPTIONS:
        return float(a) == float(b)
    return _options._convert(option, a) == _options._convert(option, b)


def _restart_options(path, parameters, given):
    """The options of a checkpoint's continuation: its /Parameters (whose
    checksum the library's reader has checked), as `tilefmm run --restart`
    takes them, with the options given; one that contradicts the
    checkpoint's physics or solver is refused, naming both."""
    if not parameters:
        return dict(given)  # no settings saved: the options as given
    params = {**_RESTART_LEGACY, **parameters}
    saved = {}
    for key, (option, kind) in _RESTART_KEYS.items():
        if key in params:
            try:
                saved[option] = kind(params[key])
            except ValueError as e:
                raise ValueError(f"{path}: /Parameters {key} = "
                                 f"{params[key]!r}: {e}") from None
    for option, value in given.items():
        if option in saved and option not in _RESTART_FREE and \
                not _same_setting(option, saved[option], value):
            key = next(k for k, (o, _) in _RESTART_KEYS.items() if o == option)
            raise ValueError(
                f"{path}: this checkpoint was written with {key} = "
                f"{params[key]}, not {value!r} ({option}): a restart "
                f"continues the same run; drop the option, or pass "
                f"restart=False to start a new run from its bodies")
    return {**saved, **given}


def _copy(ptr, shape, dtype):
    count = int(np.prod(shape))
    if not ptr:
        return None
    return np.ctypeslib.as_array(ptr, shape=(count,)).astype(dtype, copy=True).reshape(shape)


class Simulation(Handle):
    """A simulation of N bodies.

        sim = tilefmm.Simulation(pos, vel, mass, dt=1/128, eps=0.01)
        sim.advance_to(1.0)
        sim.diagnostics().energy_error

    positions, velocities: (N, 3); masses: (N,), each > 0; ids: (N,)
    non-negative integers (default 1..N). Keywords: every solver option
    of tilefmm.forces, and dt (default 1/128), time_initial (0), eta (0:
    one global step), dt_max, dt_min, keep_tree (True: sub-steps refit the
    kept tree; tfmm_sim_config)."""

    def __init__(self, positions, velocities, masses, *, ids=None, **options):
        pos = _arrays.vectors("positions", positions)
        n = pos.shape[0]
        vel = _arrays.vectors("velocities", velocities, n)
        mass = _arrays.masses("masses", masses, n)
        ident = _arrays.ids("ids", ids, n)
        cfg = _options.sim_config(options)
        handle = ctypes.c_void_p()
        status = lib.tfmm_sim_create(
            ctypes.byref(handle), ctypes.byref(cfg), n, _arrays.pointer(pos),
            _arrays.pointer(vel), _arrays.pointer(mass),
            None if ident is None else _arrays.pointer(ident))
        self._adopt(handle, status, cfg)

    @classmethod
    def restore(cls, state, **options):
        """A simulation continuing from a State (Simulation.state(), or a
        checkpoint read with tilefmm.snapshot.read): the same step, time
        and forces, so that with the same options it goes on as the saved
        one would have, bit for bit."""
        self = cls.__new__(cls)
        pos = _arrays.vectors("state.positions", state.positions)
        n = pos.shape[0]
        vel = _arrays.vectors("state.velocities", state.velocities, n)
        mass = _arrays.masses("state.masses", state.masses, n)
        acc = _arrays.vectors("state.accelerations", state.accelerations, n)
        pot = _arrays.scalars("state.potentials", state.potentials, n)
        ident = _arrays.ids("state.ids", state.ids, n)
        bins = None if state.bins is None else \
            np.ascontiguousarray(state.bins, dtype=np.int8)
        if bins is not None and bins.shape != (n,):
            raise ValueError(f"state.bins: expected shape ({n},), got {bins.shape}")
        cfg = _options.sim_config(options)
        st = _lib.SimState(
            n=n, pos=_arrays.pointer(pos), vel=_arrays.pointer(vel),
            mass=_arrays.pointer(mass), acc=_arrays.pointer(acc),
            pot=_arrays.pointer(pot),
            ids=None if ident is None else _arrays.pointer(ident),
            step=int(state.step), time_initial=float(state.time_initial),
            energy_initial=float(state.energy_initial), ticks=int(state.ticks),
            tick=float(state.tick),
            bins=None if bins is None else _arrays.pointer(bins),
            choice=_choice_in(getattr(state, "choice", None)))
        handle = ctypes.c_void_p()
        status = lib.tfmm_sim_restore(ctypes.byref(handle), ctypes.byref(cfg),
                                      ctypes.byref(st))
        self._adopt(handle, status, cfg)
        return self

    @classmethod
    def from_snapshot(cls, path, restart=True, **options):
        """A simulation from a snapshot (HDF5 in the GADGET/SWIFT layout,
        GADGET-2 or Tipsy: tilefmm.read): a
        checkpoint (with /RunState, as save_snapshot(checkpoint=True) and
        `tilefmm run` write) is restored when restart is True, with the
        settings of its /Parameters as `tilefmm run --restart` takes them
        (softening, eps, G, dt, theta, order, ...), so that it continues
        bit for bit; options may change the device, schedule and threads,
        and any other option must restate the checkpoint's (ValueError
        otherwise). With restart False, or a plain snapshot, the file's
        bodies are initial conditions at its Time (options may still set
        time_initial)."""
        snap = snapshot.read(path)
        if restart and snap.state is not None:
            sim = cls.restore(snap.state,
                              **_restart_options(path, snap.parameters, options))
        else:
            options.setdefault("time_initial", snap.time)
            sim = cls(snap.positions, snap.velocities, snap.masses, ids=snap.ids,
                      **options)
        sim.initial_conditions = snap.parameters.get("InitialConditions:type",
                                                     str(path))
        return sim

    # What /Parameters InitialConditions:type says (a file, as tilefmm run
    # writes the --ic it read; bodies given from Python: "python").
    initial_conditions = "python"

    def _adopt(self, handle, status, cfg):
        self._handle = handle
        self.dt = cfg.dt
        self.config = _options.describe(cfg.solver)
        self.step_config = {k: getattr(cfg, k) for k in _options.SIM_OPTIONS}
        if status != 0:
            message = lib.tfmm_sim_message(handle).decode() if handle else ""
            self.close()
            raise_status(status, message)

    @staticmethod
    def _destroy(handle):
        lib.tfmm_sim_destroy(handle)

    _what = "the simulation"

    def _call(self, fn, *args):
        status = fn(self._live(), *args)
        if status != 0:
            raise_status(status, lib.tfmm_sim_message(self._handle).decode())

    def __len__(self):
        return lib.tfmm_sim_count(self._live())

    def start(self):
        """Computes the forces and the initial energy if not known yet."""
        self._call(lib.tfmm_sim_start)

    def step(self, n=1):
        """Takes n >= 0 steps."""
        n = _arrays.count("n", n, least=0)
        self._call(lib.tfmm_sim_step, n)

    def advance_to(self, t):
        """Steps on to the first synchronisation point at or after t."""
        t = _options._real("t", t)
        self._call(lib.tfmm_sim_advance_to, t)

    @property
    def time(self):
        return lib.tfmm_sim_time(self._live())

    @property
    def steps(self):
        return lib.tfmm_sim_steps(self._live())

    @property
    def syncs(self):
        """Synchronisation points passed since time_initial."""
        return lib.tfmm_sim_syncs(self._live())

    @property
    def synchronised(self):
        return bool(lib.tfmm_sim_synchronised(self._live()))

    @property
    def device(self):
        """Where the solver (and the bodies) live: 'cpu' or 'gpu'."""
        solver = lib.tfmm_sim_solver(self._live())
        return lib.tfmm_device_name(lib.tfmm_solver_device(solver)).decode()

    def bins(self):
        """Bodies per time bin, bin b taking steps of dt_max / 2^(K - b)."""
        counts = (ctypes.c_int64 * 64)()
        k = lib.tfmm_sim_bins(self._live(), counts, 64)
        return np.array(counts[:min(k, 63) + 1], dtype=np.int64)

    def step_criterion(self, eta):
        """(shortest sqrt(2 eta eps / |a|) over the bodies, the number of
        bodies whose criterion asks for less than the step)."""
        shortest, longer = ctypes.c_double(), ctypes.c_size_t()
        self._call(lib.tfmm_sim_step_criterion, _options._real("eta", eta),
                   ctypes.byref(shortest), ctypes.byref(longer))
        return shortest.value, longer.value

    def diagnostics(self):
        """Conserved quantities now (a synchronisation point)."""
        d = _lib.Diagnostics()
        err = ctypes.c_double()
        self._call(lib.tfmm_sim_diagnostics, ctypes.byref(d), ctypes.byref(err))
        return Diagnostics(
            mass=d.mass, kinetic=d.kinetic, potential=d.potential,
            total=d.total, virial_ratio=d.virial_ratio,
            momentum=np.array(d.momentum[:]),
            angular_momentum=np.array(d.angular_momentum[:]),
            centre_of_mass=np.array(d.centre_of_mass[:]),
            energy_error=err.value)

    def state(self):
        """The state as numpy copies (see State); the accelerations and
        potentials are NaN before the forces are first computed."""
        s = _lib.SimState()
        self._call(lib.tfmm_sim_save, ctypes.byref(s))
        n = s.n
        return State(
            positions=_copy(s.pos, (n, 3), np.float64),
            velocities=_copy(s.vel, (n, 3), np.float64),
            masses=_copy(s.mass, (n,), np.float64),
            accelerations=_copy(s.acc, (n, 3), np.float64),
            potentials=_copy(s.pot, (n,), np.float64),
            ids=_copy(s.ids, (n,), np.uint64),
            step=s.step, time_initial=s.time_initial,
            energy_initial=s.energy_initial, ticks=s.ticks, tick=s.tick,
            bins=_copy(s.bins, (n,), np.int8),
            choice={k: getattr(s.choice, k) for k, _ in CHOICE_FIELDS})

    @property
    def positions(self):
        return self.state().positions

    @property
    def velocities(self):
        return self.state().velocities

    @property
    def stats(self):
        """What the last start/step/advance_to did (tfmm_step_stats)."""
        s = lib.tfmm_sim_stats(self._live()).contents
        return {f: getattr(s, f) for f, _ in _lib.StepStats._fields_}

    @property
    def solver_stats(self):
        """The last force evaluation's tfmm_stats."""
        solver = lib.tfmm_sim_solver(self._live())
        return stats_dict(lib.tfmm_solver_stats(solver).contents)

    def save_snapshot(self, path, checkpoint=False, parameters=None,
                      units=None):
        """Writes an HDF5 snapshot through the library's writer, in the
        layout and units of `tilefmm run`'s (readable by `tilefmm forces
        --in`, swiftsimio, yt, pynbody, h5py): the bodies and their forces
        at the current time, coordinates shifted into the box as `tilefmm
        run` stores them; with checkpoint=True, /RunState too and every
        dataset exact, so that Simulation.from_snapshot continues the run
        bit for bit. parameters: extra /Parameters entries
        {"Section:key": value}. units: the unit system of the numbers (a
        tilefmm.io.Units in cgs), None for N-body units."""
        clock = lib.tfmm_sim_bins(self._live(), None, 0) > 0
        snapshot.write(path, self.state(),
                       parameters={**self.parameters(), **(parameters or {})},
                       checkpoint=checkpoint, clock=clock, device=self.device,
                       units=units, G=self.config["G"])

    def parameters(self):
        """The settings as `tilefmm run` names them in a snapshot's
        /Parameters ("Gravity:eps": "0.01", ...), as text: all that a
        restart must keep, so that `tilefmm run --restart` continues a
        checkpoint written here (the initial conditions named as run names
        a file it read, the seed its default)."""
        c, s = self.config, self.step_config
        out = {"InitialConditions:type": self.initial_conditions,
               "InitialConditions:n": str(len(self)),
               "InitialConditions:seed": "1"}
        out.update({f"TimeIntegration:{k}": repr(float(s[k]))
                    for k in ("dt", "dt_max", "dt_min")})
        out["Gravity:eta"] = repr(float(s["eta"]))
        for key in ("G", "eps", "softening", "method", "precision", "accuracy",
                    "theta", "order", "mac", "far_kernel", "leaf_size",
                    "max_depth", "device", "schedule", "tree_device",
                    "far_device"):
            value = c[key]
            out[f"Gravity:{key}"] = repr(value) if isinstance(value, float) else str(value)
        for key in ("tile", "threads_per_body", "unroll", "bodies_per_thread"):
            out[f"GPU:{key}"] = str(c[f"gpu_{key}"])
        out["Scheduler:threads"] = str(c["num_threads"])
        return out
