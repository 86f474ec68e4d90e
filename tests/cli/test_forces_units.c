/* tilefmm forces on a snapshot with physical units (issue 30): the forces
 * are computed in the file's units, with the G they need, as a direct
 * sum in long double here gives them; a --G that contradicts them is
 * refused. And --out FILE.hdf5 writes an HDF5 snapshot of the bodies with
 * their Accelerations and Potentials, the same numbers as the text. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include "snapshot.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

TestSuite(forces_units, .init = scratch_make, .fini = scratch_remove);

#define N 300
#define KPC 3.0856775814913673e21
#define MSUN10 1.98841e43
#define KMS 1e5

/* A fresh galaxy-sized cloud: 30 kpc across, 1e8 to 1e9 Msun a body. */
typedef struct cloud {
  double pos[3 * N], vel[3 * N], mass[N];
  uint64_t ids[N];
} cloud;

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void make_cloud(cloud *c, const char *name, units u) {
  uint64_t s = 0x9E3779B97F4A7C15u ^ (uint64_t)time(NULL);
  for (size_t i = 0; i < N; i++) {
    for (int d = 0; d < 3; d++) {
      c->pos[3 * i + d] = 30.0 * ((double)(next(&s) >> 11) / 0x1p53 - 0.5);
      c->vel[3 * i + d] = 100.0 * ((double)(next(&s) >> 11) / 0x1p53 - 0.5);
    }
    c->mass[i] = 0.01 + 0.09 * (double)(next(&s) >> 11) / 0x1p53;
    c->ids[i] = i + 1;
  }
  const snapshot snap = {.n = N,
                         .pos = c->pos,
                         .vel = c->vel,
                         .mass = c->mass,
                         .ids = c->ids,
                         .units = u};
  cr_assert(snapshot_write(sp(name), &snap));
}

/* Newton's direct sum in long double, G times it: the truth. */
static void direct(const cloud *c, double G, double *acc, double *pot) {
  for (size_t i = 0; i < N; i++) {
    long double a[3] = {0, 0, 0}, p = 0;
    for (size_t j = 0; j < N; j++) {
      if (j == i)
        continue;
      long double d[3], r2 = 0;
      for (int k = 0; k < 3; k++) {
        d[k] = (long double)c->pos[3 * j + k] - c->pos[3 * i + k];
        r2 += d[k] * d[k];
      }
      const long double r = sqrtl(r2);
      for (int k = 0; k < 3; k++)
        a[k] += c->mass[j] * d[k] / (r2 * r);
      p -= c->mass[j] / r;
    }
    for (int k = 0; k < 3; k++)
      acc[3 * i + k] = (double)(G * a[k]);
    pot[i] = (double)(G * p);
  }
}

static void expect_forces(const char *name, const cloud *c, double G) {
  static double acc[3 * N], pot[N];
  direct(c, G, acc, pot);
  table *t = read_table(name, 4);
  cr_assert_eq(t->rows, N);
  for (size_t i = 0; i < N; i++) {
    const double a = hypot(hypot(acc[3 * i], acc[3 * i + 1]), acc[3 * i + 2]);
    for (int k = 0; k < 3; k++)
      cr_assert(fabs(t->v[i][k] - acc[3 * i + k]) <= 1e-12 * a,
                "body %zu a%d %.17g, want %.17g (G = %.9g)", i, k, t->v[i][k],
                acc[3 * i + k], G);
    assert_close(t->v[i][3], pot[i], 1e-12, "phi");
  }
  free(t);
}

Test(forces_units, computed_in_the_files_units) {
  static cloud c;
  make_cloud(&c, "g.hdf5", (units){MSUN10, KPC, KMS, 1, 1});
  cr_assert_eq(RUN("forces", "--in", sp("g.hdf5"), "--method", "direct",
                   "--precision", "double", "--eps", "0", "--out", sp("f.txt")),
               0, "%s", read_text("stderr.txt"));
  assert_stderr_has("G = 43009.1755 (from the units)");
  expect_forces("f.txt", &c, galactic_G());
  /* The same numbers in N-body units: G = 1, as before. */
  make_cloud(&c, "n.hdf5", (units){0});
  cr_assert_eq(RUN("forces", "--in", sp("n.hdf5"), "--method", "direct",
                   "--precision", "double", "--eps", "0", "--out", sp("n.txt")),
               0, "%s", read_text("stderr.txt"));
  expect_forces("n.txt", &c, 1);
}

Test(forces_units, contradicting_G_is_refused) {
  static cloud c;
  make_cloud(&c, "g.hdf5", (units){MSUN10, KPC, KMS, 1, 1});
  cr_assert_eq(
      RUN("forces", "--in", sp("g.hdf5"), "--G", "1", "--out", sp("f.txt")), 2);
  assert_stderr_has("--G 1 contradicts the units of");
  assert_stderr_has("in which G = 43009.1755");
  cr_expect(!exists("f.txt"));
  /* GADGET's 43007.1 is the same G to 1e-4: taken. */
  cr_assert_eq(RUN("forces", "--in", sp("g.hdf5"), "--G", "43007.1", "--method",
                   "direct", "--precision", "double", "--eps", "0", "--out",
                   sp("f.txt")),
               0, "%s", read_text("stderr.txt"));
  expect_forces("f.txt", &c, 43007.1);
}

Test(forces_units, hdf5_out_is_a_snapshot_with_the_forces) {
  static cloud c;
  make_cloud(&c, "g.hdf5", (units){MSUN10, KPC, KMS, 1, 1});
  cr_assert_eq(RUN("forces", "--in", sp("g.hdf5"), "--method", "direct",
                   "--precision", "double", "--eps", "0", "--out", sp("f.txt")),
               0, "%s", read_text("stderr.txt"));
  cr_assert_eq(RUN("forces", "--in", sp("g.hdf5"), "--method", "direct",
                   "--precision", "double", "--eps", "0", "--out",
                   sp("f.hdf5")),
               0, "%s", read_text("stderr.txt"));
  cr_assert(snapshot_is_hdf5(sp("f.hdf5")), "--out f.hdf5 is not HDF5");
  snapshot s;
  cr_assert_eq(snapshot_read(sp("f.hdf5"), &s), 1);
  cr_assert_eq(s.n, N);
  cr_assert_not_null(s.acc, "no Accelerations");
  cr_assert_not_null(s.pot, "no Potentials");
  cr_expect_eq(s.units.mass, MSUN10);
  cr_expect_eq(s.units.length, KPC);
  table *t = read_table("f.txt", 4);
  for (size_t i = 0; i < N; i++) {
    for (int k = 0; k < 3; k++) {
      cr_assert_eq(s.pos[3 * i + k], c.pos[3 * i + k]);
      cr_assert_eq(s.acc[3 * i + k], t->v[i][k], "body %zu", i);
    }
    cr_assert_eq(s.mass[i], c.mass[i]);
    cr_assert_eq(s.pot[i], t->v[i][3], "body %zu", i);
  }
  free(t);
  snapshot_free(&s);
  /* --format text keeps text whatever the name; hdf5 is no stream. */
  cr_assert_eq(RUN("forces", "--in", sp("g.hdf5"), "--method", "direct",
                   "--precision", "double", "--format", "text", "--out",
                   sp("t.hdf5")),
               0);
  cr_expect(!snapshot_is_hdf5(sp("t.hdf5")));
  cr_assert_eq(RUN("forces", "--in", sp("g.hdf5"), "--format", "hdf5"), 2);
  assert_stderr_has("an HDF5 file cannot go to standard output");
}
