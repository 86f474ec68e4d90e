/* Inputs whose range single precision cannot hold (issue 29): a group of
 * bodies 1e12 away from one more, with eps 0.01, and a Tipsy file with a
 * coordinate of 3e38. Single precision used to refuse them as "bodies
 * nearly coincident with eps = 0?", which they are not; they are run in
 * double where single cannot hold them, and must then agree with the
 * double-precision reference sum. */
#define _POSIX_C_SOURCE 200809L
#include "binary_writer.h"
#include "harness.h"

#include <criterion/criterion.h>

#include <criterion/logging.h>
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

TestSuite(range, .init = scratch_make, .fini = scratch_remove);

static uint64_t fresh_seed(void) {
  const uint64_t seed =
      (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid() * 7919u;
  cr_log_info("seed %llu", (unsigned long long)seed);
  return seed;
}

/* name: n random bodies of mass 1 / n in the unit cube, then one of mass
 * 1e-3 at (far, 0, 0). */
static void write_far_body(const char *name, int n, double far) {
  uint64_t s = fresh_seed();
  FILE *f = fopen(sp(name), "w");
  cr_assert_not_null(f);
  for (int i = 0; i < n; i++) {
    double x[3];
    for (int k = 0; k < 3; k++) {
      s = s * 6364136223846793005u + 1442695040888963407u;
      x[k] = (double)(s >> 11) / 9007199254740992.0;
    }
    fprintf(f, "%.17g %.17g %.17g %.17g\n", x[0], x[1], x[2], 1.0 / n);
  }
  fprintf(f, "%.17g 0 0 1e-3\n", far);
  fclose(f);
}

/* out.txt against ref.txt: every body's acceleration within rel of the
 * reference's, and its potential too. */
static void assert_matches_reference(const char *what, double rel) {
  table *got = read_table("out.txt", 4), *want = read_table("ref.txt", 4);
  cr_assert_eq(got->rows, want->rows, "%s: %zu rows, want %zu", what, got->rows,
               want->rows);
  for (size_t i = 0; i < want->rows; i++) {
    const double *a = got->v[i], *b = want->v[i];
    const double err =
        sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
             (a[2] - b[2]) * (a[2] - b[2]));
    const double mag = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
    cr_assert(err <= rel * mag, "%s: body %zu: acceleration error %g of %g",
              what, i, err, mag);
    cr_assert(fabs(a[3] - b[3]) <= rel * fabs(b[3]),
              "%s: body %zu: potential %.17g, want %.17g", what, i, a[3], b[3]);
  }
  free(got);
  free(want);
}

/* forces on in with eps, by each method and precision, against the
 * reference. In double too: the tree's near field and direct took the
 * bodies relative to a centre, which lost a group beside a far body (the
 * Tipsy file's came out as one point). */
static void check_methods(const char *in, const char *eps) {
  cr_assert_eq(RUN("forces", "--in", sp(in), "--eps", eps, "--method",
                   "reference", "--out", sp("ref.txt")),
               0);
  const char *methods[] = {"bh", "fmm", "direct"};
  const char *precisions[] = {"single", "auto", "double"};
  for (int m = 0; m < 3; m++)
    for (int p = 0; p < 3; p++) {
      char what[64];
      snprintf(what, sizeof what, "%s, %s precision", methods[m],
               precisions[p]);
      const int rc = RUN("forces", "--in", sp(in), "--eps", eps, "--method",
                         methods[m], "--precision", precisions[p], "--device",
                         "cpu", "--out", sp("out.txt"));
      char *err = read_text("stderr.txt");
      cr_assert_eq(rc, 0, "%s: exit %d:\n%s", what, rc, err);
      cr_expect(strstr(err, "coincident") == NULL, "%s:\n%s", what, err);
      free(err);
      assert_matches_reference(what, 1e-3);
    }
}

/* 400 bodies in a unit cube and one 1e12 away, eps 0.01: float resolves
 * the group's coordinates to 2^-24 of 1e12, and the tree's 1 / rho^3 at
 * eps overflows it, once in the solver's units. */
Test(range, a_body_far_from_a_group_is_summed_right, .timeout = 120) {
  write_far_body("far.txt", 400, 1e12);
  check_methods("far.txt", "0.01");
}

/* The same bodies run: its first step was refused. */
Test(range, a_run_with_a_far_body_steps, .timeout = 120) {
  write_far_body("far.txt", 200, 1e12);
  const int rc = RUN("run", "--ic", sp("far.txt"), "--eps", "0.01", "--steps",
                     "2", "--out", sp("g"), "--progress", "off");
  char *err = read_text("stderr.txt");
  cr_assert_eq(rc, 0, "exit %d:\n%s", rc, err);
  cr_expect(strstr(err, "coincident") == NULL, "%s", err);
  free(err);
}

/* A Tipsy file (float coordinates) with one body at x = 3e38, near the
 * float's largest value. */
Test(range, a_tipsy_coordinate_of_3e38_is_summed_right, .timeout = 120) {
  const size_t count[NTYPES] = {0, 300, 0, 0, 0, 0};
  model m = model_random(count, fresh_seed(), 1);
  m.b[1][0].x[0] = 3e38;
  tipsy_write(&m, 0.0, 0, 1, sp("far.bin"));
  model_free(&m);
  check_methods("far.bin", "0.01");
}

/* Two bodies 1e-15 apart beside 100 others, eps = 0: distinct in double,
 * one point once packed in float, and direct refused them as "at one
 * point in single precision ... set eps > 0". */
Test(range, a_close_pair_with_eps_0_is_summed_in_double, .timeout = 120) {
  write_far_body("close.txt", 100, 2.0);
  FILE *f = fopen(sp("close.txt"), "a");
  cr_assert_not_null(f);
  fprintf(f, "0.5 0.5 0.5 0.01\n0.5 0.5 0.500000000000001 0.01\n");
  fclose(f);
  cr_assert_eq(RUN("forces", "--in", sp("close.txt"), "--method", "reference",
                   "--out", sp("ref.txt")),
               0);
  const int rc =
      RUN("forces", "--in", sp("close.txt"), "--method", "direct",
          "--precision", "single", "--device", "cpu", "--out", sp("out.txt"));
  char *err = read_text("stderr.txt");
  cr_assert_eq(rc, 0, "exit %d:\n%s", rc, err);
  free(err);
  assert_matches_reference("direct, single precision", 1e-6);
}

/* eps 1e17 times the bodies' size: pulls of m r / eps^3, about 1e-51,
 * below float's range, came out as 0 in single precision while the
 * reference had them. Summed in double. */
Test(range, an_eps_far_above_the_span_is_summed_in_double, .timeout = 120) {
  write_far_body("wide.txt", 50, 0.5);
  check_methods("wide.txt", "1e17");
}

/* Forces below double's range are refused, naming it, and nothing is
 * written: eps 1e120 times the size (accelerations of 1e-360 in the sums),
 * and bodies 1e200 apart (1e-400 once in the caller's units). They came
 * out as 0, exit 0. */
Test(range, forces_below_double_are_refused, .timeout = 120) {
  write_far_body("wide.txt", 50, 0.5);
  const char *methods[] = {"reference", "direct", "bh", "fmm"};
  for (int m = 0; m < 4; m++) {
    unlink(sp("out.txt"));
    expect_failure((const char *const[]){"forces", "--in", sp("wide.txt"),
                                         "--eps", "1e120", "--method",
                                         methods[m], "--device", "cpu", "--out",
                                         sp("out.txt"), NULL},
                   1, "below the range of double precision", "eps 1e+120");
  }
  FILE *f = fopen(sp("huge.txt"), "w");
  cr_assert_not_null(f);
  fprintf(f, "0 0 0 1\n1e200 0 0 1\n0 1e200 0 1\n");
  fclose(f);
  for (int m = 0; m < 4; m++) {
    unlink(sp("out.txt"));
    expect_failure((const char *const[]){"forces", "--in", sp("huge.txt"),
                                         "--method", methods[m], "--device",
                                         "cpu", "--out", sp("out.txt"), NULL},
                   1, "below the range of double precision", "body 0");
  }
}
