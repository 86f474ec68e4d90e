"""Host memory (issue 28): tilefmm.host_array, the library's allocator
(pinned with a GPU), holds what is written to it and is freed when its
last view goes; a kept Solver gives the same bits from numpy's arrays and
from host_array's, returns its results in pinned memory on the GPU (one
DMA) and reuses their blocks once the caller drops them, and its results
outlive it. The GPU tests skip without a usable GPU."""

import gc

import numpy as np
import pytest

import tilefmm
from conftest import clustered
from tilefmm._lib import lib

has_gpu = tilefmm.gpu_count() > 0
needs_gpu = pytest.mark.skipif(not has_gpu, reason="no usable GPU "
                               f"(CUDA in the library: {tilefmm.has_cuda()})")


def pinned(arr):
    return bool(lib.tfmm_host_pinned(arr.ctypes.data))


def test_host_array_holds_what_is_written(seed):
    rng = np.random.default_rng(seed)
    a = tilefmm.host_array((1000, 3))
    assert a.shape == (1000, 3) and a.dtype == np.float64
    assert a.flags["C_CONTIGUOUS"] and a.flags["WRITEABLE"]
    x = rng.standard_normal((1000, 3))
    a[:] = x
    view = a[10:20]
    del a
    gc.collect()
    assert np.array_equal(view, x[10:20])  # the view keeps the block
    assert pinned(view) == has_gpu
    assert not pinned(np.empty(10))


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=needs_gpu)])
def test_same_bits_from_numpy_and_host_arrays(seed, device):
    rng = np.random.default_rng(seed)
    pos, mass = clustered(rng, 6000)
    hpos, hmass = tilefmm.host_array(pos.shape), tilefmm.host_array(mass.shape)
    hpos[:], hmass[:] = pos, mass
    with tilefmm.Solver(device=device, eps=0.01) as s:
        acc, pot = s.forces(pos, mass)
        hacc, hpot = s.forces(hpos, hmass)
        assert pinned(hacc) == (device == "gpu")
    assert np.array_equal(acc, hacc) and np.array_equal(pot, hpot)
    one_acc, one_pot = tilefmm.forces(pos, mass, device=device, eps=0.01)
    assert np.array_equal(acc, one_acc) and np.array_equal(pot, one_pot)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=needs_gpu)])
def test_reserve_gives_the_same_bits(seed, device):
    rng = np.random.default_rng(seed)
    pos, mass = clustered(rng, 6000)
    with tilefmm.Solver(device=device, eps=0.01, measure="off") as plain:
        want = plain.forces(pos, mass), plain.forces(pos[:4000], mass[:4000])
    with tilefmm.Solver(device=device, eps=0.01, measure="off") as s:
        s.reserve(5000)  # then more bodies than reserved, and fewer
        got = s.forces(pos, mass), s.forces(pos[:4000], mass[:4000])
        with pytest.raises(ValueError, match="reserve"):
            s.reserve(0)
    for (a, p), (wa, wp) in zip(got, want):
        assert np.array_equal(a, wa) and np.array_equal(p, wp)


@needs_gpu
def test_kept_solver_reuses_its_pinned_blocks(seed):
    rng = np.random.default_rng(seed)
    pos, mass = clustered(rng, 6000)
    with tilefmm.Solver(device="gpu", schedule="gpu", eps=0.01) as s:
        first = s.forces(pos, mass)
        seen = {first[0].ctypes.data, first[1].ctypes.data}
        for _ in range(4):
            acc, pot = s.forces(pos, mass)
            assert np.array_equal(acc, first[0]) and np.array_equal(pot, first[1])
            seen |= {acc.ctypes.data, pot.ctypes.data}
            del acc, pot
        assert len(seen) <= 4, "the blocks of dropped results are reused"
    # the results outlive the solver and its pool
    assert np.isfinite(first[0]).all() and pinned(first[0])
