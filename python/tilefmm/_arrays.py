"""Checks of the arrays the caller passes: shapes, dtypes and values,
with messages that name the argument and the first bad body."""

import numpy as np


def _as_float64(name, value):
    try:
        arr = np.asarray(value)
    except Exception as e:  # ragged lists and the like
        raise TypeError(f"{name}: not an array of numbers: {e}") from None
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name}: expected real numbers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def _first_bad(mask):
    return int(np.flatnonzero(mask)[0])


def vectors(name, value, n=None, check=True):
    """An (n, 3) float64 C-contiguous array of finite values (a copy only
    when value is not one already); check False: the values are not looked
    at (the library checks them, Solver.forces)."""
    arr = _as_float64(name, value)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name}: expected shape (N, 3), got {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name}: no bodies (shape {arr.shape})")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name}: {arr.shape[0]} rows for {n} bodies")
    if not check:
        return arr
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = _first_bad(bad)
        raise ValueError(f"{name}: body {i} has a non-finite value {arr[i]}")
    return arr


def masses(name, value, n, check=True):
    """An (n,) float64 array of finite masses > 0; (n, 1) is accepted.
    check False: the values are not looked at (as vectors)."""
    arr = _as_float64(name, value)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = np.ascontiguousarray(arr[:, 0])
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name}: expected shape ({n},) for {n} bodies, "
                         f"got {arr.shape}")
    if not check:
        return arr
    bad = ~np.isfinite(arr)
    if bad.any():
        i = _first_bad(bad)
        raise ValueError(f"{name}: body {i} has a non-finite mass {arr[i]}")
    bad = ~(arr > 0)
    if bad.any():
        i = _first_bad(bad)
        raise ValueError(f"{name}: body {i} has mass {arr[i]}; masses must "
                         "be > 0")
    return arr


def scalars(name, value, n):
    """An (n,) float64 array of finite values."""
    arr = _as_float64(name, value)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name}: expected shape ({n},), got {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = _first_bad(bad)
        raise ValueError(f"{name}: body {i} has a non-finite value {arr[i]}")
    return arr


def ids(name, value, n):
    """None, or an (n,) uint64 array of non-negative integer IDs."""
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected integers, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name}: expected shape ({n},), got {arr.shape}")
    if arr.dtype.kind == "i" and (arr < 0).any():
        i = _first_bad(arr < 0)
        raise ValueError(f"{name}: body {i} has a negative ID {arr[i]}")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def count(name, value, least=1):
    """A body count: an integer >= least."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    if value < least:
        raise ValueError(f"{name}: must be >= {least}, got {value}")
    return int(value)


def seed(name, value):
    """A seed: an integer in [0, 2^64)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    if not 0 <= int(value) < 2**64:
        raise ValueError(f"{name}: must be in [0, 2^64), got {value}")
    return int(value)


def pointer(arr):
    """The ctypes pointer to a float64, uint64 or int8 array's data."""
    import ctypes
    ctype = {np.dtype(np.float64): ctypes.c_double,
             np.dtype(np.uint64): ctypes.c_uint64,
             np.dtype(np.int8): ctypes.c_byte,
             np.dtype(np.uintp): ctypes.c_size_t}[arr.dtype]
    return arr.ctypes.data_as(ctypes.POINTER(ctype))
