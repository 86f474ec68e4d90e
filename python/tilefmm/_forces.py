"""Forces (tfmm_solver_compute) and their errors against the library's
double-precision reference (tfmm_solver_reference_at)."""

import ctypes
import operator
from dataclasses import dataclass

import numpy as np

from . import _arrays, _options
from ._handle import Handle
from ._host import HostPool
from ._lib import lib
from .errors import raise_status


class Solver(Handle):
    """A tfmm_solver: the configuration checked and the workspace (and the
    GPU's buffers) kept from one evaluation to the next. Keyword options:
    see tilefmm.forces. Use as a context manager, or call close()."""

    def __init__(self, _keep=True, **options):
        self._pool = None
        cfg = _options.config(options)
        handle = ctypes.c_void_p()
        status = lib.tfmm_solver_create(ctypes.byref(handle), ctypes.byref(cfg))
        self._handle = handle
        self.config = _options.describe(cfg)
        if status != 0:
            message = lib.tfmm_solver_message(handle).decode() if handle else ""
            self.close()
            raise_status(status, message)
        # On the GPU the results go to pinned memory kept between calls
        # (_host.py): one DMA, not the driver's pageable staging.
        # (A solver of one call, tilefmm.forces, would pin for nothing.)
        if _keep and lib.tfmm_solver_device(handle) == _GPU:
            self._pool = HostPool()

    def close(self):
        """Releases the solver (its GPU memory, the pinned blocks it
        keeps; arrays it returned stay valid)."""
        pool, self._pool = getattr(self, "_pool", None), None
        if pool is not None:
            pool.close()
        super().close()

    @staticmethod
    def _destroy(handle):
        lib.tfmm_solver_destroy(handle)

    _what = "the solver"

    def _fail(self, status):
        raise_status(status, lib.tfmm_solver_message(self._handle).decode())

    @property
    def device(self):
        """Where the solver runs: 'cpu' or 'gpu'."""
        return lib.tfmm_device_name(lib.tfmm_solver_device(self._live())).decode()

    def reserve(self, n):
        """Takes now what the first forces() of n bodies would take inside
        its call (tfmm_solver_reserve): on the GPU, the device buffer of n
        bodies and the pinned buffers that stage numpy's arrays. Optional;
        the results are the same bits either way."""
        n = operator.index(n)
        if not 1 <= n < 2**31:
            raise ValueError(f"reserve: {n} bodies: 1 to 2^31 - 1 are supported")
        status = lib.tfmm_solver_reserve(self._live(), n)
        if status != 0:
            self._fail(status)

    def forces(self, positions, masses):
        """(accelerations (N, 3), potentials (N,)), float64, G applied.
        float64 C-contiguous inputs are passed as they are (no copy); the
        library checks their values, and a bad one is named as the
        binding's checks name it. On the GPU the results are in pinned
        memory (one DMA from the device)."""
        handle = self._live()
        pos = _arrays.vectors("positions", positions, check=False)
        n = pos.shape[0]
        mass = _arrays.masses("masses", masses, n, check=False)
        pool = self._pool
        acc = pool.empty((n, 3)) if pool is not None else np.empty((n, 3))
        pot = pool.empty((n,)) if pool is not None else np.empty(n)
        status = lib.tfmm_solver_compute(
            handle, n, _arrays.pointer(pos), _arrays.pointer(mass),
            _arrays.pointer(acc), _arrays.pointer(pot))
        if status == _INVALID_ARGUMENT:  # the binding's message, if it is
            _arrays.vectors("positions", pos)  # about the bodies
            _arrays.masses("masses", mass, n)
        if status != 0:
            self._fail(status)
        return acc, pot

    def reference_at(self, positions, masses, targets=None):
        """The double-precision reference (compensated sums, the reference
        method's) at the bodies targets (indices; None: all), with this
        solver's G and softening: (accelerations (k, 3), potentials (k,))."""
        pos = _arrays.vectors("positions", positions)
        n = pos.shape[0]
        mass = _arrays.masses("masses", masses, n)
        tgt = np.arange(n, dtype=np.uintp) if targets is None else \
            _targets(targets, n)
        k = tgt.shape[0]
        acc = np.full((k, 3), np.nan)
        pot = np.full(k, np.nan)
        status = lib.tfmm_solver_reference_at(
            self._live(), n, _arrays.pointer(pos), _arrays.pointer(mass), k,
            _arrays.pointer(tgt), _arrays.pointer(acc), _arrays.pointer(pot))
        if status != 0:
            self._fail(status)
        return acc, pot

    @property
    def stats(self):
        """The last evaluation's tfmm_stats as a dict (enums by name)."""
        s = lib.tfmm_solver_stats(self._live()).contents
        return stats_dict(s)


_GPU = 2  # TFMM_DEVICE_GPU
_INVALID_ARGUMENT = 1  # TFMM_ERR_INVALID_ARGUMENT


def stats_dict(s):
    names = {"method": lib.tfmm_method_name, "precision": lib.tfmm_precision_name,
             "schedule": lib.tfmm_schedule_name,
             "far_kernel": lib.tfmm_far_kernel_name}
    out = {}
    for field, _ in type(s)._fields_:
        value = getattr(s, field)
        if field in names:
            value = names[field](value).decode()
        elif field.endswith("device") and field != "device_bytes":
            value = lib.tfmm_device_name(value).decode()
        elif field == "device_name":
            value = value.decode(errors="replace")
        elif field == "time":
            value = {lib.tfmm_phase_name(k).decode(): value[k]
                     for k in range(len(value))}
        elif field in ("tree_time", "error"):
            # error: the measured error (measured 0: not measured).
            value = {f: getattr(value, f) for f, _ in type(value)._fields_}
        elif field == "plan":
            value = value.decode(errors="replace")
        out[field] = value
    return out


def _targets(targets, n):
    arr = np.asarray(targets)
    if arr.dtype.kind not in "iu" or arr.ndim != 1 or arr.size == 0:
        raise TypeError("targets: expected a non-empty 1-d array of body indices")
    if (arr < 0).any() or (arr >= n).any():
        raise ValueError(f"targets: indices must be in [0, {n})")
    return np.ascontiguousarray(arr, dtype=np.uintp)


def forces(positions, masses, **options):
    """Accelerations (N, 3) and potentials (N,) of N bodies, float64, in
    the caller's units (G applied):

        a_i = G sum_j m_j r_ij g(|r_ij|),  phi_i = G sum_j m_j phi(|r_ij|)

    positions: (N, 3); masses: (N,) or (N, 1), each > 0. Every field of
    tfmm_config is a keyword of the same name (README.md, "Options"):
    method ('fmm', 'bh', 'direct', 'reference'), accuracy, theta, order,
    leaf_size, softening ('plummer', 'spline'), eps, G, device ('auto',
    'cpu', 'gpu'), schedule, precision, mac, ... Bad input raises
    ValueError or TypeError naming the argument."""
    with Solver(_keep=False, **options) as solver:
        return solver.forces(positions, masses)


def _percentile(sorted_values, p):
    """Nearest rank, as the CLI's (apps/error_stats.c): the
    ceil(p n / 100)-th smallest."""
    n = len(sorted_values)
    rank = (p * n + 99) // 100
    return float(sorted_values[max(rank, 1) - 1])


@dataclass
class ErrorStats:
    """Relative acceleration errors |a - a_ref| / |a_ref| at the bodies
    targets (the absolute error where a_ref = 0), and the relative
    potential errors, with nearest-rank percentiles."""

    targets: np.ndarray
    relative: np.ndarray
    potential_relative: np.ndarray

    def percentile(self, p):
        """The nearest-rank p-th percentile (p an integer in 0..100) of
        the relative acceleration errors."""
        if not 0 <= p <= 100 or int(p) != p:
            raise ValueError(f"p: an integer in [0, 100], got {p}")
        return _percentile(np.sort(self.relative), int(p))

    @property
    def median(self):
        return self.percentile(50)

    @property
    def p90(self):
        return self.percentile(90)

    @property
    def p99(self):
        return self.percentile(99)

    @property
    def max(self):
        return self.percentile(100)

    def summary(self):
        return {"median": self.median, "p90": self.p90, "p99": self.p99,
                "max": self.max}


def _relative(x, ref):
    """|x - ref| / |ref| per body (rows of 3, or scalars); |x - ref| where
    ref = 0, as the CLI's error_stats_relative."""
    if x.ndim == 2:
        diff, size = np.linalg.norm(x - ref, axis=1), np.linalg.norm(ref, axis=1)
    else:
        diff, size = np.abs(x - ref), np.abs(ref)
    return np.where(size > 0, diff / np.where(size > 0, size, 1), diff)


def errors(positions, masses, accelerations=None, potentials=None, *,
           sample=None, seed=0, **options):
    """The errors of a method against the library's reference: an
    ErrorStats (.median, .p90, .p99, .max, .relative, ...).

    accelerations (and potentials) are the values to judge; None computes
    them with forces(positions, masses, **options). The reference is
    tfmm_solver_reference_at (double precision, compensated sums: the
    reference method) with the same G, eps and softening, at every body,
    or at sample bodies drawn at random with seed (O(N * sample))."""
    pos = _arrays.vectors("positions", positions)
    n = pos.shape[0]
    mass = _arrays.masses("masses", masses, n)
    if accelerations is None:
        accelerations, computed_pot = forces(pos, mass, **options)
        if potentials is None:
            potentials = computed_pot
    acc = _arrays.vectors("accelerations", accelerations, n)
    pot = None if potentials is None else \
        _arrays.scalars("potentials", potentials, n)
    if sample is None:
        targets = np.arange(n)
    else:
        k = _arrays.count("sample", sample)
        rng = np.random.default_rng(_arrays.seed("seed", seed))
        targets = np.sort(rng.choice(n, size=min(k, n), replace=False))
    physics = {k: options[k] for k in ("G", "eps", "softening") if k in options}
    with Solver(method="reference", device="cpu", **physics) as ref:
        acc_ref, pot_ref = ref.reference_at(pos, mass, targets)
    rel_pot = np.full(len(targets), np.nan) if pot is None else \
        _relative(pot[targets], pot_ref)
    return ErrorStats(targets=targets, relative=_relative(acc[targets], acc_ref),
                      potential_relative=rel_pot)
