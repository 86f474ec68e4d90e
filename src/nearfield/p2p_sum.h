/* The CPU's inner loop: one target against a run of sources held as
 * structure-of-arrays, vectorised, in single or double precision. Shared
 * by the direct method and the tree methods' near field. */
#ifndef TFMM_P2P_SUM_H
#define TFMM_P2P_SUM_H

#include "nearfield/interaction.h"

#include <stddef.h>

/* Sources in structure-of-arrays form so that the loop vectorises. */
typedef struct tfmm_sources_f32 {
  const float *x, *y, *z, *m;
} tfmm_sources_f32;

typedef struct tfmm_sources_f64 {
  const double *x, *y, *z, *m;
} tfmm_sources_f64;

/* Adds to *total the pull of sources [begin, end) on the target at
 * (xi, yi, zi) under softening kernel k. The target itself must not be in
 * the range. Summed in blocks, each block's sum added to *total, so that
 * one large term does not swallow the rounding of thousands of small
 * ones. */
void tfmm_p2p_sum_f32(const tfmm_sources_f32 *s, size_t begin, size_t end,
                      float xi, float yi, float zi, const tfmm_soft_f32 *k,
                      tfmm_acc_f32 *total);

/* The same in double precision. */
void tfmm_p2p_sum_f64(const tfmm_sources_f64 *s, size_t begin, size_t end,
                      double xi, double yi, double zi, const tfmm_soft_f64 *k,
                      tfmm_acc_f64 *total);

#endif
