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

    @property
    def time(self):
        """time_initial + ticks * tick (the sim's own sum)."""
        return self.time_initial + float(self.ticks) * self.tick
