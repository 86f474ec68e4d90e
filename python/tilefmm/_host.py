"""Result arrays in the library's pinned host memory (tfmm_host_alloc),
which the solver fills from the GPU by one DMA at the speed of the bus
rather than through the driver's pageable staging. Pinning costs about as
much as a copy, so a Solver keeps the blocks of the arrays its caller has
dropped (HostPool) and the next evaluation of as many bodies pins nothing.
Each array owns its block through its base (a ctypes array over it): the
block goes back to the pool, or to tfmm_host_free once the pool is closed
or full, when the last view of the array is gone."""

import ctypes

import numpy as np

from ._lib import lib


class _Block:
    """One block of tfmm_host_alloc's memory, held by the arrays over it."""

    __slots__ = ("address", "nbytes", "pool")

    def __init__(self, address, nbytes, pool):
        self.address = address
        self.nbytes = nbytes
        self.pool = pool

    def __del__(self):
        try:
            if self.pool is None or not self.pool._keep(self.address, self.nbytes):
                lib.tfmm_host_free(self.address)
        except Exception:  # the interpreter shutting down: modules gone
            pass


class HostPool:
    """The pinned blocks one Solver keeps between evaluations: at most
    KEEP of each size (the arrays of two evaluations alive at once, the
    last one's and the next one's, need two of each)."""

    KEEP = 2

    def __init__(self):
        self._free = {}
        self._open = True

    def _keep(self, address, nbytes):
        if not self._open:
            return False
        blocks = self._free.setdefault(nbytes, [])
        if len(blocks) >= self.KEEP:
            return False
        blocks.append(address)
        return True

    def empty(self, shape):
        """An uninitialised float64 C-contiguous array of that shape in
        pinned memory (plain memory where the library cannot pin)."""
        count = int(np.prod(shape))
        nbytes = 8 * max(count, 1)
        blocks = self._free.get(nbytes)
        address = blocks.pop() if blocks else lib.tfmm_host_alloc(nbytes)
        if not address:
            raise MemoryError(f"tfmm_host_alloc: no memory for {nbytes} bytes")
        buf = (ctypes.c_double * max(count, 1)).from_address(address)
        buf._tilefmm_block = _Block(address, nbytes, self)
        return np.frombuffer(buf, dtype=np.float64, count=count).reshape(shape)

    def close(self):
        """Frees the kept blocks; those of arrays still alive are freed
        when they go."""
        self._open = False
        for blocks in self._free.values():
            for address in blocks:
                lib.tfmm_host_free(address)
        self._free = {}


def empty(shape):
    """An uninitialised float64 array in the library's pinned host memory,
    freed when the last view of it goes: for bodies passed to a Solver on
    the GPU again and again, which then move by one DMA (numpy's own
    arrays are staged through the solver's pinned buffers)."""
    pool = HostPool()
    arr = pool.empty(shape)
    pool.close()
    return arr
