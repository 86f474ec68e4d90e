/* The exact forces at a sample of targets, on the GPU: every source pulls
 * every target through the pair formula of nearfield/interaction.h
 * (tfmm_soft_pair_f64, the one the CPU's double-precision direct sums
 * use), positions, arithmetic and sums in double, G = 1, a target's own
 * body excluded by its index as the CPU reference excludes it
 * (nearfield/reference.c). What an evaluation measures its error
 * against where the bodies live on the device; it agrees with
 * tfmm_allpairs_reference_at at the same targets to about 1e-13 of |a|
 * (the summation order differs: tests/test_reference_gpu.c).
 *
 * Cost: k n pairs of 19 FP64 instructions each (Plummer, with the
 * potential; reference_gpu.cu counts them), on the FP64 pipe: at most
 * 132 SMs x 64 lanes x 1.98 GHz / 19 = 8.8e11 pairs a second on an H100
 * SXM, so 2,000 targets among 10^6 bodies (2e9 pairs) take at least
 * 2.3 ms; the sources are read once for every 256 targets (32 bytes a
 * body, from L2 at 10^6 bodies).
 *
 * Plain C; enqueued on the caller's stream (a cudaStream_t of the current
 * device; NULL: the legacy default stream) over device arrays, without
 * allocating or waiting. Not thread-safe on one workspace. */
#ifndef TFMM_REFERENCE_GPU_H
#define TFMM_REFERENCE_GPU_H

#include "base/error.h"
#include "base/pair.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Accelerations d_acc (3k) and potentials d_pot (k, or NULL: none) at
 * the k bodies d_targets[0..k) (indices into [0, n), repeats allowed) of
 * the n bodies at d_pos (3n: x, y, z) with masses d_mass (n), in the
 * order of d_targets, under pair's softening and eps (its precision is
 * ignored: always double). Scratch is sized in two calls, CUB's way: with
 * workspace NULL only *workspace_bytes is set (it depends on n, k, the
 * softening, whether d_pot is NULL and the current device: ask again when
 * one changes); else workspace (device memory, 32-byte aligned, as
 * cudaMalloc gives) must hold at least that. It holds the partial sums of
 * the source chunks and the two words that tfmm_gpu_reference_check
 * reads. 1 <= n, k <= 2^31 - 257.
 *
 * The indices are on the device, so an index outside [0, n) is found by
 * the kernels, not here: that target's results are NaN and the check
 * below names it. So are non-finite results (with eps = 0, a target at
 * the same point as another body: the CPU reference refuses those). */
tfmm_status tfmm_gpu_reference_at(void *workspace, size_t *workspace_bytes,
                                  size_t n, const double *d_pos,
                                  const double *d_mass, size_t k,
                                  const int64_t *d_targets,
                                  const tfmm_pair_params *pair, double *d_acc,
                                  double *d_pot, void *stream, tfmm_error *err);

/* Waits for `stream`, then says what the kernels of the last
 * tfmm_gpu_reference_at on this workspace (with these n, k and d_targets)
 * found: TFMM_ERR_INVALID_ARGUMENT for a target index outside [0, n),
 * TFMM_ERR_NONFINITE for a non-finite result, each naming the first such
 * target; else TFMM_OK. */
tfmm_status tfmm_gpu_reference_check(const void *workspace, size_t n, size_t k,
                                     const int64_t *d_targets, void *stream,
                                     tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
