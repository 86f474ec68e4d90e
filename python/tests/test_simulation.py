"""tilefmm.Simulation: the leapfrog by hand, energy conservation checked
with numpy, bit-exact restarts through the state arrays and through a
checkpoint file."""

import numpy as np
import pytest

import tilefmm
from conftest import direct_sum


def numpy_energy(state, eps):
    _, pot = direct_sum(state.positions, state.masses, eps=eps)
    m = state.masses
    return 0.5 * (m * (state.velocities**2).sum(axis=1)).sum() + 0.5 * (m * pot).sum()


def test_one_step_is_the_leapfrog_by_hand(seed):
    """kick(dt/2), drift(dt), forces, kick(dt/2), bit for bit, with the
    reference method's forces (the leapfrog has no FMA: -ffp-contract=off,
    as numpy)."""
    pos, vel, mass = tilefmm.ic.plummer(200, seed=seed % 1000 + 1)
    dt = 1 / 64
    opts = dict(method="reference", eps=0.02)
    sim = tilefmm.Simulation(pos, vel, mass, dt=dt, **opts)
    sim.step(2)
    acc, _ = tilefmm.forces(pos, mass, **opts)
    for _ in range(2):
        vel = vel + acc * (dt / 2)
        pos = pos + vel * dt
        acc, _ = tilefmm.forces(pos, mass, **opts)
        vel = vel + acc * (dt / 2)
    state = sim.state()
    assert np.array_equal(state.positions, pos)
    assert np.array_equal(state.velocities, vel)
    assert np.array_equal(state.accelerations, acc)
    assert sim.steps == 2 and sim.time == 2 * dt


def test_energy_is_conserved(seed):
    pos, vel, mass = tilefmm.ic.plummer(400, seed=seed % 10000 + 1)
    eps = 0.05
    with tilefmm.Simulation(pos, vel, mass, dt=1 / 128, eps=eps,
                            accuracy=1e-5) as sim:
        sim.start()
        e0 = sim.diagnostics()
        # W from the method's potentials (accuracy 1e-5) against numpy's.
        assert e0.total == pytest.approx(numpy_energy(sim.state(), eps), rel=1e-6)
        sim.advance_to(1.0)
        assert sim.time == 1.0 and sim.steps == 128
        d = sim.diagnostics()
        state = sim.state()
    truth = numpy_energy(state, eps)
    assert d.total == pytest.approx(truth, rel=1e-6)
    assert abs(d.energy_error) < 2e-4
    assert d.energy_error == pytest.approx((truth - e0.total) / abs(e0.total),
                                           abs=1e-6)
    assert np.abs(d.momentum).max() < 1e-6
    assert d.mass == pytest.approx(1.0)
    com = (state.masses[:, None] * state.positions).sum(axis=0)
    assert np.allclose(d.centre_of_mass, com, atol=1e-12)


def test_restart_through_the_state_is_bit_exact(seed):
    pos, vel, mass = tilefmm.ic.hernquist(500, seed=seed % 10000 + 1)
    opts = dict(dt=1 / 128, eps=0.02, method="fmm", accuracy=1e-4,
                leaf_size=32)
    a = tilefmm.Simulation(pos, vel, mass, **opts)
    a.step(10)
    saved = a.state()
    a.step(15)
    b = tilefmm.Simulation.restore(saved, **opts)
    assert b.steps == 10 and b.time == a.time - 15 / 128
    b.step(15)
    sa, sb = a.state(), b.state()
    for field in ("positions", "velocities", "accelerations", "potentials", "ids"):
        assert np.array_equal(getattr(sa, field), getattr(sb, field)), field
    assert sa.step == sb.step == 25 and sa.energy_initial == sb.energy_initial
    assert a.diagnostics().energy_error == b.diagnostics().energy_error


def test_restart_keeps_the_planners_choice(seed, tmp_path):
    """theta and order chosen by measurement (the default: auto, measure
    auto) travel with the state and through a checkpoint file, so that
    the continuation re-measures when the run straight through does (every
    TFMM_RECHECK_EVERY evaluations) and is bit for bit the same."""
    pytest.importorskip("h5py")
    pos, vel, mass = tilefmm.ic.merger(600, seed=seed % 10000 + 1)
    opts = dict(dt=1 / 128, eps=0.01, method="fmm", accuracy=1e-3)
    a = tilefmm.Simulation(pos, vel, mass, **opts)
    a.step(5)
    saved = a.state()
    assert saved.choice["chosen"] == 1 and saved.choice["evaluations"] >= 6
    assert saved.choice["accuracy"] == 1e-3
    path = tmp_path / "checkpoint.hdf5"
    a.save_snapshot(path, checkpoint=True)
    assert tilefmm.snapshot.read(path).state.choice == saved.choice
    a.step(20)  # past a re-measurement
    b = tilefmm.Simulation.restore(saved, **opts)
    c = tilefmm.Simulation.from_snapshot(path, **opts)
    for other in (b, c):
        other.step(20)
        for field in ("positions", "velocities", "accelerations", "potentials"):
            assert np.array_equal(getattr(a.state(), field),
                                  getattr(other.state(), field)), field
        assert other.state().choice == a.state().choice


def test_individual_time_steps_restart_bit_exact(seed, tmp_path):
    pytest.importorskip("h5py")
    pos, vel, mass = tilefmm.ic.plummer(300, seed=seed % 10000 + 1)
    opts = dict(eta=0.025, eps=0.03, dt_max=1 / 16, dt_min=1 / 4096,
                method="direct", precision="double")
    a = tilefmm.Simulation(pos, vel, mass, **opts)
    a.advance_to(0.25)
    assert a.synchronised and a.syncs == 4
    assert a.bins().sum() == 300 and len(a.bins()) > 1
    a.step(3)  # mid-way through the long steps
    saved = a.state()
    assert saved.bins is not None and saved.tick > 0
    path = tmp_path / "checkpoint.hdf5"
    a.save_snapshot(path, checkpoint=True)
    a.advance_to(0.5)
    b = tilefmm.Simulation.restore(saved, **opts)
    c = tilefmm.Simulation.from_snapshot(path, **opts)
    b.advance_to(0.5)
    c.advance_to(0.5)
    for other in (b, c):
        for field in ("positions", "velocities", "accelerations"):
            assert np.array_equal(getattr(a.state(), field),
                                  getattr(other.state(), field)), field
    assert abs(a.diagnostics().energy_error) < 5e-3  # a sanity bound


def test_step_criterion(seed):
    pos, vel, mass = tilefmm.ic.plummer(200, seed=seed % 10000 + 1)
    sim = tilefmm.Simulation(pos, vel, mass, dt=0.01, eps=0.05, method="reference")
    shortest, longer = sim.step_criterion(0.025)
    acc = sim.state().accelerations
    want = np.sqrt(2 * 0.025 * 0.05 / np.linalg.norm(acc, axis=1))
    assert shortest == pytest.approx(want.min(), rel=1e-12)
    assert longer == int((want < 0.01).sum())


def test_ids_velocity_state_and_stats(seed):
    pos, vel, mass = tilefmm.ic.uniform(100, seed=seed % 10000 + 1)
    ids = np.arange(1000, 1100, dtype=np.uint64)[::-1].copy()
    sim = tilefmm.Simulation(pos, vel, mass, ids=ids, dt=0.01, time_initial=5.0,
                             device="cpu")
    state = sim.state()
    assert np.isnan(state.accelerations).all()  # forces not computed yet
    assert np.array_equal(state.ids, ids) and len(sim) == 100
    assert sim.device == "cpu" and sim.time == 5.0
    sim.step(3)
    assert sim.time == pytest.approx(5.03, abs=1e-15) and sim.stats["steps"] == 3
    assert sim.stats["evaluations"] == 4
    assert sim.solver_stats["n"] == 100
    with pytest.raises(ValueError, match="eps > 0"):
        sim.step_criterion(0.025)  # eps = 0: no criterion
    with pytest.raises(ValueError):
        sim.advance_to(1.0)  # before the current time
    sim.close()
    with pytest.raises(ValueError, match="closed"):
        sim.step()


def test_a_failed_step_raises_with_the_step_named():
    pos = np.array([[-1.0, 0, 0], [1.0, 0, 0]])
    vel = np.array([[1.0, 0, 0], [-1.0, 0, 0]])
    # So light that the kicks leave the velocities as they are: the drifts
    # bring both bodies to 0 exactly at t = 1 (step 2).
    sim = tilefmm.Simulation(pos, vel, np.array([1e-300, 1e-300]), dt=0.5,
                             method="reference")
    with pytest.raises(tilefmm.CoincidentBodiesError, match="step 1"):
        sim.step(4)
    with pytest.raises(tilefmm.CoincidentBodiesError):
        sim.state()  # no state to save after a failed step


def test_keep_tree_is_a_checked_switch(seed):
    pos, vel, mass = tilefmm.ic.plummer(200, seed=seed % 10000 + 1)
    opts = dict(eta=0.025, eps=0.03, method="direct", precision="double")
    kept = tilefmm.Simulation(pos, vel, mass, keep_tree=True, **opts)
    built = tilefmm.Simulation(pos, vel, mass, keep_tree=False, **opts)
    kept.step(4)
    built.step(4)
    # The direct method has no tree: the switch changes nothing here.
    assert np.array_equal(kept.state().positions, built.state().positions)
    for bad in (2, "yes", 0.5):
        with pytest.raises(TypeError, match="keep_tree"):
            tilefmm.Simulation(pos, vel, mass, keep_tree=bad, **opts)
