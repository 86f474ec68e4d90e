/* tfmm_solver_reserve (issue 28): the set-up of a solver for n host
 * bodies before its first evaluation. Its truth is a solver that did not
 * reserve: the same bits from the same bodies, whether the evaluation has
 * the n bodies reserved for, more (what is missing is taken then) or
 * fewer, and on the GPU's results through fresh (never touched) arrays.
 * Bad arguments are refused with a status and a message, the solver still
 * usable. The GPU tests skip without a GPU. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

/* The configuration compared bit for bit: the planner off (it may move
 * between calls, planner.h). */
static tfmm_config config_on(tfmm_device device) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.measure = TFMM_MEASURE_OFF;
  c.device = device;
  if (device == TFMM_DEVICE_GPU)
    c.schedule = TFMM_SCHEDULE_GPU;
  c.eps = 0.01;
  return c;
}

static tfmm_solver *make(const tfmm_config *c) {
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, c), TFMM_OK, "%s",
               s != NULL ? tfmm_solver_message(s) : "no memory");
  return s;
}

/* The first n bodies of b evaluated by s into fresh, poisoned-on-demand
 * arrays (malloc's: on the GPU their pages are first touched by the
 * library); returns acc (3n) then pot (n), malloc'd. */
static double *evaluate(tfmm_solver *s, const test_bodies *b, size_t n,
                        int poison) {
  double *out = malloc(4 * n * sizeof *out);
  cr_assert_not_null(out);
  if (poison)
    test_poison(out, 4 * n);
  cr_assert_eq(tfmm_solver_compute(s, n, b->pos, b->mass, out, out + 3 * n),
               TFMM_OK, "%s", tfmm_solver_message(s));
  const size_t bad = test_first_nonfinite(out, 4 * n);
  cr_assert_eq(bad, 4 * n,
               "%zu bodies (%s, poisoned %d): result %zu of %zu is %g: not "
               "written",
               n, tfmm_device_name(tfmm_solver_device(s)), poison, bad, 4 * n,
               bad < 4 * n ? out[bad] : 0.0);
  return out;
}

/* Against a solver that did not reserve: bodies b (n reserved), then n
 * + extra and n / 2 of them, through fresh arrays each time. */
static void check_same_bits(const tfmm_config *c, size_t n, size_t extra) {
  const uint64_t seed = test_fresh_seed();
  test_bodies b = test_bodies_make(n + extra, TEST_CLUSTERED, seed);
  const size_t sizes[] = {n, n + extra, n / 2};
  tfmm_solver *kept = make(c);
  cr_assert_eq(tfmm_solver_reserve(kept, n), TFMM_OK, "%s",
               tfmm_solver_message(kept));
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    const size_t m = sizes[k];
    tfmm_solver *plain = make(c);
    double *truth = evaluate(plain, &b, m, 1);
    /* Fresh arrays not poisoned: untouched pages, as malloc gives them. */
    double *got = evaluate(kept, &b, m, k != 0);
    cr_expect(memcmp(got, truth, 4 * m * sizeof *got) == 0,
              "seed %llu: %zu bodies of %zu reserved: not the bits of a "
              "solver that did not reserve",
              (unsigned long long)seed, m, n);
    free(truth);
    free(got);
    tfmm_solver_destroy(plain);
  }
  tfmm_solver_destroy(kept);
  test_bodies_free(&b);
}

Test(reserve, refuses_bad_arguments) {
  cr_expect_eq(tfmm_solver_reserve(NULL, 10), TFMM_ERR_INVALID_ARGUMENT);
  const tfmm_config c = config_on(TFMM_DEVICE_CPU);
  tfmm_solver *s = make(&c);
  const size_t bad[] = {0, (size_t)1 << 31};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    cr_expect_eq(tfmm_solver_reserve(s, bad[k]), TFMM_ERR_INVALID_ARGUMENT,
                 "%zu bodies", bad[k]);
    cr_expect(strstr(tfmm_solver_message(s), "reserve") != NULL,
              "the message names the call: '%s'", tfmm_solver_message(s));
  }
  /* Still usable, and its message cleared by the next call. */
  cr_expect_eq(tfmm_solver_reserve(s, 100), TFMM_OK);
  cr_expect_str_empty(tfmm_solver_message(s));
  tfmm_solver_destroy(s);
}

Test(reserve, cpu_nothing_to_take_same_bits) {
  const tfmm_config c = config_on(TFMM_DEVICE_CPU);
  check_same_bits(&c, 3000, 777);
}

Test(reserve, gpu_same_bits_more_and_fewer) {
  test_require_gpu();
  tfmm_config c = config_on(TFMM_DEVICE_GPU);
  /* 300,001 bodies: 9.6 MB of positions, three chunks each way; then
   * 40,000 more than reserved (the device's buffer grows). */
  check_same_bits(&c, 300001, 40000);
  c.method = TFMM_METHOD_BH;
  check_same_bits(&c, 5001, 3);
}

Test(reserve, gpu_refuses_bad_arguments) {
  test_require_gpu();
  const tfmm_config c = config_on(TFMM_DEVICE_GPU);
  tfmm_solver *s = make(&c);
  cr_expect_eq(tfmm_solver_reserve(s, 0), TFMM_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(tfmm_solver_message(s), "reserve") != NULL, "'%s'",
            tfmm_solver_message(s));
  cr_expect_eq(tfmm_solver_reserve(s, 1000), TFMM_OK, "%s",
               tfmm_solver_message(s));
  tfmm_solver_destroy(s);
}
