/* Host memory at the speed of the bus (issue 28). A copy between pageable
 * host memory and the device goes through the driver's own staging, which
 * moved the results of 1M bodies at 1.5 GB/s on an H100 machine; pinned
 * (page-locked) memory is copied by the DMA engines at the bus's speed.
 * So: host memory pinned from the start (tfmm_gpu_host_alloc, behind the
 * public tfmm_host_alloc), copied straight; and the caller's pageable
 * arrays staged in chunks through two pinned slots of the context's arena
 * (TFMM_PINNED_HOST, arena.h), the host's copy of one chunk (by the
 * OpenMP team) overlapping the DMA of the other.
 *
 * Plain C; the CUDA build's is host_copy.c, the CPU-only build's stand-ins
 * are in kernels/none/gpu_none.c (no pinned memory, every copy refused). */
#ifndef TFMM_HOST_COPY_H
#define TFMM_HOST_COPY_H

#include "base/error.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfmm_gpu tfmm_gpu;

/* The chunk of a staged copy: large enough that the per-chunk waits are
 * noise beside its 0.2 ms of DMA, small enough that the two pinned slots
 * (8 MiB) cost little to keep. */
enum { TFMM_HOST_CHUNK = 4 << 20 };

/* `bytes` (0 counts as 1) of pinned host memory, portable to every device
 * (cudaHostAlloc), or NULL when it cannot be had (no device, no driver,
 * no memory, a build without CUDA); no error is left behind. */
void *tfmm_gpu_host_alloc(size_t bytes);

/* Whether p lies in pinned host memory (cudaHostAlloc'd or registered):
 * a copy to or from it needs no staging. 0 for NULL, for pageable or
 * device memory and when the driver cannot tell. */
int tfmm_gpu_host_pinned(const void *p);

/* Frees what tfmm_gpu_host_alloc returned (NULL: nothing). */
void tfmm_gpu_host_free(void *p);

/* `bytes` from host memory src to g's device memory dst (to_device), or
 * from device src to host dst, ordered on `stream` (a cudaStream_t of g's
 * device, which must be current) and done when this returns: one DMA when
 * the host side is pinned, else staged through TFMM_PINNED_HOST in chunks
 * of TFMM_HOST_CHUNK. */
tfmm_status tfmm_gpu_copy_host(tfmm_gpu *g, void *dst, const void *src,
                               size_t bytes, int to_device, void *stream,
                               tfmm_error *err);

/* What a staged copy of `bytes` takes on its first call, taken now: the
 * two pinned slots (cudaMallocHost: 2.1-2.3 ms for each 4 MiB on an
 * H200) and the
 * OpenMP team that copies through them (its threads' start). g's device
 * must be current. A solver's reserve (tfmm_solver_reserve). */
tfmm_status tfmm_gpu_copy_host_reserve(tfmm_gpu *g, size_t bytes,
                                       tfmm_error *err);

/* One byte written in each page of the host memory [p, p + bytes), by the
 * OpenMP team: the pages of an array that malloc has just returned are
 * mapped on their first write, a fault each (32 MB of results: 8,192
 * faults). Called on the results' host arrays while the device still
 * computes them, so that the faults are paid beside the device's work and
 * by the whole team, not one chunk at a time inside the staged copy. The
 * contents written are not kept. */
void tfmm_host_touch(void *p, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
