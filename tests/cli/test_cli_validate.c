/* tilefmm validate: the errors it reports must be the true ones (tiny for
 * the reference against itself and for single-precision all pairs, larger
 * for a coarse FMM than for a fine one), on every body or on a sample; its
 * percentiles must follow the nearest-rank definition; --near must pass
 * the near field that meets its criteria and fail the one that does not;
 * and bad flags and files must fail as they do for forces. */
#define _POSIX_C_SOURCE 200809L
#include "error_stats.h"
#include "harness.h"
#include "tilefmm.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(validate, .init = scratch_make, .fini = scratch_remove);

/* ---- error_stats: the percentile definition ------------------------------
 */

/* The values 10, 20, ..., 100 in a scrambled order. */
static void tens(double x[10]) {
  const int order[10] = {7, 2, 9, 0, 4, 1, 8, 5, 3, 6};
  for (int k = 0; k < 10; k++)
    x[k] = 10.0 * (order[k] + 1);
}

/* Nearest rank: the p-th percentile of n values is the ceil(p n / 100)-th
 * smallest. */
Test(validate, percentiles_nearest_rank) {
  double x[10];
  tens(x);
  error_stats_sort(x, 10);
  for (int k = 0; k < 10; k++)
    cr_assert_eq(x[k], 10.0 * (k + 1), "sorted[%d] = %g", k, x[k]);
  const struct {
    unsigned p;
    double want;
  } cases[] = {{0, 10},  {1, 10},  {10, 10},  {11, 20},  {49, 50},  {50, 50},
               {51, 60}, {90, 90}, {91, 100}, {99, 100}, {100, 100}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const double got = error_stats_percentile(x, 10, cases[c].p);
    cr_assert_eq(got, cases[c].want, "p%u of 10..100: got %g, want %g",
                 cases[c].p, got, cases[c].want);
  }
}

/* ceil(p n / 100) computed as a fraction times n in floating point gives
 * rank 8 for p = 7, n = 100 (0.07 * 100 = 7.000000000000001). */
Test(validate, percentile_rank_is_exact) {
  double x[100];
  for (int k = 0; k < 100; k++)
    x[k] = k + 1;
  for (unsigned p = 1; p <= 100; p++)
    cr_assert_eq(error_stats_percentile(x, 100, p), (double)p, "p%u", p);
  double y[1000];
  for (int k = 0; k < 1000; k++)
    y[k] = k + 1;
  cr_assert_eq(error_stats_percentile(y, 1000, 99), 990);
  cr_assert_eq(error_stats_percentile(y, 1000, 50), 500);
}

Test(validate, summary_median_p99_max) {
  double x[10];
  tens(x);
  const error_summary s = error_stats_summarize(x, 10);
  cr_assert_eq(s.median, 50);
  cr_assert_eq(s.p99, 100);
  cr_assert_eq(s.max, 100);
  /* Even n: the lower of the two middle values. */
  double four[4] = {4, 1, 3, 2};
  cr_assert_eq(error_stats_summarize(four, 4).median, 2);
  double one[1] = {0.25};
  const error_summary s1 = error_stats_summarize(one, 1);
  cr_assert(s1.median == 0.25 && s1.p99 == 0.25 && s1.max == 0.25);
  /* 101 values: the 99th percentile is the 100th smallest. */
  double many[101];
  for (int k = 0; k < 101; k++)
    many[k] = (double)((k * 37) % 101); /* 0..100, scrambled */
  const error_summary s2 = error_stats_summarize(many, 101);
  cr_assert_eq(s2.median, 50);
  cr_assert_eq(s2.p99, 99);
  cr_assert_eq(s2.max, 100);
}

Test(validate, sort_puts_nan_last) {
  double x[5] = {3, NAN, 1, 2, NAN};
  error_stats_sort(x, 5);
  cr_assert(x[0] == 1 && x[1] == 2 && x[2] == 3);
  cr_assert(isnan(x[3]) && isnan(x[4]));
}

Test(validate, relative_and_absolute_errors) {
  int absolute = -1;
  const double a[3] = {3, 4, 0}, a_ref[3] = {0, 4, 0};
  cr_assert_eq(error_stats_relative(a, a_ref, 3, &absolute), 0.75);
  cr_assert_eq(absolute, 0);
  const double b[3] = {1, 2, 2}, zero[3] = {0, 0, 0};
  cr_assert_eq(error_stats_relative(b, zero, 3, &absolute), 3);
  cr_assert_eq(absolute, 1);
  const double phi = -1.5, phi_ref = -2;
  cr_assert_eq(error_stats_relative(&phi, &phi_ref, 1, &absolute), 0.25);
  cr_assert_eq(absolute, 0);
}

/* ---- error_stats: the sample of bodies ----------------------------------
 */

/* k distinct indices of [0, n), ascending. */
static void assert_sample(size_t n, size_t k, uint64_t seed) {
  size_t *x = malloc((k + 1) * sizeof *x);
  x[k] = n + 7; /* a guard the sampler must not write */
  error_stats_sample(n, k, seed, x);
  for (size_t t = 0; t < k; t++) {
    cr_assert_lt(x[t], n, "n %zu k %zu: index %zu", n, k, x[t]);
    if (t > 0)
      cr_assert_gt(x[t], x[t - 1], "n %zu k %zu: not ascending", n, k);
  }
  cr_assert_eq(x[k], n + 7, "written past k");
  free(x);
}

Test(validate, sample_is_k_distinct_indices) {
  const size_t sizes[][2] = {{1, 1},   {10, 1},     {10, 9},
                             {10, 10}, {1000, 100}, {100000, 1000}};
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++)
    for (uint64_t seed = 0; seed < 20; seed++)
      assert_sample(sizes[c][0], sizes[c][1], seed);
  size_t all[10];
  error_stats_sample(10, 10, 3, all);
  for (size_t t = 0; t < 10; t++)
    cr_assert_eq(all[t], t);
}

Test(validate, sample_depends_on_seed_only) {
  size_t a[50], b[50], c[50];
  error_stats_sample(100000, 50, 1, a);
  error_stats_sample(100000, 50, 1, b);
  error_stats_sample(100000, 50, 2, c);
  cr_assert_eq(memcmp(a, b, sizeof a), 0);
  cr_assert_neq(memcmp(a, c, sizeof a), 0);
}

/* Each of 10 indices is in a 3-sample with probability 3/10: over 30000
 * seeds each count is 9000 with a standard deviation of 79; 6 of them is
 * a bound no fair sampler fails. */
Test(validate, sample_is_uniform) {
  int count[10] = {0};
  size_t x[3];
  for (uint64_t seed = 0; seed < 30000; seed++) {
    error_stats_sample(10, 3, seed, x);
    for (int t = 0; t < 3; t++)
      count[x[t]]++;
  }
  for (int i = 0; i < 10; i++)
    cr_assert(abs(count[i] - 9000) < 480, "index %d taken %d times", i,
              count[i]);
}

/* ---- the command ---------------------------------------------------------
 */

typedef struct report {
  double acc[3], pot[3]; /* median, p99, max */
  char *text;            /* all of standard output; free it */
  int rc;                /* the exit status: 0 (target met) or 3 */
} report;

static void make_plummer(const char *name, const char *n, const char *seed) {
  cr_assert_eq(
      RUN("ic", "plummer", "--n", n, "--seed", seed, "--out", sp(name)), 0);
}

/* The three numbers after the row label at the start of a line. */
static void parse_row(const char *text, const char *label, double out[3]) {
  char needle[64];
  snprintf(needle, sizeof needle, "\n%s ", label);
  const char *row = strstr(text, needle);
  cr_assert_not_null(row, "no row '%s' in:\n%s", label, text);
  cr_assert_eq(
      sscanf(row + strlen(needle), "%lf %lf %lf", &out[0], &out[1], &out[2]), 3,
      "bad row '%s' in:\n%s", label, text);
  for (int k = 0; k < 3; k++)
    cr_assert(isfinite(out[k]) && out[k] >= 0, "%s: %g", label, out[k]);
  cr_assert(out[0] <= out[1] && out[1] <= out[2], "%s: not ordered", label);
}

/* The verdict on the accuracy target must agree with the exit status and
 * with the p99 printed: "target T: met" and 0 when p99 <= T, "target T:
 * NOT met" and 3 when not. */
static void assert_verdict(const report *r, double target, const char *word) {
  char want[128];
  const int met = r->acc[1] <= target;
  snprintf(want, sizeof want, "\ntarget %s: %s (p99 acceleration error ", word,
           met ? "met" : "NOT met");
  cr_assert_not_null(strstr(r->text, want), "report lacks '%s':\n%s", want + 1,
                     r->text);
  cr_assert_eq(r->rc, met ? 0 : 3, "exit status %d with p99 %g, target %g",
               r->rc, r->acc[1], target);
}

/* validate --in p.txt --device cpu with up to 8 more words (NULL ends);
 * must measure the errors: exit 0 when the target (1e-3 unless
 * --accuracy is among the words, written as the report writes it: 1e-2)
 * was met, 3 when not. */
static report validate(const char *const *extra) {
  const char *args[16] = {"validate", "--in", sp("p.txt"), "--device", "cpu"};
  size_t n = 5;
  for (; extra[n - 5] != NULL; n++) {
    cr_assert_lt(n, 15);
    args[n] = extra[n - 5];
  }
  args[n] = NULL;
  const int rc = run_argv(args);
  char *err = read_text("stderr.txt");
  cr_assert(rc == 0 || rc == 3, "exit code %d:\n%s", rc, err);
  free(err);
  report r;
  r.rc = rc;
  r.text = read_text("stdout.txt");
  cr_assert_not_null(r.text);
  parse_row(r.text, "acceleration", r.acc);
  parse_row(r.text, "potential", r.pot);
  const char *target = "1e-3";
  for (size_t k = 5; k + 1 < n; k++)
    if (strcmp(args[k], "--accuracy") == 0)
      target = args[k + 1];
  char word[32];
  snprintf(word, sizeof word, "%s", target);
  assert_verdict(&r, strtod(target, NULL), word);
  return r;
}
#define VALIDATE(...) validate((const char *const[]){__VA_ARGS__, NULL})

static void has(const report *r, const char *text) {
  cr_assert_not_null(strstr(r->text, text), "report lacks '%s':\n%s", text,
                     r->text);
}

/* Single-precision all pairs on 2000 bodies: about 1e-7 for most, and the
 * worst body, whose force nearly cancels, 1.5e-5 on this file (float
 * rounding over 2000 terms can take such a body to ~1e-4). */
Test(validate, direct_errors_are_tiny) {
  make_plummer("p.txt", "2000", "1");
  report r = VALIDATE("--method", "direct");
  cr_assert_lt(r.acc[0], 1e-6, "median %g", r.acc[0]);
  cr_assert_lt(r.acc[2], 1e-4, "max acceleration error %g", r.acc[2]);
  cr_assert_lt(r.pot[2], 1e-5, "max potential error %g", r.pot[2]);
  cr_assert_gt(r.acc[2], 0, "a float sum with no error at all?");
  has(&r, "2000 bodies");
  has(&r, "all 2000 bodies with the full reference");
  has(&r, "method:          direct");
  has(&r, "device:          cpu");
  has(&r, "method time:");
  has(&r, "reference time:");
  has(&r, "nearest rank");
  free(r.text);
}

/* The reference against itself: the double sums agree to rounding, which
 * also shows that each sampled body is compared with its own reference. */
Test(validate, reference_against_itself) {
  make_plummer("p.txt", "2000", "1");
  report full = VALIDATE("--method", "reference");
  cr_assert_lt(full.acc[2], 1e-12);
  cr_assert_lt(full.pot[2], 1e-12);
  report part = VALIDATE("--method", "reference", "--sample", "100");
  cr_assert_lt(part.acc[2], 1e-12);
  cr_assert_lt(part.pot[2], 1e-12);
  free(full.text);
  free(part.text);
}

/* Truncation error of the expansions falls as theta^(p+1): order 1 with
 * theta 0.9 must be far worse than order 8 with theta 0.5. */
Test(validate, fmm_coarse_worse_than_fine) {
  make_plummer("p.txt", "2000", "1");
  report coarse = VALIDATE("--method", "fmm", "--order", "1", "--theta", "0.9");
  report fine = VALIDATE("--method", "fmm", "--order", "8", "--theta", "0.5");
  for (int k = 0; k < 3; k++) {
    cr_assert_gt(coarse.acc[k], fine.acc[k], "acceleration column %d", k);
    cr_assert_gt(coarse.pot[k], fine.pot[k], "potential column %d", k);
  }
  cr_assert_gt(coarse.acc[0], 100 * fine.acc[0], "medians %g and %g",
               coarse.acc[0], fine.acc[0]);
  has(&coarse, "fmm (theta 0.9, order 1, leaf 64, max depth 21)");
  has(&fine, "fmm (theta 0.5, order 8, leaf 64, max depth 21)");
  /* Order 1 at theta 0.9 misses 1e-3 by far (p99 ~ 0.5). */
  cr_assert_eq(coarse.rc, 3);
  has(&coarse, "target 1e-3: NOT met");
  has(&coarse, "theta 0.9, order 1 as given");
  free(coarse.text);
  free(fine.text);
}

/* theta and order the library chooses for target, and the report's words
 * for them: with theta auto the planner's, measured (the plan line of the
 * last run's stderr: it may move from tfmm_config_resolve's first guess);
 * with theta given, tfmm_config_resolve's. */
static void chosen(const char *method, double target, double theta, char *want,
                   size_t size) {
  tfmm_config c;
  tfmm_config_defaults(&c);
  cr_assert_eq(tfmm_method_parse(method, &c.method), TFMM_OK);
  c.accuracy = target;
  c.theta = theta;
  double t;
  int p;
  cr_assert_eq(tfmm_config_resolve(&c, &t, &p, NULL, NULL, 0), TFMM_OK);
  if (theta == TFMM_FROM_ACCURACY) {
    char *err = read_text("stderr.txt");
    const char *plan = err != NULL ? strstr(err, "  plan: theta ") : NULL;
    cr_assert_not_null(plan, "no plan line:\n%s", err);
    cr_assert_eq(sscanf(plan, "  plan: theta %lf, order %d", &t, &p), 2);
    free(err);
    snprintf(want, size, "theta %g auto, order %d auto", t, p);
  } else {
    snprintf(want, size, "theta %g, order %d auto", t, p);
  }
}

/* The default target, 1e-3, met by the FMM and Barnes-Hut with the theta
 * and order chosen from it: exit 0, and the report says which. */
Test(validate, default_target_is_met) {
  make_plummer("p.txt", "2000", "1");
  const char *methods[] = {"fmm", "bh"};
  for (int k = 0; k < 2; k++) {
    report r = VALIDATE("--method", methods[k]);
    cr_assert_eq(r.rc, 0, "%s: p99 %g", methods[k], r.acc[1]);
    cr_assert_leq(r.acc[1], 1e-3);
    has(&r, "target 1e-3: met");
    has(&r, "chosen from the target");
    char want[96];
    chosen(methods[k], 1e-3, TFMM_FROM_ACCURACY, want, sizeof want);
    has(&r, want);
    free(r.text);
  }
}

/* A looser target gives a cheaper theta and order (the library's
 * choice), still met; the same coarse expansion passes 0.1 and fails
 * 1e-3. The verdict follows the measured p99 (validate() checks it). */
Test(validate, target_follows_accuracy) {
  make_plummer("p.txt", "2000", "1");
  report r = VALIDATE("--method", "fmm", "--accuracy", "1e-2");
  char want[96];
  chosen("fmm", 0.01, TFMM_FROM_ACCURACY, want, sizeof want);
  has(&r, want);
  has(&r, "target 1e-2: met");
  free(r.text);
  report loose = VALIDATE("--method", "fmm", "--theta", "0.5", "--order", "2",
                          "--accuracy", "1e-1");
  report tight = VALIDATE("--method", "fmm", "--theta", "0.5", "--order", "2");
  cr_assert_eq(memcmp(loose.acc, tight.acc, sizeof loose.acc), 0,
               "the target must not change given theta and order");
  cr_assert_eq(loose.rc, 0, "p99 %g", loose.acc[1]);
  cr_assert_eq(tight.rc, 3, "p99 %g", tight.acc[1]);
  has(&tight, "target 1e-3: NOT met");
  free(loose.text);
  free(tight.text);
}

/* The physics is reported: softening and precision. */
Test(validate, reports_softening_and_precision) {
  make_plummer("p.txt", "1000", "1");
  report r = VALIDATE("--method", "direct", "--softening", "spline", "--eps",
                      "0.01", "--precision", "double");
  has(&r, "softening:       spline, precision double");
  /* All pairs in double against the double reference. */
  cr_assert_lt(r.acc[2], 1e-12, "max %g", r.acc[2]);
  free(r.text);
  r = VALIDATE("--method", "fmm", "--mac", "mass");
  has(&r, "mac mass");
  free(r.text);
}

/* A sample: of the size asked, seeded, and its errors a subset of all. */
Test(validate, sample_of_100) {
  make_plummer("p.txt", "2000", "1");
  const char *m[] = {"--method", "fmm", "--order", "2"};
  report all = VALIDATE(m[0], m[1], m[2], m[3]);
  report a = VALIDATE(m[0], m[1], m[2], m[3], "--sample", "100");
  report b = VALIDATE(m[0], m[1], m[2], m[3], "--sample", "100");
  report c = VALIDATE(m[0], m[1], m[2], m[3], "--sample", "100", "--seed", "2");
  has(&a, "a sample of 100 of 2000 bodies");
  has(&a, "seed 1");
  has(&c, "seed 2");
  cr_assert_eq(memcmp(a.acc, b.acc, sizeof a.acc), 0, "same seed");
  cr_assert_eq(memcmp(a.pot, b.pot, sizeof a.pot), 0, "same seed");
  cr_assert_neq(memcmp(a.acc, c.acc, sizeof a.acc), 0, "other seed");
  cr_assert_leq(a.acc[2], all.acc[2]);
  cr_assert_leq(a.pot[2], all.pot[2]);
  free(all.text);
  free(a.text);
  free(b.text);
  free(c.text);
}

/* S >= N compares every body. */
Test(validate, sample_as_large_as_n_is_full) {
  make_plummer("p.txt", "300", "1");
  report r = VALIDATE("--method", "direct", "--sample", "300");
  has(&r, "all 300 bodies with the full reference");
  free(r.text);
  r = VALIDATE("--method", "direct", "--sample", "299");
  has(&r, "a sample of 299 of 300 bodies");
  free(r.text);
}

/* One body: no force at all, so the errors are absolute, and said so. */
Test(validate, zero_reference_is_absolute) {
  write_text("p.txt", "0.5 0.25 0 1\n");
  report r = VALIDATE("--method", "fmm");
  cr_assert_eq(r.acc[2], 0);
  has(&r, "|a_ref| = 0");
  has(&r, "phi_ref = 0");
  free(r.text);
}

Test(validate, help_documents_flags) {
  cr_assert_eq(RUN("validate", "--help"), 0);
  const char *flags[] = {
      "--in",         "--ic",        "--n",      "--ic-seed",   "--sample",
      "--seed",       "--near",      "--method", "--theta",     "--order",
      "--leaf",       "--max-depth", "--eps",    "--threads",   "--device",
      "nearest rank", "check 1",     "check 2",  "Exit status", "--accuracy",
      "--softening",  "--precision", "--mac",    "NOT met"};
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
    assert_stdout_has(flags[k]);
  cr_assert_eq(RUN("--help"), 0);
  assert_stdout_has("validate");
}

/* ---- failures ------------------------------------------------------------
 */

/* validate on a valid 2-body in.txt with one bad flag and its value. */
static void expect_validate_usage(const char *flag, const char *value) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const char *args[] = {"validate", "--in", sp("in.txt"), "--device",
                        "cpu",      flag,   value,        NULL};
  expect_failure(args, 2, flag, "invalid value");
}

Test(validate, sample_zero) { expect_validate_usage("--sample", "0"); }
Test(validate, sample_word) { expect_validate_usage("--sample", "abc"); }
Test(validate, sample_negative) { expect_validate_usage("--sample", "-5"); }
Test(validate, seed_negative) { expect_validate_usage("--seed", "-1"); }
Test(validate, theta_negative) { expect_validate_usage("--theta", "-0.1"); }
Test(validate, theta_above_one) { expect_validate_usage("--theta", "1.5"); }
Test(validate, order_21) { expect_validate_usage("--order", "21"); }
Test(validate, order_negative) { expect_validate_usage("--order", "-1"); }
Test(validate, leaf_zero) { expect_validate_usage("--leaf", "0"); }
Test(validate, max_depth_zero) { expect_validate_usage("--max-depth", "0"); }
Test(validate, max_depth_22) { expect_validate_usage("--max-depth", "22"); }
Test(validate, method_unknown) { expect_validate_usage("--method", "pm"); }
Test(validate, accuracy_zero) { expect_validate_usage("--accuracy", "0"); }
Test(validate, accuracy_too_large) {
  expect_validate_usage("--accuracy", "0.5");
}
Test(validate, softening_unknown) {
  expect_validate_usage("--softening", "king");
}
Test(validate, precision_unknown) {
  expect_validate_usage("--precision", "quad");
}
Test(validate, mac_unknown) { expect_validate_usage("--mac", "size"); }

Test(validate, missing_input_flag) {
  const char *args[] = {"validate", "--method", "direct", NULL};
  expect_failure(args, 2, "--in", "missing required flag");
}

/* The tree methods run on the CPU only: asking for the GPU is refused
 * before anything is read or computed. */
Test(validate, fmm_on_gpu_without_one_fails_cleanly) {
  if (tfmm_gpu_count() > 0)
    cr_skip_test("a GPU is present: tests/test_near_gpu.c covers it");
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const char *args[] = {"validate", "--in",     sp("in.txt"), "--method",
                        "fmm",      "--device", "gpu",        NULL};
  expect_failure(args, 1, "device gpu", "CUDA");
}

/* The file errors of forces, by the same reader. */
static void expect_bad_file(const char *text, const char *where,
                            const char *what) {
  write_text("in.txt", text);
  const char *args[] = {"validate", "--in",     sp("in.txt"), "--method",
                        "direct",   "--device", "cpu",        NULL};
  expect_failure(args, 1, where, what);
}

Test(validate, bad_number) {
  expect_bad_file("0 0 0 1\n1 abc 0 1\n", "in.txt:2:", "'abc'");
}
Test(validate, bad_columns) {
  expect_bad_file("0 0 0 1\n1 0 0 1 5\n", "in.txt:2:", "found 5");
}
Test(validate, nan_in_file) {
  expect_bad_file("0 0 nan 1\n", "in.txt:1:", "'nan'");
}
Test(validate, zero_mass) {
  expect_bad_file("0 0 0 1\n1 0 0 0\n", "in.txt:2:", "mass");
}
Test(validate, empty_file) { expect_bad_file("", "in.txt", "no bodies"); }
Test(validate, coincident_bodies) {
  expect_bad_file("0 0 0 1\n1 1 1 1\n0 0 0 2\n", "tilefmm: ", "bod");
}

Test(validate, missing_file) {
  const char *args[] = {"validate", "--in", sp("absent.txt"),
                        "--device", "cpu",  NULL};
  expect_failure(args, 1, "absent.txt", "cannot open");
}

/* ---- --ic: the bodies made in place --------------------------------------
 */

/* --ic plummer --n N --ic-seed K is the file 'ic plummer' writes (%.17g
 * reads back to the same doubles), so the errors are the same bits. */
Test(validate, ic_plummer_equals_its_file) {
  make_plummer("p.txt", "2000", "3");
  const char *m[] = {"--method", "direct", "--threads", "1"};
  report file = VALIDATE(m[0], m[1], m[2], m[3]);
  const char *args[] = {"validate",  "--ic", "plummer",  "--n", "2000",
                        "--ic-seed", "3",    "--device", "cpu", m[0],
                        m[1],        m[2],   m[3],       NULL};
  cr_assert_eq(run_argv(args), 0);
  report ic;
  ic.text = read_text("stdout.txt");
  parse_row(ic.text, "acceleration", ic.acc);
  parse_row(ic.text, "potential", ic.pot);
  has(&ic, "2000 bodies (ic plummer --n 2000 --ic-seed 3)");
  cr_assert_eq(memcmp(file.acc, ic.acc, sizeof ic.acc), 0, "acceleration");
  cr_assert_eq(memcmp(file.pot, ic.pot, sizeof ic.pot), 0, "potential");
  free(file.text);
  free(ic.text);
}

/* ---- --near: the near field's two checks ---------------------------------
 */

/* validate --near with the NULL-terminated extra words; must exit with
 * want. Returns all of standard output; free it. */
static char *run_near(const char *const *extra, int want) {
  const char *args[24] = {"validate", "--near"};
  size_t n = 2;
  for (; extra[n - 2] != NULL; n++) {
    cr_assert_lt(n, 23);
    args[n] = extra[n - 2];
  }
  args[n] = NULL;
  const int rc = run_argv(args);
  char *err = read_text("stderr.txt");
  cr_assert_eq(rc, want, "exit code %d, want %d:\n%s", rc, want, err);
  free(err);
  char *out = read_text("stdout.txt");
  cr_assert_not_null(out);
  return out;
}
#define RUN_NEAR(want, ...)                                                    \
  run_near((const char *const[]){__VA_ARGS__, NULL}, want)

/* The part of the report from the heading of check k to the next. */
static const char *check_section(const char *text, int k) {
  char heading[16];
  snprintf(heading, sizeof heading, "\ncheck %d: ", k);
  const char *at = strstr(text, heading);
  cr_assert_not_null(at, "no '%s' in:\n%s", heading + 1, text);
  return at;
}

static void text_has(const char *text, const char *want) {
  cr_assert_not_null(strstr(text, want), "report lacks '%s':\n%s", want, text);
}

/* Check 2's errors, which must meet its criterion against the reference:
 * p99 <= 1e-5, and the median of single-precision pair terms about 1e-7.
 * theta 0 is given; the order is the library's choice for it. */
static void assert_all_pairs_pass(const char *text, const char *n,
                                  const char *pairs, const char *method,
                                  const char *leaf) {
  const char *two = check_section(text, 2);
  double acc[3], pot[3];
  parse_row(two, "acceleration", acc);
  parse_row(two, "potential", pot);
  cr_assert_lt(acc[1], 1e-5, "check 2: acceleration p99 %g", acc[1]);
  cr_assert_lt(pot[1], 1e-5, "check 2: potential p99 %g", pot[1]);
  cr_assert_lt(acc[0], 1e-6, "check 2: acceleration median %g", acc[0]);
  cr_assert_gt(acc[2], 0, "a float sum with no error at all?");
  char want[128];
  snprintf(want, sizeof want, "all %s bodies with the full reference", n);
  text_has(two, want);
  snprintf(want, sizeof want, "%s interactions = N (N - 1) = %s", pairs, pairs);
  text_has(two, want);
  text_has(two, "every pair is near");
  char order[96];
  chosen(method, 1e-3, 0, order, sizeof order);
  snprintf(want, sizeof want, "%s (%s, leaf %s, max depth 21)", method, order,
           leaf);
  text_has(two, want);
  text_has(two, "result:          PASS");
}

/* Without the GPU check 1 cannot run: it says so, and check 2 alone
 * decides the exit status. */
Test(validate, near_on_cpu_skips_gpu_check) {
  char *text = RUN_NEAR(0, "--ic", "plummer", "--n", "3000", "--device", "cpu");
  text_has(text, "tilefmm validate --near: 3000 bodies");
  const char *one = check_section(text, 1);
  text_has(one, "near field, GPU against CPU over the same lists");
  text_has(one, "skipped:         --device cpu was asked for; this check "
                "needs a GPU");
  text_has(text, "check 2: every pair near (theta = 0) against all pairs");
  text_has(check_section(text, 2), "device:          cpu");
  assert_all_pairs_pass(text, "3000", "8997000", "fmm", "64");
  text_has(text, "summary:         check 1 skipped, check 2 PASS");
  free(text);
}

/* The same on a file, Barnes-Hut, a coarser leaf and a sample of the
 * reference. */
Test(validate, near_bh_from_file_with_sample) {
  make_plummer("p.txt", "1500", "2");
  char *text = RUN_NEAR(0, "--in", sp("p.txt"), "--method", "bh", "--leaf",
                        "16", "--device", "cpu", "--sample", "300");
  const char *two = check_section(text, 2);
  double acc[3];
  parse_row(two, "acceleration", acc);
  cr_assert_lt(acc[1], 1e-5, "check 2: acceleration p99 %g", acc[1]);
  char want[128];
  chosen("bh", 1e-3, 0, want + 4, sizeof want - 4);
  memcpy(want, "bh (", 4);
  strcat(want, ", leaf 16, max depth 21)");
  text_has(two, want);
  text_has(two, "2248500 interactions = N (N - 1)");
  text_has(two, "a sample of 300 of 1500 bodies");
  text_has(text, "check 2 PASS");
  free(text);
}

/* A pull the single-precision terms cannot resolve: the middle body of
 * three sits 1e-9 from the midpoint of its neighbours, so the unit pulls
 * on it cancel to 4e-9 (in the reference), below float rounding (6e-8).
 * Its relative error is of order 1: one body in three is past the 99th
 * percentile, so check 2 must fail, with exit status 3. */
Test(validate, near_fails_what_float_cannot_resolve) {
  write_text("p.txt", "-1 0 0 1\n1e-9 0 0 1\n1 0 0 1\n");
  char *text = RUN_NEAR(3, "--in", sp("p.txt"), "--device", "cpu");
  const char *two = check_section(text, 2);
  double acc[3];
  parse_row(two, "acceleration", acc);
  cr_assert_gt(acc[2], 0.1, "the middle body's error %g", acc[2]);
  text_has(two, "result:          FAIL");
  text_has(text, "summary:         check 1 skipped, check 2 FAIL");
  free(text);
}

/* Device auto without a GPU: the reason check 1 is skipped names it. */
Test(validate, near_auto_without_gpu) {
  if (tfmm_gpu_count() > 0)
    cr_skip_test("a GPU is present: near_gpu_against_cpu covers auto");
  char *text = RUN_NEAR(0, "--ic", "plummer", "--n", "500");
  const char *one = check_section(text, 1);
  text_has(one, tfmm_has_cuda() ? "no usable GPU was found"
                                : "this build has no CUDA backend");
  text_has(text, "summary:         check 1 skipped, check 2 PASS");
  free(text);
}

/* Both checks on the GPU machine, for one method: the GPU's sums over the
 * same lists within 1e-6 (p99) of the CPU's, and theta = 0 on the GPU
 * against the reference. */
static void assert_gpu_checks_pass(const char *method) {
  char *text =
      RUN_NEAR(0, "--ic", "plummer", "--n", "3000", "--method", method);
  const char *one = check_section(text, 1);
  double acc[3], pot[3];
  parse_row(one, "acceleration", acc);
  parse_row(one, "potential", pot);
  cr_assert_leq(acc[1], 1e-6, "%s, check 1: acceleration p99 %g", method,
                acc[1]);
  cr_assert_leq(pot[1], 1e-6, "%s, check 1: potential p99 %g", method, pot[1]);
  text_has(one, "device:          gpu");
  text_has(one, "against:         cpu");
  text_has(one, "the same on both devices");
  text_has(one, "all 3000 bodies");
  text_has(one, "result:          PASS");
  text_has(check_section(text, 2), "device:          gpu");
  assert_all_pairs_pass(text, "3000", "8997000", method, "64");
  text_has(text, "summary:         check 1 PASS, check 2 PASS");
  free(text);
}

Test(validate, near_gpu_against_cpu) {
  if (tfmm_gpu_count() == 0)
    cr_skip_test("no usable GPU (this build has %s): check 1 needs one",
                 tfmm_has_cuda() ? "CUDA but no device" : "no CUDA backend");
  assert_gpu_checks_pass("fmm");
  assert_gpu_checks_pass("bh");
  /* Leaves of one body have radius 0 and accept every other leaf: empty
   * lists, zero on both devices, which is no evidence of agreement. */
  char *text = RUN_NEAR(0, "--ic", "plummer", "--n", "500", "--leaf", "1");
  text_has(check_section(text, 1), "nothing to compare");
  text_has(text, "summary:         check 1 skipped, check 2 PASS");
  free(text);
}

/* ---- --ic and --near: failures -------------------------------------------
 */

/* validate with the NULL-terminated args after it must fail. */
static void expect_validate_failure(const char *const *args, int code,
                                    const char *needle, const char *needle2) {
  const char *all[24] = {"validate"};
  size_t n = 1;
  for (; args[n - 1] != NULL; n++) {
    cr_assert_lt(n, 23);
    all[n] = args[n - 1];
  }
  all[n] = NULL;
  unlink(sp("out.txt")); /* left by the last call's second run */
  expect_failure(all, code, needle, needle2);
}
#define EXPECT_VALIDATE_FAILURE(code, needle, needle2, ...)                    \
  expect_validate_failure((const char *const[]){__VA_ARGS__, NULL}, code,      \
                          needle, needle2)

Test(validate, near_with_all_pairs_methods) {
  EXPECT_VALIDATE_FAILURE(2, "--near", "--method direct", "--near", "--ic",
                          "plummer", "--n", "100", "--method", "direct");
  EXPECT_VALIDATE_FAILURE(2, "--near", "--method reference", "--ic", "plummer",
                          "--n", "100", "--method", "reference", "--near",
                          "--device", "cpu");
}

/* theta = 0 makes N (N - 1) interactions: refused past 200000 bodies,
 * before any body is made or computed. */
Test(validate, near_too_many_bodies) {
  EXPECT_VALIDATE_FAILURE(2, "--n 200001", "limited to 200000", "--near",
                          "--ic", "plummer", "--n", "200001");
  const size_t n = 200001;
  char *text = malloc(16 * n);
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += (size_t)sprintf(text + len, "%zu 0 0 1\n", i);
  write_file("big.txt", text, len);
  free(text);
  EXPECT_VALIDATE_FAILURE(2, "big.txt holds 200001 bodies", "limited to 200000",
                          "--near", "--in", sp("big.txt"), "--device", "cpu");
}

Test(validate, near_gpu_without_one_fails_cleanly) {
  if (tfmm_gpu_count() > 0)
    cr_skip_test("a GPU is present: near_gpu_against_cpu covers it");
  EXPECT_VALIDATE_FAILURE(1, "device gpu", "CUDA", "--near", "--ic", "plummer",
                          "--n", "100", "--device", "gpu");
}

Test(validate, near_switch_misused) {
  EXPECT_VALIDATE_FAILURE(2, "--near", "more than once", "--near", "--ic",
                          "plummer", "--n", "100", "--near");
  EXPECT_VALIDATE_FAILURE(2, "--near", "takes no value", "--near=1", "--ic",
                          "plummer", "--n", "100");
}

Test(validate, ic_flags_misused) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  EXPECT_VALIDATE_FAILURE(2, "--in and --ic", "one of the two", "--in",
                          sp("in.txt"), "--ic", "plummer", "--n", "10");
  EXPECT_VALIDATE_FAILURE(2, "--ic plummer", "missing --n", "--ic", "plummer");
  EXPECT_VALIDATE_FAILURE(2, "--ic", "invalid value 'cube'", "--ic", "cube",
                          "--n", "10");
  EXPECT_VALIDATE_FAILURE(2, "--n", "only with --ic", "--in", sp("in.txt"),
                          "--n", "10");
  EXPECT_VALIDATE_FAILURE(2, "--ic-seed", "only with --ic", "--in",
                          sp("in.txt"), "--ic-seed", "2");
  EXPECT_VALIDATE_FAILURE(2, "--n", "invalid value '0'", "--ic", "plummer",
                          "--n", "0");
}
