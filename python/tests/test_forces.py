"""tilefmm.forces against the numpy direct sum of conftest.py."""

import numpy as np
import pytest

import tilefmm
from conftest import clustered, direct_sum, relative, spline_w


def plummer_like(rng, n):
    pos = rng.normal(0, 1, (n, 3)) / np.sqrt(1 + rng.uniform(0, 4, (n, 1)))
    mass = rng.uniform(0.5, 1.5, n)
    return pos, mass / mass.sum()


def test_the_truth_itself_two_bodies():
    """The numpy sum on two bodies against Newton's law by hand: the
    spline beyond its support h = 2.8 eps, Plummer's closed form."""
    pos = np.array([[0.0, 0, 0], [2.0, 0, 0]])
    mass = np.array([3.0, 5.0])
    acc, pot = direct_sum(pos, mass, G=2.0)
    assert np.allclose(acc[0], [2 * 5 / 4, 0, 0], rtol=1e-15)
    assert np.allclose(acc[1], [-2 * 3 / 4, 0, 0], rtol=1e-15)
    assert np.allclose(pot, [-2 * 5 / 2, -2 * 3 / 2], rtol=1e-15)
    acc, pot = direct_sum(pos, mass, eps=0.5, softening="spline")  # h = 1.4
    assert np.allclose(acc[0], [5 / 4, 0, 0], rtol=1e-14)
    acc, pot = direct_sum(pos, mass, eps=1.0)
    assert np.allclose(acc[0], [5 * 2 / 5**1.5, 0, 0], rtol=1e-14)
    w, _ = spline_w(np.array([0.0, 0.5 - 1e-12, 0.5, 1 - 1e-12, 1.0]))
    assert w[0] == pytest.approx(-14 / 5)
    assert w[1] == pytest.approx(w[2]) and w[3] == pytest.approx(w[4])


@pytest.mark.parametrize("eps", [0.0, 1e-3, 0.05, 0.5])
@pytest.mark.parametrize("softening", ["plummer", "spline"])
def test_reference_and_double_direct_match_numpy(seed, eps, softening):
    rng = np.random.default_rng(seed)
    pos, mass = plummer_like(rng, 300)
    G = rng.uniform(0.5, 2)
    acc0, pot0 = direct_sum(pos, mass, G, eps, softening)
    for method, options in (("reference", {}), ("direct", {"precision": "double"})):
        acc, pot = tilefmm.forces(pos, mass, method=method, G=G, eps=eps,
                                  softening=softening, **options)
        assert acc.shape == (300, 3) and pot.shape == (300,)
        assert relative(acc, acc0).max() < 1e-11, (method, seed)
        assert np.abs((pot - pot0) / pot0).max() < 1e-11, (method, seed)


@pytest.mark.parametrize("method", ["fmm", "bh"])
@pytest.mark.parametrize("accuracy", [1e-3, 1e-6])
@pytest.mark.parametrize("softening,eps", [("plummer", 0.0), ("plummer", 0.01),
                                           ("spline", 0.02)])
def test_tree_methods_meet_their_accuracy(seed, method, accuracy, softening, eps):
    rng = np.random.default_rng(seed)
    pos, mass = clustered(rng, 1200)
    acc0, pot0 = direct_sum(pos, mass, 1.0, eps, softening)
    acc, pot = tilefmm.forces(pos, mass, method=method, accuracy=accuracy,
                              softening=softening, eps=eps, leaf_size=16,
                              device="cpu")
    err = np.sort(relative(acc, acc0))
    p99 = err[int(np.ceil(0.99 * len(err))) - 1]
    assert p99 <= accuracy, (p99, seed)
    assert np.abs((pot - pot0) / pot0).max() < 100 * accuracy


def test_single_precision_direct_is_close(seed):
    rng = np.random.default_rng(seed)
    pos, mass = plummer_like(rng, 500)
    acc0, _ = direct_sum(pos, mass, eps=0.01)
    acc, _ = tilefmm.forces(pos, mass, method="direct", eps=0.01)
    err = relative(acc, acc0)
    assert np.median(err) < 1e-6 and err.max() < 1e-4


def test_options_are_used(seed):
    """theta = 0 opens every pair: the tree method is then its near field
    alone, the direct sum to rounding; a given order and theta are the
    ones used."""
    rng = np.random.default_rng(seed)
    pos, mass = plummer_like(rng, 400)
    acc0, _ = direct_sum(pos, mass)
    acc, _ = tilefmm.forces(pos, mass, theta=0, order=4, precision="double")
    assert relative(acc, acc0).max() < 1e-12
    with tilefmm.Solver(theta=0.5, order=7, leaf_size=8, device="cpu") as s:
        s.forces(pos, mass)
        stats = s.stats
    assert (stats["theta"], stats["order"], stats["leaf_size"]) == (0.5, 7, 8)
    assert stats["method"] == "fmm" and stats["device"] == "cpu"
    assert stats["n"] == 400 and stats["tree_leaves"] > 400 / 8


def test_masses_shaped_n_by_1_and_integer_input():
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0]])  # integers
    mass = np.array([[1.0], [2.0], [3.0]])
    acc, pot = tilefmm.forces(pos, mass, method="reference")
    acc0, pot0 = direct_sum(pos.astype(float), mass[:, 0])
    assert np.allclose(acc, acc0, rtol=1e-15, atol=0)
    assert np.allclose(pot, pot0, rtol=1e-15, atol=0)


def test_strided_fortran_and_float32_input(seed):
    rng = np.random.default_rng(seed)
    big = rng.normal(size=(600, 3))
    pos = big[::2]  # a strided view
    mass = np.full(300, 1 / 300)
    want, _ = tilefmm.forces(np.ascontiguousarray(pos), mass, method="reference")
    for variant in (pos, np.asfortranarray(pos), list(map(list, pos))):
        acc, _ = tilefmm.forces(variant, mass, method="reference")
        assert np.array_equal(acc, want)
    acc, _ = tilefmm.forces(pos.astype(np.float32), mass.astype(np.float32),
                            method="reference")
    want32, _ = direct_sum(pos.astype(np.float32).astype(float),
                           mass.astype(np.float32).astype(float))
    assert relative(acc, want32).max() < 1e-12
    assert np.array_equal(big[::2], pos)  # the input untouched


def test_solver_keeps_its_workspace(seed):
    rng = np.random.default_rng(seed)
    with tilefmm.Solver(method="fmm", accuracy=1e-5) as s:
        for n in (100, 700, 50):
            pos, mass = plummer_like(rng, n)
            acc, _ = s.forces(pos, mass)
            acc0, _ = direct_sum(pos, mass)
            assert np.median(relative(acc, acc0)) < 1e-5
    with pytest.raises(ValueError, match="closed"):
        s.forces(pos, mass)


def test_defaults_and_names():
    d = tilefmm.defaults()
    assert d["method"] == "fmm" and d["accuracy"] == 1e-3 and d["G"] == 1.0
    assert d["theta"] == "auto" and d["order"] == "auto" and d["leaf_size"] == 64
    assert set(d) == set(tilefmm.SOLVER_OPTIONS)
    assert tilefmm.enum_names("method") == ["reference", "direct", "fmm", "bh"]
    assert tilefmm.enum_names("mac") == ["geometric", "mass", "error"]


@pytest.mark.parametrize("mac", ["geometric", "mass", "error"])
def test_every_opening_criterion(seed, mac):
    rng = np.random.default_rng(seed)
    pos, mass = clustered(rng, 800)
    acc0, _ = direct_sum(pos, mass, eps=0.01)
    acc, _ = tilefmm.forces(pos, mass, mac=mac, accuracy=1e-4, eps=0.01)
    err = np.sort(relative(acc, acc0))
    assert err[int(np.ceil(0.99 * len(err))) - 1] <= 1e-4


def test_measured_error_and_plan_in_stats(seed):
    """An evaluation that measured says so in its stats: the sample's
    median, p99 and max against numpy's direct sums at the worst body,
    and the plan line naming what was chosen."""
    pos, mass = clustered(np.random.default_rng(seed), 3000)
    with tilefmm.Solver(accuracy=1e-3, eps=0.0, measure="always") as s:
        acc, _ = s.forces(pos, mass)
        st = s.stats
    e = st["error"]
    assert e["measured"] == 1 and e["samples"] > 0
    assert 0 <= e["median"] <= e["p99"] <= e["max"] <= e["p99_bound"] * 1e9
    ref, _ = direct_sum(pos, mass)
    worst = e["worst_body"]
    err = np.linalg.norm(acc[worst] - ref[worst]) / np.linalg.norm(ref[worst])
    assert err == pytest.approx(e["max"], rel=1e-6, abs=1e-15)
    # The worst group: its leaf's bodies, measured by the host tree's stage
    # (0 where the gpu schedule ran: not measured there yet).
    if e["group_measured"] > 0:
        assert 1 <= e["group_measured"] <= e["group_bodies"]
        assert e["group_median"] <= e["group_p99"] <= e["group_max"]
        assert e["group_max"] >= e["max"] * (1 - 1e-12)
    assert f"theta {st['theta']:g}, order {st['order']}" in st["plan"]
    assert "measured p99" in st["plan"]
    with tilefmm.Solver(accuracy=1e-3, measure="off") as s:
        s.forces(pos, mass)
        assert s.stats["error"]["measured"] == 0
        assert "measure off" in s.stats["plan"]
    assert tilefmm.defaults()["measure"] == "auto"
    with pytest.raises(ValueError, match="measure"):
        tilefmm.forces(pos, mass, measure="sometimes")


def test_verify_raises_the_accuracy_error(seed):
    """verify=True with a setting far too loose for the target: an
    AccuracyError naming the measured p99 and the setting."""
    pos, mass = clustered(np.random.default_rng(seed), 3000)
    with pytest.raises(tilefmm.AccuracyError, match=r"99th percentile.*theta 0\.8, order 1"):
        tilefmm.forces(pos, mass, theta=0.8, order=1, accuracy=1e-5,
                       verify=True, error_sample=500)
    acc, _ = tilefmm.forces(pos, mass, theta=0.3, order=8, accuracy=1e-2,
                            verify=True)
    assert np.isfinite(acc).all()
