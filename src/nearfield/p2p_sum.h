/* The CPU's inner loop: one target against a run of sources held as
 * single-precision arrays, vectorised. Shared by the direct method and the
 * tree methods' near field. */
#ifndef TFMM_P2P_SUM_H
#define TFMM_P2P_SUM_H

#include "nearfield/interaction.h"

#include <stddef.h>

/* Sources in structure-of-arrays form so that the loop vectorises. */
typedef struct tfmm_sources_f32 {
  const float *x, *y, *z, *m;
} tfmm_sources_f32;

/* Adds to *total the pull of sources [begin, end) on the target at
 * (xi, yi, zi). The target itself must not be in the range. Summed in
 * blocks, each block's sum added to *total, so that one large term does not
 * swallow the rounding of thousands of small ones. */
void tfmm_p2p_sum_f32(const tfmm_sources_f32 *s, size_t begin, size_t end,
                      float xi, float yi, float zi, float eps2,
                      tfmm_acc_f32 *total);

#endif
