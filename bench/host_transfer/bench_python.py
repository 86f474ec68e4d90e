"""Issue 28's Python figures: the wall time of a kept Solver.forces on
1M Plummer bodies (numpy's arrays, and on a branch that has it
tilefmm.host_array's), the solver's own time_total and its phases, and a
one-shot tilefmm.forces; a sha256 of the results to compare builds.
    python3 bench_python.py LABEL [N] [REPEATS] [DEVICE]
One CSV row a call on stdout: label,case,call,wall_ms,total_ms,upload_ms,
download_ms,prepare_ms,sha256."""

import hashlib
import sys
import time

import numpy as np

import tilefmm

label = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 20
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 12
b = tilefmm.ic.plummer(n, seed=1)
pos, mass = b.positions, b.masses
device = sys.argv[4] if len(sys.argv) > 4 else "gpu"


def digest(acc, pot):
    h = hashlib.sha256(np.ascontiguousarray(acc).tobytes())
    h.update(np.ascontiguousarray(pot).tobytes())
    return h.hexdigest()[:16]


def row(case, k, wall, st, acc, pot):
    t = st["time"]
    print(f"{label},{case},{k},{1e3 * wall:.3f},{1e3 * st['time_total']:.3f},"
          f"{1e3 * t['upload']:.3f},{1e3 * t['download']:.3f},"
          f"{1e3 * t['prepare']:.3f},{digest(acc, pot)}", flush=True)


def kept(case, p, m):
    with tilefmm.Solver(device=device) as s:
        for k in range(repeats):
            t0 = time.perf_counter()
            acc, pot = s.forces(p, m)
            wall = time.perf_counter() - t0
            row(case, k, wall, s.stats, acc, pot)
            del acc, pot


print("label,case,call,wall_ms,total_ms,upload_ms,download_ms,prepare_ms,sha256")
kept("kept_numpy", pos, mass)
if hasattr(tilefmm, "host_array"):
    hp, hm = tilefmm.host_array(pos.shape), tilefmm.host_array(mass.shape)
    hp[:], hm[:] = pos, mass
    kept("kept_host_array", hp, hm)
for k in range(3):
    t0 = time.perf_counter()
    acc, pot = tilefmm.forces(pos, mass, device=device)
    wall = time.perf_counter() - t0
    print(f"{label},oneshot,{k},{1e3 * wall:.3f},,,,,{digest(acc, pot)}",
          flush=True)
