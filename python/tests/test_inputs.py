"""Bad input and bad options raise ValueError or TypeError naming the
argument, with the library's message: never a crash, never a NaN."""

import math

import numpy as np
import pytest

import tilefmm

POS = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
MASS = np.array([1.0, 2, 3, 4])


@pytest.mark.parametrize("pos,message", [
    (np.zeros((4, 2)), r"positions: expected shape \(N, 3\)"),
    (np.zeros(12), r"positions: expected shape \(N, 3\)"),
    (np.zeros((0, 3)), "positions: no bodies"),
    (np.array([[0, 0, 0], [1, np.nan, 0], [0, 1, 0], [0, 0, 1]]),
     "positions: body 1 has a non-finite"),
    (np.array([[0, 0, 0], [1, 0, 0], [0, np.inf, 0], [0, 0, 1]]),
     "positions: body 2 has a non-finite"),
])
def test_bad_positions(pos, message):
    with pytest.raises(ValueError, match=message):
        tilefmm.forces(pos, MASS[:len(pos)] if len(pos) else MASS)


@pytest.mark.parametrize("mass,message", [
    (np.array([1.0, 2, -3, 4]), "masses: body 2 has mass -3.0; masses must be > 0"),
    (np.array([1.0, 0, 3, 4]), "masses: body 1 has mass 0.0"),
    (np.array([1.0, 2, 3, np.nan]), "masses: body 3 has a non-finite mass"),
    (np.array([1.0, 2, 3]), r"masses: expected shape \(4,\)"),
    (np.ones((4, 2)), r"masses: expected shape \(4,\)"),
])
def test_bad_masses(mass, message):
    with pytest.raises(ValueError, match=message):
        tilefmm.forces(POS, mass)


@pytest.mark.parametrize("bad", [np.array([["a", "b", "c"]] * 4),
                                  POS.astype(complex), POS > 0,
                                  [[0, 0, 0], [1, 0]]])
def test_positions_of_the_wrong_type(bad):
    with pytest.raises(TypeError, match="positions"):
        tilefmm.forces(bad, MASS)


@pytest.mark.parametrize("options,error,message", [
    ({"thetaa": 0.5}, TypeError, "unknown option 'thetaa' .did you mean 'theta'"),
    ({"method": "fmmm"}, ValueError, "method: 'fmmm' is not one of reference, direct, fmm, bh"),
    ({"device": 1}, TypeError, "device: expected one of"),
    ({"softening": "gauss"}, ValueError, "softening: 'gauss' is not one of plummer, spline"),
    ({"schedule": "fast"}, ValueError, "schedule: 'fast'"),
    ({"precision": "half"}, ValueError, "precision: 'half'"),
    ({"mac": "size"}, ValueError, "mac: 'size'"),
    ({"theta": "wide"}, TypeError, "theta: expected a number or 'auto'"),
    ({"order": 2.5}, TypeError, "order: expected an integer or 'auto'"),
    ({"eps": math.nan}, ValueError, "eps: must be finite"),
    ({"G": True}, TypeError, "G: expected a number"),
    ({"box_min": (0, 0)}, ValueError, "box_min: expected 3 numbers"),
    ({"near_only": 2}, TypeError, "near_only"),
    # Out of range: the library's own messages.
    ({"theta": 1.5}, ValueError, "theta"),
    ({"order": 25}, ValueError, "order"),
    ({"eps": -1.0}, ValueError, "eps"),
    ({"accuracy": 0.5}, ValueError, "accuracy"),
    ({"leaf_size": -3}, ValueError, "leaf_size"),
    ({"num_threads": 5000}, ValueError, "num_threads"),
    ({"gpu_unroll": 3}, ValueError, "gpu_unroll"),
    ({"max_depth": 0}, ValueError, "max_depth"),
])
def test_bad_options(options, error, message):
    with pytest.raises(error, match=message):
        tilefmm.forces(POS, MASS, **options)


def test_library_errors_are_typed_and_carry_the_message():
    with pytest.raises(tilefmm.InvalidArgumentError) as info:
        tilefmm.forces(POS, MASS, theta=1.5)
    assert info.value.status == 1 and info.value.status_name == "invalid argument"
    assert isinstance(info.value, ValueError)


def test_coincident_bodies_without_softening():
    pos = POS.copy()
    pos[3] = pos[1]
    with pytest.raises(tilefmm.CoincidentBodiesError, match="1.*3|3.*1"):
        tilefmm.forces(pos, MASS, eps=0)
    acc, _ = tilefmm.forces(pos, MASS, eps=0.1)  # softened: finite
    assert np.isfinite(acc).all()


@pytest.mark.skipif(tilefmm.gpu_count() > 0, reason="a GPU is present")
def test_gpu_asked_for_without_one():
    with pytest.raises((tilefmm.NoDeviceError, tilefmm.UnsupportedError)) as info:
        tilefmm.forces(POS, MASS, device="gpu")
    assert isinstance(info.value, RuntimeError) and str(info.value)


def test_simulation_options_are_checked():
    vel = np.zeros_like(POS)
    with pytest.raises(ValueError, match="dt"):
        tilefmm.Simulation(POS, vel, MASS, dt=-1)
    with pytest.raises(TypeError, match="unknown option 'stepsize'"):
        tilefmm.Simulation(POS, vel, MASS, stepsize=0.1)
    with pytest.raises(ValueError, match="velocities: 3 rows for 4 bodies"):
        tilefmm.Simulation(POS, vel[:3], MASS)
    with pytest.raises(ValueError, match="eps"):  # eta needs a softening length
        tilefmm.Simulation(POS, vel, MASS, eta=0.025)
    with pytest.raises(ValueError, match="ids: body 1 has a negative ID"):
        tilefmm.Simulation(POS, vel, MASS, ids=np.array([1, -2, 3, 4]))


@pytest.mark.parametrize("call,message", [
    (lambda: tilefmm.ic.plummer(0), "n: must be >= 1"),
    (lambda: tilefmm.ic.merger(1), "n: must be >= 2"),
    (lambda: tilefmm.ic.plummer(10, seed=-1), "seed"),
    (lambda: tilefmm.ic.plummer(10.0), "n: expected an integer"),
])
def test_bad_initial_conditions(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
