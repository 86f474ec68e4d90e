/* The physics and precision of the pairwise sums, as the near field and
 * the all-pairs kernels take them: on the ground floor (with base/error.h)
 * so that the GPU backend (kernels/) needs nothing else from src/ but the
 * formula headers. */
#ifndef TFMM_PAIR_H
#define TFMM_PAIR_H

#include "tilefmm.h"

typedef struct tfmm_pair_params {
  tfmm_softening softening;
  double eps;
  tfmm_precision precision;
} tfmm_pair_params;

#endif
