/* The near field of a tree method over its own leaf lists, summed in
 * long double: the truth that the near fields (CPU and GPU,
 * tfmm_config.near_only = 1) are held to, with a precision-aware bound for
 * every body. The tree and the lists are the library's (the same leaves
 * and the same lists as the solver's); the arithmetic is independent.
 *
 * The bound. Both near fields compute each list pair (i, j) in single
 * precision from positions rounded relative to leaf centres, and sum in
 * single precision. With u = 2^-24, r = |x_j - x_i|, D = r^2 + eps^2 and
 * rho the radius of a body's leaf (max |x - c| over the leaf):
 *  - positions: x - c is rounded (|x - c| <= rho), and the GPU moves its
 *    targets by c_S - c_T, rounded (|c_S - c_T| <= r + rho_T + rho_S),
 *    then rounds x_i - c_S: the separation used is off by at most
 *    sqrt(3) u (2 r + 3 (rho_i + rho_j)); the pull m r / D^(3/2) changes by
 *    at most 3 m / D^(3/2) per unit of displacement (direct_check.h), so by
 *    u (10.4 s_ij + 15.6 q_ij), s_ij = m_j r / D^(3/2),
 *    q_ij = m_j (rho_i + rho_j) / D^(3/2);
 *  - the interaction's arithmetic: the difference (3 sqrt(3) u s_ij), r^2,
 *    a reciprocal square root within 2 ulp, three products and the mass's
 *    rounding: under 26 u s_ij;
 *  - the single-precision sums of the k_i terms: each partial sum's
 *    rounding is at most u of it (<= u S_i, S_i = sum_j s_ij), and the
 *    roundings add as a random walk: C sqrt(k_i) u S_i, C = 4 (a
 *    statistical bound, as the brief for this test asks; the worst case,
 *    k_i u S_i, would be too loose to catch anything).
 *   bound_acc_i = G u ((36 + 4 sqrt(k_i)) S_i + 16 R_i),  R_i = sum q_ij.
 * The potential likewise, with m / D^(1/2) (magnitude P_i), whose
 * derivative is at most m / D: positions u (3.5 p_ij + 5.2 m_j (rho_i +
 * rho_j) / D), arithmetic under 10 u p_ij:
 *   bound_pot_i = G u ((16 + 4 sqrt(k_i)) P_i + 6 Q_i).
 * The cubic spline (cfg.softening): the truth integrates the kernel's
 * density itself (enclosed mass and outer shells, not interaction.h);
 * s_ij = m_j r g(r) and p_ij = m_j |phi(r)|; inside the support the
 * derivatives are bounded by g <= 11 q^3 and |phi'| <= 11 q^2 (q = 1 / h)
 * in place of Plummer's D, and the library's polynomials in u = r / h,
 * which cancel towards u = 1, add 8 u sum_j m_j r 118.5 q^3 (8 u sum_j m_j
 * 41.7 q for the potential): 118.5 and 41.7 are their coefficients summed
 * in absolute value. Precision double (cfg.precision): the same bound with
 * u = 2^-53, the truth then summed in long double. */
#ifndef TFMM_NEAR_CHECK_H
#define TFMM_NEAR_CHECK_H

#include "testutil.h"

#include <tilefmm.h>

typedef struct near_truth {
  size_t n;
  double *acc, *pot;             /* the list sums, G applied, input order */
  double *bound_acc, *bound_pot; /* per body, as above */
  double *mag_acc, *mag_pot;     /* G S_i and G P_i */
  double interactions;           /* list pairs, self excluded */
  int64_t leaves;
} near_truth;

/* The truth of cfg (method fmm or bh, theta, leaf_size >= 1, max_depth,
 * eps, softening, precision, G) on the bodies. Asserts on failure. OpenMP. */
near_truth near_truth_make(const test_bodies *b, const tfmm_config *cfg);
void near_truth_free(near_truth *t);

/* How far acc and pot (pot may be NULL) are from acc_ref and pot_ref. */
typedef struct near_diff {
  double acc_p99, pot_p99;     /* relative to the reference, per body: 99th
                                  percentile (nearest rank) */
  double acc_max, pot_max;     /* ... and maximum */
  double acc_ratio, pot_ratio; /* max over bodies of |x - ref| / (factor *
                                  bound); <= 1 passes */
  size_t acc_worst, pot_worst; /* the body of the largest ratio */
} near_diff;

near_diff near_diff_of(size_t n, const double *acc, const double *pot,
                       const double *acc_ref, const double *pot_ref,
                       const double *bound_acc, const double *bound_pot,
                       double factor);

/* The 99th percentiles of the relative acceleration errors asked of a
 * near field. Between the GPU's and the CPU's: 1e-6 (measured on an H100:
 * at most 8.7e-7, for uniform bodies, whose near fields nearly cancel).
 * Against the double-precision list sums: 3e-6, since both round the same
 * positions into the frame of the target's leaf, an error they share and
 * that grows with the leaf (measured: at most 1.2e-6, Plummer, leaves of
 * 1000 bodies, eps = 0); each body is held to its bound meanwhile. */
#define NEAR_P99_BETWEEN 1e-6
#define NEAR_P99_TRUTH 3e-6

/* The same in double precision: those of single precision scaled by the
 * ratio of unit roundoffs (2^-29, about 2e-9), with a margin of 50. */
#define NEAR_P99_BETWEEN_F64 1e-13
#define NEAR_P99_TRUTH_F64 3e-13

/* Asserts that every output is finite and that d is within the bounds
 * (ratios <= 1) and within p99 relative error at the 99th percentile;
 * what names the case (seed, configuration) in the messages. */
void near_diff_assert(const near_diff *d, double p99, const char *what);

/* 99th percentile (nearest rank) of the per-body relative acceleration
 * errors |a_i - ref_i| / |ref_i|. */
double near_acc_p99(size_t n, const double *acc, const double *acc_ref);

/* Bodies for the tree tests: a Plummer sphere from the library's generator
 * (raw doubles) or uniform bodies (testutil's 2^-22 grid). */
test_bodies near_bodies_make(size_t n, int plummer, uint64_t seed);

#endif
