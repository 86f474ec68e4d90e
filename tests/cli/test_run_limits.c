/* tilefmm run settings that would drop its outputs without a word (issue
 * 29): an output interval so short that the count of intervals overflows,
 * an end at or before the start, a start time so large that the step does
 * not move the clock, and --types where no file is read. Each is refused
 * before anything is written: a usage error naming the option and its
 * value, and no run directory. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(run_limits, .init = scratch_make, .fini = scratch_remove);

/* A refused run: exit 2, the messages, and no run directory made. */
static void expect_refused(const char *const *args, const char *needle,
                           const char *needle2) {
  const int rc = run_argv(args);
  char *err = read_text("stderr.txt");
  cr_expect_eq(rc, 2, "exit %d, want 2:\n%s", rc, err);
  free(err);
  assert_stderr_has(needle);
  if (needle2 != NULL)
    assert_stderr_has(needle2);
  cr_expect(!exists("g"), "a refused run made its directory");
}

/* ic.hdf5: 100 Plummer bodies whose Header Time is t. */
static void snapshot_at(double t) {
  cr_assert_eq(RUN("ic", "plummer", "--n", "100", "--out", sp("ic.hdf5")), 0);
  snapshot s;
  cr_assert(snapshot_read(sp("ic.hdf5"), &s));
  s.time = t;
  cr_assert(snapshot_write(sp("ic.hdf5"), &s));
  snapshot_free(&s);
}

/* 1e-300: 0.0234375 / 1e-300 intervals overflow an int64, and no
 * snapshot but the first, no row but two, were written. */
Test(run_limits, output_intervals_that_overflow_are_refused) {
  expect_refused((const char *const[]){"run", "--n", "100", "--steps", "3",
                                       "--snapshot-dt", "1e-300", "--out",
                                       sp("g"), NULL},
                 "--snapshot-dt 1e-300", "--snapshot-every 1");
  expect_refused((const char *const[]){"run", "--n", "100", "--steps", "3",
                                       "--stats-dt", "1e-300", "--out", sp("g"),
                                       NULL},
                 "--stats-dt 1e-300", "--stats-every 1");
  /* Shorter than a step, but countable: an output at every step, each
   * numbered by the multiple of 1e-6 it reached (0.0078125 / 1e-6). */
  cr_assert_eq(RUN("run", "--n", "100", "--steps", "3", "--snapshot-dt", "1e-6",
                   "--out", sp("h"), "--progress", "off"),
               0);
  cr_expect(exists("h/snapshot_7812.hdf5"), "numbered by the multiple");
  cr_expect(exists("h/snapshot_23437.hdf5"));
}

/* The run starts at the snapshot's time 5: an end at 3, or at 5, takes
 * no step, which was done silently. */
Test(run_limits, an_end_not_after_the_start_is_refused) {
  snapshot_at(5.0);
  expect_refused((const char *const[]){"run", "--ic", sp("ic.hdf5"), "--t-end",
                                       "3", "--out", sp("g"), NULL},
                 "--t-end 3", "start time 5");
  expect_refused((const char *const[]){"run", "--ic", sp("ic.hdf5"), "--t-end",
                                       "5", "--out", sp("g"), NULL},
                 "--t-end 5", "start time 5");
  cr_assert_eq(RUN("run", "--ic", sp("ic.hdf5"), "--t-end", "5.01", "--out",
                   sp("h"), "--progress", "off"),
               0);
}

/* At time 1e300 a step of 0.0078125 leaves the clock where it was. */
Test(run_limits, a_clock_that_cannot_advance_is_refused) {
  snapshot_at(1e300);
  expect_refused((const char *const[]){"run", "--ic", sp("ic.hdf5"), "--steps",
                                       "2", "--out", sp("g"), NULL},
                 "start time 1e+300", "--dt 0.0078125");
  snapshot_at(1e16);
  expect_refused((const char *const[]){"run", "--ic", sp("ic.hdf5"), "--steps",
                                       "2", "--dt", "0.5", "--out", sp("g"),
                                       NULL},
                 "start time 1e+16", "--dt 0.5");
}

/* --types chooses among a file's particle types: with a model, which has
 * none, it was ignored. */
Test(run_limits, types_with_a_model_is_refused) {
  expect_refused((const char *const[]){"run", "--ic", "plummer", "--n", "100",
                                       "--types", "1", "--out", sp("g"), NULL},
                 "--types 1", "--ic plummer");
  expect_refused((const char *const[]){"run", "--n", "100", "--types", "all",
                                       "--out", sp("g"), NULL},
                 "--types all", "a model");
  /* ic, which writes a model, has no --types at all. */
  cr_expect_eq(RUN("ic", "plummer", "--n", "10", "--types", "1"), 2);
  assert_stderr_has("unknown flag '--types'");
}

/* --out - is standard output for the other commands: a run, which writes
 * a directory of files, made a directory named '-'. */
Test(run_limits, out_dash_is_refused) {
  const int rc = RUN_PIPED(NULL, "run", "--n", "100", "--steps", "1", "--out",
                           "-", "--progress", "off");
  const int made = exists("-");
  if (made) { /* the scratch directory's sweep takes files alone */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", sp("-"));
    cr_expect_eq(system(cmd), 0);
  }
  cr_expect(!made, "a directory named '-' was made");
  cr_expect_eq(rc, 2, "exit %d", rc);
  assert_stderr_has("--out");
  assert_stderr_has("standard output");
}
