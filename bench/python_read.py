"""tilefmm.read of an HDF5 snapshot in process and in a child process
(TILEFMM_READ_ISOLATION off and on), interleaved round by round so that
both see the same load; prints CSV: n, mode, rounds, min and median
seconds.

    python bench/python_read.py [N ...] [--rounds R] [--dir DIR]

The snapshot (positions, velocities, masses, accelerations, potentials,
IDs: 96 bytes a body, written by tilefmm.io.write) is made once in DIR."""

import argparse
import os
import statistics
import time

import numpy as np

import tilefmm


def snapshot(directory, n):
    path = os.path.join(directory, f"read_{n}.hdf5")
    if not os.path.exists(path):
        rng = np.random.default_rng(1)
        tilefmm.io.write(path, rng.normal(size=(n, 3)),
                         rng.normal(size=(n, 3)), rng.uniform(0.5, 1.5, n),
                         accelerations=rng.normal(size=(n, 3)),
                         potentials=rng.normal(size=n))
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="*", type=int, default=[1000, 1000000])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--dir", default=".")
    a = ap.parse_args()
    print("n,mode,rounds,min_s,median_s")
    for n in a.n:
        path = snapshot(a.dir, n)
        times = {"in_process": [], "isolated": []}
        for _ in range(a.rounds):
            for mode in times:
                os.environ["TILEFMM_READ_ISOLATION"] = (
                    "off" if mode == "in_process" else "on")
                t0 = time.perf_counter()
                b = tilefmm.read(path)
                times[mode].append(time.perf_counter() - t0)
                assert len(b) == n
        for mode, t in times.items():
            print(f"{n},{mode},{a.rounds},{min(t):.4f},"
                  f"{statistics.median(t):.4f}")


if __name__ == "__main__":
    main()
