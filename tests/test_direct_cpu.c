/* The CPU direct method against the double-precision reference. */
#include "direct_check.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tfmm_config cpu_config(void) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.method = TFMM_METHOD_DIRECT;
  cfg.device = TFMM_DEVICE_CPU;
  return cfg;
}

static void check_sizes(test_layout layout, double eps) {
  for (size_t k = 0; k < direct_case_size_count; k++) {
    size_t n = direct_case_sizes[k];
    direct_case c = direct_case_make(n, layout, eps);
    direct_case_check(&c, cpu_config(), 1);
    direct_case_free(&c);
  }
}

Test(direct_cpu, uniform_no_softening) { check_sizes(TEST_UNIFORM, 0); }
Test(direct_cpu, uniform_softened) { check_sizes(TEST_UNIFORM, 0.05); }
Test(direct_cpu, clustered_no_softening) { check_sizes(TEST_CLUSTERED, 0); }
Test(direct_cpu, clustered_softened) { check_sizes(TEST_CLUSTERED, 1e-3); }

Test(direct_cpu, without_potential) {
  direct_case c = direct_case_make(1000, TEST_CLUSTERED, 1e-2);
  direct_case_check(&c, cpu_config(), 0);
  direct_case_free(&c);
}

Test(direct_cpu, coincident_in_single_precision) {
  /* Distinct in double, one point in float, eps = 0: once refused as at
   * one point; now summed in double (issue 29), as precision double sums
   * them, and the plan says so. */
  double pos[9] = {0, 0, 0, 1, 1, 1, 1 + 1e-12, 1, 1}, mass[3] = {1, 1, 1};
  double acc[9], want[9];
  tfmm_config cfg = cpu_config();
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, NULL), TFMM_OK, "%s",
               tfmm_solver_message(s));
  cr_assert_not_null(strstr(tfmm_solver_stats(s)->plan, "in double"), "%s",
                     tfmm_solver_stats(s)->plan);
  tfmm_solver_destroy(s);
  cfg.precision = TFMM_PRECISION_DOUBLE;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, want, NULL), TFMM_OK);
  tfmm_solver_destroy(s);
  for (int k = 0; k < 9; k++)
    cr_assert_eq(acc[k], want[k], "acc[%d] %.17g, want %.17g", k, acc[k],
                 want[k]);
}

/* Raw double positions: the rounding to float is bounded body by body. */
Test(direct_cpu, raw_positions_within_rounding_bound) {
  direct_case_check_raw(3000, TEST_CLUSTERED, 0, cpu_config());
  direct_case_check_raw(3000, TEST_UNIFORM, 1e-4, cpu_config());
}

/* The CPU direct method with a softening and precision against the
 * reference with the same softening: relative 2-norm below tol, momentum
 * below tol. Every seventh body sits on the one before it (eps > 0), a
 * pair inside the spline's support at r = 0. */
static void check_kind(size_t n, test_layout layout, double eps,
                       tfmm_softening softening, tfmm_precision precision,
                       double tol) {
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(n, layout, seed);
  if (eps > 0)
    test_bodies_stack(&b, 7);
  double *ref = malloc(3 * n * 8), *pref = malloc(n * 8);
  double *acc = malloc(3 * n * 8), *pot = malloc(n * 8);
  cr_assert(ref && pref && acc && pot);
  cr_assert_eq(test_reference_softened(&b, eps, softening, ref, pref), 0);
  tfmm_config cfg = cpu_config();
  cfg.eps = eps;
  cfg.softening = softening;
  cfg.precision = precision;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  test_poison(acc, 3 * n);
  test_poison(pot, n);
  cr_assert_eq(tfmm_solver_compute(s, n, b.pos, b.mass, acc, pot), TFMM_OK,
               "%s", tfmm_solver_message(s));
  tfmm_solver_destroy(s);
  const double ea = test_rel_l2(acc, ref, 3 * n),
               ep = test_rel_l2(pot, pref, n),
               drift = test_momentum_drift(b.mass, acc, n);
  char what[160];
  snprintf(what, sizeof what, "n %zu eps %g %s %s seed %llu", n, eps,
           tfmm_softening_name(softening), tfmm_precision_name(precision),
           (unsigned long long)seed);
  cr_log_info("%s: acceleration %.3g, potential %.3g, momentum %.3g", what, ea,
              ep, drift);
  cr_assert_eq(test_first_nonfinite(acc, 3 * n), 3 * n, "%s", what);
  cr_assert_lt(ea, tol, "%s: acceleration error %.3g", what, ea);
  cr_assert_lt(ep, tol, "%s: potential error %.3g", what, ep);
  cr_assert_lt(drift, tol, "%s: momentum drift %.3g", what, drift);
  free(ref), free(pref), free(acc), free(pot);
  test_bodies_free(&b);
}

/* eps so that many pairs fall inside the support h = 2.8 eps. */
Test(direct_cpu, spline_single) {
  check_kind(4097, TEST_UNIFORM, 0.05, TFMM_SOFTENING_SPLINE,
             TFMM_PRECISION_SINGLE, 1e-5);
  check_kind(5000, TEST_CLUSTERED, 1e-2, TFMM_SOFTENING_SPLINE,
             TFMM_PRECISION_SINGLE, 1e-5);
}

/* Double precision: the same sums as the reference's, less its
 * compensation: 1e-12 (the single-precision 1e-5 scaled by 2^-29, with a
 * margin of 500). */
Test(direct_cpu, double_precision) {
  const tfmm_softening kinds[] = {TFMM_SOFTENING_PLUMMER,
                                  TFMM_SOFTENING_SPLINE};
  for (int k = 0; k < 2; k++) {
    check_kind(4097, TEST_UNIFORM, 0.05, kinds[k], TFMM_PRECISION_DOUBLE,
               1e-12);
    check_kind(5000, TEST_CLUSTERED, 1e-3, kinds[k], TFMM_PRECISION_DOUBLE,
               1e-12);
  }
  check_kind(3000, TEST_CLUSTERED, 0, TFMM_SOFTENING_PLUMMER,
             TFMM_PRECISION_DOUBLE, 1e-12);
}
