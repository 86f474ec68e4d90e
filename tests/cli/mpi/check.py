"""Comparisons for the tests of the tool under mpirun (tests/cli/mpi).

  check.py forces TOL LABEL REF ONE OUT...
      forces ('tilefmm forces' output) body by body: ONE's and each OUT's
      against REF's, and each OUT's against ONE's. The relative
      acceleration error |a - a_ref| / |a_ref| and the potential's are
      summarised by nearest-rank percentiles (apps/error_stats.h); fails
      when the 99th percentile of either is above TOL (the accuracy
      target, as 'tilefmm validate' judges it).
  check.py rounding TOL LABEL REF OUT...
      each OUT against REF, failing when the largest error is above TOL.
  check.py restart STRAIGHT RESUMED N STEPS DT TOL
      a run resumed from a checkpoint (RESUMED, a run directory) against
      the run straight through (STRAIGHT): see restart() below.
"""
import math
import sys

import h5py
import numpy as np


def percentile(sorted_values, p):
    """Nearest rank: the ceil(p n / 100)-th smallest (error_stats.h)."""
    n = len(sorted_values)
    k = max(1, math.ceil(p * n / 100))
    return sorted_values[k - 1]


def read_forces(path):
    a = np.loadtxt(path, comments="#", ndmin=2)
    if a.shape[1] != 4:
        sys.exit(f"FAIL: {path}: {a.shape[1]} columns, not 'ax ay az phi'")
    return a


def errors(ref_path, out_path):
    ref, out = read_forces(ref_path), read_forces(out_path)
    if ref.shape != out.shape:
        sys.exit(f"FAIL: {out_path}: {len(out)} bodies, {ref_path}: {len(ref)}")
    if not np.all(np.isfinite(out)):
        sys.exit(f"FAIL: {out_path}: a force that is not finite")
    acc = np.linalg.norm(out[:, :3] - ref[:, :3], axis=1) / np.linalg.norm(
        ref[:, :3], axis=1)
    pot = np.abs(out[:, 3] - ref[:, 3]) / np.abs(ref[:, 3])
    return np.sort(acc), np.sort(pot)


def compare(ref_path, out_path, tol, judge):
    acc, pot = errors(ref_path, out_path)
    line = lambda e: (f"median {percentile(e, 50):.3e} p99 "
                      f"{percentile(e, 99):.3e} max {e[-1]:.3e}")
    print(f"  {out_path} against {ref_path}: acceleration {line(acc)}; "
          f"potential {line(pot)}")
    if judge(acc) > tol or judge(pot) > tol:
        print(f"FAIL: {out_path} against {ref_path}: above {tol:g}")
        return False
    return True


def read_run_file(path):
    with h5py.File(path, "r") as f:
        p = f["PartType1"]
        out = {k: p[k][()] for k in ("ParticleIDs", "Coordinates",
                                     "Velocities", "Masses")}
        for k in ("Accelerations", "TimeBins"):
            if k in p:
                out[k] = p[k][()]
        out["Time"] = float(np.ravel(f["Header"].attrs["Time"])[0])
        out["RunState"] = ({k: v.decode() if isinstance(v, bytes) else str(v)
                            for k, v in f["RunState"].attrs.items()}
                           if "RunState" in f else {})
    return out


def read_csv(path):
    rows = np.genfromtxt(path, delimiter=",", names=True)
    return {int(r["step"]): r for r in np.atleast_1d(rows)}


def restart(straight, resumed, n, steps, dt, tol):
    """The resumed run ends where the run straight through does: the same
    bodies (ids 1..n, in order, as one process writes them), step (STEPS
    synchronisation points) and time;
    its first snapshot holds the initial conditions bit for bit; its
    statistics have every step once; its energy error stays that of the
    straight run to within what the force accuracy allows; and every
    body's position and velocity differ from the straight run's by less
    than force errors of TOL |a| over the time t run: |dx| <= TOL |a| t^2,
    |dv| <= 2 TOL |a| t (twice the leapfrog's growth of a constant error
    of TOL |a|: 1/2 a t^2 and a t); a body in another time bin (at most 1 %)
    by less than one step's kick, |dv| <= |a| dt, |dx| <= |a| dt t."""
    ok = True

    def expect(cond, what):
        nonlocal ok
        if not cond:
            print(f"FAIL: {what}")
            ok = False

    a = read_run_file(f"{straight}/checkpoint.hdf5")
    b = read_run_file(f"{resumed}/checkpoint.hdf5")
    t = steps * dt
    expect(np.array_equal(b["ParticleIDs"], np.arange(1, n + 1)),
           "the resumed run's ids are not 1..n in order")
    # With individual steps /RunState step counts the sub-steps, which
    # depend on the bins: the time tells where the run is.
    expect("TimeBins" in a or b["RunState"].get("step") == str(steps),
           f"resumed /RunState step {b['RunState'].get('step')}, not {steps}")
    expect(b["Time"] == a["Time"] == t,
           f"times {b['Time']!r} (resumed), {a['Time']!r}, not {t!r}")
    expect(np.array_equal(b["Masses"], a["Masses"]), "the masses differ")
    s0a = read_run_file(f"{straight}/snapshot_0000.hdf5")
    s0b = read_run_file(f"{resumed}/snapshot_0000.hdf5")
    for k in ("ParticleIDs", "Coordinates", "Velocities", "Masses"):
        expect(np.array_equal(s0a[k], s0b[k]),
               f"snapshot_0000 {k}: not the initial conditions bit for bit")
    same = np.ones(n, dtype=bool)
    if "TimeBins" in a:
        # A body at a bin's edge may take the other bin, its forces being
        # those of another tree: a few, not many.
        same = np.asarray(b.get("TimeBins", -1) == a["TimeBins"])
        same = same if same.shape == (n,) else np.zeros(n, dtype=bool)
        print(f"bins: {same.mean():.2%} of the bodies in the straight run's")
        expect(same.mean() >= 0.99, "fewer than 99% of the bins agree")
    acc = np.linalg.norm(a["Accelerations"], axis=1)
    dx = np.linalg.norm(b["Coordinates"] - a["Coordinates"], axis=1)
    dv = np.linalg.norm(b["Velocities"] - a["Velocities"], axis=1)
    rx, rv = dx / (tol * acc * t * t), dv / (2 * tol * acc * t)
    # The bodies in the straight run's bins: what the forces' errors allow.
    print(f"positions: max |dx| {dx[same].max():.3e}, max |dx| / (TOL |a| "
          f"t^2) {rx[same].max():.3e}; velocities: max |dv| "
          f"{dv[same].max():.3e}, max |dv| / (2 TOL |a| t) "
          f"{rv[same].max():.3e}")
    expect(rx[same].max() <= 1 and rv[same].max() <= 1,
           "positions or velocities beyond the force accuracy's reach")
    if not same.all():
        # A body in another bin is integrated with another step: it differs
        # by the integrator's error, not the forces' (seed 633454848237354:
        # one body of 4,000 went from bin 1 to 2 and was 1.02x the bound
        # above). Its kicks fall at other times: at most one step's kick
        # apart, |dv| <= |a| dt, and so |dx| <= |a| dt t.
        o = ~same
        kx, kv = dx[o] / (acc[o] * dt * t), dv[o] / (acc[o] * dt)
        print(f"other bins ({o.sum()}): max |dx| / (|a| dt t) {kx.max():.3e},"
              f" max |dv| / (|a| dt) {kv.max():.3e}")
        expect(kx.max() <= 1 and kv.max() <= 1,
               "a body in another bin beyond one step's kick")
    ca, cb = read_csv(f"{straight}/statistics.csv"), read_csv(
        f"{resumed}/statistics.csv")
    expect(sorted(cb) == list(range(steps + 1)),
           f"resumed statistics.csv steps {sorted(cb)}")
    worst = max(abs(cb[k]["rel_energy_error"] - ca[k]["rel_energy_error"])
                for k in ca)
    print(f"energy: final dE/E {cb[steps]['rel_energy_error']:.3e} resumed, "
          f"{ca[steps]['rel_energy_error']:.3e} straight; largest difference "
          f"{worst:.3e}")
    # The energy's error from force errors of TOL: |dE/E| ~ TOL on the
    # potential, far less in practice (they average over the bodies).
    expect(worst <= tol, f"energy errors differ by {worst:.3e} > {tol:g}")
    return ok


def main():
    cmd = sys.argv[1]
    if cmd in ("forces", "rounding"):
        tol, label, ref = float(sys.argv[2]), sys.argv[3], sys.argv[4]
        print(label)
        if cmd == "forces":
            p99 = lambda e: percentile(e, 99)
            one, outs = sys.argv[5], sys.argv[6:]
            pairs = [(ref, one)] + [(ref, o) for o in outs] + [
                (one, o) for o in outs]
            ok = all([compare(r, o, tol, p99) for r, o in pairs])
        else:
            ok = all([compare(ref, o, tol, lambda e: e[-1])
                      for o in sys.argv[5:]])
        if not ok:
            sys.exit(1)
    elif cmd == "restart":
        straight, resumed = sys.argv[2], sys.argv[3]
        n, steps = int(sys.argv[4]), int(sys.argv[5])
        dt, tol = float(sys.argv[6]), float(sys.argv[7])
        if not restart(straight, resumed, n, steps, dt, tol):
            sys.exit(1)
    else:
        sys.exit(f"check.py: unknown command {cmd}")


if __name__ == "__main__":
    main()
