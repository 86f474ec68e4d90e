"""Snapshots: the layout of `tilefmm run`'s, read by the CLI (forces --in,
run --ic), and the CLI's files (ic, run checkpoints) read here."""

import os
import shutil
import subprocess

import numpy as np
import pytest

import tilefmm

h5py = pytest.importorskip("h5py")
import tilefmm.snapshot as snapshot  # noqa: E402


def cli():
    path = os.environ.get("TILEFMM_CLI") or shutil.which("tilefmm")
    if not path:
        pytest.skip("the tilefmm CLI is not found (set TILEFMM_CLI)")
    return path


def run(*args, cwd=None):
    return subprocess.run([cli(), *map(str, args)], check=True, cwd=cwd,
                          capture_output=True, text=True).stdout


@pytest.fixture
def sim(seed):
    pos, vel, mass = tilefmm.ic.plummer(150, seed=seed % 10000 + 1)
    sim = tilefmm.Simulation(pos, vel, mass, dt=1 / 64, eps=0.01, device="cpu")
    sim.step(3)
    return sim


def test_the_layout(sim, tmp_path):
    path = tmp_path / "snap.hdf5"
    sim.save_snapshot(path, parameters={"Gravity:eps": 0.01, "Run:note": "é"})
    state = sim.state()
    with h5py.File(path, "r") as f:
        h = f["Header"].attrs
        assert list(h["NumPart_ThisFile"]) == [0, 150, 0, 0, 0, 0]
        assert h["NumPart_ThisFile"].dtype == np.uint32
        assert list(h["NumPart_Total_HighWord"]) == [0] * 6
        assert h["MassTable"].dtype == np.float64 and not h["MassTable"].any()
        assert h["Time"] == sim.time == 3 / 64
        # as `tilefmm run` writes it (the library's writer): the box a
        # little over 2 max |x|, the coordinates stored shifted into it
        box = 2 * np.abs(state.positions).max() * (1 + 2**-20)
        assert np.all(h["BoxSize"] == box) and np.all(h["Shift"] == box / 2)
        assert h["UnitSystem"].startswith(b"N-body")
        assert h["Dimension"] == 3 and h["NumFilesPerSnapshot"] == 1
        assert h["Dimension"].dtype == np.int32
        g = f["PartType1"]
        assert g["Coordinates"].dtype == np.float64 and g["Coordinates"].shape == (150, 3)
        assert g["ParticleIDs"].dtype == np.uint64
        assert g["Coordinates"].fletcher32
        assert np.allclose(g["Coordinates"][:] - box / 2, state.positions,
                           rtol=0, atol=2.0**-51 * box)
        assert np.array_equal(g["Velocities"][:], state.velocities)
        assert np.array_equal(g["Accelerations"][:], state.accelerations)
        assert np.array_equal(g["Potentials"][:], state.potentials)
        assert np.array_equal(g["ParticleIDs"][:], np.arange(1, 151))
        assert "TimeBins" not in g and "RunState" not in f
        p = f["Parameters"].attrs
        assert list(p.keys())[0] == "InitialConditions:type"  # in order
        assert p["InitialConditions:type"] == b"python"
        assert list(p.keys())[-1] == "Run:note"
        assert p["Gravity:eps"] == b"0.01"  # fixed-length, as SWIFT's
        assert p["Run:note"].decode() == "é"
    back = snapshot.read(path)
    assert back.state is None and back.time == 3 / 64
    # shifted into the box and back: to an ulp of the box
    assert np.allclose(back.positions, state.positions, rtol=0,
                       atol=2.0**-51 * box)
    assert back.parameters["Run:note"] == "é"
    assert back.parameters["TimeIntegration:dt"] == "0.015625"
    assert back.parameters["Gravity:method"] == "fmm"
    assert back.parameters["Gravity:theta"] == "auto"
    assert back.parameters["Gravity:device"] == "cpu"


def test_the_cli_reads_it(sim, tmp_path):
    path = tmp_path / "snap.hdf5"
    sim.save_snapshot(path)
    out = run("forces", "--in", path, "--method", "reference", "--eps", "0.01")
    rows = np.loadtxt(out.splitlines(), comments="#")
    # the bodies as stored (coordinates shifted into the box, as `tilefmm
    # run` writes them) and read back: the CLI's input, bit for bit
    state = snapshot.read(path)
    acc, pot = tilefmm.forces(state.positions, state.masses, method="reference",
                              eps=0.01)
    assert rows.shape == (150, 4)
    assert np.allclose(rows[:, :3], acc, rtol=1e-15, atol=0)
    assert np.allclose(rows[:, 3], pot, rtol=1e-15, atol=0)
    # and takes it as initial conditions
    run("run", "--ic", path, "--steps", 2, "--eps", 0.01, "--out", tmp_path / "r",
        "--device", "cpu")
    first = snapshot.read(tmp_path / "r" / "snapshot_0000.hdf5")
    # run's snapshots store the coordinates shifted into their box (as yt
    # needs): they come back to an ulp of it.
    extent = np.abs(state.positions).max()
    assert np.all(np.abs(first.positions - state.positions) <= 2.0**-50 * extent)
    assert first.time == sim.time


def test_cli_initial_conditions_are_the_packages(tmp_path, seed):
    s = seed % 1000 + 1
    run("ic", "hernquist", "--n", 300, "--seed", s, "--out", tmp_path / "ic.hdf5")
    back = snapshot.read(tmp_path / "ic.hdf5")
    pos, vel, mass = tilefmm.ic.hernquist(300, seed=s)
    assert np.array_equal(back.positions, pos)
    assert np.array_equal(back.velocities, vel)
    assert np.array_equal(back.masses, mass)


def test_a_cli_checkpoint_continues_here_bit_for_bit(tmp_path, seed):
    s = seed % 1000 + 1
    common = ["--ic", "plummer", "--n", 200, "--seed", s, "--eps", 0.02,
              "--device", "cpu"]
    run("run", *common, "--steps", 4, "--out", tmp_path / "a")
    run("run", *common, "--steps", 8, "--out", tmp_path / "b")
    sim = tilefmm.Simulation.from_snapshot(tmp_path / "a" / "checkpoint.hdf5",
                                           eps=0.02, softening="spline",
                                           device="cpu")
    assert sim.steps == 4
    sim.step(4)
    straight = snapshot.read(tmp_path / "b" / "checkpoint.hdf5")
    state = sim.state()
    assert np.array_equal(state.positions, straight.positions)
    assert np.array_equal(state.velocities, straight.velocities)
    assert np.array_equal(state.accelerations, straight.accelerations)


def test_a_cli_checkpoint_restarts_here_with_its_settings(tmp_path, seed):
    """from_snapshot takes the checkpoint's settings (/Parameters), as
    `tilefmm run --restart` does: a run of run's defaults (spline, eps
    0.01) continues here, with no options, bit for bit as the CLI's
    restart and the run straight through; an option that contradicts the
    checkpoint is refused, one that may change (the device) is taken."""
    s = seed % 1000 + 1
    common = ["--ic", "plummer", "--n", 200, "--seed", s, "--device", "cpu",
              "--dt", 1 / 64, "--progress", "off", "--plots", "off"]
    run("run", *common, "--steps", 3, "--out", tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "c")
    run("run", "--restart", tmp_path / "c" / "checkpoint.hdf5", "--steps", 6)
    run("run", *common, "--steps", 6, "--out", tmp_path / "b")
    sim = tilefmm.Simulation.from_snapshot(tmp_path / "a" / "checkpoint.hdf5")
    assert sim.config["softening"] == "spline" and sim.config["eps"] == 0.01
    assert sim.dt == 1 / 64 and sim.steps == 3
    sim.step(3)
    state = sim.state()
    for other in ("c", "b"):
        end = snapshot.read(tmp_path / other / "checkpoint.hdf5")
        assert end.state.step == 6
        for field in ("positions", "velocities", "accelerations", "potentials"):
            assert np.array_equal(getattr(state, field), getattr(end, field)), \
                (other, field)
    path = tmp_path / "a" / "checkpoint.hdf5"
    with pytest.raises(ValueError, match=r"Gravity:eps = 0\.01.*not 0\.02"):
        tilefmm.Simulation.from_snapshot(path, eps=0.02)
    with pytest.raises(ValueError, match="Gravity:softening = spline"):
        tilefmm.Simulation.from_snapshot(path, softening="plummer")
    assert tilefmm.Simulation.from_snapshot(path, device="cpu",
                                            eps=0.01).steps == 3
    fresh = tilefmm.Simulation.from_snapshot(path, restart=False, eps=0.02)
    assert fresh.steps == 0 and fresh.config["eps"] == 0.02


def test_a_checkpoint_here_restarts_here(sim, tmp_path):
    path = tmp_path / "checkpoint.hdf5"
    sim.save_snapshot(path, checkpoint=True)
    with h5py.File(path, "r") as f:
        assert f["RunState"].attrs["format"] == b"tilefmm-run-checkpoint-1"
        assert f["RunState"].attrs["step"] == b"3"
    other = tilefmm.Simulation.from_snapshot(path, dt=1 / 64, eps=0.01,
                                             device="cpu")
    sim.step(5)
    other.step(5)
    assert np.array_equal(sim.state().positions, other.state().positions)
    fresh = tilefmm.Simulation.from_snapshot(path, restart=False, dt=1 / 64)
    assert fresh.steps == 0 and fresh.time == 3 / 64


def test_a_checkpoint_here_restarts_in_the_cli(tmp_path, seed):
    """tilefmm run --restart takes a checkpoint written here (its settings
    from /Parameters) and continues it as the sim here does, bit for bit."""
    pos, vel, mass = tilefmm.ic.plummer(120, seed=seed % 10000 + 1)
    sim = tilefmm.Simulation(pos, vel, mass, dt=1 / 32, eps=0.02,
                             softening="plummer", accuracy=1e-4, device="cpu")
    sim.step(2)
    sim.save_snapshot(tmp_path / "checkpoint.hdf5", checkpoint=True)
    sim.step(3)
    run("run", "--restart", tmp_path / "checkpoint.hdf5", "--steps", 5,
        "--out", tmp_path / "cli")
    cli_end = snapshot.read(tmp_path / "cli" / "checkpoint.hdf5")
    assert cli_end.state.step == 5
    assert cli_end.parameters["Gravity:softening"] == "plummer"
    assert np.array_equal(cli_end.positions, sim.state().positions)
    assert np.array_equal(cli_end.velocities, sim.state().velocities)


def test_a_failed_write_leaves_the_old_file(sim, tmp_path):
    path = tmp_path / "snap.hdf5"
    sim.save_snapshot(path)
    before = path.read_bytes()
    with pytest.raises(ValueError, match="checkpoint"):
        fresh = tilefmm.Simulation(*tilefmm.ic.plummer(10))
        fresh.save_snapshot(path, checkpoint=True)  # no forces yet
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["snap.hdf5"]


def test_reading_refuses_what_it_cannot_take(tmp_path):
    path = tmp_path / "two.hdf5"
    with h5py.File(path, "w") as f:
        h = f.create_group("Header").attrs
        h["Time"] = 0.0
        h["NumPart_ThisFile"] = np.array([0, 2, 0, 0, 2, 0], np.uint32)
        for k in (1, 4):
            f.create_dataset(f"PartType{k}/Coordinates", data=np.zeros((2, 3)))
            f.create_dataset(f"PartType{k}/Masses", data=np.ones((2, 1)))
    with pytest.raises(tilefmm.FileError,
                       match=r"PartType1 \(dark matter\): 2, PartType4 \(stars\): 2"):
        snapshot.read(path)
    assert snapshot.read(path, part_type=4).positions.shape == (2, 3)
