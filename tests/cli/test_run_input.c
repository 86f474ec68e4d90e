/* tilefmm run on bad input: every case fails with a message naming the
 * cause and a non-zero exit, and leaves earlier output as it was. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

TestSuite(run_input, .init = scratch_make, .fini = scratch_remove);

static int same_bytes(const char *name, const char *bytes, size_t len) {
  size_t len2;
  char *b = (char *)read_bytes(sp(name), &len2);
  const int same = len2 == len && memcmp(b, bytes, len) == 0;
  free(b);
  return same;
}

/* A finished small run in directory dir. */
static void small_run(const char *dir, const char *steps) {
  cr_assert_eq(RUN("run", "--n", "800", "--steps", steps, "--out", sp(dir),
                   "--progress", "off"),
               0);
}

Test(run_input, bad_flags_are_usage_errors) {
  cr_expect_eq(RUN("run", "--dt", "0", "--out", sp("o")), 2);
  assert_stderr_has("--dt");
  cr_expect_eq(RUN("run", "--dt", "-0.1", "--out", sp("o")), 2);
  assert_stderr_has("a number > 0");
  cr_expect_eq(RUN("run", "--steps", "3", "--t-end", "1", "--out", sp("o")), 2);
  assert_stderr_has("--t-end");
  cr_expect_eq(RUN("run", "--n", "0", "--out", sp("o")), 2);
  assert_stderr_has("--n");
  cr_expect_eq(RUN("run", "--theta", "2", "--out", sp("o")), 2);
  assert_stderr_has("--theta");
  cr_expect_eq(RUN("run", "--progress", "maybe", "--out", sp("o")), 2);
  assert_stderr_has("--progress");
  cr_expect(!exists("o"), "nothing is written after a usage error");
}

Test(run_input, unknown_initial_conditions) {
  cr_expect_eq(RUN("run", "--ic", "plumer", "--out", sp("o")), 1);
  assert_stderr_has("plumer");
  assert_stderr_has("neither a model");
}

Test(run_input, text_initial_conditions_with_nan_or_bad_mass) {
  write_text("nan.txt", "0 0 0 1\n1 0 0 1\n0 nan 0 1\n");
  cr_expect_eq(RUN("run", "--ic", sp("nan.txt"), "--out", sp("o")), 1);
  assert_stderr_has("nan.txt:3");
  write_text("inf.txt", "0 0 0 1 0 0 0\n1 0 0 1 inf 0 0\n");
  cr_expect_eq(RUN("run", "--ic", sp("inf.txt"), "--out", sp("o")), 1);
  assert_stderr_has("inf.txt:2");
  write_text("m.txt", "0 0 0 1\n1 0 0 0\n");
  cr_expect_eq(RUN("run", "--ic", sp("m.txt"), "--out", sp("o")), 1);
  assert_stderr_has("m.txt:2");
  assert_stderr_has("mass");
  write_text("n.txt", "0 0 0 1\n1 0 0 1\n");
  cr_expect_eq(RUN("run", "--ic", sp("n.txt"), "--n", "3", "--out", sp("o")),
               1);
  assert_stderr_has("--n 3");
}

Test(run_input, text_initial_conditions_run) {
  write_text("two.txt", "-0.5 0 0 0.5 0 -0.5 0\n0.5 0 0 0.5 0 0.5 0\n");
  cr_expect_eq(RUN("run", "--ic", sp("two.txt"), "--method", "reference",
                   "--eps", "0", "--steps", "4", "--out", sp("o"), "--progress",
                   "off"),
               0);
  cr_expect(exists("o/checkpoint.hdf5"));
}

Test(run_input, malformed_snapshots) {
  small_run("a", "1");
  /* A truncated copy of a snapshot. */
  size_t len;
  char *whole = (char *)read_bytes(sp("a/snapshot_0000.hdf5"), &len);
  cr_assert_gt(len, 3000);
  write_file("cut.hdf5", whole, 3000);
  free(whole);
  cr_expect_eq(RUN("run", "--ic", sp("cut.hdf5"), "--out", sp("o")), 1);
  assert_stderr_has("cut.hdf5");
  cr_expect_eq(RUN("run", "--restart", sp("cut.hdf5"), "--out", sp("o")), 1);
  assert_stderr_has("cut.hdf5");
  write_text("text.hdf5", "0 0 0 1\n");
  cr_expect_eq(RUN("run", "--restart", sp("text.hdf5"), "--out", sp("o")), 1);
  assert_stderr_has("text.hdf5");
  /* A snapshot is not a checkpoint. */
  cr_expect_eq(
      RUN("run", "--restart", sp("a/snapshot_0000.hdf5"), "--out", sp("o")), 1);
  assert_stderr_has("not a checkpoint");
}

Test(run_input, restart_from_another_configuration) {
  small_run("a", "2");
  cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--theta",
                   "0.7", "--steps", "4"),
               2);
  assert_stderr_has("Gravity:theta");
  cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--dt", "0.01",
                   "--steps", "4"),
               2);
  assert_stderr_has("TimeIntegration:dt");
  cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--n", "900",
                   "--steps", "4"),
               2);
  assert_stderr_has("InitialConditions:n");
  write_text("p.yml", "Gravity:\n  order: 6\n");
  cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--params",
                   sp("p.yml"), "--steps", "4"),
               2);
  assert_stderr_has("Gravity:order");
  /* The physics and the accuracy are locked as the rest. */
  const char *locked[][3] = {{"--softening", "plummer", "Gravity:softening"},
                             {"--accuracy", "1e-4", "Gravity:accuracy"},
                             {"--precision", "double", "Gravity:precision"},
                             {"--mac", "mass", "Gravity:mac"},
                             {"--theta", "0.3", "Gravity:theta"},
                             {"--order", "8", "Gravity:order"}};
  for (size_t k = 0; k < sizeof locked / sizeof locked[0]; k++) {
    cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), locked[k][0],
                     locked[k][1], "--steps", "4"),
                 2, "%s %s", locked[k][0], locked[k][1]);
    assert_stderr_has(locked[k][2]);
  }
  write_text("s.yml", "Gravity:\n  softening: plummer\n");
  cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--params",
                   sp("s.yml"), "--steps", "4"),
               2);
  assert_stderr_has("Gravity:softening");
  /* The same values given again are no conflict (theta and order auto:
   * chosen from the same accuracy); an end before the checkpoint's step
   * is. */
  cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--theta",
                   "auto", "--order", "auto", "--softening", "spline",
                   "--accuracy", "0.001", "--steps", "3", "--progress", "off"),
               0);
  cr_expect_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--steps", "1"),
               2);
  assert_stderr_has("past the end");
}

/* The new Gravity keys with bad values: each names FILE:LINE and the
 * key; the same values as flags name the flag. */
Test(run_input, bad_physics_parameters) {
  const char *bad[][3] = {{"softening", "gauss", "plummer or spline"},
                          {"accuracy", "0.5", "(0, 0.1]"},
                          {"accuracy", "-1", "(0, 0.1]"},
                          {"precision", "half", "single or double"},
                          {"mac", "size", "expected geometric"},
                          {"theta", "-1", "auto or a number in [0, 1]"},
                          {"order", "-1", "auto or an integer in [0, 20]"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char text[128], want[64];
    snprintf(text, sizeof text, "Gravity:\n  eps: 0.01\n  %s: %s\n", bad[k][0],
             bad[k][1]);
    write_text("b.yml", text);
    cr_expect_eq(RUN("run", "--params", sp("b.yml"), "--out", sp("o")), 2,
                 "%s: %s", bad[k][0], bad[k][1]);
    snprintf(want, sizeof want, "b.yml:3: Gravity:%s", bad[k][0]);
    assert_stderr_has(want);
    assert_stderr_has(bad[k][2]);
    char flag[32];
    snprintf(flag, sizeof flag, "--%s", bad[k][0]);
    cr_expect_eq(RUN("run", flag, bad[k][1], "--out", sp("o")), 2);
    assert_stderr_has(flag);
    assert_stderr_has(bad[k][2]);
  }
  cr_expect(!exists("o"), "nothing is written after a usage error");
}

Test(run_input, parameter_file_errors_name_the_line) {
  write_text("k.yml", "Gravity:\n  theta: 0.5\n  thetta: 0.4\n");
  cr_expect_eq(RUN("run", "--params", sp("k.yml"), "--out", sp("o")), 2);
  assert_stderr_has("k.yml:3");
  assert_stderr_has("thetta");
  write_text("r.yml", "TimeIntegration:\n  dt: -1\n");
  cr_expect_eq(RUN("run", "--params", sp("r.yml"), "--out", sp("o")), 2);
  assert_stderr_has("r.yml:2");
  assert_stderr_has("TimeIntegration:dt");
  cr_expect_eq(RUN("run", "--params", sp("none.yml"), "--out", sp("o")), 2);
  assert_stderr_has("none.yml");
}

Test(run_input, out_is_not_a_directory) {
  write_text("file", "x\n");
  cr_expect_eq(RUN("run", "--n", "100", "--steps", "1", "--out", sp("file")),
               1);
  assert_stderr_has("not a directory");
}

/* A full disk (emulated by a file-size limit, with SIGXFSZ at its default
 * as a shell leaves it: the tool ignores it, so that write fails with
 * EFBIG) stops the run with a message; the earlier snapshot and checkpoint
 * stay whole and no temporary is left. A restart, as a fresh run into a
 * directory holding a run is refused. */
Test(run_input, full_disk_leaves_earlier_output_intact) {
  small_run("a", "1");
  size_t snap_len, check_len;
  char *snap = (char *)read_bytes(sp("a/snapshot_0000.hdf5"), &snap_len);
  char *check = (char *)read_bytes(sp("a/checkpoint.hdf5"), &check_len);
  cr_assert_gt(snap_len, 40000, "the limit must stop the snapshot");
  signal(SIGXFSZ, SIG_DFL);
  /* The soft limit only, so that it can be raised back. */
  struct rlimit was, lim;
  cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
  lim = (struct rlimit){40000, was.rlim_max};
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
  const int code = RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--steps",
                       "2", "--snapshot-every", "1", "--progress", "off");
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &was), 0);
  cr_expect_eq(code, 1, "exit %d: %s", code, read_text("stderr.txt"));
  assert_stderr_has("snapshot_0002.hdf5");
  assert_stderr_has("File too large");
  cr_expect(!exists("a/snapshot_0002.hdf5"));
  cr_expect(same_bytes("a/snapshot_0000.hdf5", snap, snap_len),
            "the snapshot was damaged");
  cr_expect(same_bytes("a/checkpoint.hdf5", check, check_len),
            "the checkpoint was damaged");
  free(snap);
  free(check);
  assert_no_temporaries();
}
