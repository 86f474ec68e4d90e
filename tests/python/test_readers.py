"""swiftsimio, pynbody and yt open a snapshot that 'tilefmm run' wrote
with a physical unit system, with no extra arguments, and see the right
positions, masses, velocities, time and kinetic energy, in physical units.
The truth is computed here from the raw datasets (h5py) and the unit
system given to the run, not from the file's unit attributes; the same
file with a wrong length unit must fail every reader's checks (a negative
control). Two snapshots: double precision, and single precision with gzip
and shuffle.

Usage: test_readers.py TILEFMM WORKDIR
"""
import os
import shutil
import subprocess
import sys
import warnings

import h5py
import numpy as np

# The run's unit system: kpc, 1e10 Msun, km/s (GADGET's habits).
KPC_CM = 3.0856775814913673e21
MSUN_G = 1.98841e33
U_L, U_M, U_V = KPC_CM, 1e10 * MSUN_G, 1e5
U_T = U_L / U_V
G_CGS = 6.67430e-8

failures = []
expecting_failures = False  # the negative control: a differing check is right


def check(what, got, want, rtol):
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=0):
        err = np.max(np.abs(got - want) / np.abs(want)) if got.shape == want.shape else None
        failures.append(f"{what}: got {got.ravel()[:3]}, want {want.ravel()[:3]} "
                        f"(shape {got.shape} vs {want.shape}, max rel err {err})")
        print("differs (as it must)" if expecting_failures else "FAIL",
              failures[-1])
    else:
        print("ok  ", what)


def run(tilefmm, out, *extra):
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([tilefmm, "run", *extra, "--n", "300", "--seed", "7", "--steps", "4",
                    "--dt", "2e-5", "--snapshot-every", "4", "--threads", "1",
                    "--progress", "off", "--out", out,
                    "-P", f"InternalUnitSystem:UnitMass_in_cgs:{U_M!r}",
                    "-P", f"InternalUnitSystem:UnitLength_in_cgs:{U_L!r}",
                    "-P", f"InternalUnitSystem:UnitVelocity_in_cgs:{U_V!r}"],
                   check=True, stdout=subprocess.DEVNULL)
    return os.path.join(out, "snapshot_0001.hdf5")


def truth(path):
    with h5py.File(path, "r") as f:
        p = f["PartType1"]
        pos = p["Coordinates"][...].astype(float) * U_L       # cm, as stored (shifted)
        vel = p["Velocities"][...].astype(float) * U_V        # cm/s
        mass = p["Masses"][...].astype(float) * U_M           # g
        time = f["Header"].attrs["Time"][0] * U_T  # s
        g_file = f["PhysicalConstants/InternalUnits"].attrs["newton_G"][0]
    # G in the run's units must be G_cgs there (derived, not 1).
    check("newton_G in internal units", g_file, G_CGS * U_M * U_T**2 / U_L**3, 1e-12)
    kinetic = 0.5 * np.sum(mass * np.sum(vel**2, axis=1))  # erg
    return pos, vel, mass, time, kinetic


def f64(a):
    """The array in double precision, units kept: a single-precision
    snapshot's masses overflow float32 in grams."""
    return a.astype(np.float64)


def kinetic_of(mass, vel):
    return 0.5 * np.sum(mass * np.sum(vel**2, axis=1))


def with_swiftsimio(path, want, single):
    import swiftsimio
    pos, vel, mass, time, kinetic = want
    d = swiftsimio.load(path)
    dm = d.dark_matter
    # swiftsimio rounds the units to 5 significant figures of its nearest
    # base unit (find_nearest_base_unit): 2e-5.
    rtol = 2e-5
    check("swiftsimio positions (cm)", f64(dm.coordinates).to("cm").value, pos, rtol)
    check("swiftsimio velocities (cm/s)", f64(dm.velocities).to("cm/s").value, vel, rtol)
    check("swiftsimio masses (g)", f64(dm.masses).to("g").value, mass, rtol)
    check("swiftsimio time (s)", d.metadata.time.to("s").value, time, rtol)
    m = f64(dm.masses).to("Msun").value
    v = f64(dm.velocities).to("km/s").value
    check("swiftsimio kinetic energy (erg)",
          kinetic_of(m, v) * 1.98841586e33 * 1e10, kinetic, 1e-4)


def with_pynbody(path, want, single):
    import pynbody
    pos, vel, mass, time, kinetic = want
    s = pynbody.load(path)
    rtol = 1e-6 if single else 1e-9
    check("pynbody positions (cm)", f64(s["pos"]).in_units("cm"), pos, rtol)
    check("pynbody velocities (cm/s)", f64(s["vel"]).in_units("cm s**-1"), vel, rtol)
    check("pynbody masses (g)", f64(s["mass"]).in_units("g"), mass, rtol)
    check("pynbody time (s)", s.properties["time"].in_units("s"), time, rtol)
    check("pynbody kinetic energy (erg)",
          np.sum(s["ke"].in_units("erg g**-1") * f64(s["mass"]).in_units("g")),
          kinetic, rtol)
    r = np.sqrt(np.sum((pos / KPC_CM) ** 2, axis=1))
    check("pynbody radius from the origin (kpc)", f64(s["r"]).in_units("kpc"), r, rtol)


def with_yt(path, want, single):
    import yt
    yt.set_log_level(40)
    pos, vel, mass, time, kinetic = want
    ds = yt.load(path)
    ad = ds.all_data()
    rtol = 1e-6 if single else 1e-9
    # yt returns the particles it finds in its domain [0, BoxSize): all of
    # them here, as the snapshot is shifted into the box; in file order.
    check("yt positions (cm)", f64(ad["PartType1", "Coordinates"]).to("cm").value, pos, rtol)
    check("yt velocities (cm/s)", f64(ad["PartType1", "Velocities"]).to("cm/s").value, vel, rtol)
    check("yt masses (g)", f64(ad["PartType1", "Mass"]).to("g").value, mass, rtol)
    check("yt time (s)", ds.current_time.to("s").value, time, rtol)
    check("yt kinetic energy (erg)",
          kinetic_of(f64(ad["PartType1", "Mass"]).to("g").value,
                     f64(ad["PartType1", "Velocities"]).to("cm/s").value), kinetic, rtol)


def negative_control(path, want):
    """The checks must fail on wrong units: the same file with its length
    unit doubled must fail each reader's checks (a test that cannot fail
    is no test)."""
    global expecting_failures
    bad = path.replace(".hdf5", "_wrong_units.hdf5")
    shutil.copy(path, bad)
    with h5py.File(bad, "r+") as f:
        for group in ("Units", "InternalCodeUnits"):
            f[group].attrs["Unit length in cgs (U_L)"] = np.array([2 * U_L])
    for reader in (with_swiftsimio, with_pynbody, with_yt):
        before = len(failures)
        print(f"-- {reader.__name__} on wrong units (must fail)")
        expecting_failures = True
        try:
            reader(bad, want, False)
        except Exception as e:
            failures.append(f"{type(e).__name__}: {e}")
        expecting_failures = False
        caught = len(failures) - before
        del failures[before:]
        if caught == 0:
            failures.append(f"{reader.__name__} passed a file of wrong units")
            print("FAIL", failures[-1])
        else:
            print(f"ok   {reader.__name__} caught the wrong units ({caught} checks)")


def main():
    tilefmm, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    warnings.simplefilter("ignore")
    # Double precision, and the large-run choices: single precision,
    # gzip with shuffle, no accelerations or potentials.
    for name, extra in (("double", ()),
                        ("single_gzip", ("--snapshot-precision", "single",
                                         "--snapshot-compression", "4",
                                         "--snapshot-fields", "Velocities"))):
        print(f"-- {name}")
        path = run(tilefmm, os.path.join(work, name), *extra)
        want = truth(path)
        for reader in (with_swiftsimio, with_pynbody, with_yt):
            try:
                reader(path, want, bool(extra))
            except Exception as e:  # a reader that cannot open the file fails
                failures.append(f"{name} {reader.__name__}: {type(e).__name__}: {e}")
                print("FAIL", failures[-1])
        if not extra:
            negative_control(path, want)
    if failures:
        print(f"{len(failures)} checks failed")
        sys.exit(1)
    print("swiftsimio, pynbody and yt read the snapshot in physical units")


if __name__ == "__main__":
    main()
