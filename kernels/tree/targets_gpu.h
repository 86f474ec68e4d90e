/* The targets of an evaluation at a subset of the bodies, on the device:
 * a mask of n bytes in input order (nonzero: a target), read through the
 * tree's permutation, scanned and counted per cell, so that the traversal
 * and the far field visit the cells that hold one. Each enqueued on the
 * caller's stream (a cudaStream_t of the current device; NULL: the legacy
 * default stream) over device arrays, without allocating or waiting; the
 * scans and sums size their scratch CUB's way: with scratch NULL only
 * *scratch_bytes is set and nothing is enqueued. Cost: one read of the
 * mask and one of each cell's extent. */
#ifndef TFMM_TARGETS_GPU_H
#define TFMM_TARGETS_GPU_H

#include "base/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* below[k] = the targets among sorted bodies [0, k), k = 0..n (order: the
 * sorted bodies' input indices). */
tfmm_status tfmm_targets_gpu_below(void *scratch, size_t *scratch_bytes,
                                   size_t n, const unsigned char *active,
                                   const int32_t *order, int32_t *below,
                                   void *stream, tfmm_error *err);

/* count[c] = the targets among cell c's bodies. */
tfmm_status tfmm_targets_gpu_per_cell(int64_t ncells, const int32_t *body_begin,
                                      const int32_t *body_end,
                                      const int32_t *below, int32_t *count,
                                      void *stream, tfmm_error *err);

/* *sum (device) = the cells with count[c] > 0. */
tfmm_status tfmm_targets_gpu_cells(void *scratch, size_t *scratch_bytes,
                                   int64_t ncells, const int32_t *count,
                                   int64_t *sum, void *stream, tfmm_error *err);

/* *sum (device) = the nonzero bytes among active[0..n). */
tfmm_status tfmm_targets_gpu_count(void *scratch, size_t *scratch_bytes,
                                   size_t n, const unsigned char *active,
                                   int64_t *sum, void *stream, tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
