"""tilefmm.read and the library's writer from Python (tilefmm.io): Tipsy
and GADGET-2 files written here with numpy structs from their documented
layouts (not by the library) and read back field by field; a snapshot of
Simulation.save_snapshot that swiftsimio opens with its units and the
shift of `tilefmm run`'s; damaged files refused with the file and the
body named."""

import os

import numpy as np
import pytest

import tilefmm

KPC_CM = 3.0856775814913673e21
MSUN_G = 1.98841e33


def bodies(n, seed):
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    vel = rng.uniform(-0.5, 0.5, (n, 3)).astype(np.float32)
    mass = rng.uniform(0.5, 1.5, n).astype(np.float32)
    return pos, vel, mass


def write_tipsy(path, time, pos, vel, mass, big=True):
    """Tipsy: a header (double time; int nbodies, ndim, nsph, ndark,
    nstar, pad) and ndark dark particles (float mass, pos[3], vel[3], eps,
    phi); big-endian is the standard (XDR) byte order."""
    e = ">" if big else "<"
    n = len(mass)
    header = np.array([(time, n, 3, 0, n, 0, 0)],
                      dtype=[("time", e + "f8"), ("nbodies", e + "i4"),
                             ("ndim", e + "i4"), ("nsph", e + "i4"),
                             ("ndark", e + "i4"), ("nstar", e + "i4"),
                             ("pad", e + "i4")])
    dark = np.zeros(n, dtype=[("mass", e + "f4"), ("pos", e + "f4", 3),
                              ("vel", e + "f4", 3), ("eps", e + "f4"),
                              ("phi", e + "f4")])
    dark["mass"], dark["pos"], dark["vel"] = mass, pos, vel
    dark["eps"], dark["phi"] = 0.01, -1.0
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(dark.tobytes())


def write_gadget2(path, time, pos, vel, mass, ids, ptype=1, fmt=1):
    """GADGET-2 SnapFormat 1 (or 2: each block after an 8-byte record
    naming it), little-endian: the 256-byte header record, then POS, VEL
    (float32), ID (uint32), MASS (float32, massarr 0) as Fortran records
    framed by their lengths (GADGET-2 user guide, section 6.1)."""
    n = len(mass)
    head = np.zeros(1, dtype=[("npart", "<i4", 6), ("massarr", "<f8", 6),
                              ("time", "<f8"), ("redshift", "<f8"),
                              ("flag_sfr", "<i4"), ("flag_feedback", "<i4"),
                              ("npartTotal", "<u4", 6),
                              ("flag_cooling", "<i4"), ("num_files", "<i4"),
                              ("BoxSize", "<f8"), ("Omega0", "<f8"),
                              ("OmegaLambda", "<f8"), ("HubbleParam", "<f8"),
                              ("flag_stellarage", "<i4"),
                              ("flag_metals", "<i4"),
                              ("npartTotalHighWord", "<u4", 6),
                              ("fill", "u1", 64)])
    assert head.itemsize == 256
    head["npart"][0, ptype] = n
    head["npartTotal"][0, ptype] = n
    head["time"], head["num_files"] = time, 1

    def record(f, data, name=None):
        if name is not None:
            label = name.encode().ljust(4) + np.array([len(data) + 8], "<u4").tobytes()
            record(f, label)
        f.write(np.array([len(data)], "<u4").tobytes())
        f.write(data)
        f.write(np.array([len(data)], "<u4").tobytes())

    with open(path, "wb") as f:
        blocks = [("HEAD", head.tobytes()),
                  ("POS", np.asarray(pos, "<f4").tobytes()),
                  ("VEL", np.asarray(vel, "<f4").tobytes()),
                  ("ID", np.asarray(ids, "<u4").tobytes()),
                  ("MASS", np.asarray(mass, "<f4").tobytes())]
        for name, data in blocks:
            record(f, data, name if fmt == 2 else None)


def test_tipsy_is_read_field_by_field(tmp_path, seed):
    pos, vel, mass = bodies(41, seed)
    for big in (True, False):
        path = tmp_path / f"t{int(big)}.bin"
        write_tipsy(path, 0.625, pos, vel, mass, big)
        assert tilefmm.io.probe(path) == "tipsy"
        b = tilefmm.read(path)
        assert b.format == "tipsy" and b.time == 0.625 and len(b) == 41
        assert np.array_equal(b.positions, pos.astype(np.float64))
        assert np.array_equal(b.velocities, vel.astype(np.float64))
        assert np.array_equal(b.masses, mass.astype(np.float64))
        assert np.array_equal(b.ids, np.arange(1, 42, dtype=np.uint64))
        assert b.units is None and b.units_source is None
        assert b.accelerations is None and b.potentials is None


@pytest.mark.parametrize("fmt", [1, 2])
def test_gadget2_is_read_field_by_field(tmp_path, seed, fmt):
    pos, vel, mass = bodies(57, seed)
    ids = np.random.default_rng(seed + 1).permutation(1000)[:57] + 5
    path = tmp_path / "snap_000"
    write_gadget2(path, 0.25, pos, vel, mass, ids, ptype=4, fmt=fmt)
    assert tilefmm.io.probe(path) == "gadget2"
    b = tilefmm.read(path)
    assert b.format == "gadget2" and b.time == 0.25 and len(b) == 57
    assert np.array_equal(b.positions, pos.astype(np.float64))
    assert np.array_equal(b.velocities, vel.astype(np.float64))
    assert np.array_equal(b.masses, mass.astype(np.float64))
    assert np.array_equal(b.ids, ids.astype(np.uint64))
    assert b.units is None
    # the type chosen explicitly: the note names it
    b4 = tilefmm.read(path, types=4)
    assert b4.note is not None and "type 4 (stars): 57" in b4.note
    with pytest.raises(tilefmm.FileError, match="does not hold"):
        tilefmm.read(path, types=[1, 4])


def test_damaged_files_name_the_file_and_the_body(tmp_path, seed):
    pos, vel, mass = bodies(12, seed)
    pos[5, 2] = np.nan
    t = tmp_path / "nan.bin"
    write_tipsy(t, 0.0, pos, vel, mass)
    with pytest.raises(tilefmm.FileError) as e:
        tilefmm.read(t)
    assert str(t) in str(e.value)
    assert "dark particle 5" in str(e.value) and "non-finite coordinate" in str(e.value)
    pos[5, 2] = 0.5
    write_tipsy(t, 0.0, pos, vel, mass)
    os.truncate(t, os.path.getsize(t) - 7)
    with pytest.raises(tilefmm.FileError, match="truncated.*dark particle 11"):
        tilefmm.read(t)
    g = tmp_path / "g.dat"
    write_gadget2(g, 0.0, pos, vel, mass, np.arange(12))
    data = bytearray(g.read_bytes())
    data[0:4] = (300).to_bytes(4, "little")  # a wrong first marker
    g.write_bytes(bytes(data))
    assert tilefmm.io.probe(g) is None
    with pytest.raises(tilefmm.FileError, match="not a snapshot"):
        tilefmm.read(g)
    with pytest.raises(tilefmm.FileError, match="not a GADGET-2 snapshot"):
        tilefmm.read(g, format="gadget2")
    with pytest.raises(tilefmm.FileError, match="cannot read"):
        tilefmm.read(tmp_path / "missing")


def hdf5_only():
    if not tilefmm.io.has_hdf5():
        pytest.skip("the library was built without HDF5")


def test_a_c_snapshot_round_trips(tmp_path, seed):
    hdf5_only()
    rng = np.random.default_rng(seed)
    n = 100
    pos, vel = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    mass = rng.uniform(1, 2, n)
    ids = rng.permutation(10**6)[:n].astype(np.uint64) + 1
    units = tilefmm.Units(1e10 * MSUN_G, KPC_CM, 1e5)
    path = tmp_path / "c.hdf5"
    tilefmm.io.write(path, pos, vel, mass, ids=ids, time=2.5, units=units,
                     parameters={"Run:note": "x"}, checkpoint=True)
    b = tilefmm.read(path)
    assert b.format == "hdf5" and b.time == 2.5
    assert np.array_equal(b.positions, pos) and np.array_equal(b.velocities, vel)
    assert np.array_equal(b.masses, mass) and np.array_equal(b.ids, ids)
    assert b.units_source == "swift"
    assert b.units.mass == units.mass and b.units.length == units.length
    assert b.units.velocity == pytest.approx(1e5, rel=1e-15)
    assert b.parameters == {"Run:note": "x"}


def test_a_python_snapshot_opens_in_swiftsimio_with_units(tmp_path, seed):
    hdf5_only()
    swiftsimio = pytest.importorskip("swiftsimio")
    unyt = pytest.importorskip("unyt")
    pos, vel, mass = tilefmm.ic.plummer(200, seed=seed % 10000 + 1)
    sim = tilefmm.Simulation(pos, vel, mass, dt=1 / 64, eps=0.01, device="cpu")
    sim.step(2)
    units = tilefmm.Units(1e10 * MSUN_G, KPC_CM, 1e5)
    path = tmp_path / "snap.hdf5"
    sim.save_snapshot(path, units=units)
    state = sim.state()
    data = swiftsimio.load(str(path))
    p = data.dark_matter
    box = float(data.metadata.boxsize[0].to("kpc").value)
    got = p.coordinates.to_value(unyt.kpc)
    # stored shifted into [0, box), as `tilefmm run` stores them
    assert np.all(got >= 0) and np.all(got < box)
    assert np.allclose(got - box / 2, state.positions, rtol=0, atol=1e-12 * box)
    # swiftsimio names the units (1e10 Msun): to its constants' precision,
    # as in tests/python/test_readers.py
    rtol = 2e-5
    assert np.allclose(p.masses.to_value(unyt.g), state.masses * 1e10 * MSUN_G,
                       rtol=rtol, atol=0)
    assert np.allclose(p.velocities.to_value(unyt.cm / unyt.s),
                       state.velocities * 1e5, rtol=rtol, atol=0)
    t_unit = KPC_CM / 1e5
    assert float(data.metadata.time.to("s").value) == pytest.approx(
        sim.time * t_unit, rel=rtol)
    # and the package reads it back, shift taken off, units kept
    back = tilefmm.read(path)
    assert back.units_source == "swift" and back.units.length == KPC_CM
    assert np.allclose(back.positions, state.positions, rtol=0, atol=2.0**-50 * box)


def test_python_and_cli_snapshots_share_a_layout(tmp_path, seed):
    """The datasets, attributes and groups of a Python snapshot are those
    of a CLI snapshot (names, shapes, types), bodies apart."""
    hdf5_only()
    h5py = pytest.importorskip("h5py")
    import shutil
    import subprocess
    cli = os.environ.get("TILEFMM_CLI") or shutil.which("tilefmm")
    if not cli:
        pytest.skip("the tilefmm CLI is not found (set TILEFMM_CLI)")
    subprocess.run([cli, "run", "--n", "64", "--steps", "1", "--seed", "3",
                    "--device", "cpu", "--progress", "off", "--out",
                    str(tmp_path / "r")], check=True, capture_output=True)
    pos, vel, mass = tilefmm.ic.plummer(64, seed=3)
    sim = tilefmm.Simulation(pos, vel, mass, dt=1 / 64, device="cpu")
    sim.start()
    sim.save_snapshot(tmp_path / "py.hdf5")

    def layout(path):
        out = {}
        with h5py.File(path, "r") as f:
            def visit(name, obj):
                kind = "group" if isinstance(obj, h5py.Group) else \
                    (obj.shape, obj.dtype.str)
                attrs = {k: (np.asarray(v).shape, np.asarray(v).dtype.kind)
                         for k, v in obj.attrs.items()}
                out[name] = (kind, attrs)
            f.visititems(visit)
            out["/"] = ("group", sorted(f.attrs))
        return out

    cli_layout = layout(tmp_path / "r" / "snapshot_0000.hdf5")
    py_layout = layout(tmp_path / "py.hdf5")
    assert set(cli_layout) == set(py_layout)
    for name in cli_layout:
        if name == "Parameters":
            continue  # the settings differ (the keys of run's options)
        assert cli_layout[name] == py_layout[name], name
