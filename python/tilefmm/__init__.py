"""tilefmm: gravitational N-body forces and simulations on the CPU and the
GPU, from Python (numpy arrays in and out).

    import tilefmm
    pos, vel, mass = tilefmm.ic.plummer(10000, seed=1)
    acc, pot = tilefmm.forces(pos, mass, accuracy=1e-4)
    print(tilefmm.errors(pos, mass, acc, sample=1000).p99)
    sim = tilefmm.Simulation(pos, vel, mass, dt=1/128, eps=0.01)
    sim.advance_to(1.0)
    print(sim.diagnostics().energy_error)
    snap = tilefmm.read("snapshot_0010.hdf5")   # HDF5, GADGET-2 or Tipsy

See python/README.md. The import checks that the library (libtilefmm)
is this package's version and that its structs are laid out as the
package's copies (tfmm_struct_layout)."""

from ._version import __version__
from ._lib import lib as _clib, path as library_path
from . import ic, io, snapshot
from ._forces import ErrorStats, Solver, errors, forces
from ._host import empty as host_array
from ._options import SOLVER_OPTIONS, SIM_OPTIONS, defaults, enum_names, plan
from .errors import (AccuracyError, CoincidentBodiesError, CudaError, FileError,
                     InvalidArgumentError, MpiError, NoDeviceError,
                     NonFiniteError, OutOfMemoryError, TilefmmError,
                     UnsupportedError)
from .io import Bodies, Units, read
from .simulation import Diagnostics, Simulation
from .state import State


def library_version():
    """The library's version string (tfmm_version)."""
    return _clib.tfmm_version().decode()


def has_cuda():
    """Whether the library was built with the CUDA backend."""
    return bool(_clib.tfmm_has_cuda())


def gpu_count():
    """Usable CUDA devices (0 without CUDA or without a GPU)."""
    return int(_clib.tfmm_gpu_count())


__all__ = [
    "__version__", "library_path", "library_version", "has_cuda", "gpu_count",
    "forces", "errors", "ErrorStats", "Solver", "Simulation", "State",
    "Diagnostics", "ic", "defaults", "enum_names", "plan", "SOLVER_OPTIONS",
    "SIM_OPTIONS", "snapshot", "TilefmmError", "InvalidArgumentError",
    "CoincidentBodiesError", "OutOfMemoryError", "NoDeviceError", "CudaError",
    "NonFiniteError", "UnsupportedError", "MpiError", "FileError",
    "AccuracyError", "io",
    "read", "Bodies", "Units", "host_array",
]
