/* The double-precision reference: the truth for every accuracy check. */
#ifndef TFMM_REFERENCE_H
#define TFMM_REFERENCE_H

#include <stddef.h>

/* All pairs, double precision, each sum compensated (Neumaier 1974), self
 * term excluded by index. The caller has checked the inputs and, for
 * eps = 0, that no two bodies coincide. acc: 3n, pot: n or NULL. G applied.
 * O(n^2) over OpenMP threads. */
void tfmm_reference_compute(size_t n, const double *pos, const double *mass,
                            double G, double eps, int spline, double *acc,
                            double *pot);

/* The same at the bodies whose byte of active is nonzero (NULL: every
 * body); the others' entries are left as they are. */
void tfmm_reference_compute_active(size_t n, const double *pos,
                                   const double *mass, double G, double eps,
                                   int spline, const unsigned char *active,
                                   double *acc, double *pot);

/* The same sums at k chosen targets only (indices into [0, n)): O(n k).
 * acc: 3k, pot: k or NULL, in the order of `targets`. */
void tfmm_reference_at(size_t n, const double *pos, const double *mass,
                       double G, double eps, int spline, size_t k,
                       const size_t *targets, double *acc, double *pot);

#endif
