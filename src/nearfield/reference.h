/* The double-precision reference: the truth for every accuracy check. */
#ifndef TFMM_REFERENCE_H
#define TFMM_REFERENCE_H

#include <stddef.h>

/* All pairs, double precision, each sum compensated (Neumaier 1974), self
 * term excluded by index. The caller has checked the inputs and, for
 * eps = 0, that no two bodies coincide. acc: 3n, pot: n or NULL. G applied.
 * O(n^2) over OpenMP threads. */
void tfmm_reference_compute(size_t n, const double *pos, const double *mass,
                            double G, double eps, double *acc, double *pot);

#endif
