/* The measured error on the command line (docs/accuracy.md, "Measured
 * error"): forces prints what it measured and what the planner chose;
 * --verify fails with the library's message, the forces still written;
 * --measure and --error-sample are checked like every flag. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(measure_cli, .init = scratch_make, .fini = scratch_remove);

/* Clustered bodies: a merger, whose clumps strain a coarse setting. */
static void make_bodies(void) {
  char seed[32];
  snprintf(seed, sizeof seed, "%d", 1 + rand() % 100000);
  cr_assert_eq(
      RUN("ic", "merger", "--n", "2000", "--seed", seed, "--out", sp("in.txt")),
      0);
}

Test(measure_cli, forces_prints_the_measured_error_and_the_plan) {
  make_bodies();
  cr_assert_eq(RUN("forces", "--in", sp("in.txt"), "--out", sp("out.txt"),
                   "--device", "cpu"),
               0);
  assert_stderr_has("  measured error: median ");
  assert_stderr_has(", p99 ");
  /* 2,000 bodies: the planner measured every body (up to 4,096). */
  assert_stderr_has("(every body measured), max ");
  assert_stderr_has(" bodies sampled, ");
  assert_stderr_has("  plan: theta ");
  assert_stderr_has("meets 0.001");
  /* Off: theta and order from the calibration, nothing measured. */
  cr_assert_eq(RUN("forces", "--in", sp("in.txt"), "--out", sp("off.txt"),
                   "--device", "cpu", "--measure", "off"),
               0);
  char *err = read_text("stderr.txt");
  cr_assert_null(strstr(err, "measured error"), "%s", err);
  cr_assert_not_null(strstr(err, "from the calibration (measure off)"), "%s",
                     err);
  free(err);
}

Test(measure_cli, verify_fails_naming_the_p99_and_writes_the_forces) {
  make_bodies();
  const int rc = RUN("forces", "--in", sp("in.txt"), "--out", sp("out.txt"),
                     "--device", "cpu", "--verify", "--theta", "0.8", "--order",
                     "1", "--accuracy", "1e-4");
  cr_assert_eq(rc, 1);
  assert_stderr_has("verify: the measured 99th percentile of the relative "
                    "acceleration error is ");
  assert_stderr_has("above the target 0.0001, at theta 0.8, order 1");
  assert_stderr_has("  measured error: median ");
  table *t = read_table("out.txt", 4);
  cr_assert_eq(t->rows, 2000);
  free(t);
  /* A setting that meets the target passes. */
  cr_assert_eq(RUN("forces", "--in", sp("in.txt"), "--out", sp("ok.txt"),
                   "--device", "cpu", "--verify", "--accuracy", "1e-2",
                   "--error-sample", "300"),
               0);
  assert_stderr_has(" bodies sampled, ");
}

/* forces with a valid input, --out and the flags given: a usage error
 * naming what is wrong (expect_failure: out.txt never touched). */
static void expect_usage(const char *flag, const char *value, const char *more,
                         const char *needle, const char *needle2) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const char *args[] = {"forces", "--in", sp("in.txt"), "--out", sp("out.txt"),
                        flag,     value,  more,         NULL};
  expect_failure(args, 2, needle, needle2);
}

Test(measure_cli, measure_word_is_checked) {
  expect_usage("--measure", "sometimes", NULL, "--measure",
               "auto, always or off");
}

Test(measure_cli, error_sample_is_checked) {
  expect_usage("--error-sample", "-1", NULL, "--error-sample", "invalid value");
}

Test(measure_cli, verify_needs_a_measurement) {
  expect_usage("--measure", "off", "--verify", "verify = 1 with measure off",
               NULL);
}
