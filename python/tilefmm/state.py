"""The state a restart needs (tfmm_sim_state) as numpy copies: what
Simulation.state() returns and Simulation.restore() takes, and what
snapshot.read() finds in a checkpoint. A module of its own, below both,
so that the simulation calls down into snapshot and neither calls up."""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np


@dataclass
class State:
    """The whole state a restart needs (tfmm_sim_state), as numpy copies:
    Simulation.restore(state, **options) continues it bit for bit."""

    positions: np.ndarray
    velocities: np.ndarray
    masses: np.ndarray
    accelerations: np.ndarray
    potentials: np.ndarray
    ids: np.ndarray
    step: int
    time_initial: float
    energy_initial: float
    ticks: int = 0
    tick: float = 0.0
    bins: Optional[np.ndarray] = field(default=None)
    # The solver's planner (tfmm_choice: chosen, theta, order, factor,
    # since, evaluations, n, accuracy, leaf, near_gpu, precision), so that
    # a restart evaluates with the settings and measurements the run had;
    # None (or all zero): the restarted solver chooses afresh.
    choice: Optional[dict] = field(default=None)

    @property
    def time(self):
        """time_initial + ticks * tick (the sim's own sum)."""
        return self.time_initial + float(self.ticks) * self.tick


# tfmm_choice's fields, in order, with their Python types.
CHOICE_FIELDS = (("chosen", int), ("theta", float), ("order", int),
                 ("factor", float), ("since", int), ("evaluations", int),
                 ("n", int), ("accuracy", float), ("leaf", int),
                 ("near_gpu", int), ("precision", int),
                 ("failed_cost", float), ("epsilon", float))
