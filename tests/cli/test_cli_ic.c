/* 'tilefmm ic MODEL' for every model: help, the file holding exactly the
 * library generator's bodies (printed with 17 digits, which read back to
 * the same doubles), reproducible files, and the merger's N >= 2 rule. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <criterion/criterion.h>

#include "tilefmm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(cli_ic, .init = scratch_make, .fini = scratch_remove);

typedef struct cli_model {
  const char *name;
  tfmm_status (*generate)(size_t n, uint64_t seed, double *pos, double *vel,
                          double *mass);
} cli_model;

static const cli_model models[] = {{"plummer", tfmm_ic_plummer},
                                   {"hernquist", tfmm_ic_hernquist},
                                   {"uniform", tfmm_ic_uniform},
                                   {"cold", tfmm_ic_cold},
                                   {"merger", tfmm_ic_merger}};
#define MODELS (sizeof models / sizeof models[0])

Test(cli_ic, help_lists_every_model) {
  cr_assert_eq(RUN("ic", "--help"), 0);
  for (size_t k = 0; k < MODELS; k++)
    assert_stdout_has(models[k].name);
}

Test(cli_ic, every_model_documents_its_flags) {
  for (size_t k = 0; k < MODELS; k++) {
    cr_assert_eq(RUN("ic", models[k].name, "--help"), 0, "%s", models[k].name);
    assert_stdout_has("--n");
    assert_stdout_has("--seed");
    assert_stdout_has("--out");
    assert_stdout_has("default");
    assert_stdout_has("G = M = 1");
  }
}

/* The file's rows are the generator's bodies, bit for bit. */
Test(cli_ic, every_model_writes_the_generator_bodies) {
  const size_t n = 301;
  double *pos = malloc(3 * n * sizeof(double)),
         *vel = malloc(3 * n * sizeof(double)),
         *mass = malloc(n * sizeof(double));
  cr_assert(pos != NULL && vel != NULL && mass != NULL);
  for (size_t k = 0; k < MODELS; k++) {
    const char *name = models[k].name;
    cr_assert_eq(
        RUN("ic", name, "--n", "301", "--seed", "17", "--out", sp("ic.txt")), 0,
        "%s", name);
    cr_assert_eq(models[k].generate(n, 17, pos, vel, mass), TFMM_OK);
    table *t = read_table("ic.txt", 7);
    cr_assert_eq(t->rows, n, "%s: %zu rows", name, t->rows);
    for (size_t i = 0; i < n; i++) {
      for (int d = 0; d < 3; d++) {
        cr_assert_eq(t->v[i][d], pos[3 * i + d], "%s: body %zu", name, i);
        cr_assert_eq(t->v[i][4 + d], vel[3 * i + d], "%s: body %zu", name, i);
      }
      cr_assert_eq(t->v[i][3], mass[i], "%s: body %zu", name, i);
    }
    free(t);
    char *text = read_text("ic.txt");
    char want[64];
    snprintf(want, sizeof want, "# tilefmm ic %s --n 301 --seed 17", name);
    cr_assert(strstr(text, want) != NULL, "%s: header", name);
    free(text);
  }
  free(pos);
  free(vel);
  free(mass);
}

Test(cli_ic, every_model_same_seed_same_file) {
  for (size_t k = 0; k < MODELS; k++) {
    const char *name = models[k].name;
    cr_assert_eq(
        RUN("ic", name, "--n", "200", "--seed", "5", "--out", sp("a.txt")), 0);
    cr_assert_eq(
        RUN("ic", name, "--n", "200", "--seed", "5", "--out", sp("b.txt")), 0);
    cr_assert_eq(RUN("ic", name, "--n", "200", "--seed", "6"), 0);
    char *a = read_text("a.txt"), *b = read_text("b.txt"),
         *c = read_text("stdout.txt");
    cr_assert_str_eq(a, b, "%s", name);
    /* The header names the seed; the bodies differ too (checked above
     * against the library), except the cold sphere's zero velocities. */
    cr_assert_str_neq(a, c, "%s", name);
    free(a);
    free(b);
    free(c);
  }
}

Test(cli_ic, merger_needs_two_bodies) {
  const char *args[] = {"ic",    "merger",      "--n", "1",
                        "--out", sp("out.txt"), NULL};
  expect_failure(args, 2, "--n", "an integer >= 2");
  cr_assert_eq(RUN("ic", "merger", "--n", "2", "--out", sp("out.txt")), 0);
  table *t = read_table("out.txt", 7);
  cr_assert_eq(t->rows, 2);
  /* The two point masses at apocentre: (+-2, 0, 0). */
  cr_assert(fabs(t->v[0][0] - 2) < 1e-15 && fabs(t->v[1][0] + 2) < 1e-15);
  free(t);
}

Test(cli_ic, every_model_rejects_zero_bodies) {
  for (size_t k = 0; k < MODELS; k++) {
    const char *args[] = {"ic",    models[k].name, "--n", "0",
                          "--out", sp("out.txt"),  NULL};
    expect_failure(args, 2, "--n", "invalid value");
    unlink(sp("out.txt")); /* expect_failure leaves PRECIOUS there */
  }
}
