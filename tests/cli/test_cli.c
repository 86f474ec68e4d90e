/* The tilefmm tool doing its work: help and version, reproducible
 * initial conditions, and forces checked against analytic two-body values
 * and a direct sum done here, in the test. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <criterion/criterion.h>

#include "tilefmm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

TestSuite(cli, .init = scratch_make, .fini = scratch_remove);

/* ---- help and version --------------------------------------------------- */

Test(cli, help) {
  cr_assert_eq(RUN("--help"), 0);
  assert_stdout_has("forces");
  assert_stdout_has("ic plummer");
  assert_stdout_has("--version");
}

Test(cli, forces_help_documents_every_flag) {
  cr_assert_eq(RUN("forces", "--help"), 0);
  const char *flags[] = {"--in",
                         "--out",
                         "--method",
                         "--device",
                         "--eps",
                         "--G",
                         "--threads",
                         "--gpu-tile",
                         "--gpu-threads-per-body",
                         "--gpu-unroll",
                         "--gpu-bodies-per-thread"};
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
    assert_stdout_has(flags[k]);
  char *text = read_text("stdout.txt");
  int defaults = 0;
  for (const char *p = text; (p = strstr(p, "default")) != NULL; p++)
    defaults++;
  free(text);
  cr_assert_geq(defaults, 10, "only %d defaults documented", defaults);
}

Test(cli, ic_help) {
  cr_assert_eq(RUN("ic", "--help"), 0);
  assert_stdout_has("plummer");
  cr_assert_eq(RUN("ic", "plummer", "--help"), 0);
  assert_stdout_has("--n");
  assert_stdout_has("--seed");
  assert_stdout_has("--out");
  assert_stdout_has("default");
}

Test(cli, version) {
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", TFMM_VERSION_MAJOR,
           TFMM_VERSION_MINOR, TFMM_VERSION_PATCH);
  cr_assert_eq(RUN("--version"), 0);
  assert_stdout_has(want);
}

/* ---- initial conditions ------------------------------------------------- */

static void make_plummer(const char *name, const char *n, const char *seed) {
  cr_assert_eq(
      RUN("ic", "plummer", "--n", n, "--seed", seed, "--out", sp(name)), 0);
}

Test(cli, ic_same_seed_same_file) {
  make_plummer("a.txt", "300", "7");
  make_plummer("b.txt", "300", "7");
  make_plummer("c.txt", "300", "8");
  char *a = read_text("a.txt"), *b = read_text("b.txt"),
       *c = read_text("c.txt");
  cr_assert_str_eq(a, b);
  cr_assert_str_neq(a, c);
  free(a);
  free(b);
  free(c);
}

Test(cli, ic_to_standard_output) {
  make_plummer("a.txt", "50", "3");
  cr_assert_eq(RUN("ic", "plummer", "--n", "50", "--seed", "3"), 0);
  char *a = read_text("a.txt"), *s = read_text("stdout.txt");
  cr_assert_str_eq(a, s);
  free(a);
  free(s);
}

Test(cli, ic_plummer_contents) {
  make_plummer("p.txt", "1000", "11");
  table *t = read_table("p.txt", 7);
  cr_assert_eq(t->rows, 1000);
  double mass = 0, com[3] = {0, 0, 0};
  for (size_t i = 0; i < t->rows; i++) {
    mass += t->v[i][3];
    for (int d = 0; d < 3; d++)
      com[d] += t->v[i][3] * t->v[i][d];
  }
  assert_close(mass, 1.0, 1e-12, "total mass");
  cr_assert_lt(sqrt(com[0] * com[0] + com[1] * com[1] + com[2] * com[2]),
               1e-12);
  free(t);
}

Test(cli, ic_replaces_existing_file) {
  write_text("p.txt", PRECIOUS);
  make_plummer("p.txt", "10", "1");
  table *t = read_table("p.txt", 7);
  cr_assert_eq(t->rows, 10);
  free(t);
  struct stat st;
  cr_assert_eq(stat(sp("p.txt"), &st), 0);
  const mode_t mask = umask(0);
  umask(mask);
  cr_assert_eq(st.st_mode & 0777, 0666 & ~mask, "mode %o", st.st_mode & 0777);
  assert_no_temporaries();
}

/* ---- forces ---------------------------------------------------------------
 */

/* Runs forces --device cpu on in.txt with extra flags into out.txt and
 * reads the result. */
static table *forces(const char *method, const char *flag, const char *value) {
  const char *args[] = {"forces",      "--in",     sp("in.txt"), "--out",
                        sp("out.txt"), "--device", "cpu",        "--method",
                        method,        flag,       value,        NULL};
  if (flag == NULL)
    args[9] = NULL;
  const int rc = run_argv(args);
  char *err = read_text("stderr.txt");
  cr_assert_eq(rc, 0, "exit code %d:\n%s", rc, err);
  free(err);
  return read_table("out.txt", 4);
}

/* Bodies at (0,0,0) with m = 1 and (1,0,0) with m = 2, softened by eps:
 * a_0 = G 2 / s^3 x^, a_1 = -G 1 / s^3 x^, phi_0 = -2 G / s,
 * phi_1 = -G / s, with s = sqrt(1 + eps^2). */
static void check_two_body(const table *t, double G, double eps) {
  const double s = sqrt(1.0 + eps * eps);
  const double want[2][4] = {{2 * G / (s * s * s), 0, 0, -2 * G / s},
                             {-G / (s * s * s), 0, 0, -G / s}};
  cr_assert_eq(t->rows, 2);
  for (int i = 0; i < 2; i++)
    for (int c = 0; c < 4; c++)
      cr_assert(fabs(t->v[i][c] - want[i][c]) <= 1e-12 * fabs(want[i][0]),
                "body %d column %d: got %.17g, want %.17g", i, c, t->v[i][c],
                want[i][c]);
}

Test(cli, two_bodies_analytic) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  table *t = forces("reference", NULL, NULL);
  check_two_body(t, 1.0, 0.0);
  free(t);
}

Test(cli, two_bodies_G) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  table *t = forces("reference", "--G", "2");
  check_two_body(t, 2.0, 0.0);
  free(t);
}

Test(cli, two_bodies_softened) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  table *t = forces("reference", "--eps", "0.5");
  check_two_body(t, 1.0, 0.5);
  free(t);
}

Test(cli, flag_with_equals_sign) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  table *t = forces("reference", "--eps=0.5", "--G=3");
  check_two_body(t, 3.0, 0.5);
  free(t);
}

Test(cli, two_bodies_direct) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  table *t = forces("direct", NULL, NULL);
  cr_assert_eq(t->rows, 2);
  assert_close(t->v[0][0], 2.0, 1e-6, "a_0");
  assert_close(t->v[1][3], -1.0, 1e-6, "phi_1");
  free(t);
}

/* Comments, blank lines, tabs, CRLF endings and 7-column lines read the
 * same as a plain 4-column file. */
Test(cli, comments_blank_lines_and_velocities) {
  write_text("in.txt", "# two bodies\n"
                       "\n"
                       "0 0 0 1 0.5 -0.5 0   # with a velocity\r\n"
                       "   \t\n"
                       "  #\tindented comment\n"
                       "1\t0 0 2\r\n"
                       "# the end");
  table *t = forces("reference", NULL, NULL);
  check_two_body(t, 1.0, 0.0);
  free(t);
}

/* A direct sum done here, in the test, over n bodies. */
static void direct_sum(size_t n, const double (*b)[4], double (*out)[4]) {
  for (size_t i = 0; i < n; i++) {
    out[i][0] = out[i][1] = out[i][2] = out[i][3] = 0;
    for (size_t j = 0; j < n; j++) {
      if (j == i)
        continue;
      const double dx = b[j][0] - b[i][0], dy = b[j][1] - b[i][1],
                   dz = b[j][2] - b[i][2];
      const double r = sqrt(dx * dx + dy * dy + dz * dz);
      const double f = b[j][3] / (r * r * r);
      out[i][0] += f * dx;
      out[i][1] += f * dy;
      out[i][2] += f * dz;
      out[i][3] -= b[j][3] / r;
    }
  }
}

Test(cli, output_in_input_order) {
  const double b[5][4] = {{0.3, -1.2, 0.5, 0.7},
                          {2.0, 0.1, -0.4, 1.3},
                          {-1.1, 0.9, 0.2, 0.2},
                          {0.4, 0.4, -2.0, 2.5},
                          {1.5, -0.8, 1.1, 0.9}};
  char text[1024] = "", line[200];
  for (int i = 0; i < 5; i++) {
    snprintf(line, sizeof line, "%.17g %.17g %.17g %.17g\n", b[i][0], b[i][1],
             b[i][2], b[i][3]);
    strcat(text, line);
  }
  write_text("in.txt", text);
  double want[5][4];
  direct_sum(5, b, want);
  table *t = forces("reference", NULL, NULL);
  cr_assert_eq(t->rows, 5);
  for (int i = 0; i < 5; i++)
    for (int c = 0; c < 4; c++)
      assert_close(t->v[i][c], want[i][c], 1e-12, "order");
  free(t);
}

/* Per-body relative errors of x against the truth y: |a_x - a_y| / |a_y|
 * and |phi_x - phi_y| / |phi_y|, summarised by their root mean square and
 * their maximum. */
typedef struct errors {
  double rms, max;
} errors;

static errors relative_errors(const table *x, const table *y) {
  cr_assert_eq(x->rows, y->rows);
  double sum2 = 0, worst = 0;
  for (size_t i = 0; i < y->rows; i++) {
    double da = 0, a = 0;
    for (int c = 0; c < 3; c++) {
      da += (x->v[i][c] - y->v[i][c]) * (x->v[i][c] - y->v[i][c]);
      a += y->v[i][c] * y->v[i][c];
    }
    const double ea = sqrt(da / a);
    const double ep = fabs(x->v[i][3] - y->v[i][3]) / fabs(y->v[i][3]);
    sum2 += ea * ea + ep * ep;
    worst = fmax(worst, fmax(ea, ep));
  }
  return (errors){sqrt(sum2 / (2.0 * (double)y->rows)), worst};
}

/* Single precision against the double-precision reference: 1e-5 relative
 * on average; one body whose force nearly cancels may reach 10 times
 * that (~20 ulp of float summed over 500 terms). */
static void assert_single_precision_close(const table *x, const table *y) {
  const errors e = relative_errors(x, y);
  cr_assert_lt(e.rms, 1e-5, "rms relative error %.3g", e.rms);
  cr_assert_lt(e.max, 1e-4, "max relative error %.3g", e.max);
}

/* Copies the positions and masses of p.txt (a Plummer file) to in.txt. */
static void plummer_input(const char *n) {
  make_plummer("p.txt", n, "5");
  cr_assert_eq(rename(sp("p.txt"), sp("in.txt")), 0);
}

Test(cli, direct_matches_reference) {
  plummer_input("500");
  table *ref = forces("reference", NULL, NULL);
  table *dir = forces("direct", NULL, NULL);
  cr_assert_eq(ref->rows, 500);
  cr_assert_eq(dir->rows, 500);
  assert_single_precision_close(dir, ref);
  free(ref);
  free(dir);
}

Test(cli, reference_matches_sum_here) {
  plummer_input("200");
  table *ref = forces("reference", NULL, NULL);
  table *p = read_table("in.txt", 7);
  double(*b)[4] = calloc(200, sizeof *b),
  (*want)[4] = calloc(200, sizeof *want);
  for (size_t i = 0; i < 200; i++)
    memcpy(b[i], p->v[i], sizeof b[i]);
  direct_sum(200, (const double(*)[4])b, want);
  /* The naive sum here rounds at ~1e-16 of the terms it adds, which can
   * exceed the net force a hundredfold. */
  for (size_t i = 0; i < 200; i++) {
    const double a = sqrt(want[i][0] * want[i][0] + want[i][1] * want[i][1] +
                          want[i][2] * want[i][2]);
    for (int c = 0; c < 3; c++)
      cr_assert(fabs(ref->v[i][c] - want[i][c]) <= 1e-11 * a,
                "body %zu column %d: %.17g vs %.17g", i, c, ref->v[i][c],
                want[i][c]);
    assert_close(ref->v[i][3], want[i][3], 1e-13, "potential");
  }
  free(b);
  free(want);
  free(p);
  free(ref);
}

Test(cli, threads_do_not_change_reference) {
  plummer_input("300");
  table *one = forces("reference", "--threads", "1");
  table *two = forces("reference", "--threads", "2");
  const errors e = relative_errors(two, one);
  cr_assert_lt(e.max, 1e-13, "1 vs 2 threads: %.3g", e.max);
  free(one);
  free(two);
}

/* Without --out the forces go to standard output; the timings and the
 * device go to standard error. */
Test(cli, standard_output_and_timings) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  cr_assert_eq(RUN("forces", "--in", sp("in.txt"), "--device", "cpu",
                   "--method", "reference"),
               0);
  cr_assert_eq(rename(sp("stdout.txt"), sp("copy.txt")), 0);
  table *t = read_table("copy.txt", 4);
  check_two_body(t, 1.0, 0.0);
  free(t);
  for (int p = 0; p < TFMM_PHASE_COUNT; p++) {
    static const char *const phases[] = {"prepare", "upload", "near",
                                         "download", "finish"};
    assert_stderr_has(phases[p]);
  }
  assert_stderr_has("total");
  assert_stderr_has("interactions/s");
  assert_stderr_has("CPU");
}

/* auto picks the GPU where there is one, else the CPU: either way the
 * answer must match the reference. */
Test(cli, device_auto) {
  plummer_input("256");
  table *ref = forces("reference", NULL, NULL);
  const int rc = RUN("forces", "--in", sp("in.txt"), "--out", sp("auto.txt"),
                     "--device", "auto", "--method", "direct");
  cr_assert_eq(rc, 0);
  assert_stderr_has("device");
  table *got = read_table("auto.txt", 4);
  assert_single_precision_close(got, ref);
  free(ref);
  free(got);
}

/* --device gpu either works or, without a GPU, fails cleanly. */
Test(cli, device_gpu_fails_cleanly_without_gpu) {
  write_text("in.txt", "0 0 0 1\n1 0 0 2\n");
  const int rc = RUN("forces", "--in", sp("in.txt"), "--out", sp("out.txt"),
                     "--device", "gpu", "--method", "direct");
  if (rc == 0) {
    table *t = read_table("out.txt", 4);
    assert_close(t->v[0][0], 2.0, 1e-6, "a_0 on the GPU");
    free(t);
    return;
  }
  cr_assert_eq(rc, 1, "exit code %d", rc);
  assert_stderr_has("tilefmm: ");
  cr_assert(!exists("out.txt"));
  assert_no_temporaries();
}
