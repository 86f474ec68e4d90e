/* Tests of the initial-condition generators against their models' analytic
 * properties. Plummer: in N-body units the virial theorem gives a kinetic
 * energy T = -E = 1/4, and the half-mass radius is a / sqrt(2^(2/3) - 1)
 * with scale length a = 3 pi / 16. Every model: reproducible bits, centre
 * of mass at rest at the origin, unit mass. The other models' energies
 * and profiles are in test_ic_models.c. */
#include <criterion/criterion.h>

#include "ic_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static model make(size_t n, uint64_t seed) {
  return make_with(tfmm_ic_plummer, n, seed);
}

Test(ic, rejects_bad_arguments) {
  double p[3], v[3], m[1];
  cr_assert_eq(tfmm_ic_plummer(0, 1, p, v, m), TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_ic_plummer(1, 1, NULL, v, m), TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_ic_plummer(1, 1, p, NULL, m), TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_ic_plummer(1, 1, p, v, NULL), TFMM_ERR_INVALID_ARGUMENT);
}

Test(ic, same_seed_same_bits) {
  model a = make(1000, 42), b = make(1000, 42), c = make(1000, 43);
  cr_assert_eq(memcmp(a.pos, b.pos, 3000 * sizeof(double)), 0);
  cr_assert_eq(memcmp(a.vel, b.vel, 3000 * sizeof(double)), 0);
  cr_assert_eq(memcmp(a.mass, b.mass, 1000 * sizeof(double)), 0);
  cr_assert_neq(memcmp(a.pos, c.pos, 3000 * sizeof(double)), 0);
  cr_assert_neq(memcmp(a.vel, c.vel, 3000 * sizeof(double)), 0);
  release(&a);
  release(&b);
  release(&c);
}

/* The first body of (n = 4, seed = 2024), pinned bit for bit: the header
 * promises the same bits on every machine, so a change here is a change of
 * the generator, never an acceptable drift. */
Test(ic, pinned_bits) {
  model m = make(4, 2024);
  const double want_pos[3] = {-0x1.577dc5a84ad1fp-1, 0x1.2b73b2d333ecbp-1,
                              -0x1.643ca847b8608p-4};
  const double want_vel[3] = {-0x1.b27345d2581d9p-4, 0x1.5b6d333dbd46cp-10,
                              0x1.0648c9aabb60dp-1};
  for (int d = 0; d < 3; d++) {
    cr_assert_eq(m.pos[d], want_pos[d], "pos[%d] = %a", d, m.pos[d]);
    cr_assert_eq(m.vel[d], want_vel[d], "vel[%d] = %a", d, m.vel[d]);
  }
  release(&m);
}

Test(ic, one_body_at_rest_at_origin) {
  model m = make(1, 9);
  for (int d = 0; d < 3; d++) {
    cr_assert_eq(m.pos[d], 0.0);
    cr_assert_eq(m.vel[d], 0.0);
  }
  cr_assert_eq(m.mass[0], 1.0);
  release(&m);
}

Test(ic, equal_masses_centre_of_mass_at_rest) {
  const size_t n = 20000;
  model m = make(n, 7);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(m.mass[i], 1.0 / (double)n);
  cr_assert_float_eq(sum(m.mass, n, 1), 1.0, 1e-12);
  for (int d = 0; d < 3; d++) {
    /* Equal masses: the centre of mass is the mean position. */
    cr_assert_lt(fabs(sum(m.pos + d, n, 3) / (double)n), 1e-12);
    cr_assert_lt(fabs(sum(m.vel + d, n, 3) / (double)n), 1e-12);
  }
  for (size_t i = 0; i < 3 * n; i++)
    cr_assert(isfinite(m.pos[i]) && isfinite(m.vel[i]));
  release(&m);
}

/* Kinetic energy T = 1/2 sum m v^2 must be 1/4 (virial theorem, E = -1/4);
 * the median radius must be the half-mass radius. Statistical errors at
 * n = 100000 are ~0.3% for T and ~0.5% for the median. */
Test(ic, analytic_scaling) {
  const size_t n = 100000;
  model m = make(n, 12345);
  double *ke = malloc(n * sizeof(double)), *r = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++) {
    const double *v = m.vel + 3 * i, *x = m.pos + 3 * i;
    ke[i] = 0.5 * m.mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    r[i] = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  }
  const double T = sum(ke, n, 1);
  cr_assert(fabs(T - 0.25) <= 0.02 * 0.25, "T = %.6f, want 0.25", T);

  qsort(r, n, sizeof(double), compare_doubles);
  const double r_half = 0.5 * (r[n / 2 - 1] + r[n / 2]);
  const double a = 3.0 * PI / 16.0;
  const double want = a / sqrt(pow(2.0, 2.0 / 3.0) - 1.0);
  cr_assert(fabs(r_half - want) <= 0.03 * want, "r_half = %.6f, want %.6f",
            r_half, want);
  free(ke);
  free(r);
  release(&m);
}

/* Radius of the Plummer model (scale length a) enclosing mass fraction X:
 * r = a / sqrt(X^(-2/3) - 1). */
static double radius_enclosing(double X, double a) {
  return a / sqrt(pow(X, -2.0 / 3.0) - 1.0);
}

/* The cumulative mass M(<r) follows r^3 / (r^2 + a^2)^(3/2), renormalised
 * to the 0.999 of the mass kept by the cut (Kolmogorov-Smirnov distance;
 * 1.63 / sqrt(n) is the 1% critical value, doubled for the centre-of-mass
 * shift), and nothing lies beyond the cut. */
Test(ic, radial_mass_profile) {
  const size_t n = 100000;
  model m = make(n, 777);
  double *r = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++) {
    const double *x = m.pos + 3 * i;
    r[i] = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  }
  qsort(r, n, sizeof(double), compare_doubles);
  const double a = 3.0 * PI / 16.0;
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    const double s = r[i] / a;
    const double model_mass = pow(s * s / (1.0 + s * s), 1.5) / 0.999;
    worst = fmax(worst, fabs(model_mass - (double)(i + 1) / (double)n));
    worst = fmax(worst, fabs(model_mass - (double)i / (double)n));
  }
  cr_assert_lt(worst, 2 * 1.63 / sqrt((double)n), "KS distance %.5f", worst);

  /* The shell between 0.99 and the 0.999 cut holds 0.9% of the bodies
   * (900 +- 30 here); the centre-of-mass shift moves radii by ~0.01. */
  const double r_cut = radius_enclosing(0.999, a);
  cr_assert_lt(r[n - 1], r_cut + 0.05, "r_max %.3f, cut %.3f", r[n - 1], r_cut);
  size_t outer = 0;
  for (size_t i = 0; i < n; i++)
    outer += r[i] > radius_enclosing(0.99, a);
  cr_assert(outer > 800 && outer < 1000, "%zu bodies beyond r(0.99)", outer);
  free(r);
  release(&m);
}

/* ---- every model --------------------------------------------------------- */

typedef struct generator {
  const char *name;
  ic_fn fn;
  size_t min_n; /* fewest bodies accepted */
} generator;

static const generator generators[] = {{"plummer", tfmm_ic_plummer, 1},
                                       {"hernquist", tfmm_ic_hernquist, 1},
                                       {"uniform", tfmm_ic_uniform, 1},
                                       {"cold", tfmm_ic_cold, 1},
                                       {"merger", tfmm_ic_merger, 2}};
#define GENERATORS (sizeof generators / sizeof generators[0])

Test(ic, every_model_rejects_bad_arguments) {
  double p[6], v[6], m[2];
  for (size_t g = 0; g < GENERATORS; g++) {
    const ic_fn fn = generators[g].fn;
    const char *name = generators[g].name;
    const size_t k = generators[g].min_n;
    cr_assert_eq(fn(0, 1, p, v, m), TFMM_ERR_INVALID_ARGUMENT, "%s", name);
    cr_assert_eq(fn(k - 1, 1, p, v, m), TFMM_ERR_INVALID_ARGUMENT, "%s", name);
    cr_assert_eq(fn(k, 1, NULL, v, m), TFMM_ERR_INVALID_ARGUMENT, "%s", name);
    cr_assert_eq(fn(k, 1, p, NULL, m), TFMM_ERR_INVALID_ARGUMENT, "%s", name);
    cr_assert_eq(fn(k, 1, p, v, NULL), TFMM_ERR_INVALID_ARGUMENT, "%s", name);
    /* 3n doubles could not be addressed: refused before any write. */
    cr_assert_eq(fn(SIZE_MAX / 3 + 1, 1, p, v, m), TFMM_ERR_INVALID_ARGUMENT,
                 "%s", name);
    cr_assert_eq(fn(k, 1, p, v, m), TFMM_OK, "%s", name);
  }
}

Test(ic, every_model_same_seed_same_bits) {
  const size_t n = 1001;
  for (size_t g = 0; g < GENERATORS; g++) {
    const char *name = generators[g].name;
    model a = make_with(generators[g].fn, n, 42),
          b = make_with(generators[g].fn, n, 42),
          c = make_with(generators[g].fn, n, 43);
    cr_assert_eq(memcmp(a.pos, b.pos, 3 * n * sizeof(double)), 0, "%s", name);
    cr_assert_eq(memcmp(a.vel, b.vel, 3 * n * sizeof(double)), 0, "%s", name);
    cr_assert_eq(memcmp(a.mass, b.mass, n * sizeof(double)), 0, "%s", name);
    cr_assert_neq(memcmp(a.pos, c.pos, 3 * n * sizeof(double)), 0, "%s", name);
    /* The cold sphere is at rest whatever the seed. */
    if (generators[g].fn != tfmm_ic_cold)
      cr_assert_neq(memcmp(a.vel, c.vel, 3 * n * sizeof(double)), 0, "%s",
                    name);
    release(&a);
    release(&b);
    release(&c);
  }
}

/* Masses 1/n summing to 1; centre of mass and momentum at the origin to
 * 1e-14 (the generators' compensated sums reach ~1e-17 here); every value
 * written and finite. n is odd, so the merger's halves differ by one. */
Test(ic, every_model_unit_mass_centre_of_mass_at_rest) {
  const size_t n = 10001;
  for (size_t g = 0; g < GENERATORS; g++) {
    const char *name = generators[g].name;
    model m = make_with(generators[g].fn, n, 7);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(m.mass[i], 1.0 / (double)n, "%s", name);
    cr_assert_float_eq(sum(m.mass, n, 1), 1.0, 1e-14, "%s", name);
    for (size_t i = 0; i < 3 * n; i++)
      cr_assert(isfinite(m.pos[i]) && isfinite(m.vel[i]), "%s", name);
    double *mx = malloc(n * sizeof(double)), *mv = malloc(n * sizeof(double));
    cr_assert(mx != NULL && mv != NULL);
    for (int d = 0; d < 3; d++) {
      for (size_t i = 0; i < n; i++) {
        mx[i] = m.mass[i] * m.pos[3 * i + d];
        mv[i] = m.mass[i] * m.vel[3 * i + d];
      }
      const double com = sum(mx, n, 1), momentum = sum(mv, n, 1);
      cr_assert_lt(fabs(com), 1e-14, "%s: centre of mass[%d] = %g", name, d,
                   com);
      cr_assert_lt(fabs(momentum), 1e-14, "%s: momentum[%d] = %g", name, d,
                   momentum);
    }
    free(mx);
    free(mv);
    release(&m);
  }
}

/* One body: at rest at the origin with all the mass. */
Test(ic, every_single_body_at_rest_at_origin) {
  for (size_t g = 0; g < GENERATORS; g++) {
    if (generators[g].min_n > 1)
      continue;
    model m = make_with(generators[g].fn, 1, 9);
    for (int d = 0; d < 3; d++) {
      cr_assert_eq(m.pos[d], 0.0, "%s", generators[g].name);
      cr_assert_eq(m.vel[d], 0.0, "%s", generators[g].name);
    }
    cr_assert_eq(m.mass[0], 1.0, "%s", generators[g].name);
    release(&m);
  }
}
