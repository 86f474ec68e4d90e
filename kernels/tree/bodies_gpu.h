/* Bodies that live on the device, before their tree: checked as
 * tfmm_bodies_check checks them, their bounds reduced (for
 * tfmm_units_from_bounds), scaled by powers of two as tfmm_units_scale
 * scales them; and, once sorted by key, the bodies that may share a point
 * with another. Each enqueued on the caller's stream (a cudaStream_t of
 * the current device; NULL: the legacy default stream) over device
 * arrays, without allocating or waiting. Cost: one read of the bodies
 * each (a sorted body that may share a point reads up to 64 before it). */
#ifndef TFMM_BODIES_GPU_H
#define TFMM_BODIES_GPU_H

#include "base/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The lowest index of a body whose position is not finite into bad[0],
 * of one whose mass is not finite and positive into bad[1] (~0: none). */
tfmm_status tfmm_bodies_gpu_first_invalid(size_t n, const double *pos,
                                          const double *mass,
                                          unsigned long long *bad, void *stream,
                                          tfmm_error *err);

/* The lowest and highest corners and the largest mass of the n >= 1
 * bodies into out[0..2], out[3..5] and out[6] (device). CUB's way: with
 * scratch NULL only *scratch_bytes is set and nothing is enqueued. */
tfmm_status tfmm_bodies_gpu_bounds(void *scratch, size_t *scratch_bytes,
                                   size_t n, const double *pos,
                                   const double *mass, double *out,
                                   void *stream, tfmm_error *err);

/* pos 2^-length_exp and mass 2^-mass_exp, exactly, into out: 3n positions,
 * then n masses. */
tfmm_status tfmm_bodies_gpu_scale(size_t n, const double *pos,
                                  const double *mass, int length_exp,
                                  int mass_exp, double *out, void *stream,
                                  tfmm_error *err);

/* The sorted bodies that may share a point with another, counted into
 * *count (device): one whose key equals its predecessor's and whose
 * position equals one of the 64 before it in the run, or that lies deeper
 * in the run. 0 means none share a point. */
tfmm_status tfmm_bodies_gpu_maybe_coincident(size_t n, const uint64_t *keys,
                                             const double *pos,
                                             unsigned long long *count,
                                             void *stream, tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
