"""The GPU through the package: device='auto' takes it when the library
has CUDA and a GPU is present; forces and simulations there against the
numpy truth. Skipped (saying so) without a usable GPU."""

import numpy as np
import pytest

import tilefmm
from conftest import clustered, direct_sum, relative

has_gpu = tilefmm.gpu_count() > 0
needs_gpu = pytest.mark.skipif(not has_gpu, reason="no usable GPU "
                               f"(CUDA in the library: {tilefmm.has_cuda()})")


def test_auto_takes_the_gpu_when_there_is_one():
    with tilefmm.Solver(device="auto") as s:
        assert s.device == ("gpu" if has_gpu else "cpu")
    if not tilefmm.has_cuda():
        assert tilefmm.gpu_count() == 0


@needs_gpu
@pytest.mark.parametrize("method,options,tolerance", [
    # single precision: 5e-5 on the CPU for this input (its dense line);
    # the header's floor is up to 2e-4 where large pulls cancel
    ("direct", {}, 3e-4),
    ("direct", {"precision": "double"}, 1e-11),
    ("fmm", {"accuracy": 1e-4}, 1e-4),
    ("fmm", {"accuracy": 1e-4, "schedule": "gpu"}, 1e-4),
    ("fmm", {"accuracy": 1e-4, "schedule": "hybrid"}, 1e-4),
    ("bh", {"accuracy": 1e-4}, 1e-4),
])
def test_forces_on_the_gpu(seed, method, options, tolerance):
    rng = np.random.default_rng(seed)
    pos, mass = clustered(rng, 6000)  # past TFMM_TREE_GPU_MIN_BODIES
    acc0, _ = direct_sum(pos, mass, eps=0.01)
    with tilefmm.Solver(method=method, device="gpu", eps=0.01, **options) as s:
        acc, pot = s.forces(pos, mass)
        assert s.stats["device"] == "gpu"
    err = np.sort(relative(acc, acc0))
    assert err[int(np.ceil(0.99 * len(err))) - 1] <= tolerance, seed
    assert np.isfinite(pot).all()


@needs_gpu
def test_a_simulation_on_the_gpu(seed):
    pos, vel, mass = tilefmm.ic.plummer(8192, seed=seed % 10000 + 1)
    opts = dict(dt=1 / 128, eps=0.02, accuracy=1e-4)
    a = tilefmm.Simulation(pos, vel, mass, **opts)
    assert a.device == "gpu"
    a.advance_to(0.25)
    saved = a.state()
    a.advance_to(0.5)
    assert abs(a.diagnostics().energy_error) < 1e-4
    b = tilefmm.Simulation.restore(saved, **opts)
    b.advance_to(0.5)
    assert np.array_equal(a.state().positions, b.state().positions)
    assert a.solver_stats["device"] == "gpu"
