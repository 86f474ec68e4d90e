/* tilefmm run: a short simulation's outputs, its energy, a restart that is
 * bit for bit the run straight through, parameter files, and --t-end. The
 * runs use the default device, so that on a GPU machine the near field of
 * the restart test runs there. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "read_snap.h"
#include "snapshot.h"
#include "tilefmm.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

TestSuite(run, .init = scratch_make, .fini = scratch_remove);

/* snapshot.c reports through the tool's cli_error. */
void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("test_run: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* Every particle array of a and b has the same bits. */
static void assert_same_bodies(const snapshot *a, const snapshot *b) {
  cr_assert_eq(a->n, b->n);
  cr_assert_eq(a->time, b->time, "times %.17g and %.17g", a->time, b->time);
  const size_t n = a->n;
  cr_assert(memcmp(a->pos, b->pos, 3 * n * sizeof(double)) == 0, "positions");
  cr_assert(memcmp(a->vel, b->vel, 3 * n * sizeof(double)) == 0, "velocities");
  cr_assert(memcmp(a->mass, b->mass, n * sizeof(double)) == 0, "masses");
  cr_assert(memcmp(a->ids, b->ids, n * sizeof(uint64_t)) == 0, "IDs");
  cr_assert_not_null(a->acc);
  cr_assert_not_null(b->acc);
  cr_assert(memcmp(a->acc, b->acc, 3 * n * sizeof(double)) == 0,
            "accelerations");
  cr_assert(memcmp(a->pot, b->pot, n * sizeof(double)) == 0, "potentials");
}

/* The rows of statistics.csv: step, time and the total energy. */
typedef struct csv_rows {
  int count;
  long step[64];
  double time[64], total[64], error[64];
} csv_rows;

static csv_rows read_csv(const char *name) {
  char *text = read_text(name);
  cr_assert_not_null(text, "%s missing", name);
  cr_assert(strncmp(text, "step,time [", 11) == 0, "header of %s", name);
  csv_rows r = {0};
  for (char *line = strchr(text, '\n'); line != NULL && line[1] != '\0';
       line = strchr(line + 1, '\n')) {
    cr_assert_lt(r.count, 64);
    double k, w;
    cr_assert_eq(sscanf(line + 1, "%ld,%lf,%lf,%lf,%lf,%lf", &r.step[r.count],
                        &r.time[r.count], &k, &w, &r.total[r.count],
                        &r.error[r.count]),
                 6, "row %d of %s", r.count, name);
    r.count++;
  }
  free(text);
  return r;
}

Test(run, help_documents_the_interface) {
  cr_assert_eq(RUN("run", "--help"), 0);
  const char *flags[] = {"--params",
                         "--ic",
                         "--n",
                         "--seed",
                         "--dt",
                         "--steps",
                         "--t-end",
                         "--method",
                         "--theta",
                         "--order",
                         "--leaf",
                         "--eps",
                         "--device",
                         "--out",
                         "--snapshot-every",
                         "--checkpoint-every",
                         "--restart",
                         "--force",
                         "hernquist",
                         "merger",
                         "--stats-every",
                         "--progress",
                         "--softening",
                         "--accuracy",
                         "--precision",
                         "--mac"};
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
    assert_stdout_has(flags[k]);
  /* run's softening is the spline (GADGET, SWIFT); the target 1e-3. */
  assert_stdout_has("(default: spline)");
  assert_stdout_has("(default: 1e-3)");
}

/* The theta and order of the last row of statistics.csv (columns 24 and
 * 25: what the step's evaluation used). */
static void last_setting(const char *name, double *theta, int *order) {
  char *text = read_text(name);
  cr_assert_not_null(text, "%s missing", name);
  const size_t len = strlen(text);
  cr_assert(len > 1 && text[len - 1] == '\n');
  text[len - 1] = '\0';
  const char *row = strrchr(text, '\n') + 1, *p = row;
  for (int comma = 0; comma < 23; comma++) {
    p = strchr(p, ',');
    cr_assert_not_null(p, "row '%s' has too few columns", row);
    p++;
  }
  cr_assert_eq(sscanf(p, "%lf,%d", theta, order), 2, "row '%s'", row);
  free(text);
}

/* The header and the summary name the softening and the theta and order:
 * auto, the header says the planner's first guess
 * (tfmm_config_resolve's), a line after step 0 what it chose by
 * measuring, and the summary what the last step used (statistics.csv);
 * or as given. The parameters record them as given ("auto"), with the
 * first guess in a comment, and read back. */
Test(run, reports_softening_theta_and_order) {
  cr_assert_eq(RUN("run", "--n", "500", "--steps", "1", "--out", sp("o"),
                   "--progress", "off"),
               0);
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.softening = TFMM_SOFTENING_SPLINE;
  c.eps = 0.01;
  double theta;
  int order;
  cr_assert_eq(tfmm_config_resolve(&c, &theta, &order, NULL, NULL, 0), TFMM_OK);
  char want[160];
  snprintf(want, sizeof want,
           "fmm: theta %g, order %d (auto: the first guess; chosen by "
           "measuring the error)",
           theta, order);
  assert_stderr_has("softening spline (the default of run), eps 0.01");
  assert_stderr_has(want);
  assert_stderr_has("tilefmm run: step 0: theta ");
  assert_stderr_has(" meets 0.001 after ");
  double used_theta;
  int used_order;
  last_setting("o/statistics.csv", &used_theta, &used_order);
  snprintf(want, sizeof want, "fmm: theta %g (auto), order %d (auto)",
           used_theta, used_order);
  assert_stdout_has("forces: softening spline (the default of run)");
  assert_stdout_has(want);
  char *used = read_text("o/used_parameters.yml");
  const char *keys[] = {"  softening: spline\n", "  accuracy: 0.001\n",
                        "  precision: auto\n",   "  mac: geometric\n",
                        "  theta: auto\n",       "  order: auto\n"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
    cr_expect_not_null(strstr(used, keys[k]), "lacks '%s':\n%s", keys[k], used);
  snprintf(want, sizeof want, "first guess theta %g, order %d", theta, order);
  cr_expect_not_null(strstr(used, want), "lacks '%s':\n%s", want, used);
  free(used);
  snapshot s = read_snap("o/snapshot_0000.hdf5");
  const char *attrs[][2] = {
      {"Gravity:softening", "spline"}, {"Gravity:accuracy", "0.001"},
      {"Gravity:precision", "auto"},   {"Gravity:mac", "geometric"},
      {"Gravity:theta", "auto"},       {"Gravity:order", "auto"}};
  for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++) {
    const char *v = snapshot_attr_find(s.params, s.nparams, attrs[k][0]);
    cr_expect(v != NULL && strcmp(v, attrs[k][1]) == 0, "%s = %s", attrs[k][0],
              v != NULL ? v : "(none)");
  }
  snapshot_free(&s);
  /* Given ones, as given. */
  cr_assert_eq(RUN("run", "--n", "500", "--steps", "0", "--out", sp("g"),
                   "--progress", "off", "--softening", "plummer", "--theta",
                   "0.45", "--method", "bh"),
               0);
  assert_stderr_has("softening plummer, eps 0.01");
  assert_stderr_has("bh: theta 0.45, order ");
  used = read_text("g/used_parameters.yml");
  cr_expect_not_null(strstr(used, "  theta: 0.45000000000000001\n"), "%s",
                     used);
  cr_expect_not_null(strstr(used, "  softening: plummer\n"), "%s", used);
  free(used);
}

/* A checkpoint of tilefmm before the softening kernels: /Parameters
 * without softening, precision, accuracy and mac, and theta and order as
 * numbers. It continues as it ran (plummer, single, geometric, its theta
 * and order), and those are locked. */
Test(run, old_checkpoint_continues_as_plummer) {
  cr_assert_eq(RUN("run", "--n", "600", "--steps", "2", "--out", sp("a"),
                   "--progress", "off", "--softening", "plummer", "--theta",
                   "0.5", "--order", "4"),
               0);
  snapshot cp = read_snap("a/checkpoint.hdf5");
  size_t kept = 0;
  for (size_t k = 0; k < cp.nparams; k++) {
    const char *name = cp.params[k].name;
    if (strcmp(name, "Gravity:softening") == 0 ||
        strcmp(name, "Gravity:precision") == 0 ||
        strcmp(name, "Gravity:accuracy") == 0 ||
        strcmp(name, "Gravity:mac") == 0 ||
        /* and before individual time steps */
        strcmp(name, "Gravity:eta") == 0 ||
        strcmp(name, "TimeIntegration:dt_max") == 0 ||
        strcmp(name, "TimeIntegration:dt_min") == 0 ||
        /* and before the softened far field */
        strcmp(name, "Gravity:far_kernel") == 0) {
      free(cp.params[k].name);
      free(cp.params[k].value);
      continue;
    }
    cp.params[kept++] = cp.params[k];
  }
  cr_assert_eq(kept + 8, cp.nparams);
  cp.nparams = kept;
  cr_assert(snapshot_write(sp("old.hdf5"), &cp));
  snapshot_free(&cp);
  cr_assert_eq(RUN("run", "--restart", sp("old.hdf5"), "--softening", "spline",
                   "--steps", "3", "--out", sp("b")),
               2);
  assert_stderr_has("Gravity:softening = plummer");
  cr_assert_eq(RUN("run", "--restart", sp("old.hdf5"), "--steps", "3", "--out",
                   sp("b"), "--progress", "off"),
               0);
  assert_stderr_has("predates");
  assert_stderr_has("softening plummer");
  assert_stderr_has("theta 0.5, order 4");
  snapshot b = read_snap("b/checkpoint.hdf5");
  cr_expect_str_eq(snapshot_attr_find(b.params, b.nparams, "Gravity:softening"),
                   "plummer");
  cr_expect_str_eq(snapshot_attr_find(b.params, b.nparams, "Gravity:theta"),
                   "0.5");
  cr_expect_str_eq(
      snapshot_attr_find(b.params, b.nparams, "Gravity:far_kernel"), "newton");
  snapshot_free(&b);
}

/* A short run writes what the interface promises: snapshots 0000.. at
 * every K steps, the checkpoint, the statistics (one row per step, energy
 * conserved) and the parameters used; one line per step on stdout. */
Test(run, writes_snapshots_statistics_and_parameters) {
  cr_assert_eq(RUN("run", "--n", "3000", "--steps", "6", "--snapshot-every",
                   "3", "--out", sp("out"), "--progress", "off"),
               0);
  cr_assert(exists("out/snapshot_0000.hdf5"));
  cr_assert(exists("out/snapshot_0001.hdf5"));
  cr_assert(exists("out/snapshot_0002.hdf5"));
  cr_assert(!exists("out/snapshot_0003.hdf5"));
  cr_assert(exists("out/checkpoint.hdf5"));
  cr_assert(exists("out/used_parameters.yml"));
  const csv_rows r = read_csv("out/statistics.csv");
  cr_assert_eq(r.count, 7, "rows for steps 0..6, got %d", r.count);
  for (int k = 0; k < r.count; k++) {
    cr_expect_eq(r.step[k], k);
    cr_expect_eq(r.time[k], k * 0.0078125, "time of step %d", k);
    cr_expect_lt(fabs(r.error[k]), 1e-4, "step %d: dE/E %g", k, r.error[k]);
    cr_expect_lt(fabs(r.total[k] + 0.25), 0.01, "E = %g", r.total[k]);
  }
  assert_stdout_has("dE/E");
  assert_stdout_has("worst |dE/E|");
  /* The snapshot of step 3 holds the state of step 3. */
  snapshot s = read_snap("out/snapshot_0001.hdf5");
  cr_expect_eq(s.n, 3000);
  cr_expect_eq(s.time, 3 * 0.0078125);
  cr_expect_not_null(s.acc);
  cr_expect_not_null(s.pot);
  cr_expect_eq(s.nstate, 0, "a snapshot is no checkpoint");
  cr_expect_str_eq(snapshot_attr_find(s.params, s.nparams, "Gravity:method"),
                   "fmm");
  snapshot_free(&s);
  assert_no_temporaries();
}

/* The contract: a run split in two is bit-identical to the same
 * run straight through, on the same device. */
Test(run, restart_is_bit_identical) {
  cr_assert_eq(RUN("run", "--n", "2500", "--steps", "8", "--out", sp("a"),
                   "--snapshot-every", "4", "--progress", "off"),
               0);
  cr_assert_eq(RUN("run", "--n", "2500", "--steps", "5", "--out", sp("b"),
                   "--snapshot-every", "4", "--progress", "off"),
               0);
  cr_assert_eq(RUN("run", "--restart", sp("b/checkpoint.hdf5"), "--steps", "8",
                   "--progress", "off"),
               0, "restart failed");
  snapshot a = read_snap("a/checkpoint.hdf5");
  snapshot b = read_snap("b/checkpoint.hdf5");
  assert_same_bodies(&a, &b);
  cr_expect_str_eq(snapshot_attr_find(b.state, b.nstate, "step"), "8");
  snapshot_free(&a);
  snapshot_free(&b);
  a = read_snap("a/snapshot_0002.hdf5");
  b = read_snap("b/snapshot_0002.hdf5");
  assert_same_bodies(&a, &b);
  snapshot_free(&a);
  snapshot_free(&b);
  /* The statistics were continued, not restarted: the same rows. */
  const csv_rows ra = read_csv("a/statistics.csv");
  const csv_rows rb = read_csv("b/statistics.csv");
  cr_assert_eq(ra.count, 9);
  cr_assert_eq(rb.count, 9);
  for (int k = 0; k < 9; k++) {
    cr_expect_eq(rb.step[k], k);
    cr_expect_eq(ra.total[k], rb.total[k], "step %d energy", k);
  }
}

/* A checkpoint taken at step 4 and restarted after the first run went on
 * to step 6 cuts the statistics back to step 4 before continuing. */
Test(run, restart_cuts_statistics_to_the_checkpoint) {
  cr_assert_eq(RUN("run", "--n", "1500", "--steps", "6", "--out", sp("c"),
                   "--checkpoint-every", "4", "--progress", "off"),
               0);
  /* The end's checkpoint replaced step 4's: take step 4's again. */
  cr_assert_eq(RUN("run", "--n", "1500", "--steps", "4", "--out", sp("d"),
                   "--progress", "off"),
               0);
  cr_assert_eq(RUN("run", "--restart", sp("d/checkpoint.hdf5"), "--out",
                   sp("c"), "--steps", "6", "--progress", "off"),
               0);
  const csv_rows r = read_csv("c/statistics.csv");
  cr_assert_eq(r.count, 7, "rows %d", r.count);
  for (int k = 0; k < 7; k++)
    cr_expect_eq(r.step[k], k);
}

/* The parameters a run writes read back to the same run, and flags
 * override a parameter file. */
Test(run, used_parameters_reproduce_the_run) {
  write_text("p.yml", "InitialConditions:\n"
                      "  n: 1200   # bodies\n"
                      "  type: hernquist\n"
                      "TimeIntegration:\n"
                      "  steps: 3\n"
                      "  dt: 0.005\n"
                      "Gravity:\n"
                      "  theta: 0.6\n"
                      "  order: 5\n"
                      "  softening: plummer\n"
                      "  accuracy: 2e-3\n"
                      "  mac: mass\n"
                      "  precision: double\n"
                      "Output:\n"
                      "  progress: off\n");
  cr_assert_eq(
      RUN("run", "--params", sp("p.yml"), "--out", sp("e"), "--steps", "4"), 0);
  char *used = read_text("e/used_parameters.yml");
  cr_assert_not_null(used);
  cr_expect_not_null(strstr(used, "n: 1200"));
  cr_expect_not_null(strstr(used, "type: \"hernquist\""));
  cr_expect_not_null(strstr(used, "theta: 0.59999999999999998"),
                     "%.17g reads back to the same double");
  cr_expect_not_null(strstr(used, "steps: 4"), "the flag overrides the file");
  cr_expect_not_null(strstr(used, "softening: plummer"));
  cr_expect_not_null(strstr(used, "accuracy: 0.002"));
  cr_expect_not_null(strstr(used, "mac: mass"));
  cr_expect_not_null(strstr(used, "precision: double"));
  free(used);
  cr_assert_eq(
      RUN("run", "--params", sp("e/used_parameters.yml"), "--out", sp("f")), 0);
  snapshot a = read_snap("e/checkpoint.hdf5");
  snapshot b = read_snap("f/checkpoint.hdf5");
  assert_same_bodies(&a, &b);
  cr_expect_eq(a.time, 4 * 0.005);
  snapshot_free(&a);
  snapshot_free(&b);
}

/* --t-end ends at the first step at or past T; a snapshot given as --ic
 * starts at its time, keeping its bodies and IDs. */
Test(run, t_end_and_snapshot_initial_conditions) {
  cr_assert_eq(RUN("run", "--ic", "cold", "--n", "1000", "--t-end", "0.05",
                   "--out", sp("g"), "--progress", "off"),
               0);
  const csv_rows r = read_csv("g/statistics.csv");
  cr_assert_eq(r.count, 8, "0.05 / 0.0078125 = 6.4: steps 0..7");
  cr_assert_eq(RUN("run", "--ic", sp("g/checkpoint.hdf5"), "--steps", "2",
                   "--out", sp("h"), "--progress", "off"),
               0);
  snapshot s = read_snap("h/checkpoint.hdf5");
  cr_expect_eq(s.n, 1000);
  cr_expect_eq(s.time, 9 * 0.0078125, "time %.17g", s.time);
  snapshot_free(&s);
}

/* yt reads a run's snapshot as a SWIFT dataset. The runs are not periodic
 * and their coordinates are centred on the origin, so the snapshot stores
 * them shifted by Header/Shift into the box [0, BoxSize)^3, as SWIFT does
 * (docs/cli.md, "Snapshots"; docs/units.md). The mass inside r < 1 of the
 * Plummer sphere's centre must match the analytic r^3 / (r^2 + a^2)^(3/2)
 * with a = 3 pi / 16 to the sampling noise of 4000 bodies. Skipped where
 * no python3 has yt (Debian: python3-yt); CI does not install it (the
 * venv's yt is tests/python/test_readers.py's). */
static const char yt_check[] =
    "import sys, math, h5py, yt\n"
    "f = sys.argv[1]\n"
    "shift = h5py.File(f, 'r')['Header'].attrs['Shift']\n"
    "ds = yt.load(f)\n"
    "assert type(ds).__name__ == 'SwiftDataset', type(ds).__name__\n"
    "ad = ds.all_data()\n"
    "assert ad['PartType1', 'Mass'].size == 4000\n"
    "assert abs(float(ad['PartType1', 'Mass'].sum()) - 1) < 1e-12\n"
    "centre = ds.arr(shift, 'code_length')\n"
    "m = float(ds.sphere(centre, (1.0, 'code_length'))['PartType1', "
    "'Mass'].sum())\n"
    "a = 3 * math.pi / 16\n"
    "want = 1 / (1 + a * a) ** 1.5\n"
    "assert abs(m - want) < 0.03, (m, want)\n"
    "print('yt ok', m, want)\n";

Test(run, yt_reads_a_snapshot) {
  const char *python = NULL;
  static const char *const candidates[] = {"python3", "/usr/bin/python3"};
  for (size_t k = 0; python == NULL && k < 2; k++) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s -c 'import yt, h5py' >/dev/null 2>&1",
             candidates[k]);
    if (system(cmd) == 0)
      python = candidates[k];
  }
  if (python == NULL)
    cr_skip_test("no python3 with yt and h5py (tried python3, "
                 "/usr/bin/python3): the snapshot is not checked with yt");
  cr_assert_eq(RUN("run", "--n", "4000", "--steps", "0", "--out", sp("y"),
                   "--progress", "off"),
               0);
  write_text("yt_check.py", yt_check);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s %s >%s 2>&1", python, sp("yt_check.py"),
           sp("y/snapshot_0000.hdf5"), sp("yt.txt"));
  const int status = system(cmd);
  char *said = read_text("yt.txt");
  cr_expect(status == 0, "yt check failed:\n%s", said != NULL ? said : "");
  free(said);
}

/* --progress on draws the live line on stderr (steps done, time left);
 * --stats-every K writes every K-th step and the last. */
Test(run, progress_line_and_statistics_cadence) {
  cr_assert_eq(RUN("run", "--n", "600", "--steps", "5", "--stats-every", "2",
                   "--out", sp("p"), "--progress", "on"),
               0);
  assert_stderr_has("step 5/5");
  assert_stderr_has("left");
  const csv_rows r = read_csv("p/statistics.csv");
  cr_assert_eq(r.count, 4, "steps 0, 2, 4 and the last, 5: got %d", r.count);
  cr_expect_eq(r.step[1], 2);
  cr_expect_eq(r.step[3], 5);
}

/* SIGTERM (or SIGINT) stops the run after the step under way with a
 * checkpoint and exit status 128 + the signal; restarting from it reaches
 * the same bits as a straight run. The signal is sent once a few steps are
 * in the statistics, however long the start takes (a GPU's first context
 * can take seconds); with a snapshot at every step it often lands during
 * a write, which must finish too. SIGTERM, because a shell's background
 * job ignores SIGINT. */
Test(run, interrupt_writes_a_checkpoint_to_restart_from) {
  const char *cli = getenv("TFMM_CLI");
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "%s run --n 1500 --steps 1000000 --out %s --progress off "
           "--checkpoint-every 0 --snapshot-every 1 >%s 2>%s & pid=$!; i=0; "
           "while [ $i -lt 600 ] && "
           "[ \"$( (wc -l <%s) 2>/dev/null || echo 0)\" -lt 4 ]; do "
           "sleep 0.05; i=$((i + 1)); done; kill -TERM $pid; wait $pid",
           cli != NULL ? cli : TFMM_CLI_PATH, sp("s"), sp("stdout.txt"),
           sp("stderr.txt"), sp("s/statistics.csv"));
  const int status = system(cmd);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 128 + 15, "status %d",
            status);
  assert_stderr_has("stopped by signal 15");
  assert_stderr_has("--restart");
  assert_no_temporaries();
  /* The step reached is in the message: "at step K;". */
  char *err = read_text("stderr.txt");
  const char *at = strstr(err, "at step ");
  cr_assert_not_null(at);
  const long k = strtol(at + 8, NULL, 10);
  free(err);
  cr_assert_gt(k, 0, "no step was done before the signal");
  char end[32];
  snprintf(end, sizeof end, "%ld", k + 2);
  cr_assert_eq(RUN("run", "--restart", sp("s/checkpoint.hdf5"), "--steps", end,
                   "--progress", "off"),
               0);
  cr_assert_eq(RUN("run", "--n", "1500", "--steps", end, "--out", sp("t"),
                   "--progress", "off"),
               0);
  snapshot a = read_snap("s/checkpoint.hdf5");
  snapshot b = read_snap("t/checkpoint.hdf5");
  assert_same_bodies(&a, &b);
  snapshot_free(&a);
  snapshot_free(&b);
}
