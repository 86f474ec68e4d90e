/* One accuracy case for the single-precision all-pairs paths: random
 * bodies, their double-precision reference, and the checks every path must
 * pass against it. */
#ifndef TFMM_DIRECT_CHECK_H
#define TFMM_DIRECT_CHECK_H

#include "testutil.h"

#include <tilefmm.h>

typedef struct direct_case {
  test_bodies b;
  test_layout layout;
  double eps;
  uint64_t seed;
  double *acc_ref, *pot_ref;
} direct_case;

/* Draws the bodies and computes the reference (asserts on failure). */
direct_case direct_case_make(size_t n, test_layout layout, double eps);
void direct_case_free(direct_case *c);

/* Runs cfg (with the case's eps) on the case, outputs poisoned first, and
 * asserts: every output written and finite; relative 2-norm errors of the
 * accelerations and potentials below 1e-5; the total momentum change
 * sum m_i a_i below 1e-5 of sum m_i |a_i|. Without the potential
 * (with_potential = 0) the potential is not asked for. */
void direct_case_check(const direct_case *c, tfmm_config cfg,
                       int with_potential);

/* For raw double positions (test_bodies_make_raw): the methods round
 * x - c to float, moving each body by up to d_i = u |x_i - c| sqrt(3),
 * u = 2^-24. To first order that changes a_i by at most
 *   B_i = sum_j 3 m_j (d_i + d_j) / (r_ij^2 + eps^2)^(3/2)
 * (the derivative of m r / (r^2 + eps^2)^(3/2) is bounded by 3 m / (.)^(3/2))
 * and phi_i by sum_j m_j (d_i + d_j) / (r_ij^2 + eps^2). Asserts, body by
 * body, |a_i - a_ref_i| <= 1e-5 |a_ref_i| + B_i (and likewise phi): the
 * method's arithmetic within the single-precision bound, plus what rounding
 * the input can do and no more. O(n^2): keep n moderate. */
void direct_case_check_raw(size_t n, test_layout layout, double eps,
                           tfmm_config cfg);

/* The N of the list for a given tile size p. */
extern const size_t direct_case_sizes[];
extern const size_t direct_case_size_count;

#endif
