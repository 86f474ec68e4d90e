/* The all-pairs methods, siblings of the tree methods' schedules: direct
 * (every pair, tiled; on the GPU in either precision, kernels/
 * direct_tiled.cu, or on the CPU) and reference (every pair in double with
 * compensated sums, on the CPU). Each evaluates checked bodies in the
 * solver's internal units (units.h) and knows no handle. */
#ifndef TFMM_ALLPAIRS_H
#define TFMM_ALLPAIRS_H

#include "gpu.h"
#include "internal.h"

/* The CPU's packing buffers of the direct method, kept between
 * evaluations (the GPU has pinned ones): 4 floats a body each. */
typedef struct tfmm_allpairs_scratch {
  float *in, *out;
  size_t capacity;
} tfmm_allpairs_scratch;

/* One evaluation's settings and where its reports go. */
typedef struct tfmm_allpairs {
  const tfmm_config *run; /* in internal units, G = 1 */
  tfmm_gpu *gpu;          /* direct: the device, or NULL for the CPU */
  tfmm_allpairs_scratch *scratch;
  /* At a subset of the bodies: n bytes, nonzero for a target (only their
   * results are written); NULL: every body. */
  const unsigned char *active;
  tfmm_stats *stats; /* phase times (and the GPU kernel's shape) */
  tfmm_error *err;
} tfmm_allpairs;

/* Accelerations (3n) and potentials (n, or NULL) of n bodies by the direct
 * method: in double on the CPU when run->precision is double, else packed
 * in the precision of the sums on the GPU or the CPU. With eps = 0,
 * bodies at one point (once packed) are TFMM_ERR_COINCIDENT; non-finite
 * results TFMM_ERR_NONFINITE. */
tfmm_status tfmm_allpairs_direct(const tfmm_allpairs *a, size_t n,
                                 const double *pos, const double *mass,
                                 double *acc, double *pot);

/* The same by the reference method (double, compensated sums). */
tfmm_status tfmm_allpairs_reference(const tfmm_allpairs *a, size_t n,
                                    const double *pos, const double *mass,
                                    double *acc, double *pot);

/* The reference at k chosen bodies (targets: indices into [0, n)): acc 3k
 * and pot k (or NULL) in the order of targets. */
tfmm_status tfmm_allpairs_reference_at(const tfmm_config *run, size_t n,
                                       const double *pos, const double *mass,
                                       size_t k, const size_t *targets,
                                       double *acc, double *pot,
                                       tfmm_error *err);

/* The buffers released; s is empty and reusable. */
void tfmm_allpairs_scratch_release(tfmm_allpairs_scratch *s);

#endif
