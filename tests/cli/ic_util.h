/* Shared by the initial-condition tests (test_ic.c, test_ic_models.c):
 * generating a model into poisoned arrays, compensated sums, energies from
 * the library's reference solver, and a Kolmogorov-Smirnov distance. */
#ifndef TFMM_TEST_IC_UTIL_H
#define TFMM_TEST_IC_UTIL_H

#include <criterion/criterion.h>

#include "tilefmm.h"

#include <math.h>
#include <stdlib.h>

#define PI 3.14159265358979323846

typedef tfmm_status (*ic_fn)(size_t n, uint64_t seed, double *pos, double *vel,
                             double *mass);

typedef struct model {
  size_t n;
  double *pos, *vel, *mass;
} model;

/* Generates n bodies into arrays poisoned with NaN, so that a value the
 * generator forgets to write fails the finiteness checks. */
static inline model make_with(ic_fn fn, size_t n, uint64_t seed) {
  model m = {n, malloc(3 * n * sizeof(double)), malloc(3 * n * sizeof(double)),
             malloc(n * sizeof(double))};
  cr_assert(m.pos != NULL && m.vel != NULL && m.mass != NULL);
  for (size_t i = 0; i < 3 * n; i++)
    m.pos[i] = m.vel[i] = NAN;
  for (size_t i = 0; i < n; i++)
    m.mass[i] = NAN;
  cr_assert_eq(fn(n, seed, m.pos, m.vel, m.mass), TFMM_OK);
  return m;
}

static inline void release(model *m) {
  free(m->pos);
  free(m->vel);
  free(m->mass);
}

/* Neumaier's compensated sum of x[k * stride] over n terms: the test must
 * measure a zero centre of mass far below the naive sum's rounding. */
static inline double sum(const double *x, size_t n, size_t stride) {
  double s = 0, c = 0;
  for (size_t k = 0; k < n; k++) {
    const double v = x[k * stride], t = s + v;
    c += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
    s = t;
  }
  return s + c;
}

static inline int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The radii of n bodies, sorted; free them. */
static inline double *sorted_radii(size_t n, const double *pos) {
  double *r = malloc(n * sizeof(double));
  cr_assert(r != NULL);
  for (size_t i = 0; i < n; i++) {
    const double *x = pos + 3 * i;
    r[i] = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  }
  qsort(r, n, sizeof(double), compare_doubles);
  return r;
}

/* The Kolmogorov-Smirnov distance between the empirical distribution of
 * the sorted r[0..n) and the cumulative distribution cdf. */
static inline double ks_distance(size_t n, const double *r,
                                 double (*cdf)(double r)) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    const double F = cdf(r[i]);
    worst = fmax(worst, fabs(F - (double)(i + 1) / (double)n));
    worst = fmax(worst, fabs(F - (double)i / (double)n));
  }
  return worst;
}

/* Energies of a system, in its centre-of-mass frame. */
typedef struct energy {
  double K, W; /* K = sum m |v - v_cm|^2 / 2, W = sum m phi / 2 */
} energy;

/* K and W of bodies [first, first + n) alone, phi from the library's
 * double-precision reference solver (direct summation, G = 1, eps = 0):
 * an independent truth, since no generator uses it. */
static inline energy energies(const model *m, size_t first, size_t n) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = TFMM_METHOD_REFERENCE;
  c.device = TFMM_DEVICE_CPU;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK);
  const double *pos = m->pos + 3 * first, *vel = m->vel + 3 * first,
               *mass = m->mass + first;
  double *acc = malloc(3 * n * sizeof(double)),
         *pot = malloc(n * sizeof(double)), *e = malloc(n * sizeof(double));
  cr_assert(acc != NULL && pot != NULL && e != NULL);
  cr_assert_eq(tfmm_solver_compute(s, n, pos, mass, acc, pot), TFMM_OK, "%s",
               tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  double vcm[3];
  for (int d = 0; d < 3; d++)
    vcm[d] = sum(vel + d, n, 3) / (double)n; /* equal masses */
  energy out;
  for (size_t i = 0; i < n; i++)
    e[i] = 0.5 * mass[i] * pot[i];
  out.W = sum(e, n, 1);
  for (size_t i = 0; i < n; i++) {
    const double *v = vel + 3 * i;
    double v2 = 0;
    for (int d = 0; d < 3; d++)
      v2 += (v[d] - vcm[d]) * (v[d] - vcm[d]);
    e[i] = 0.5 * mass[i] * v2;
  }
  out.K = sum(e, n, 1);
  free(acc);
  free(pot);
  free(e);
  return out;
}

#endif
