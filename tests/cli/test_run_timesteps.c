/* tilefmm run with individual time steps (--eta): a restart in the middle
 * of the run that is bit for bit the run straight through, outputs at the
 * synchronisation points, outputs by time (--snapshot-dt, --stats-dt), the
 * warning for a fixed step longer than the criterion, and bad settings
 * refused. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "read_snap.h"
#include "snapshot.h"
#include "tilefmm.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(run_timesteps, .init = scratch_make, .fini = scratch_remove);

static void assert_same_state(const snapshot *a, const snapshot *b) {
  cr_assert_eq(a->n, b->n);
  cr_assert_eq(a->time, b->time, "times %.17g and %.17g", a->time, b->time);
  const size_t n = a->n;
  cr_assert(memcmp(a->pos, b->pos, 3 * n * sizeof(double)) == 0, "positions");
  cr_assert(memcmp(a->vel, b->vel, 3 * n * sizeof(double)) == 0, "velocities");
  cr_assert(memcmp(a->acc, b->acc, 3 * n * sizeof(double)) == 0,
            "accelerations");
  cr_assert(memcmp(a->pot, b->pot, n * sizeof(double)) == 0, "potentials");
  cr_assert_not_null(a->bins);
  cr_assert_not_null(b->bins);
  cr_assert(memcmp(a->bins, b->bins, n) == 0, "bins");
}

/* Hernquist bodies in several bins; a checkpoint at step 3 continued to
 * step 6 equals the run straight to 6, and its bins and clock are in the
 * checkpoint. */
Test(run_timesteps, restart_with_individual_steps_is_bit_identical) {
  cr_assert_eq(RUN("run", "--ic", "hernquist", "--n", "1500", "--eta", "0.025",
                   "--dt", "0.0625", "--progress", "off", "--steps", "6",
                   "--out", sp("a")),
               0);
  assert_stderr_has("individual steps (eta 0.025)");
  assert_stdout_has("individual steps: ");
  assert_stdout_has("updates per body per step");
  cr_assert_eq(RUN("run", "--ic", "hernquist", "--n", "1500", "--eta", "0.025",
                   "--dt", "0.0625", "--progress", "off", "--steps", "3",
                   "--out", sp("b")),
               0);
  cr_assert_eq(RUN("run", "--restart", sp("b/checkpoint.hdf5"), "--steps", "6",
                   "--progress", "off"),
               0, "restart failed");
  snapshot a = read_snap("a/checkpoint.hdf5");
  snapshot b = read_snap("b/checkpoint.hdf5");
  assert_same_state(&a, &b);
  cr_expect_eq(a.time, 6 * 0.0625);
  int used[64] = {0};
  for (size_t i = 0; i < a.n; i++)
    used[a.bins[i]] = 1;
  int bins = 0;
  for (int k = 0; k < 64; k++)
    bins += used[k];
  cr_expect_geq(bins, 3, "the bodies use %d bins", bins);
  cr_expect_not_null(snapshot_attr_find(a.state, a.nstate, "ticks"));
  snapshot_free(&a);
  snapshot_free(&b);
}

/* --snapshot-dt 0.05 with steps of 1/32: snapshots at the first step at
 * or after each multiple (0.0625, 0.125, 0.15625, ...), numbered by the
 * multiple; --stats-dt likewise. */
Test(run_timesteps, outputs_by_time) {
  cr_assert_eq(RUN("run", "--n", "800", "--dt", "0.03125", "--steps", "8",
                   "--snapshot-dt", "0.05", "--stats-dt", "0.1", "--out",
                   sp("c"), "--progress", "off"),
               0);
  const double want[6] = {0, 0.0625, 0.125, 0.15625, 0.21875, 0.25};
  for (int k = 0; k < 6; k++) {
    char name[64];
    snprintf(name, sizeof name, "c/snapshot_%04d.hdf5", k);
    snapshot s = read_snap(name);
    cr_expect_eq(s.time, want[k], "%s at %.17g, not %g", name, s.time, want[k]);
    snapshot_free(&s);
  }
  cr_expect(!exists("c/snapshot_0006.hdf5"));
  char *csv = read_text("c/statistics.csv");
  cr_assert_not_null(csv);
  int rows = 0;
  for (char *p = strchr(csv, '\n'); p != NULL && p[1] != '\0';
       p = strchr(p + 1, '\n'))
    rows++;
  free(csv);
  cr_expect_eq(rows, 4, "rows at steps 0, 4 (0.125), 7 (0.21875), 8: %d", rows);
}

/* A fixed step far longer than the criterion draws a warning naming the
 * remedy; the default main job's does not. */
Test(run_timesteps, long_fixed_step_is_warned) {
  cr_assert_eq(RUN("run", "--ic", "hernquist", "--n", "1000", "--dt", "0.25",
                   "--steps", "1", "--out", sp("e"), "--progress", "off"),
               0);
  assert_stderr_has("warning: the step dt 0.25 is longer than");
  assert_stderr_has("--eta 0.025");
  cr_assert_eq(RUN("run", "--n", "1000", "--steps", "1", "--out", sp("f"),
                   "--progress", "off"),
               0);
  char *err = read_text("stderr.txt");
  cr_assert_not_null(err);
  cr_expect(strstr(err, "warning") == NULL, "%s", err);
  free(err);
}

/* A refused setting: exit 2, the message, and no run directory made. */
static void expect_refused(const char *const *args, const char *needle) {
  cr_expect_eq(run_argv(args), 2);
  assert_stderr_has(needle);
  cr_expect(!exists("g"), "a refused run made its directory");
}

Test(run_timesteps, bad_settings_are_refused) {
  expect_refused((const char *const[]){"run", "--n", "100", "--dt-max", "0.1",
                                       "--out", sp("g"), NULL},
                 "need individual time steps (--eta)");
  expect_refused((const char *const[]){"run", "--n", "100", "--eta", "0.02",
                                       "--eps", "0", "--out", sp("g"), NULL},
                 "eps > 0");
  expect_refused((const char *const[]){"run", "--n", "100", "--eta", "0.02",
                                       "--dt-min", "1", "--dt", "0.01", "--out",
                                       sp("g"), NULL},
                 "dt_min = 1 is longer than dt_max = 0.01");
  expect_refused((const char *const[]){"run", "--n", "100", "--eta", "-1",
                                       "--out", sp("g"), NULL},
                 "--eta");
  expect_refused((const char *const[]){"run", "--n", "100", "--snapshot-dt",
                                       "0.1", "--snapshot-every", "2", "--out",
                                       sp("g"), NULL},
                 "--snapshot-every and --snapshot-dt");
}
