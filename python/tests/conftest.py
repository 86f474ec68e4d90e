"""Shared truths of the package's tests: a numpy direct sum in double
precision (written here from the formulas of include/tilefmm.h, not from
the library), and fresh random seeds, printed so that a failure can be
replayed (TILEFMM_TEST_SEED=...)."""

import math
import os

import numpy as np
import pytest


def pytest_report_header(config):
    import tilefmm
    return (f"tilefmm {tilefmm.__version__}, library {tilefmm.library_path}, "
            f"CUDA {tilefmm.has_cuda()}, GPUs {tilefmm.gpu_count()}")


@pytest.fixture
def seed(request):
    """A fresh seed per test (TILEFMM_TEST_SEED fixes it)."""
    value = int(os.environ.get("TILEFMM_TEST_SEED",
                               int.from_bytes(os.urandom(4), "little")))
    request.node.user_properties.append(("seed", value))
    print(f"seed {value}")
    return value


# The chance of a false failure allowed to one judgement of a sample.
SAMPLE_FALSE_FAILURE = 1e-6


def sample_judged(errors, n, q=0.99, alpha=SAMPLE_FALSE_FAILURE):
    """The error to hold against a bound B on the q-quantile over n bodies,
    given the errors at k of them (tests/common/sample_quantile.h): all n,
    the nearest-rank quantile; a random sample, the (c + 1)-th largest with
    c the least count of P(Binomial(k, 1 - q) > c) <= alpha, so that a
    solver whose q-quantile is B fails by chance at most alpha of the time
    (the sample's own quantile would fail it often: of 100 bodies, the
    99th percentile is the second largest). None when k bodies cannot
    show a broken promise."""
    e = np.sort(np.asarray(errors, dtype=float))
    k, p = len(e), 1.0 - q
    if k >= n:
        return e[max(math.ceil(q * n), 1) - 1]

    def tail(c):  # P(Binomial(k, p) > c)
        return sum(math.comb(k, x) * p**x * (1 - p)**(k - x)
                   for x in range(c + 1, k + 1))

    c = 0
    while c < k and tail(c) > alpha:
        c += 1
    return None if c >= k else e[k - 1 - c]


def spline_w(u):
    """GADGET-2's W2(u) (Springel 2005 eq. 4) and its derivative."""
    with np.errstate(all="ignore"):  # the branches not taken
        return _spline_w(u)


def _spline_w(u):
    w = np.where(u < 0.5,
                 16 / 3 * u**2 - 48 / 5 * u**4 + 32 / 5 * u**5 - 14 / 5,
                 np.where(u < 1,
                          1 / (15 * np.maximum(u, 1e-300)) + 32 / 3 * u**2 - 16 * u**3
                          + 48 / 5 * u**4 - 32 / 15 * u**5 - 16 / 5,
                          -1 / np.maximum(u, 1e-300)))
    dw = np.where(u < 0.5,
                  32 / 3 * u - 192 / 5 * u**3 + 32 * u**4,
                  np.where(u < 1,
                           -1 / (15 * np.maximum(u, 1e-300)**2) + 64 / 3 * u - 48 * u**2
                           + 192 / 5 * u**3 - 32 / 3 * u**4,
                           1 / np.maximum(u, 1e-300)**2))
    return w, dw


def direct_sum(pos, mass, G=1.0, eps=0.0, softening="plummer"):
    """a_i = G sum_j m_j (x_j - x_i) phi'(r)/r and phi_i = G sum_j m_j phi(r),
    j != i, in float64 with numpy (in blocks of targets, to bound memory):
    the truth the tests hold the library to."""
    pos = np.asarray(pos, np.float64)
    mass = np.asarray(mass, np.float64)
    n = len(mass)
    acc, pot = np.empty((n, 3)), np.empty(n)
    for start in range(0, n, 256):
        rows = slice(start, min(start + 256, n))
        acc[rows], pot[rows] = _block(pos, mass, rows, G, eps, softening)
    return acc, pot


def _block(pos, mass, rows, G, eps, softening):
    d = pos[None, :, :] - pos[rows, None, :]  # d[i, j] = x_j - x_i
    r2 = np.einsum("ijk,ijk->ij", d, d)
    off = np.ones(r2.shape, dtype=bool)
    idx = np.arange(rows.start, rows.stop)
    off[idx - rows.start, idx] = False
    with np.errstate(divide="ignore", invalid="ignore"):
        if softening == "plummer" or eps == 0:
            inv = np.where(off, 1 / np.sqrt(np.where(off, r2 + eps * eps, 1)), 0)
            phi, dphi_over_r = -inv, inv**3  # phi'(r) / r
        else:
            h = 2.8 * eps
            r = np.sqrt(r2)
            w, dw = spline_w(r / h)
            phi = np.where(off, w / h, 0)
            dphi_over_r = np.where(off, dw / (h * h) / np.where(off, r, 1), 0)
    acc = G * np.einsum("ij,ijk->ik", mass[None, :] * dphi_over_r, d)
    pot = G * (phi * mass[None, :]).sum(axis=1)
    return acc, pot


def relative(a, ref):
    return np.linalg.norm(a - ref, axis=-1) / np.linalg.norm(ref, axis=-1)


def clustered(rng, n):
    """Bodies in tight clumps, a thin line and a wide halo, masses spanning
    three decades: input that strains a tree."""
    k = n // 4
    clumps = np.concatenate([rng.normal(c, 1e-3, (k // 2, 3))
                             for c in ([0.3, 0.1, -0.2], [-0.5, 0.4, 0.2])])
    line = np.column_stack([np.linspace(-1, 1, k), np.full(k, 0.05),
                            rng.normal(0, 1e-4, k)])
    halo = rng.normal(0, 2.0, (n - len(clumps) - k, 3))
    pos = np.concatenate([clumps, line, halo])
    mass = 10 ** rng.uniform(-3, 0, n)
    return pos, mass / mass.sum()
