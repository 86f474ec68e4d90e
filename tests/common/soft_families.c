#include "soft_families.h"

#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <tilefmm.h>

const char *soft_family_name(soft_family f) {
  static const char *const names[] = {"plummer", "clusters", "line+pile"};
  return f >= SOFT_PLUMMER && f <= SOFT_LINE_PILE ? names[f] : "?";
}

void soft_family_bodies(soft_family f, size_t n, uint64_t seed, double *pos,
                        double *mass) {
  double *vel = malloc(3 * n * sizeof *vel);
  cr_assert_not_null(vel);
  if (f == SOFT_PLUMMER) {
    cr_assert_eq(tfmm_ic_plummer(n, seed, pos, vel, mass), TFMM_OK);
  } else if (f == SOFT_CLUSTERS) {
    static const double centre[4][3] = {
        {0, 0, 0}, {1, 0, 0}, {0.2, 0.8, 0}, {0.4, 0.3, 0.9}};
    const size_t q = n / 4;
    for (int c = 0; c < 4; c++) {
      const size_t count = c < 3 ? q : n - 3 * q;
      double *x = pos + 3 * q * (size_t)c;
      cr_assert_eq(tfmm_ic_plummer(count, seed + (uint64_t)c, x, vel,
                                   mass + q * (size_t)c),
                   TFMM_OK);
      for (size_t i = 0; i < count; i++)
        for (int d = 0; d < 3; d++)
          x[3 * i + d] = centre[c][d] + 0.02 * x[3 * i + d];
    }
  } else {
    test_rng r = {seed};
    for (size_t i = 0; i < n; i++) {
      const int pile = i >= n - n / 10;
      pos[3 * i] = pile ? 0.25 : 2 * test_uniform(&r) - 1;
      pos[3 * i + 1] = pile ? 0.1 : 0;
      pos[3 * i + 2] = 0;
    }
  }
  free(vel);
  for (size_t i = 0; i < n; i++)
    mass[i] = 1.0 / (double)n;
}

void soft_family_truth(size_t n, const double *pos, const double *mass,
                       double eps, tfmm_softening softening, double *truth) {
  size_t *all = malloc(n * sizeof *all);
  cr_assert_not_null(all);
  for (size_t i = 0; i < n; i++)
    all[i] = i;
  tfmm_config rc;
  tfmm_config_defaults(&rc);
  rc.method = TFMM_METHOD_REFERENCE;
  rc.device = TFMM_DEVICE_CPU;
  rc.eps = eps;
  rc.softening = softening;
  tfmm_solver *ref = NULL;
  cr_assert_eq(tfmm_solver_create(&ref, &rc), TFMM_OK);
  cr_assert_eq(tfmm_solver_reference_at(ref, n, pos, mass, n, all, truth, NULL),
               TFMM_OK, "%s", tfmm_solver_message(ref));
  tfmm_solver_destroy(ref);
  free(all);
}

soft_fall soft_fall_begin(double step, double floor) {
  return (soft_fall){step, floor, INFINITY, INFINITY, 0};
}

void soft_fall_expect(soft_fall *f, int p, double p99, const char *label) {
  if (f->first == INFINITY)
    f->first = p99;
  if (f->last > f->floor) {
    cr_expect_lt(p99, f->last,
                 "%s: p99 %.3g at p %d after %.3g at p %d (no "
                 "fall)",
                 label, p99, p, f->last, p - 2);
    f->steps += f->last != INFINITY;
    cr_expect_leq(p99, f->first / pow(f->step, f->steps),
                  "%s: p99 %.3g at p %d after %.3g at p 4 (less than %gx per "
                  "two orders)",
                  label, p99, p, f->first, f->step);
  }
  f->last = p99;
}
