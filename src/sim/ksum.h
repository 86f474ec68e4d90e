/* Neumaier's compensated sum (Neumaier 1974, ZAMM 54, 39): sum + comp
 * carries the exact sum of the terms to within one rounding of the result,
 * whatever their order. Used where a plain running sum of millions of terms
 * would lose digits: centres of mass that must vanish to ~1e-16, energies.
 * (nearfield/reference.c keeps its own copy on purpose: the truth the
 * other paths are tested against shares no code with them.) */
#ifndef TFMM_KSUM_H
#define TFMM_KSUM_H

#include <math.h>

typedef struct tfmm_ksum {
  double sum, comp;
} tfmm_ksum;

static inline void tfmm_ksum_add(tfmm_ksum *k, double x) {
  const double t = k->sum + x;
  if (fabs(k->sum) >= fabs(x))
    k->comp += (k->sum - t) + x;
  else
    k->comp += (x - t) + k->sum;
  k->sum = t;
}

static inline double tfmm_ksum_value(const tfmm_ksum *k) {
  return k->sum + k->comp;
}

#endif
