/* The softened families of the far-field tests (issue 28): inputs where
 * Plummer softening and the expansions' order meet, shared by
 * test_far_kernel, test_soft_convergence and test_soft_far_gpu. */
#ifndef TFMM_TEST_SOFT_FAMILIES_H
#define TFMM_TEST_SOFT_FAMILIES_H

#include <stddef.h>
#include <stdint.h>
#include <tilefmm.h>

typedef enum soft_family {
  SOFT_PLUMMER,  /* a Plummer sphere (tfmm_ic_plummer) */
  SOFT_CLUSTERS, /* four Plummer spheres of scale 0.02, 0.8 to 1.2 apart */
  SOFT_LINE_PILE /* 90 % of the bodies on the x axis in [-1, 1], 10 % at
                    one point (0.25, 0.1, 0), coincident */
} soft_family;

/* "plummer", "clusters", "line+pile". */
const char *soft_family_name(soft_family f);

/* n bodies of family f drawn from seed (positions 3n, masses 1 / n),
 * asserted by Criterion. */
void soft_family_bodies(soft_family f, size_t n, uint64_t seed, double *pos,
                        double *mass);

/* The double-precision truth at every one of n bodies: the reference
 * method (tfmm_solver_reference_at) with softening eps of kind softening,
 * into truth (3n), asserted by Criterion. */
void soft_family_truth(size_t n, const double *pos, const double *mass,
                       double eps, tfmm_softening softening, double *truth);

/* The p99's fall with the order at theta fixed (issue 28): orders 4, 6,
 * ..., given in turn to soft_fall_expect, which expects, while the p99
 * before is above floor, a fall from it and at least step per two orders
 * on average from order 4 (the first given). */
typedef struct soft_fall {
  double step, floor, first, last;
  int steps;
} soft_fall;

soft_fall soft_fall_begin(double step, double floor);
void soft_fall_expect(soft_fall *f, int p, double p99, const char *label);

#endif
