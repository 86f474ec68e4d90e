#!/usr/bin/env python3
"""Two Plummer spheres falling together: a small simulation with the
tilefmm package, plotted with matplotlib to a PNG (the bodies projected
on the orbital plane at a few times, and the relative energy error).

    python3 merger.py [--n 4000] [--t-end 12] [--out merger.png]

Runs from any directory once the package is installed with its examples'
extra, which brings matplotlib: pip install './python[examples]' from the
repository."""

import argparse
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("merger.py plots with matplotlib, which is not installed: "
             "pip install './python[examples]' (from the repository) or "
             "pip install matplotlib")

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import tilefmm  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--t-end", type=float, default=12.0)
    parser.add_argument("--frames", type=int, default=4)
    parser.add_argument("--out", default="merger.png")
    args = parser.parse_args()

    pos, vel, mass = tilefmm.ic.merger(args.n, seed=1)
    sim = tilefmm.Simulation(pos, vel, mass, dt=1 / 64, eps=0.02,
                             softening="spline", accuracy=1e-3)
    print(f"tilefmm {tilefmm.__version__}: {args.n} bodies on the {sim.device}")

    fig, axes = plt.subplots(1, args.frames + 1, figsize=(4 * (args.frames + 1), 4))
    times, errors = [], []
    frame_times = np.linspace(0, args.t_end, args.frames)
    for k, t_frame in enumerate(frame_times):
        while sim.time < t_frame:
            sim.advance_to(min(t_frame, sim.time + 0.25))
            times.append(sim.time)
            errors.append(sim.diagnostics().energy_error)
        x = sim.state().positions
        ax = axes[k]
        ax.scatter(x[:, 0], x[:, 1], s=0.3, c="k", alpha=0.5, linewidths=0)
        ax.set(xlim=(-4, 4), ylim=(-4, 4), aspect="equal",
               title=f"t = {sim.time:.2f}", xlabel="x")
    axes[0].set_ylabel("y")
    axes[-1].semilogy(times, np.abs(errors) + 1e-16)
    axes[-1].set(xlabel="t", ylabel="|dE / E|", title="energy error")
    fig.tight_layout()
    fig.savefig(args.out, dpi=80)
    d = sim.diagnostics()
    print(f"t = {sim.time:.3f} after {sim.steps} steps: dE/E = {d.energy_error:.2e}, "
          f"2K/|W| = {d.virial_ratio:.3f}; wrote {args.out}")


if __name__ == "__main__":
    main()
