#include "direct_check.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* p - 1 and p + 1 for the default tile p = 128. */
const size_t direct_case_sizes[] = {1, 2, 31, 100, 127, 129, 1000, 4097, 20000};
const size_t direct_case_size_count =
    sizeof direct_case_sizes / sizeof direct_case_sizes[0];

static const char *layout_name(test_layout l) {
  return l == TEST_UNIFORM ? "uniform" : "clustered";
}

direct_case direct_case_make(size_t n, test_layout layout, double eps) {
  direct_case c = {.layout = layout, .eps = eps, .seed = test_fresh_seed()};
  c.b = test_bodies_make(n, layout, c.seed);
  c.acc_ref = malloc(3 * n * sizeof(double));
  c.pot_ref = malloc(n * sizeof(double));
  cr_assert(c.b.pos && c.b.mass && c.acc_ref && c.pot_ref);
  cr_assert_eq(test_reference(&c.b, eps, c.acc_ref, c.pot_ref), 0,
               "reference failed (n %zu)", n);
  return c;
}

void direct_case_free(direct_case *c) {
  test_bodies_free(&c->b);
  free(c->acc_ref);
  free(c->pot_ref);
}

void direct_case_check(const direct_case *c, tfmm_config cfg,
                       int with_potential) {
  const size_t n = c->b.n;
  cfg.eps = c->eps;
  double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
  cr_assert(acc && pot);
  test_poison(acc, 3 * n);
  test_poison(pot, n);
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK, "%s",
               tfmm_solver_message(s));
  tfmm_status st = tfmm_solver_compute(s, n, c->b.pos, c->b.mass, acc,
                                       with_potential ? pot : NULL);
  char what[256];
  snprintf(what, sizeof what,
           "n %zu %s eps %g seed %llu device %s p %d q %d unroll %d r %d", n,
           layout_name(c->layout), c->eps, (unsigned long long)c->seed,
           tfmm_device_name(tfmm_solver_device(s)), cfg.gpu_tile,
           cfg.gpu_threads_per_body, cfg.gpu_unroll, cfg.gpu_bodies_per_thread);
  cr_assert_eq(st, TFMM_OK, "%s: %s", what, tfmm_solver_message(s));
  cr_assert_eq(test_first_nonfinite(acc, 3 * n), 3 * n,
               "%s: acceleration %zu not written", what,
               test_first_nonfinite(acc, 3 * n));
  double ea = test_rel_l2(acc, c->acc_ref, 3 * n);
  cr_assert_lt(ea, 1e-5, "%s: acceleration error %.3g", what, ea);
  if (with_potential) {
    cr_assert_eq(test_first_nonfinite(pot, n), n, "%s: potential unwritten",
                 what);
    double ep = test_rel_l2(pot, c->pot_ref, n);
    cr_assert_lt(ep, 1e-5, "%s: potential error %.3g", what, ep);
  } else {
    cr_assert_eq(test_first_nonfinite(pot, n), 0,
                 "%s: the potential was written though not asked for", what);
  }
  double drift = test_momentum_drift(c->b.mass, acc, n);
  cr_assert_lt(drift, 1e-5, "%s: momentum drift %.3g", what, drift);
  tfmm_solver_destroy(s);
  free(acc);
  free(pot);
}

/* The first-order bounds B_i of direct_check.h for acceleration and
 * potential, from the bodies' distances to the bounding-box centre. */
static void rounding_bounds(const test_bodies *b, double eps, double *ba,
                            double *bp) {
  const size_t n = b->n;
  double lo[3], hi[3];
  for (int k = 0; k < 3; k++) {
    lo[k] = hi[k] = b->pos[k];
    for (size_t i = 1; i < n; i++) {
      lo[k] = fmin(lo[k], b->pos[3 * i + k]);
      hi[k] = fmax(hi[k], b->pos[3 * i + k]);
    }
  }
  double *d = malloc(n * sizeof *d);
  for (size_t i = 0; i < n; i++) {
    double m = 0;
    for (int k = 0; k < 3; k++)
      m = fmax(m, fabs(b->pos[3 * i + k] - 0.5 * (lo[k] + hi[k])));
    d[i] = 0x1p-24 * m * sqrt(3.0);
  }
  for (size_t i = 0; i < n; i++) {
    ba[i] = bp[i] = 0;
    for (size_t j = 0; j < n; j++) {
      if (j == i)
        continue;
      double r2 = eps * eps;
      for (int k = 0; k < 3; k++) {
        double dx = b->pos[3 * j + k] - b->pos[3 * i + k];
        r2 += dx * dx;
      }
      ba[i] += 3 * b->mass[j] * (d[i] + d[j]) / (r2 * sqrt(r2));
      bp[i] += b->mass[j] * (d[i] + d[j]) / r2;
    }
  }
  free(d);
}

void direct_case_check_raw(size_t n, test_layout layout, double eps,
                           tfmm_config cfg) {
  uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make_raw(n, layout, seed);
  double *ref = malloc(3 * n * 8), *pref = malloc(n * 8);
  double *acc = malloc(3 * n * 8), *pot = malloc(n * 8);
  double *ba = malloc(n * 8), *bp = malloc(n * 8);
  cr_assert(ref && pref && acc && pot && ba && bp);
  cr_assert_eq(test_reference(&b, eps, ref, pref), 0);
  rounding_bounds(&b, eps, ba, bp);
  cfg.eps = eps;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  test_poison(acc, 3 * n);
  test_poison(pot, n);
  cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc, pot), TFMM_OK,
               "%s", tfmm_solver_message(s));
  for (size_t i = 0; i < n; i++) {
    double e = 0, r = 0;
    for (int k = 0; k < 3; k++) {
      e +=
          (acc[3 * i + k] - ref[3 * i + k]) * (acc[3 * i + k] - ref[3 * i + k]);
      r += ref[3 * i + k] * ref[3 * i + k];
    }
    cr_assert_leq(sqrt(e), 1e-5 * sqrt(r) + ba[i],
                  "seed %llu body %zu: |da| %.3g, |a| %.3g, bound %.3g",
                  (unsigned long long)seed, i, sqrt(e), sqrt(r), ba[i]);
    cr_assert_leq(fabs(pot[i] - pref[i]), 1e-5 * fabs(pref[i]) + bp[i],
                  "seed %llu body %zu: potential", (unsigned long long)seed, i);
  }
  tfmm_solver_destroy(s);
  test_bodies_free(&b);
  free(ref), free(pref), free(acc), free(pot), free(ba), free(bp);
}
