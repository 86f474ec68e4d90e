"""Initial conditions in N-body units (G = M = 1, E = -1/4 for the models
in equilibrium), equal masses 1/n, centre of mass at rest at the origin;
the same bits for the same (n, seed) on every machine (tfmm_ic_*).

Each returns Bodies(positions (n, 3), velocities (n, 3), masses (n,)),
a named tuple: pos, vel, mass = tilefmm.ic.plummer(1000, seed=1)."""

from typing import NamedTuple

import numpy as np

from . import _arrays
from ._lib import lib
from .errors import raise_status


class Bodies(NamedTuple):
    positions: np.ndarray
    velocities: np.ndarray
    masses: np.ndarray


def _generate(model, n, seed, least=1):
    n = _arrays.count("n", n, least)
    seed = _arrays.seed("seed", seed)
    pos = np.full((n, 3), np.nan)
    vel = np.full((n, 3), np.nan)
    mass = np.full(n, np.nan)
    fn = getattr(lib, "tfmm_ic_" + model)
    status = fn(n, seed, _arrays.pointer(pos), _arrays.pointer(vel),
                _arrays.pointer(mass))
    if status != 0:
        raise_status(status, f"tfmm_ic_{model}(n={n}, seed={seed}) failed")
    return Bodies(pos, vel, mass)


def plummer(n, seed=1):
    """An isotropic Plummer sphere (Aarseth, Henon & Wielen 1974), scale
    length 3 pi / 16."""
    return _generate("plummer", n, seed)


def hernquist(n, seed=1):
    """A Hernquist (1990) sphere, a = 1/3, cut at r = 666 (99.9% of the
    mass), velocities from its isotropic distribution function."""
    return _generate("hernquist", n, seed)


def uniform(n, seed=1):
    """A homogeneous sphere of radius 6/5, Gaussian velocities in virial
    equilibrium (K = 1/4 exactly)."""
    return _generate("uniform", n, seed)


def cold(n, seed=1):
    """The cold collapse: a homogeneous sphere of radius 12/5 at rest."""
    return _generate("cold", n, seed)


def merger(n, seed=1):
    """Two Plummer spheres of mass 1/2 on a bound Keplerian orbit
    (apocentre 4, pericentre 1/2, first pericentre at t = 10.6); n >= 2."""
    return _generate("merger", n, seed, least=2)


MODELS = {"plummer": plummer, "hernquist": hernquist, "uniform": uniform,
          "cold": cold, "merger": merger}
