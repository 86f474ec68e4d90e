/* The physics of tilefmm run across unit systems (issue 30): a built-in
 * model in physical units is the same physical model as in N-body units
 * (its energy scaled by G M^2 / R, its virial ratio the model's, its
 * energy conserved as well over the same number of its time units), and a
 * run whose energy drifts says so, and stops at --max-energy-error.
 * Direct summation keeps the forces exact and the runs short. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(run_physics, .init = scratch_make, .fini = scratch_remove);

/* 128 steps of the default dt: one time unit of the model. */
#define MODEL_RUN                                                              \
  "--n", "400", "--seed", "7", "--method", "direct", "--precision", "double",  \
      "--steps", "128", "--stats-every", "16", "--progress", "off", "--plots", \
      "off", "--threads", "1"

/* What a run's statistics.csv says: the total energy and virial ratio of
 * step 0, and the largest |dE/E| of its rows. */
typedef struct energy_record {
  double total0, virial0, worst;
  int rows;
} energy_record;

static int column(const char *header, const char *name) {
  int k = 0;
  const size_t len = strlen(name);
  for (const char *s = header; *s != '\0' && *s != '\n'; k++) {
    /* The name alone, or with its unit: "total [N-body energy]". */
    if (strncmp(s, name, len) == 0 &&
        (s[len] == ',' || s[len] == '\n' || strncmp(s + len, " [", 2) == 0))
      return k;
    s = strchr(s, ',');
    if (s == NULL)
      break;
    s++;
  }
  cr_assert_fail("statistics.csv has no column %s", name);
  return -1;
}

static double field(const char *line, int k) {
  for (int j = 0; j < k; j++) {
    line = strchr(line, ',');
    cr_assert_not_null(line);
    line++;
  }
  return strtod(line, NULL);
}

static energy_record read_record(const char *dir) {
  char name[256];
  snprintf(name, sizeof name, "%s/statistics.csv", dir);
  char *text = read_text(name);
  cr_assert_not_null(text, "no %s", name);
  const int total = column(text, "total"),
            error = column(text, "rel_energy_error"),
            virial = column(text, "virial_ratio");
  energy_record r = {0};
  for (char *line = strchr(text, '\n'); line != NULL && line[1] != '\0';
       line = strchr(line, '\n')) {
    line++;
    if (r.rows++ == 0) {
      r.total0 = field(line, total);
      r.virial0 = field(line, virial);
    }
    r.worst = fmax(r.worst, fabs(field(line, error)));
  }
  free(text);
  return r;
}

/* The bound both runs must keep over one time unit: 400 bodies, direct
 * forces, eps 0.01, dt 1/128 keep |dE/E| near 1e-4. */
#define ENERGY_BOUND 1e-3

static void expect_same_model(const energy_record *nb, const energy_record *u,
                              double energy_scale) {
  cr_expect_eq(u->rows, nb->rows);
  /* The same model: its energy in the run's units is G M^2 / R times the
   * N-body one, and its virial ratio 2K/|W| is the model's. */
  cr_expect(fabs(u->total0 / nb->total0 / energy_scale - 1) < 1e-9,
            "E0 %.17g, want %.17g", u->total0, nb->total0 * energy_scale);
  cr_expect(fabs(u->virial0 - nb->virial0) < 1e-9 * nb->virial0,
            "virial ratio %.17g, the N-body model's %.17g", u->virial0,
            nb->virial0);
  cr_expect(fabs(nb->virial0 - 1) < 0.2, "2K/|W| %g", nb->virial0);
  /* Conserved as well over the same number of dynamical times. */
  cr_expect(nb->worst < ENERGY_BOUND, "N-body |dE/E| %g", nb->worst);
  cr_expect(u->worst < ENERGY_BOUND, "|dE/E| %g in physical units (N-body %g)",
            u->worst, nb->worst);
  cr_expect(u->worst < 1.5 * nb->worst + 1e-12, "|dE/E| %g, N-body %g",
            u->worst, nb->worst);
}

Test(run_physics, galactic_model_is_the_nbody_model) {
  cr_assert_eq(RUN("run", "--out", sp("nb"), MODEL_RUN), 0, "%s",
               read_text("stderr.txt"));
  cr_assert_eq(RUN("run", "--units", "galactic", "--out", sp("ga"), MODEL_RUN),
               0, "%s", read_text("stderr.txt"));
  const energy_record nb = read_record("nb"), ga = read_record("ga");
  /* M = 1e10 Msun, R = 1 kpc by default. */
  expect_same_model(&nb, &ga, galactic_G());
}

Test(run_physics, model_mass_and_radius_scale_the_model) {
  cr_assert_eq(RUN("run", "--ic", "hernquist", "--out", sp("nb"), MODEL_RUN), 0,
               "%s", read_text("stderr.txt"));
  /* 5e11 Msun within 20 kpc, as a parameter file gives them. */
  cr_assert_eq(RUN("run", "--ic", "hernquist", "--units", "galactic", "-P",
                   "InitialConditions:model_mass:50", "-P",
                   "InitialConditions:model_radius:20", "--out", sp("ga"),
                   MODEL_RUN),
               0, "%s", read_text("stderr.txt"));
  const energy_record nb = read_record("nb"), ga = read_record("ga");
  expect_same_model(&nb, &ga, galactic_G() * 50 * 50 / 20);
  char *used = read_text("ga/used_parameters.yml");
  cr_expect(strstr(used, "model_mass: 50\n") != NULL, "%s", used);
  cr_expect(strstr(used, "model_radius: 20\n") != NULL, "%s", used);
  free(used);
}

/* A step far too long for the orbits: dE/E passes 1 % within 8 steps. */
#define DRIFTING                                                               \
  "--n", "200", "--method", "direct", "--dt", "0.25", "--steps", "8",          \
      "--progress", "off", "--plots", "off", "--threads", "1"

Test(run_physics, energy_drift_is_said_and_stops_the_run) {
  cr_assert_eq(
      RUN("run", "--out", sp("a"), "--max-energy-error", "0", DRIFTING), 0,
      "%s", read_text("stderr.txt"));
  assert_stderr_has("tilefmm run: warning: step ");
  assert_stderr_has("the energy has drifted by dE/E = ");
  const energy_record a = read_record("a");
  cr_assert_eq(a.rows, 9);
  cr_assert_gt(a.worst, 1e-2);
  /* The bound stops it at the first row past it, with the flag named. */
  const double bound = a.worst / 2;
  char b[32];
  snprintf(b, sizeof b, "%.6g", bound);
  cr_assert_eq(RUN("run", "--out", sp("b"), "--max-energy-error", b, DRIFTING),
               1, "%s", read_text("stderr.txt"));
  assert_stderr_has("passed --max-energy-error ");
  assert_stderr_has("the run stops here");
  const energy_record r = read_record("b");
  cr_expect_lt(r.rows, 9);
  cr_expect_gt(r.worst, bound);
  /* The parameter-file key, the same. */
  char key[64];
  snprintf(key, sizeof key, "Statistics:max_energy_error:%s", b);
  cr_assert_eq(RUN("run", "--out", sp("c"), "-P", key, DRIFTING), 1, "%s",
               read_text("stderr.txt"));
  assert_stderr_has("passed --max-energy-error ");
}

Test(run_physics, default_bound_stops_a_run_gone_wrong) {
  /* The default (100 %) stops what no bound would let go on. */
  cr_assert_eq(RUN("run", "--out", sp("a"), "--dt", "2", "--steps", "40", "--n",
                   "200", "--method", "direct", "--eps", "0", "--softening",
                   "plummer", "--progress", "off", "--plots", "off",
                   "--threads", "1"),
               1, "%s", read_text("stderr.txt"));
  assert_stderr_has("passed --max-energy-error 1:");
}
