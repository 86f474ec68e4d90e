"""Initial conditions: the properties include/tilefmm.h promises,
checked with numpy (the energy by a numpy direct sum)."""

import numpy as np
import pytest

import tilefmm
from conftest import direct_sum

MODELS = ["plummer", "hernquist", "uniform", "cold", "merger"]


def energy(pos, vel, mass):
    _, pot = direct_sum(pos, mass)
    kinetic = 0.5 * (mass * (vel**2).sum(axis=1)).sum()
    return kinetic, 0.5 * (mass * pot).sum()


@pytest.mark.parametrize("model", MODELS)
def test_units_centre_and_determinism(model, seed):
    n = 2001
    gen = getattr(tilefmm.ic, model)
    pos, vel, mass = gen(n, seed=seed)
    assert pos.shape == (n, 3) and vel.shape == (n, 3) and mass.shape == (n,)
    assert np.isfinite(pos).all() and np.isfinite(vel).all()
    assert np.all(mass > 0) and mass.sum() == pytest.approx(1, abs=1e-12)
    com = (mass[:, None] * pos).sum(axis=0)
    momentum = (mass[:, None] * vel).sum(axis=0)
    assert np.abs(com).max() < 1e-12 and np.abs(momentum).max() < 1e-12
    again = gen(n, seed=seed)
    assert all(np.array_equal(a, b) for a, b in zip((pos, vel, mass), again))
    other = gen(n, seed=seed + 1)
    assert not np.array_equal(pos, other.positions)


@pytest.mark.parametrize("model,tolerance", [("plummer", 0.02), ("uniform", 0.02),
                                             ("cold", 0.02)])
def test_energy_is_a_quarter(model, tolerance, seed):
    pos, vel, mass = getattr(tilefmm.ic, model)(4000, seed=seed)
    kinetic, potential = energy(pos, vel, mass)
    assert kinetic + potential == pytest.approx(-0.25, abs=tolerance), seed
    if model == "uniform":
        assert kinetic == pytest.approx(0.25, rel=1e-12)
    if model == "cold":
        assert kinetic == 0
    if model == "plummer":
        assert 2 * kinetic / -potential == pytest.approx(1, abs=0.1)


def test_plummer_radii():
    """Half the mass within 0.7686 of the scale length's 3 pi / 16 x 1.305
    (Plummer's half-mass radius a / sqrt(2^(2/3) - 1))."""
    pos, _, _ = tilefmm.ic.plummer(20000, seed=7)
    r = np.sort(np.linalg.norm(pos, axis=1))
    a = 3 * np.pi / 16
    assert r[10000] == pytest.approx(a / np.sqrt(2 ** (2 / 3) - 1), rel=0.05)


def test_merger_spheres_apart():
    pos, vel, mass = tilefmm.ic.merger(2000, seed=3)
    first, second = pos[:1000], pos[1000:]
    d = np.median(first, axis=0) - np.median(second, axis=0)
    assert np.linalg.norm(d) == pytest.approx(4, rel=0.1)  # at apocentre
    assert abs(d[2]) < 0.1  # in the x-y plane
    assert mass[:1000].sum() == pytest.approx(0.5)
    # The first sphere on +x moving along +y: angular momentum along +z.
    assert np.median(first[:, 0]) > 0 and np.mean(vel[:1000, 1]) > 0


G_KPC_KMS_MSUN = 4.30091e-6  # kpc (km/s)^2 / Msun


@pytest.mark.parametrize("model", MODELS)
def test_physical_units_scale_the_same_model(model, seed):
    """mass=, radius=, G= scale the N-body model as `run --model-mass
    --model-radius` does: masses x M, positions x R, velocities x
    sqrt(G M / R), bit for bit against the same products in numpy."""
    M, R, G = 1e10, 5.0, G_KPC_KMS_MSUN
    gen = getattr(tilefmm.ic, model)
    nbody = gen(500, seed=seed)
    phys = gen(500, seed=seed, mass=M, radius=R, G=G)
    v = np.sqrt(G * M / R)
    assert np.array_equal(phys.masses, nbody.masses * M)
    assert np.array_equal(phys.positions, nbody.positions * R)
    assert np.array_equal(phys.velocities, nbody.velocities * v)
    assert phys.masses.sum() == pytest.approx(M, rel=1e-12)


def test_physical_plummer_is_in_virial_equilibrium(seed):
    """A Plummer sphere of 1e10 Msun and virial radius 5 kpc in kpc, km/s
    and Msun: 2K/|W| near 1 and E = -G M^2 / (4 R), by a float64 direct sum
    with that G; the N-body figures would be off by G M / R = 8.6e3."""
    M, R, G = 1e10, 5.0, G_KPC_KMS_MSUN
    pos, vel, mass = tilefmm.ic.plummer(4000, seed=seed, mass=M, radius=R,
                                        G=G)
    _, pot = direct_sum(pos, mass, G=G)
    kinetic = 0.5 * (mass * (vel**2).sum(axis=1)).sum()
    potential = 0.5 * (mass * pot).sum()
    assert 2 * kinetic / -potential == pytest.approx(1, abs=0.1), seed
    assert kinetic + potential == pytest.approx(-G * M**2 / (4 * R),
                                                rel=0.08), seed


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_physical_scale_refused_by_name(bad):
    for key in ("mass", "radius", "G"):
        with pytest.raises(ValueError, match=key):
            tilefmm.ic.plummer(10, **{key: bad})
    with pytest.raises(TypeError, match="radius"):
        tilefmm.ic.plummer(10, radius="5")
