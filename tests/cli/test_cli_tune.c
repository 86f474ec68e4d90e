/* tilefmm tune: its table must describe the trees it built (fewer, larger
 * leaves as L grows; more near-field pairs, fewer M2L), its error column
 * must be the errors measured here from 'forces' against the reference, the
 * fastest leaf size must be the row of least time, and its files must be
 * whole or untouched: the CSV always, the PNG when gnuplot is there (a
 * warning when it is not, a failure when it fails); outputs that cannot
 * be written refused before any measurement, naming their option; --csv -
 * on stdout alone. Also --leaf auto and --theta 0 for forces, and their
 * bad values. */
#define _POSIX_C_SOURCE 200809L
#include "error_stats.h"
#include "harness.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

TestSuite(tune, .init = scratch_make, .fini = scratch_remove);

/* ---- reading the CSV ------------------------------------------------------
 */

#define CSV_COLS 9
#define CSV_ROWS 32
#define CSV_HEADER                                                             \
  "leaf,depth,leaves,near_interactions,m2l,near_s,far_s,total_s,acc_err_p99,"  \
  "schedule"
enum { LEAF, DEPTH, LEAVES, NEAR_PAIRS, M2L, NEAR_S, FAR_S, TOTAL_S, ERR_P99 };

typedef struct csv {
  char *text; /* the whole file */
  size_t rows;
  double v[CSV_ROWS][CSV_COLS];
} csv;

/* Reads name: '#' comment lines, then the header line, then rows of
 * CSV_COLS comma-separated numbers. */
static csv *read_csv(const char *name, const char *header) {
  char *text = read_text(name);
  cr_assert_not_null(text, "%s was not written", name);
  csv *c = calloc(1, sizeof *c);
  c->text = strdup(text);
  int header_seen = 0;
  for (char *line = strtok(text, "\n"); line != NULL;
       line = strtok(NULL, "\n")) {
    if (line[0] == '#') {
      cr_assert(!header_seen, "%s: comment after the header: %s", name, line);
      continue;
    }
    if (!header_seen) {
      cr_assert_str_eq(line, header, "%s: header", name);
      header_seen = 1;
      continue;
    }
    cr_assert_lt(c->rows, CSV_ROWS);
    char *p = line, *end;
    for (int k = 0; k < CSV_COLS; k++, p = end + (*end == ',')) {
      c->v[c->rows][k] = strtod(p, &end);
      cr_assert_neq(p, end, "%s: bad line '%s'", name, line);
      cr_assert(*end == ',', "%s: bad line '%s'", name, line);
    }
    /* Then the schedule: on the CPU, hybrid. */
    cr_assert_str_eq(p, "hybrid", "%s: bad schedule in '%s'", name, line);
    c->rows++;
  }
  cr_assert(header_seen, "%s has no header line", name);
  free(text);
  return c;
}

static void csv_free(csv *c) {
  free(c->text);
  free(c);
}

/* The "fastest: schedule hybrid, leaf size L" line of the table on stdout
 * (these runs are on the CPU: hybrid is the only schedule). */
static int fastest_on_stdout(void) {
  char *out = read_text("stdout.txt");
  const char *line = strstr(out, "fastest: schedule hybrid, leaf size ");
  int leaf = 0;
  cr_assert(line != NULL &&
                sscanf(line, "fastest: schedule hybrid, leaf size %d", &leaf) ==
                    1,
            "no fastest line:\n%s", out);
  free(out);
  return leaf;
}

static int have_gnuplot(void) {
  return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/* Asserts that name is a PNG (its 8-byte signature, PNG spec 5.2). */
static void assert_png(const char *name) {
  char *png = read_text(name);
  cr_assert_not_null(png, "%s was not written", name);
  cr_assert_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0, "%s is not a PNG", name);
  free(png);
}

/* Runs tune on a 3000-body Plummer sphere, L = 16 .. 256, on the CPU, at
 * one theta and order: the planner would choose them per leaf size, and
 * the table's structure (near pairs and M2L against L) holds at a fixed
 * opening angle. */
static void run_small_tune(void) {
  const int rc = RUN("tune", "--ic", "plummer", "--n", "3000", "--theta", "0.5",
                     "--order", "6", "--leaf-min", "16", "--leaf-max", "256",
                     "--repeat", "1", "--sample", "0", "--device", "cpu",
                     "--csv", sp("t.csv"), "--png", sp("t.png"));
  char *err = read_text("stderr.txt");
  cr_assert_eq(rc, 0, "exit code %d:\n%s", rc, err);
  free(err);
}

/* ---- the table ------------------------------------------------------------
 */

/* Doubling L splits fewer cells: the tree gets no deeper and has fewer
 * leaves, each list holds more pairs, and M2L has fewer cells to join. */
static void assert_rows_sane(const csv *c) {
  const double leaves[] = {16, 32, 64, 128, 256};
  cr_assert_eq(c->rows, 5, "%zu rows:\n%s", c->rows, c->text);
  for (size_t k = 0; k < c->rows; k++) {
    const double *r = c->v[k];
    cr_assert_eq(r[LEAF], leaves[k], "row %zu: leaf %g", k, r[LEAF]);
    cr_assert(r[DEPTH] >= 1 && r[LEAVES] >= 3000 / r[LEAF], "row %zu", k);
    cr_assert(isfinite(r[ERR_P99]) && r[ERR_P99] > 0 && r[ERR_P99] < 1e-2,
              "row %zu: p99 error %g", k, r[ERR_P99]);
    cr_assert(r[NEAR_S] > 0 && r[FAR_S] > 0 && r[TOTAL_S] >= r[FAR_S],
              "row %zu: times %g %g %g", k, r[NEAR_S], r[FAR_S], r[TOTAL_S]);
    cr_assert(r[NEAR_PAIRS] > 0 && r[NEAR_PAIRS] <= 3000.0 * 2999.0);
    if (k == 0)
      continue;
    const double *p = c->v[k - 1];
    cr_assert_leq(r[DEPTH], p[DEPTH], "depth grew at L = %g", r[LEAF]);
    cr_assert_lt(r[LEAVES], p[LEAVES], "leaves did not shrink at L = %g",
                 r[LEAF]);
    cr_assert_gt(r[NEAR_PAIRS], p[NEAR_PAIRS], "near pairs at L = %g", r[LEAF]);
    cr_assert_lt(r[M2L], p[M2L], "M2L at L = %g", r[LEAF]);
  }
  cr_assert_lt(c->v[4][DEPTH], c->v[0][DEPTH], "depth never shrank");
}

Test(tune, table_is_sane) {
  run_small_tune();
  csv *c = read_csv("t.csv", CSV_HEADER);
  assert_rows_sane(c);
  /* The fastest is a row, and no row is faster. */
  const int fastest = fastest_on_stdout();
  size_t best = c->rows;
  for (size_t k = 0; k < c->rows; k++)
    if (c->v[k][LEAF] == fastest)
      best = k;
  cr_assert_lt(best, c->rows, "fastest leaf size %d is not a row", fastest);
  for (size_t k = 0; k < c->rows; k++)
    cr_assert_leq(c->v[best][TOTAL_S], c->v[k][TOTAL_S], "row %zu is faster",
                  k);
  char want[64];
  snprintf(want, sizeof want, "# fastest leaf size: %d\n", fastest);
  cr_assert_not_null(strstr(c->text, want), "%s", c->text);
  csv_free(c);
}

/* The leaf size whose line "chosen: schedule hybrid, leaf size L" names,
 * or 0 for none. */
static int chosen_on_stdout(void) {
  char *out = read_text("stdout.txt");
  const char *line = strstr(out, "\nchosen: ");
  cr_assert_not_null(line, "no chosen line:\n%s", out);
  int leaf = 0;
  if (strncmp(line, "\nchosen: none", 13) != 0)
    cr_assert_eq(sscanf(line, "\nchosen: schedule hybrid, leaf size %d", &leaf),
                 1, "%s", out);
  free(out);
  return leaf;
}

/* --max-error E: the chosen leaf size is the fastest row whose p99 error
 * is at most E. E between the rows' errors splits them, so that the
 * choice is not merely the fastest. */
Test(tune, max_error_chooses_the_fastest_within_it) {
  const char *common[] = {
      "tune", "--ic",     "plummer",   "--n",        "3000",      "--theta",
      "0.5",  "--order",  "4",         "--leaf-min", "16",        "--leaf-max",
      "256",  "--repeat", "1",         "--sample",   "0",         "--device",
      "cpu",  "--csv",    sp("t.csv"), "--png",      sp("t.png"), NULL};
  cr_assert_eq(run_argv(common), 3,
               "the default max error, 1e-3, is out of "
               "reach at order 4 and theta 0.5");
  cr_assert_eq(chosen_on_stdout(), 0);
  assert_stdout_has("no leaf size met --max-error 1e-3");
  csv *c = read_csv("t.csv", CSV_HEADER);
  cr_assert_not_null(strstr(c->text, "# chosen leaf size: none"));
  /* E: the median of the row errors. */
  double e[CSV_ROWS];
  for (size_t k = 0; k < c->rows; k++)
    e[k] = c->v[k][ERR_P99];
  error_stats_sort(e, c->rows);
  const double max_error = e[c->rows / 2];
  csv_free(c);
  char word[32];
  snprintf(word, sizeof word, "%.17g", max_error);
  const char *args[26];
  size_t n = 0;
  for (; common[n] != NULL; n++)
    args[n] = common[n];
  args[n++] = "--max-error";
  args[n++] = word;
  args[n] = NULL;
  cr_assert_eq(run_argv(args), 0);
  c = read_csv("t.csv", CSV_HEADER);
  const int leaf = chosen_on_stdout();
  size_t best = c->rows;
  for (size_t k = 0; k < c->rows; k++)
    if (c->v[k][ERR_P99] <= max_error &&
        (best == c->rows || c->v[k][TOTAL_S] < c->v[best][TOTAL_S]))
      best = k;
  cr_assert_lt(best, c->rows);
  cr_assert_eq(leaf, (int)c->v[best][LEAF], "chosen %d, want %g:\n%s", leaf,
               c->v[best][LEAF], c->text);
  char want[64];
  snprintf(want, sizeof want, "# chosen leaf size: %d\n", leaf);
  cr_assert_not_null(strstr(c->text, want), "%s", c->text);
  csv_free(c);
  assert_stdout_has("p99 error");
}

Test(tune, csv_comments_and_stdout) {
  run_small_tune();
  csv *c = read_csv("t.csv", CSV_HEADER);
  const char *comments[] = {"# command: tilefmm tune --ic plummer --n 3000",
                            "# date: 20", "# device: cpu, CPU"};
  for (size_t k = 0; k < 3; k++)
    cr_assert_not_null(strstr(c->text, comments[k]), "lacks '%s':\n%s",
                       comments[k], c->text);
  csv_free(c);
  assert_stdout_has("near (cpu)");
  assert_stdout_has("p99 error");
  assert_stdout_has("over 3000 bodies");
  /* One progress line per leaf size. */
  assert_stderr_has("[1/5] schedule hybrid, leaf 16:");
  assert_stderr_has("[5/5] schedule hybrid, leaf 256:");
  assert_no_temporaries();
}

Test(tune, png_when_gnuplot_is_installed) {
  run_small_tune();
  if (!have_gnuplot()) {
    cr_assert(!exists("t.png"));
    assert_stderr_has("gnuplot not found");
    cr_skip_test("gnuplot is not installed: the PNG is not checked");
  }
  assert_png("t.png");
}

/* The error column must be the 99th percentile (nearest rank) of the
 * errors of 'forces' at that L against the reference method, measured
 * here over every body (--sample 0). One leaf size: one row. */
Test(tune, error_column_is_the_measured_error) {
  cr_assert_eq(
      RUN("ic", "plummer", "--n", "1500", "--seed", "4", "--out", sp("in.txt")),
      0);
  cr_assert_eq(RUN("tune", "--in", sp("in.txt"), "--leaf-min", "32",
                   "--leaf-max", "32", "--repeat", "1", "--sample", "0",
                   "--order", "3", "--max-error", "1", "--device", "cpu",
                   "--csv", sp("t.csv"), "--png", sp("t.png")),
               0);
  cr_assert_eq(fastest_on_stdout(), 32);
  csv *c = read_csv("t.csv", CSV_HEADER);
  cr_assert_eq(c->rows, 1);
  const char *fmm[] = {"forces",    "--in",     sp("in.txt"), "--out",
                       sp("f.txt"), "--device", "cpu",        "--leaf",
                       "32",        "--order",  "3",          NULL};
  const char *ref[] = {"forces",    "--in",     sp("in.txt"), "--out",
                       sp("r.txt"), "--device", "cpu",        "--method",
                       "reference", NULL};
  cr_assert_eq(run_argv(fmm), 0);
  cr_assert_eq(run_argv(ref), 0);
  table *f = read_table("f.txt", 4), *r = read_table("r.txt", 4);
  cr_assert_eq(f->rows, 1500);
  double err[1500];
  for (size_t i = 0; i < 1500; i++) {
    int absolute;
    err[i] = error_stats_relative(f->v[i], r->v[i], 3, &absolute);
  }
  error_stats_sort(err, 1500);
  assert_close(c->v[0][ERR_P99], error_stats_percentile(err, 1500, 99), 1e-5,
               "p99 error");
  free(f);
  free(r);
  csv_free(c);
}

Test(tune, barnes_hut_counts_m2p) {
  cr_assert_eq(RUN("tune", "--ic", "plummer", "--n", "1000", "--method", "bh",
                   "--leaf-min", "32", "--leaf-max", "64", "--repeat", "1",
                   "--device", "cpu", "--csv", sp("t.csv"), "--png",
                   sp("t.png")),
               0);
  csv *c = read_csv("t.csv", "leaf,depth,leaves,near_interactions,m2p,"
                             "near_s,far_s,total_s,acc_err_p99,schedule");
  cr_assert_eq(c->rows, 2);
  cr_assert(c->v[0][M2L] > c->v[1][M2L] && c->v[1][M2L] > 0, "%s", c->text);
  csv_free(c);
}

/* The series doubles from --leaf-min and ends at --leaf-max. */
Test(tune, leaf_max_is_included) {
  cr_assert_eq(RUN("tune", "--ic", "plummer", "--n", "500", "--leaf-min", "20",
                   "--leaf-max", "100", "--repeat", "1", "--device", "cpu",
                   "--csv", sp("t.csv"), "--png", sp("t.png")),
               0);
  csv *c = read_csv("t.csv", CSV_HEADER);
  const double want[] = {20, 40, 80, 100};
  cr_assert_eq(c->rows, 4, "%s", c->text);
  for (size_t k = 0; k < 4; k++)
    cr_assert_eq(c->v[k][LEAF], want[k], "%s", c->text);
  csv_free(c);
}

/* ---- gnuplot missing or failing -----------------------------------------
 */

/* Without gnuplot the CSV is the result: exit 0 and a warning naming it. */
Test(tune, without_gnuplot_warns_and_succeeds) {
  cr_assert_eq(setenv("PATH", sp("no-such-dir"), 1), 0);
  const int rc = RUN("tune", "--ic", "plummer", "--n", "500", "--leaf-min",
                     "32", "--leaf-max", "64", "--repeat", "1", "--device",
                     "cpu", "--csv", sp("t.csv"), "--png", sp("t.png"));
  cr_assert_eq(rc, 0);
  assert_stderr_has("warning: gnuplot not found");
  assert_stderr_has(sp("t.csv"));
  csv *c = read_csv("t.csv", CSV_HEADER);
  cr_assert_eq(c->rows, 2);
  csv_free(c);
  cr_assert(!exists("t.png"));
  assert_no_temporaries();
}

/* A gnuplot that fails: its message shown, exit 1, the CSV written, an
 * existing PNG untouched. */
Test(tune, failing_gnuplot_fails) {
  write_text("gnuplot", "#!/bin/sh\necho 'gnuplot: no fonts today' >&2\n"
                        "exit 3\n");
  cr_assert_eq(chmod(sp("gnuplot"), 0755), 0);
  char path[2048];
  snprintf(path, sizeof path, "%s:/usr/bin:/bin", sp(""));
  cr_assert_eq(setenv("PATH", path, 1), 0);
  write_text("t.png", PRECIOUS);
  const int rc = RUN("tune", "--ic", "plummer", "--n", "500", "--leaf-min",
                     "32", "--leaf-max", "64", "--repeat", "1", "--device",
                     "cpu", "--csv", sp("t.csv"), "--png", sp("t.png"));
  cr_assert_eq(rc, 1);
  assert_stderr_has("no fonts today");
  assert_stderr_has("gnuplot failed");
  char *png = read_text("t.png");
  cr_assert_str_eq(png, PRECIOUS, "the PNG was changed");
  free(png);
  csv *c = read_csv("t.csv", CSV_HEADER);
  csv_free(c);
  assert_no_temporaries();
}

/* A PNG cut short (its signature and half an IHDR) or empty, gnuplot
 * exiting 0: refused, exit 1, an existing PNG untouched. It was kept, and
 * tune exited 0. */
Test(tune, a_cut_png_is_refused) {
  const char *bodies[] = {"\\211PNG\\r\\n\\032\\n\\000\\000\\000\\015IHDR", ""};
  for (int k = 0; k < 2; k++) {
    fake_gnuplot_writing(bodies[k]);
    write_text("t.png", PRECIOUS);
    const int rc = RUN("tune", "--ic", "plummer", "--n", "500", "--leaf-min",
                       "32", "--leaf-max", "64", "--repeat", "1", "--device",
                       "cpu", "--csv", sp("t.csv"), "--png", sp("t.png"));
    cr_assert_eq(rc, 1, "%s: exit %d", bodies[k], rc);
    assert_stderr_has("no whole PNG");
    char *png = read_text("t.png");
    cr_assert_str_eq(png, PRECIOUS, "the PNG was changed");
    free(png);
    assert_no_temporaries();
  }
  /* Whole chunks up to IEND (their CRCs unread): kept. */
  fake_gnuplot_writing("\\211PNG\\r\\n\\032\\n\\000\\000\\000\\015IHDR"
                       "0123456789abcCRC!\\000\\000\\000\\000IENDCRC!");
  cr_assert_eq(RUN("tune", "--ic", "plummer", "--n", "500", "--leaf-min", "32",
                   "--leaf-max", "64", "--repeat", "1", "--device", "cpu",
                   "--csv", sp("t.csv"), "--png", sp("t.png")),
               0);
  char *png = read_text("t.png");
  cr_assert(strncmp(png, "\211PNG", 4) == 0, "the PNG was not written");
  free(png);
}

/* ---- bad command lines ----------------------------------------------------
 */

#define INVALID "invalid value"

/* tune on a small Plummer sphere with one bad flag (or two, value2 not
 * NULL) writing out.txt: exit 2, the flag named, out.txt untouched. */
static void expect_tune_usage(const char *flag, const char *value,
                              const char *flag2, const char *value2,
                              const char *reason) {
  const char *args[] = {"tune",        "--ic",     "plummer",     "--n",
                        "100",         "--device", "cpu",         "--png",
                        sp("out.png"), "--csv",    sp("out.txt"), flag,
                        value,         flag2,      value2,        NULL};
  expect_failure(args, 2, flag, reason);
  cr_assert(!exists("out.png"));
}

Test(tune, leaf_min_zero) {
  expect_tune_usage("--leaf-min", "0", NULL, NULL, INVALID);
}
Test(tune, leaf_max_negative) {
  expect_tune_usage("--leaf-max", "-4", NULL, NULL, INVALID);
}
Test(tune, leaf_min_above_max) {
  expect_tune_usage("--leaf-min", "64", "--leaf-max", "32",
                    "greater than --leaf-max");
}
Test(tune, repeat_zero) {
  expect_tune_usage("--repeat", "0", NULL, NULL, INVALID);
}
Test(tune, repeat_word) {
  expect_tune_usage("--repeat", "many", NULL, NULL, INVALID);
}
Test(tune, sample_negative) {
  expect_tune_usage("--sample", "-1", NULL, NULL, INVALID);
}
Test(tune, unknown_flag) {
  expect_tune_usage("--leaf-step", "2", NULL, NULL, "unknown flag");
}
Test(tune, leaf_is_what_tune_varies) {
  expect_tune_usage("--leaf", "64", NULL, NULL, "--leaf-min");
}
Test(tune, needs_a_tree_method) {
  expect_tune_usage("--method", "direct", NULL, NULL, "fmm or bh");
}
Test(tune, theta_above_one) {
  expect_tune_usage("--theta", "1.5", NULL, NULL, INVALID);
}
Test(tune, max_error_zero) {
  expect_tune_usage("--max-error", "0", NULL, NULL, "a number > 0");
}
Test(tune, max_error_word) {
  expect_tune_usage("--max-error", "small", NULL, NULL, INVALID);
}
Test(tune, accuracy_too_large) {
  expect_tune_usage("--accuracy", "1", NULL, NULL, "(0, 0.1]");
}
Test(tune, unknown_model) {
  const char *args[] = {"tune", "--ic",  "king",        "--n",
                        "100",  "--csv", sp("out.txt"), NULL};
  expect_failure(args, 2, "--ic", "plummer");
}
Test(tune, in_and_ic) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const char *args[] = {"tune", "--ic",       "plummer", "--n",         "100",
                        "--in", sp("in.txt"), "--csv",   sp("out.txt"), NULL};
  expect_failure(args, 2, "--in", "--ic");
}
Test(tune, no_input) {
  const char *args[] = {"tune", "--csv", sp("out.txt"), NULL};
  expect_failure(args, 2, "--in", "--ic");
}
Test(tune, ic_without_n) {
  const char *args[] = {"tune",  "--ic",        "plummer",
                        "--csv", sp("out.txt"), NULL};
  expect_failure(args, 2, "--n", "missing");
}
Test(tune, n_without_ic) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const char *args[] = {"tune", "--in",  sp("in.txt"),  "--n",
                        "100",  "--csv", sp("out.txt"), NULL};
  expect_failure(args, 2, "--n", "only with --ic");
}

/* ---- the outputs, checked before the measurements ------------------------
 */

/* A tune long enough that a check made only at the end would be seen to
 * come after the measurements, with csv and png as its outputs (and in
 * as its input, when not NULL): it must fail with code before any
 * measurement (no reference computed, no leaf size measured), naming
 * flag and path on stderr, and leave no temporary. */
static void expect_output_refused(const char *in, const char *csv_path,
                                  const char *png, int code, const char *flag,
                                  const char *path) {
  const char *args[] = {"tune",    "--device",   "cpu",  "--leaf-min",
                        "16",      "--leaf-max", "64",   "--csv",
                        csv_path,  "--png",      png,    "--ic",
                        "plummer", "--n",        "3000", NULL};
  if (in != NULL) { /* --in in instead of the Plummer sphere */
    args[11] = "--in";
    args[12] = in;
    args[13] = NULL;
  }
  const int rc = run_argv(args);
  char *err = read_text("stderr.txt");
  cr_assert_eq(rc, code, "exit code %d, want %d:\n%s", rc, code, err);
  char want[4096];
  snprintf(want, sizeof want, "%s %s", flag, path);
  cr_assert_not_null(strstr(err, want), "stderr lacks '%s':\n%s", want, err);
  cr_assert_null(strstr(err, "reference at"), "measured first:\n%s", err);
  cr_assert_null(strstr(err, "[1/"), "measured first:\n%s", err);
  free(err);
  assert_no_temporaries();
}

Test(tune, csv_in_a_missing_directory_refused_first) {
  expect_output_refused(NULL, sp("no-dir/t.csv"), sp("t.png"), 1, "--csv",
                        sp("no-dir/t.csv"));
  cr_assert(!exists("t.png"));
}

Test(tune, png_in_a_missing_directory_refused_first) {
  expect_output_refused(NULL, sp("t.csv"), sp("no-dir/t.png"), 1, "--png",
                        sp("no-dir/t.png"));
  cr_assert(!exists("t.csv"));
}

Test(tune, png_a_directory_refused_first) {
  cr_assert_eq(mkdir(sp("d"), 0755), 0);
  expect_output_refused(NULL, sp("t.csv"), sp("d"), 1, "--png", sp("d"));
  cr_assert(!exists("t.csv"));
}

Test(tune, csv_a_directory_refused_first) {
  cr_assert_eq(mkdir(sp("d"), 0755), 0);
  expect_output_refused(NULL, sp("d"), sp("t.png"), 1, "--csv", sp("d"));
}

/* A picture cannot go to standard output: a usage error. */
Test(tune, png_to_stdout_refused_first) {
  expect_output_refused(NULL, sp("t.csv"), "-", 2, "--png", "-");
}

/* One file for both outputs: the plot would replace the table. */
Test(tune, csv_and_png_one_file_refused_first) {
  expect_output_refused(NULL, sp("t.out"), sp("t.out"), 1, "--csv",
                        sp("t.out"));
  assert_stderr_has("--png");
  cr_assert(!exists("t.out"));
}

/* An output must not replace the input: refused before the measurements,
 * the input untouched. */
Test(tune, csv_onto_the_input_refused_first) {
  cr_assert_eq(
      RUN("ic", "plummer", "--n", "3000", "--seed", "2", "--out", sp("in.txt")),
      0);
  char *before = read_text("in.txt");
  expect_output_refused(sp("in.txt"), sp("in.txt"), sp("t.png"), 1, "--csv",
                        sp("in.txt"));
  assert_stderr_has("input");
  char *after = read_text("in.txt");
  cr_assert_str_eq(after, before, "the input was changed");
  free(before);
  free(after);
}

/* --csv -: the CSV, comments and all, alone on stdout (a pipe to another
 * program), the table for a person on stderr, and the plot drawn all the
 * same (from the data in its script, not from a file). */
Test(tune, csv_to_stdout) {
  const int rc = RUN("tune", "--ic", "plummer", "--n", "500", "--leaf-min",
                     "32", "--leaf-max", "64", "--repeat", "1", "--device",
                     "cpu", "--csv", "-", "--png", sp("t.png"));
  char *err = read_text("stderr.txt");
  cr_assert_eq(rc, 0, "exit code %d:\n%s", rc, err);
  free(err);
  csv *c = read_csv("stdout.txt", CSV_HEADER);
  cr_assert_eq(c->rows, 2, "%s", c->text);
  cr_assert_eq(c->v[0][LEAF], 32);
  cr_assert_eq(c->v[1][LEAF], 64);
  cr_assert_not_null(strstr(c->text, "# command: tilefmm tune"), "%s", c->text);
  csv_free(c);
  assert_stderr_has("fastest: schedule hybrid, leaf size ");
  cr_assert(!exists("-"), "a file named '-' was written");
  if (have_gnuplot())
    assert_png("t.png");
  else
    assert_stderr_has("standard output");
  assert_no_temporaries();
}

/* A run that fails on its input leaves an existing CSV as it was. */
Test(tune, bad_input_keeps_csv) {
  write_text("in.txt", "0 0 0 1\n1 0 zero 2\n");
  const char *args[] = {"tune",        "--in",  sp("in.txt"),  "--device",
                        "cpu",         "--csv", sp("out.txt"), "--png",
                        sp("out.png"), NULL};
  expect_failure(args, 1, "in.txt:2", "not a number");
  cr_assert(!exists("out.png"));
}

Test(tune, help_and_command_list) {
  cr_assert_eq(RUN("tune", "--help"), 0);
  const char *flags[] = {
      "--in",       "--ic",       "--n",      "--seed",   "--leaf-min",
      "--leaf-max", "--repeat",   "--sample", "--csv",    "--png",
      "--theta",    "--order",    "--device", "--method", "--max-error",
      "--accuracy", "--softening"};
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
    assert_stdout_has(flags[k]);
  assert_stdout_has("(default: 16)");
  assert_stdout_has("(default: 4096)");
  assert_stdout_has("(default: tune.csv)");
  /* --leaf is refused (tune varies it): its help must not offer it. */
  char *out = read_text("stdout.txt");
  cr_assert_null(strstr(out, "  --leaf L"), "tune --help offers --leaf:\n%s",
                 out);
  free(out);
  cr_assert_eq(RUN("--help"), 0);
  assert_stdout_has("tune");
}

/* ---- forces: --leaf auto and --theta 0 ------------------------------------
 */

static void plummer_input(const char *n) {
  cr_assert_eq(
      RUN("ic", "plummer", "--n", n, "--seed", "9", "--out", sp("in.txt")), 0);
}

/* forces --device cpu on in.txt with a method and two extra flags. */
static table *forces(const char *out, const char *method, const char *flag,
                     const char *value) {
  const char *args[] = {"forces", "--in",     sp("in.txt"), "--out",
                        sp(out),  "--device", "cpu",        "--method",
                        method,   flag,       value,        NULL};
  const int rc = run_argv(args);
  char *err = read_text("stderr.txt");
  cr_assert_eq(rc, 0, "exit code %d:\n%s", rc, err);
  free(err);
  return read_table(out, 4);
}

/* The sorted relative acceleration errors of got against ref. */
static double *acc_errors(const table *got, const table *ref) {
  cr_assert_eq(got->rows, ref->rows);
  double *e = malloc(ref->rows * sizeof *e);
  for (size_t i = 0; i < ref->rows; i++) {
    int absolute;
    e[i] = error_stats_relative(got->v[i], ref->v[i], 3, &absolute);
  }
  error_stats_sort(e, ref->rows);
  return e;
}

Test(tune, forces_leaf_auto) {
  plummer_input("2000");
  table *ref = forces("r.txt", "reference", "--threads", "0");
  table *got = forces("f.txt", "fmm", "--leaf", "auto");
  cr_assert_eq(got->rows, 2000);
  assert_stderr_has("(auto)");
  assert_stderr_has("near field: ");
  assert_stderr_has("near kernel");
  assert_stderr_has("overlap");
  double *e = acc_errors(got, ref);
  const double median = error_stats_percentile(e, 2000, 50);
  cr_assert_lt(median, 1e-3, "median relative error %.3g", median);
  cr_assert_gt(e[1999], 0, "no error at all: not the FMM?");
  free(e);
  free(ref);
  free(got);
}

/* The leaf size used is reported, without "(auto)" when it was given. */
Test(tune, forces_reports_leaf_size) {
  plummer_input("300");
  table *t = forces("f.txt", "fmm", "--leaf", "+32");
  free(t);
  assert_stderr_has("leaf size: 32\n");
  assert_stderr_has("far field ");
  assert_stderr_has("interactions on the cpu");
}

/* theta 0 accepts no pair: every pair is near, summed in single
 * precision, with no M2L at all. */
Test(tune, forces_theta_zero_is_all_pairs) {
  plummer_input("500");
  table *ref = forces("r.txt", "reference", "--threads", "0");
  table *got = forces("f.txt", "fmm", "--theta", "0");
  assert_stderr_has("far field: 0 M2L");
  double *e = acc_errors(got, ref);
  cr_assert_lt(e[499], 1e-4, "max relative error %.3g", e[499]);
  free(e);
  free(ref);
  free(got);
}

static void expect_bad_leaf(const char *value) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const char *args[] = {"forces",      "--in",     sp("in.txt"), "--out",
                        sp("out.txt"), "--device", "cpu",        "--leaf",
                        value,         NULL};
  expect_failure(args, 2, "--leaf", "auto or an integer >= 1");
}

Test(tune, forces_leaf_zero) { expect_bad_leaf("0"); }
Test(tune, forces_leaf_negative) { expect_bad_leaf("-3"); }
Test(tune, forces_leaf_word) { expect_bad_leaf("abc"); }
Test(tune, forces_leaf_fraction) { expect_bad_leaf("1.5"); }
Test(tune, forces_leaf_space) { expect_bad_leaf(" 8"); }
Test(tune, forces_leaf_overflow) { expect_bad_leaf("99999999999"); }
