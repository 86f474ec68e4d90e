/* The reference method against analytic answers and an independent
 * long-double summation: it is the truth everything else is held to. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

static tfmm_solver *make_reference(double G, double eps) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.method = TFMM_METHOD_REFERENCE;
  cfg.G = G;
  cfg.eps = eps;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK, "%s",
               tfmm_solver_message(s));
  return s;
}

Test(reference, two_bodies_analytic) {
  const double G = 2.5, eps = 0.3, d = 1.7;
  tfmm_solver *s = make_reference(G, eps);
  double pos[6] = {0.2, -1, 3, 0.2 + d, -1, 3}, mass[2] = {1.5, 0.25};
  double acc[6], pot[2];
  test_poison(acc, 6);
  test_poison(pot, 2);
  cr_assert_eq(tfmm_solver_compute(s, 2, pos, mass, acc, pot), TFMM_OK);
  double r2 = d * d + eps * eps, r3 = r2 * sqrt(r2);
  cr_assert_float_eq(acc[0], G * mass[1] * d / r3, 1e-15);
  cr_assert_float_eq(acc[3], -G * mass[0] * d / r3, 1e-15);
  cr_assert_float_eq(acc[1], 0.0, 1e-300);
  cr_assert_float_eq(acc[5], 0.0, 1e-300);
  cr_assert_float_eq(pot[0], -G * mass[1] / sqrt(r2), 1e-15);
  cr_assert_float_eq(pot[1], -G * mass[0] / sqrt(r2), 1e-15);
  tfmm_solver_destroy(s);
}

Test(reference, single_body_feels_nothing) {
  tfmm_solver *s = make_reference(1, 0);
  double pos[3] = {1, 2, 3}, mass[1] = {4}, acc[3], pot[1];
  test_poison(acc, 3);
  test_poison(pot, 1);
  cr_assert_eq(tfmm_solver_compute(s, 1, pos, mass, acc, pot), TFMM_OK);
  for (int k = 0; k < 3; k++)
    cr_assert_eq(acc[k], 0.0);
  cr_assert_eq(pot[0], 0.0, "the self term must be excluded");
  tfmm_solver_destroy(s);
}

/* Eight equal masses on the corners of a cube around a ninth body: by
 * symmetry the centre feels no force, and its potential is -8 m / r. */
Test(reference, cube_symmetry) {
  tfmm_solver *s = make_reference(1, 0);
  double pos[27], mass[9], acc[27], pot[9];
  int k = 0;
  for (int c = 0; c < 8; c++) {
    pos[3 * k] = (c & 1) ? 1 : -1;
    pos[3 * k + 1] = (c & 2) ? 1 : -1;
    pos[3 * k + 2] = (c & 4) ? 1 : -1;
    mass[k++] = 0.5;
  }
  pos[24] = pos[25] = pos[26] = 0;
  mass[8] = 3;
  cr_assert_eq(tfmm_solver_compute(s, 9, pos, mass, acc, pot), TFMM_OK);
  for (int d = 0; d < 3; d++)
    cr_assert_float_eq(acc[24 + d], 0.0, 1e-15);
  cr_assert_float_eq(pot[8], -8 * 0.5 / sqrt(3.0), 1e-14);
  tfmm_solver_destroy(s);
}

/* An independent sum in long double, plain loop, on random bodies. */
Test(reference, matches_long_double_sum) {
  uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(700, TEST_CLUSTERED, seed);
  const double eps = 1e-3;
  double *acc = malloc(3 * b.n * sizeof *acc), *pot = malloc(b.n * 8);
  tfmm_solver *s = make_reference(1, eps);
  cr_assert_eq(tfmm_solver_compute(s, b.n, b.pos, b.mass, acc, pot), TFMM_OK);
  for (size_t i = 0; i < b.n; i++) {
    long double a[3] = {0, 0, 0}, phi = 0;
    for (size_t j = 0; j < b.n; j++) {
      if (j == i)
        continue;
      long double d[3], r2 = (long double)eps * eps;
      for (int k = 0; k < 3; k++) {
        d[k] = (long double)b.pos[3 * j + k] - b.pos[3 * i + k];
        r2 += d[k] * d[k];
      }
      long double r = sqrtl(r2);
      for (int k = 0; k < 3; k++)
        a[k] += b.mass[j] * d[k] / (r2 * r);
      phi -= b.mass[j] / r;
    }
    long double an = sqrtl(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    for (int k = 0; k < 3; k++)
      cr_assert_leq(fabsl(acc[3 * i + k] - a[k]), 1e-13L * an + 1e-300L,
                    "seed %llu body %zu", (unsigned long long)seed, i);
    cr_assert_leq(fabsl(pot[i] - phi), 1e-14L * fabsl(phi));
  }
  tfmm_solver_destroy(s);
  test_bodies_free(&b);
  free(acc);
  free(pot);
}

Test(reference, coincident_bodies_name_both) {
  tfmm_solver *s = make_reference(1, 0);
  double pos[12] = {0, 0, 0, 1, 2, 3, 5, 5, 5, 1, 2, 3}, mass[4] = {1, 1, 1, 1};
  double acc[12], pot[4];
  cr_assert_eq(tfmm_solver_compute(s, 4, pos, mass, acc, pot),
               TFMM_ERR_COINCIDENT);
  cr_assert_not_null(strstr(tfmm_solver_message(s), "bodies 1 and 3"), "%s",
                     tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  /* With softening the same input is fine and finite. */
  s = make_reference(1, 0.1);
  cr_assert_eq(tfmm_solver_compute(s, 4, pos, mass, acc, pot), TFMM_OK);
  cr_assert_eq(test_first_nonfinite(acc, 12), 12);
  tfmm_solver_destroy(s);
}
