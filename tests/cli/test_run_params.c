/* tilefmm run's parameters as a SWIFT user gives them: -P Section:key:value
 * overrides, SWIFT's key names, unused_parameters.yml, and every error of
 * a parameter file reported in one run. Small runs (200 bodies, 1 step). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(run_params, .init = scratch_make, .fini = scratch_remove);

#define SMALL "--n", "200", "--steps", "1", "--progress", "off"

/* Asserts that file name (in the scratch directory) holds text. */
static void assert_file_has(const char *name, const char *text) {
  char *s = read_text(name);
  cr_assert_not_null(s, "%s missing", name);
  cr_expect(strstr(s, text) != NULL, "%s lacks '%s':\n%s", name, text, s);
  free(s);
}

static void assert_file_lacks(const char *name, const char *text) {
  char *s = read_text(name);
  cr_assert_not_null(s, "%s missing", name);
  cr_expect(strstr(s, text) == NULL, "%s holds '%s':\n%s", name, text, s);
  free(s);
}

/* -P overrides the file; a flag overrides -P. What lost is in
 * unused_parameters.yml with the winner named. */
Test(run_params, override_precedence) {
  write_text("p.yml", "TimeIntegration:\n  dt: 0.25\nGravity:\n  eps: 0.02\n");
  cr_assert_eq(RUN("run", "--params", sp("p.yml"), "-P",
                   "TimeIntegration:dt:0.125", "--out", sp("a"), SMALL),
               0);
  assert_file_has("a/used_parameters.yml", "  dt: 0.125\n");
  assert_file_has("a/used_parameters.yml", "  eps: 0.02\n");
  assert_file_has("a/unused_parameters.yml",
                  "# TimeIntegration:dt: 0.25, overridden by -P (");
  assert_file_has("a/unused_parameters.yml", "\n{}\n");
  cr_assert_eq(RUN("run", "--params", sp("p.yml"), "--param=Gravity:eps:0.03",
                   "-P", "TimeIntegration:dt:0.125", "--dt", "0.0625", "--out",
                   sp("b"), SMALL),
               0);
  assert_file_has("b/used_parameters.yml", "  dt: 0.0625\n");
  assert_file_has("b/used_parameters.yml", "  eps: 0.029999999999999999\n");
  assert_file_has("b/unused_parameters.yml",
                  "# TimeIntegration:dt: 0.125, overridden by --dt (-P)");
  assert_file_has("b/unused_parameters.yml",
                  "# TimeIntegration:dt: 0.25, overridden by --dt (");
  assert_file_has("b/unused_parameters.yml",
                  "# Gravity:eps: 0.02, overridden by -P (");
  /* -P without a file */
  cr_assert_eq(RUN("run", "-P", "Gravity:theta:0.5", "--out", sp("c"), SMALL),
               0);
  assert_file_has("c/used_parameters.yml", "  theta: 0.5\n");
  assert_file_has("c/unused_parameters.yml", "\n{}\n");
}

/* A bad -P is a usage error naming it; all are reported at once. */
Test(run_params, bad_overrides) {
  cr_expect_eq(RUN("run", "-P", "Gravity:thetta:0.5", "-P", "Gravity:theta",
                   "-P", "Gravitty:theta:1", "--out", sp("o"), SMALL),
               2);
  assert_stderr_has("-P: unknown key 'Gravity:thetta' (Gravity holds: G, eps");
  assert_stderr_has("-P 'Gravity:theta': expected Section:key:value");
  assert_stderr_has("-P: unknown section 'Gravitty'");
  cr_expect_eq(RUN("run", "-P", "Gravity:theta:abc", "-P",
                   "TimeIntegration:dt:-1", "--out", sp("o"), SMALL),
               2);
  assert_stderr_has("-P: Gravity:theta: invalid value 'abc'");
  assert_stderr_has("-P: TimeIntegration:dt: invalid value '-1'");
  cr_expect_eq(RUN("run", "-P", "Gravity:eps:0.1", "-P", "Gravity:eps:0.2",
                   "--out", sp("o"), SMALL),
               2);
  assert_stderr_has("Gravity:eps given more than once");
  cr_expect_eq(RUN("run", "--out", sp("o"), SMALL, "-P"), 2);
  assert_stderr_has("-P: missing value");
  cr_expect(!exists("o"), "nothing is written after a usage error");
}

/* SWIFT's names set tilefmm's settings; the canonical lists keep
 * tilefmm's names. */
Test(run_params, swift_names) {
  write_text("s.yml", "TimeIntegration:\n  time_begin: 0\n"
                      "  time_end: 0.015625\n"
                      "Gravity:\n  comoving_DM_softening: 0.02\n"
                      "  theta_cr: 0.5\n");
  cr_assert_eq(RUN("run", "--params", sp("s.yml"), "--n", "200", "--progress",
                   "off", "--out", sp("a")),
               0);
  assert_file_has("a/used_parameters.yml", "  t_end: 0.015625\n");
  assert_file_has("a/used_parameters.yml", "  eps: 0.02\n");
  assert_file_has("a/used_parameters.yml", "  theta: 0.5\n");
  assert_file_lacks("a/used_parameters.yml", "time_end");
  assert_file_has("a/unused_parameters.yml", "\n{}\n");
  /* The initial conditions by SWIFT's file_name; a model's seed is then
   * unused (n is checked against the file's bodies), and so is the GPU's
   * tile on the CPU. */
  write_text("ic.txt", "0 0 0 0.5 0 0.1 0\n1 0 0 0.5 0 -0.1 0\n");
  write_text("f.yml", "InitialConditions:\n  file_name: ic.txt\n  n: 2\n"
                      "  seed: 3\nGPU:\n  tile: 64\n");
  char ic[512];
  snprintf(ic, sizeof ic, "InitialConditions:file_name:%s", sp("ic.txt"));
  cr_assert_eq(RUN("run", "--params", sp("f.yml"), "-P", ic, "--device", "cpu",
                   "--steps", "1", "--progress", "off", "--out", sp("f")),
               0);
  assert_file_has("f/unused_parameters.yml",
                  "# InitialConditions:file_name: ic.txt, overridden by -P (");
  assert_file_has("f/unused_parameters.yml",
                  "InitialConditions:\n  seed: 3  # the initial conditions "
                  "are a file");
  assert_file_lacks("f/unused_parameters.yml", "n: 2");
  assert_file_has("f/unused_parameters.yml",
                  "GPU:\n  tile: 64  # the forces run on the CPU");
  /* Used settings are not listed. */
  cr_assert_eq(RUN("run", "-P", "Gravity:theta:0.5", "--method", "direct",
                   "--out", sp("d"), SMALL),
               0);
  assert_file_has("d/unused_parameters.yml",
                  "Gravity:\n  theta: 0.5  # the method has no tree (-P)");
  /* A section's unused keys under one heading, whatever their order. */
  write_text("g.yml", "Gravity:\n  eps: 0.02\n  theta_cr: 0.5\n"
                      "GPU:\n  tile: 64\n");
  cr_assert_eq(RUN("run", "--params", sp("g.yml"), "-P", "Gravity:order:4",
                   "--method", "direct", "--device", "cpu", "--out", sp("g"),
                   SMALL),
               0);
  char *g = read_text("g/unused_parameters.yml"), want[2048];
  cr_assert_not_null(g);
  snprintf(want, sizeof want,
           "# The parameters given to this run (its parameter file and -P) "
           "that it did not use,\n# each with the reason.\nGravity:\n"
           "  theta_cr: 0.5  # the method has no tree (%s:3)\n"
           "  order: 4  # the method has no tree (-P)\nGPU:\n"
           "  tile: 64  # the forces run on the CPU (%s:5)\n",
           sp("g.yml"), sp("g.yml"));
  cr_expect_str_eq(g, want);
  /* It is a parameter file, as SWIFT's is. */
  cr_expect_eq(RUN("run", "--params", sp("g/unused_parameters.yml"), "--method",
                   "direct", "--device", "cpu", "--out", sp("h"), SMALL),
               0);
  assert_file_has("h/used_parameters.yml", "  order: 4\n");
  free(g);
}

/* An alias and its tilefmm key both given: an error naming both. A
 * time_begin other than the initial conditions' time is refused. */
Test(run_params, swift_names_refused) {
  write_text("c.yml", "Gravity:\n  eps: 0.01\n  max_physical_DM_softening: "
                      "0.02\n");
  cr_expect_eq(RUN("run", "--params", sp("c.yml"), "--out", sp("o"), SMALL), 2);
  assert_stderr_has("c.yml:2: Gravity:eps and ");
  assert_stderr_has(
      "c.yml:3: Gravity:max_physical_DM_softening both set --eps");
  write_text("t.yml", "TimeIntegration:\n  time_begin: 0.5\n");
  cr_expect_eq(RUN("run", "--params", sp("t.yml"), "--out", sp("o"), SMALL), 2);
  assert_stderr_has("TimeIntegration:time_begin 0.5: a run starts at its "
                    "initial conditions' time, here 0");
  cr_expect(!exists("o/snapshot_0000.hdf5"), "no run after a usage error");
}

/* SWIFT's keys that tilefmm lacks are refused with what to do instead. */
Test(run_params, swift_keys_without_a_counterpart) {
  write_text("w.yml", "Snapshots:\n  basename: out\n  delta_time: 0.5\n"
                      "Restarts:\n  enable: 1\n");
  cr_expect_eq(RUN("run", "--params", sp("w.yml"), "-P",
                   "Gravity:mesh_side_length:64", "--out", sp("o"), SMALL),
               2);
  assert_stderr_has("w.yml:2: Snapshots:basename: SWIFT's key: tilefmm names "
                    "its snapshots DIR/snapshot_NNNN.hdf5");
  assert_stderr_has("w.yml:5: Restarts:enable: SWIFT's key: tilefmm always "
                    "writes DIR/checkpoint.hdf5");
  assert_stderr_has("-P: Gravity:mesh_side_length: SWIFT's key: tilefmm's "
                    "runs are not periodic");
  cr_expect(!exists("o"), "nothing is written after a usage error");
}

/* Every error of a parameter file in one run, each with its line. */
Test(run_params, every_error_at_once) {
  write_text("e.yml", "Gravity:\n  thetta: 0.5\n  eps: abc\n  eps: 0.1\n"
                      "TimeIntegration:\n  dt: -1\nOutputs:\n  x: 1\n");
  cr_expect_eq(RUN("run", "--params", sp("e.yml"), "--out", sp("o"), SMALL), 2);
  assert_stderr_has("e.yml:2: unknown key 'Gravity:thetta'");
  assert_stderr_has("e.yml:4: Gravity:eps: repeated key (first at line 3)");
  assert_stderr_has("e.yml:7: unknown section 'Outputs'");
  assert_stderr_has("e.yml:3: Gravity:eps: invalid value 'abc'");
  assert_stderr_has("e.yml:6: TimeIntegration:dt: invalid value '-1'");
  cr_expect(!exists("o"), "nothing is written after a usage error");
}
