/* The worst group of a measured evaluation (tfmm_stats.error.group_*,
 * issue 28's "no group left behind"): the bodies of the leaf that holds
 * the largest error, measured beside the sample, against long-double
 * direct sums at every body computed here.
 *
 * - One leaf holds every body: the group is every body, and its median,
 *   99th percentile and largest error are the population's.
 * - A leaf of more bodies than a tile: 256 of them measured, the worst
 *   body among them; the figures lie within the population's.
 * - Many leaves: the group is a leaf's bodies, each measured, and its
 *   largest error is at least the sample's.
 *
 * Built twice: test_measure_group on the CPU (the host tree's stage),
 * test_measure_group_gpu (TFMM_MEASURE_GPU) under the gpu schedule,
 * skipping without a GPU. Fresh seeds. */
#include "measure_device.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <tilefmm.h>

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Each body's relative error of acc against Newton's accelerations
 * summed in long double (test_newton_long_double), sorted into err. */
static void truth_errors(const test_bodies *b, const double *acc, double *err) {
  double *ref = malloc(3 * b->n * sizeof *ref);
  cr_assert_not_null(ref);
  test_newton_long_double(b, ref);
  for (size_t i = 0; i < b->n; i++)
    err[i] = test_rel_l2(acc + 3 * i, ref + 3 * i, 3);
  free(ref);
  qsort(err, b->n, sizeof *err, by_value);
}

/* Evaluates b on the CPU with leaves of `leaf`, measured, into acc; the
 * stats. */
static tfmm_stats evaluate(const test_bodies *b, int leaf, double *acc) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = DEVICE;
  c.eps = 0;
  c.theta = 0.6;
  c.order = 4;
  c.leaf_size = leaf;
  c.precision = TFMM_PRECISION_SINGLE; /* errors well above the sums' */
  c.measure = TFMM_MEASURE_ALWAYS;
  tfmm_solver *s = NULL;
  cr_assert_eq(tfmm_solver_create(&s, &c), TFMM_OK, "%s",
               tfmm_solver_message(s));
  test_poison(acc, 3 * b->n);
  cr_assert_eq(tfmm_solver_compute(s, b->n, b->pos, b->mass, acc, NULL),
               TFMM_OK, "%s", tfmm_solver_message(s));
  const tfmm_stats st = *tfmm_solver_stats(s);
  tfmm_solver_destroy(s);
  cr_assert_eq(st.error.measured, 1);
  return st;
}

static void expect_close(double got, double want, const char *what,
                         uint64_t seed) {
  cr_expect(fabs(got - want) <= 1e-6 * want + 1e-300,
            "seed %llu: the group's %s %.9g, the truth %.9g",
            (unsigned long long)seed, what, got, want);
}

/* The group's figures in order and within the population's sorted
 * err[n], its largest at least the sample's (the worst body is one of
 * its bodies). */
static void expect_within(const tfmm_stats *st, const double *err, size_t n,
                          uint64_t seed) {
  cr_expect_geq(st->error.group_max, (1 - 1e-12) * st->error.max);
  cr_expect(st->error.group_max <= (1 + 1e-6) * err[n - 1] &&
                st->error.group_median >= (1 - 1e-6) * err[0] &&
                st->error.group_median <= st->error.group_p99 &&
                st->error.group_p99 <= st->error.group_max,
            "seed %llu: group median %g p99 %g max %g, truth %g .. %g",
            (unsigned long long)seed, st->error.group_median,
            st->error.group_p99, st->error.group_max, err[0], err[n - 1]);
}

/* One case: n bodies of layout on a fresh seed, evaluated with leaves of
 * `leaf`; its stats and the population's sorted errors. */
typedef struct group_case {
  uint64_t seed;
  size_t n;
  tfmm_stats st;
  double *err;
} group_case;

static group_case run_case(size_t n, test_layout layout, int leaf) {
  REQUIRE_DEVICE();
  group_case c = {test_fresh_seed(), n, {0}, malloc(n * sizeof(double))};
  test_bodies b = test_bodies_make(n, layout, c.seed);
  double *acc = malloc(3 * n * sizeof *acc);
  cr_assert(acc != NULL && c.err != NULL);
  c.st = evaluate(&b, leaf, acc);
  truth_errors(&b, acc, c.err);
  free(acc);
  test_bodies_free(&b);
  return c;
}

Test(measure_group, one_leaf_is_every_body, .timeout = 120) {
  group_case c = run_case(200, TEST_UNIFORM, 256);
  const size_t n = c.n, rank = (size_t)ceil(0.99 * (double)n);
  cr_expect_eq(c.st.error.group_bodies, n);
  cr_expect_eq(c.st.error.group_measured, n);
  expect_close(c.st.error.group_p99, c.err[rank - 1], "p99", c.seed);
  expect_close(c.st.error.group_median, c.err[(n - 1) / 2], "median", c.seed);
  expect_close(c.st.error.group_max, c.err[n - 1], "max", c.seed);
  cr_expect(c.err[(n - 1) / 2] > 1e-9, "seed %llu: no error to compare (%g)",
            (unsigned long long)c.seed, c.err[(n - 1) / 2]);
  free(c.err);
}

Test(measure_group, a_large_leaf_is_sampled, .timeout = 120) {
  group_case c = run_case(1000, TEST_UNIFORM, 1000);
  cr_expect_eq(c.st.error.group_bodies, c.n);
  cr_expect_eq(c.st.error.group_measured, 256);
  /* The worst body is among them; every figure is one of the bodies'. */
  expect_within(&c.st, c.err, c.n, c.seed);
  free(c.err);
}

Test(measure_group, many_leaves, .timeout = 120) {
  group_case c = run_case(3000, TEST_CLUSTERED, 64);
  cr_expect(c.st.error.group_bodies >= 1 &&
                c.st.error.group_bodies <= (size_t)c.st.leaf_max,
            "seed %llu: a group of %zu bodies, leaves of at most %lld",
            (unsigned long long)c.seed, c.st.error.group_bodies,
            (long long)c.st.leaf_max);
  cr_expect_eq(c.st.error.group_measured, c.st.error.group_bodies);
  expect_within(&c.st, c.err, c.n, c.seed);
  free(c.err);
}
