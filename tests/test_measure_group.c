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
 * The CPU's measurement (the host tree's stage); the gpu schedule does
 * not measure the group yet. Fresh seeds. */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <tilefmm.h>

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Each body's relative error of acc against Newton's accelerations (G =
 * 1, eps = 0) summed in long double, sorted into err. */
static void truth_errors(const test_bodies *b, const double *acc, double *err) {
  for (size_t i = 0; i < b->n; i++) {
    long double a[3] = {0, 0, 0};
    for (size_t j = 0; j < b->n; j++) {
      if (j == i)
        continue;
      long double d[3], r2 = 0;
      for (int c = 0; c < 3; c++) {
        d[c] = (long double)b->pos[3 * j + c] - b->pos[3 * i + c];
        r2 += d[c] * d[c];
      }
      const long double f = b->mass[j] / (r2 * sqrtl(r2));
      for (int c = 0; c < 3; c++)
        a[c] += f * d[c];
    }
    const double ref[3] = {(double)a[0], (double)a[1], (double)a[2]};
    err[i] = test_rel_l2(acc + 3 * i, ref, 3);
  }
  qsort(err, b->n, sizeof *err, by_value);
}

/* Evaluates b on the CPU with leaves of `leaf`, measured, into acc; the
 * stats. */
static tfmm_stats evaluate(const test_bodies *b, int leaf, double *acc) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.device = TFMM_DEVICE_CPU;
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

Test(measure_group, one_leaf_is_every_body, .timeout = 120) {
  const uint64_t seed = test_fresh_seed();
  const size_t n = 200;
  test_bodies b = test_bodies_make(n, TEST_UNIFORM, seed);
  double *acc = malloc(3 * n * sizeof *acc), *err = malloc(n * sizeof *err);
  const tfmm_stats st = evaluate(&b, 256, acc);
  truth_errors(&b, acc, err);
  cr_expect_eq(st.error.group_bodies, n);
  cr_expect_eq(st.error.group_measured, n);
  const size_t rank = (size_t)ceil(0.99 * (double)n);
  expect_close(st.error.group_p99, err[rank - 1], "p99", seed);
  expect_close(st.error.group_median, err[(n - 1) / 2], "median", seed);
  expect_close(st.error.group_max, err[n - 1], "max", seed);
  cr_expect(err[(n - 1) / 2] > 1e-9, "seed %llu: no error to compare (%g)",
            (unsigned long long)seed, err[(n - 1) / 2]);
  free(acc);
  free(err);
  test_bodies_free(&b);
}

Test(measure_group, a_large_leaf_is_sampled, .timeout = 120) {
  const uint64_t seed = test_fresh_seed();
  const size_t n = 1000;
  test_bodies b = test_bodies_make(n, TEST_UNIFORM, seed);
  double *acc = malloc(3 * n * sizeof *acc), *err = malloc(n * sizeof *err);
  const tfmm_stats st = evaluate(&b, 1000, acc);
  truth_errors(&b, acc, err);
  cr_expect_eq(st.error.group_bodies, n);
  cr_expect_eq(st.error.group_measured, 256);
  /* The worst body is among them; every figure is one of the bodies'. */
  cr_expect_geq(st.error.group_max, (1 - 1e-12) * st.error.max);
  cr_expect(st.error.group_max <= (1 + 1e-6) * err[n - 1] &&
                st.error.group_median >= (1 - 1e-6) * err[0] &&
                st.error.group_median <= st.error.group_p99 &&
                st.error.group_p99 <= st.error.group_max,
            "seed %llu: group median %g p99 %g max %g, truth %g .. %g",
            (unsigned long long)seed, st.error.group_median, st.error.group_p99,
            st.error.group_max, err[0], err[n - 1]);
  free(acc);
  free(err);
  test_bodies_free(&b);
}

Test(measure_group, many_leaves, .timeout = 120) {
  const uint64_t seed = test_fresh_seed();
  const size_t n = 3000;
  test_bodies b = test_bodies_make(n, TEST_CLUSTERED, seed);
  double *acc = malloc(3 * n * sizeof *acc), *err = malloc(n * sizeof *err);
  const tfmm_stats st = evaluate(&b, 64, acc);
  truth_errors(&b, acc, err);
  cr_expect(st.error.group_bodies >= 1 &&
                st.error.group_bodies <= (size_t)st.leaf_max,
            "seed %llu: a group of %zu bodies, leaves of at most %lld",
            (unsigned long long)seed, st.error.group_bodies,
            (long long)st.leaf_max);
  cr_expect_eq(st.error.group_measured, st.error.group_bodies);
  cr_expect_geq(st.error.group_max, (1 - 1e-12) * st.error.max);
  cr_expect(st.error.group_max <= (1 + 1e-6) * err[n - 1] &&
                st.error.group_median <= st.error.group_p99 &&
                st.error.group_p99 <= st.error.group_max,
            "seed %llu: group median %g p99 %g max %g, truth max %g",
            (unsigned long long)seed, st.error.group_median, st.error.group_p99,
            st.error.group_max, err[n - 1]);
  free(acc);
  free(err);
  test_bodies_free(&b);
}
