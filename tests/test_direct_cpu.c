/* The CPU direct method against the double-precision reference. */
#include "direct_check.h"

#include <criterion/criterion.h>
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
  /* Distinct in double, one point in float: an error with eps = 0. */
  double pos[9] = {0, 0, 0, 1, 1, 1, 1 + 1e-12, 1, 1}, mass[3] = {1, 1, 1};
  double acc[9];
  tfmm_config cfg = cpu_config();
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &cfg), TFMM_OK);
  cr_assert_eq(tfmm_solver_compute(s, 3, pos, mass, acc, NULL),
               TFMM_ERR_COINCIDENT);
  cr_assert_not_null(strstr(tfmm_solver_message(s), "bodies 1 and 2"), "%s",
                     tfmm_solver_message(s));
  tfmm_solver_destroy(s);
}

/* Raw double positions: the rounding to float is bounded body by body. */
Test(direct_cpu, raw_positions_within_rounding_bound) {
  direct_case_check_raw(3000, TEST_CLUSTERED, 0, cpu_config());
  direct_case_check_raw(3000, TEST_UNIFORM, 1e-4, cpu_config());
}
