"""Initial conditions in N-body units (G = M = 1, E = -1/4 for the models
in equilibrium, virial radius 1), equal masses 1/n, centre of mass at rest
at the origin; the same bits for the same (n, seed) on every machine
(tfmm_ic_*).

Each returns Bodies(positions (n, 3), velocities (n, 3), masses (n,)),
a named tuple: pos, vel, mass = tilefmm.ic.plummer(1000, seed=1).

In physical units, each model is the same physical model scaled as
`tilefmm run --model-mass M --model-radius R` scales it (tfmm_ic_scale):
masses times M, positions times R, velocities times sqrt(G M / R), so
that its time unit is sqrt(R^3 / (G M)). For example a Plummer sphere
of 1e10 Msun and virial radius 5 kpc in kpc, km/s and Msun
(G = 4.30091e-6 kpc (km/s)^2 / Msun):

    tilefmm.ic.plummer(10000, mass=1e10, radius=5, G=4.30091e-6)

Give the run the same G (Simulation(..., G=4.30091e-6)).
"""

from typing import NamedTuple

import numpy as np

from . import _arrays
from ._lib import lib
from .errors import raise_status


class Bodies(NamedTuple):
    positions: np.ndarray
    velocities: np.ndarray
    masses: np.ndarray


def _scale(name, value):
    """M, R or G: a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float,
                                                         np.integer,
                                                         np.floating)):
        raise TypeError(f"{name}: expected a number, got {value!r}")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name}: must be a finite number > 0, got {value}")
    return float(value)


def _generate(model, n, seed, least=1, mass=1.0, radius=1.0, G=1.0):
    n = _arrays.count("n", n, least)
    seed = _arrays.seed("seed", seed)
    scale = [_scale(k, v) for k, v in (("mass", mass), ("radius", radius),
                                       ("G", G))]
    pos = np.full((n, 3), np.nan)
    vel = np.full((n, 3), np.nan)
    masses = np.full(n, np.nan)
    fn = getattr(lib, "tfmm_ic_" + model)
    status = fn(n, seed, _arrays.pointer(pos), _arrays.pointer(vel),
                _arrays.pointer(masses))
    if status != 0:
        raise_status(status, f"tfmm_ic_{model}(n={n}, seed={seed}) failed")
    status = lib.tfmm_ic_scale(n, *scale, _arrays.pointer(pos),
                               _arrays.pointer(vel), _arrays.pointer(masses))
    if status != 0:
        raise_status(status, f"tfmm_ic_scale(mass={scale[0]}, "
                     f"radius={scale[1]}, G={scale[2]}) failed")
    return Bodies(pos, vel, masses)


def plummer(n, seed=1, *, mass=1.0, radius=1.0, G=1.0):
    """An isotropic Plummer sphere (Aarseth, Henon & Wielen 1974), scale
    length 3 pi / 16 (in N-body units).
    mass, radius, G: the model's total mass and virial radius in units
    where the gravitational constant is G (default 1: N-body units)."""
    return _generate("plummer", n, seed, mass=mass, radius=radius, G=G)


def hernquist(n, seed=1, *, mass=1.0, radius=1.0, G=1.0):
    """A Hernquist (1990) sphere, a = 1/3, cut at r = 666 (99.9% of the
    mass), velocities from its isotropic distribution function (in N-body
    units).
    mass, radius, G: the model's total mass and virial radius in units
    where the gravitational constant is G (default 1: N-body units)."""
    return _generate("hernquist", n, seed, mass=mass, radius=radius, G=G)


def uniform(n, seed=1, *, mass=1.0, radius=1.0, G=1.0):
    """A homogeneous sphere of radius 6/5, Gaussian velocities in virial
    equilibrium (K = 1/4 exactly; in N-body units).
    mass, radius, G: the model's total mass and virial radius in units
    where the gravitational constant is G (default 1: N-body units)."""
    return _generate("uniform", n, seed, mass=mass, radius=radius, G=G)


def cold(n, seed=1, *, mass=1.0, radius=1.0, G=1.0):
    """The cold collapse: a homogeneous sphere of radius 12/5 at rest (in
    N-body units), which falls in pi / 2 sqrt(R^3 / 2) = 4.13 time units.
    mass, radius, G: the model's total mass and virial radius in units
    where the gravitational constant is G (default 1: N-body units)."""
    return _generate("cold", n, seed, mass=mass, radius=radius, G=G)


def merger(n, seed=1, *, mass=1.0, radius=1.0, G=1.0):
    """Two Plummer spheres of mass 1/2 on a bound Keplerian orbit
    (apocentre 4, pericentre 1/2, first pericentre at t = 10.6 in N-body
    units); n >= 2.
    mass, radius, G: the model's total mass and virial radius in units
    where the gravitational constant is G (default 1: N-body units)."""
    return _generate("merger", n, seed, least=2, mass=mass, radius=radius,
                     G=G)


MODELS = {"plummer": plummer, "hernquist": hernquist, "uniform": uniform,
          "cold": cold, "merger": merger}
