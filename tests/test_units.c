/* Any finite input in double: the solver works in internal units
 * (src/units.h), so lengths of 1e16 or 1e-12 and masses of 1e-40 or 1e30
 * give the accuracy of N-body units, and results beyond the range of
 * double are an error naming the body, never a silent inf, NaN or zero.
 *
 * Truth: Newton's law scales exactly, a(lambda x, mu m) = mu / lambda^2
 * a(x, m), so every method at scaled inputs is compared with the
 * double-precision reference at N-body units, scaled analytically: its
 * error must be that of the same method in N-body units. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

enum { N = 3000 };

/* Where the methods run: the CPU, or the GPU in the GPU test. */
static tfmm_device device = TFMM_DEVICE_CPU;

static tfmm_status compute(tfmm_method m, double G, double eps, size_t n,
                           const double *pos, const double *mass, double *acc,
                           char *msg, size_t cap) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = m;
  c.device = m == TFMM_METHOD_REFERENCE ? TFMM_DEVICE_CPU : device;
  c.G = G;
  c.eps = eps;
  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create(&s, &c);
  if (st == TFMM_OK)
    st = tfmm_solver_compute(s, n, pos, mass, acc, NULL);
  snprintf(msg, cap, "%s", tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  return st;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* p99 of |a / factor - truth| / |truth|. */
static double p99(const double *a, const double *truth, double factor) {
  double *e = malloc(N * sizeof *e);
  for (size_t i = 0; i < N; i++) {
    double num = 0, den = 0;
    for (int d = 0; d < 3; d++) {
      double x = a[3 * i + d] / factor - truth[3 * i + d];
      num += x * x;
      den += truth[3 * i + d] * truth[3 * i + d];
    }
    e[i] = sqrt(num / den);
  }
  qsort(e, N, sizeof *e, cmp);
  double r = e[(size_t)ceil(0.99 * N) - 1]; /* nearest rank */
  free(e);
  return r;
}

/* Each method at lengths times lambda and masses times mu (and G), against
 * the reference in N-body units: within the accuracy it has there. */
static void check_scale(double lambda, double mu, double G) {
  uint64_t seed = test_fresh_seed();
  double *pos = malloc(3 * N * sizeof *pos), *vel = malloc(3 * N * sizeof *vel);
  double *mass = malloc(N * sizeof *mass);
  double *truth = malloc(3 * N * sizeof *truth), *acc = malloc(3 * N * 8);
  double *spos = malloc(3 * N * sizeof *spos), *smass = malloc(N * 8);
  cr_assert_eq(tfmm_ic_plummer(N, seed, pos, vel, mass), TFMM_OK);
  char msg[512];
  const double eps = 0.01;
  cr_assert_eq(compute(TFMM_METHOD_REFERENCE, 1, eps, N, pos, mass, truth, msg,
                       sizeof msg),
               TFMM_OK, "%s", msg);
  for (size_t i = 0; i < N; i++) {
    for (int d = 0; d < 3; d++)
      spos[3 * i + d] = lambda * pos[3 * i + d];
    smass[i] = mu * mass[i];
  }
  const double factor = G * mu / (lambda * lambda);
  const tfmm_method methods[] = {TFMM_METHOD_REFERENCE, TFMM_METHOD_DIRECT,
                                 TFMM_METHOD_FMM, TFMM_METHOD_BH};
  for (size_t k = 0; k < sizeof methods / sizeof *methods; k++) {
    const tfmm_method m = methods[k];
    cr_assert_eq(compute(m, 1, eps, N, pos, mass, acc, msg, sizeof msg),
                 TFMM_OK, "%s", msg);
    double e0 = p99(acc, truth, 1);
    test_poison(acc, 3 * N);
    tfmm_status st =
        compute(m, G, lambda * eps, N, spos, smass, acc, msg, sizeof msg);
    cr_assert_eq(st, TFMM_OK, "seed %llu %s lambda %g mu %g: %s",
                 (unsigned long long)seed, tfmm_method_name(m), lambda, mu,
                 msg);
    double e = p99(acc, truth, factor);
    cr_log_info("seed %llu %s lengths x %g, masses x %g, G %g: p99 %.3g "
                "(%.3g in N-body units)",
                (unsigned long long)seed, tfmm_method_name(m), lambda, mu, G, e,
                e0);
    /* The same accuracy: rounding the scaled inputs may move it a little;
     * 1e-13 is the reference's own floor. */
    cr_expect_leq(e, 2 * e0 + 1e-13,
                  "seed %llu %s lengths x %g masses x %g: p99 %.3g against "
                  "%.3g in N-body units",
                  (unsigned long long)seed, tfmm_method_name(m), lambda, mu, e,
                  e0);
  }
  free(pos), free(vel), free(mass), free(truth), free(acc), free(spos),
      free(smass);
}

Test(units, parsecs_in_metres_and_tiny_masses, .timeout = 300) {
  check_scale(3.0857e16, 1e-40, 1);
}
Test(units, solar_masses_in_grams_kpc_in_cm, .timeout = 300) {
  check_scale(3.0857e21, 1.989e33, 6.674e-8);
}
Test(units, microscopic, .timeout = 300) { check_scale(1e-12, 1e-20, 1); }

/* The same on the GPU's kernels (direct, and the tree methods' near
 * field): skipped without a GPU. */
Test(units, on_the_gpu, .timeout = 300) {
  test_require_gpu();
  device = TFMM_DEVICE_GPU;
  check_scale(3.0857e21, 1.989e33, 6.674e-8);
  check_scale(1e-12, 1e-40, 1);
}

/* Results beyond double's range are an error naming the body. */
Test(units, overflowing_force_is_an_error) {
  double pos[6] = {0, 0, 0, 1e-300, 0, 0}, mass[2] = {1, 1}, acc[6];
  char msg[512];
  for (int m = TFMM_METHOD_REFERENCE; m <= TFMM_METHOD_BH; m++) {
    tfmm_status st =
        compute((tfmm_method)m, 1, 0, 2, pos, mass, acc, msg, sizeof msg);
    cr_expect_eq(st, TFMM_ERR_NONFINITE, "%s: %s (%d)",
                 tfmm_method_name((tfmm_method)m), msg, (int)st);
    cr_expect(strstr(msg, "body") != NULL, "%s", msg);
  }
  double big[2] = {1e308, 1e308}, far[6] = {0, 0, 0, 1, 0, 0};
  for (int m = TFMM_METHOD_REFERENCE; m <= TFMM_METHOD_BH; m++)
    cr_expect_eq(
        compute((tfmm_method)m, 1e308, 0, 2, far, big, acc, msg, sizeof msg),
        TFMM_ERR_NONFINITE, "%s G 1e308: %s", tfmm_method_name((tfmm_method)m),
        msg);
}

/* A softening whose square underflows acts as none: coincident bodies are
 * refused as with eps = 0, not summed into inf or NaN. */
Test(units, vanishing_eps_refuses_coincident_bodies) {
  double pos[9] = {0, 0, 0, 0, 0, 0, 1, 1, 1}, mass[3] = {1, 1, 1}, acc[9];
  char msg[512];
  for (int m = TFMM_METHOD_REFERENCE; m <= TFMM_METHOD_BH; m++) {
    tfmm_status st =
        compute((tfmm_method)m, 1, 1e-200, 3, pos, mass, acc, msg, sizeof msg);
    cr_expect_eq(st, TFMM_ERR_COINCIDENT, "%s eps 1e-200: %s (%d)",
                 tfmm_method_name((tfmm_method)m), msg, (int)st);
  }
}
