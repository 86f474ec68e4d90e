/* tilefmm run and the measured error (docs/accuracy.md, "Measured
 * error"): statistics.csv gives each row's theta and order and the error
 * its step measured, snapshots the last one measured, and a checkpoint
 * older than the planner (no /RunState Choice*, no Gravity:measure)
 * restarts choosing afresh, its statistics continued with the new
 * columns empty. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot.h"
#include "tilefmm.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(run_measure, .init = scratch_make, .fini = scratch_remove);

#define NEW_COLUMNS                                                            \
  ",theta,order,error_p99,error_max,error_samples,error_group_p99,"            \
  "error_group_max\n"

/* Row k (0: the first after the header) of a CSV, its columns from the
 * 24th on (theta, order, error_p99, error_max, error_samples) in out. */
static void measured_columns(const char *name, int k, char *out, size_t size) {
  char *text = read_text(name);
  cr_assert_not_null(text, "%s missing", name);
  char *line = strchr(text, '\n');
  for (int j = 0; j < k && line != NULL; j++)
    line = strchr(line + 1, '\n');
  cr_assert(line != NULL && line[1] != '\0', "%s has no row %d", name, k);
  char *p = line + 1;
  for (int comma = 0; comma < 23; comma++) {
    p = strchr(p, ',');
    cr_assert_not_null(p, "row %d of %s is short", k, name);
    p++;
  }
  const size_t len = strcspn(p, "\n");
  snprintf(out, size, "%.*s", (int)len, p);
  free(text);
}

Test(run_measure, statistics_and_snapshots_carry_the_measured_error) {
  cr_assert_eq(RUN("run", "--n", "800", "--steps", "2", "--out", sp("o"),
                   "--progress", "off", "--plots", "off"),
               0);
  char *text = read_text("o/statistics.csv");
  cr_assert_not_null(strstr(text, "wall_step [s]" NEW_COLUMNS), "%s", text);
  free(text);
  char row[256];
  measured_columns("o/statistics.csv", 0, row, sizeof row);
  double theta, p99, max;
  int order;
  unsigned long samples;
  cr_assert_eq(
      sscanf(row, "%lf,%d,%lf,%lf,%lu", &theta, &order, &p99, &max, &samples),
      5, "row 0: '%s'", row);
  cr_expect(theta > 0 && theta <= 1 && order >= 0, "row 0: '%s'", row);
  cr_expect(p99 > 0 && p99 <= max && samples > 0, "row 0: '%s'", row);
  /* The worst group's (the CPU measures it): its largest error is at
   * least the sample's, the worst body being one of its bodies. */
  double group_p99, group_max;
  cr_assert_eq(sscanf(row, "%lf,%d,%lf,%lf,%lu,%lf,%lf", &theta, &order, &p99,
                      &max, &samples, &group_p99, &group_max),
               7, "row 0: '%s'", row);
  cr_expect(group_p99 > 0 && group_p99 <= group_max &&
                group_max >= (1 - 1e-12) * max,
            "row 0: '%s'", row);
  /* Snapshot 0000 says the same. */
  snapshot s;
  cr_assert(snapshot_read(sp("o/snapshot_0000.hdf5"), &s));
  const char *v = snapshot_attr_find(s.params, s.nparams, "Measured:error_p99");
  cr_assert_not_null(v);
  cr_expect_eq(strtod(v, NULL), p99, "Measured:error_p99 %s, row 0 %.17g", v,
               p99);
  v = snapshot_attr_find(s.params, s.nparams, "Measured:order");
  cr_expect(v != NULL && atoi(v) == order);
  v = snapshot_attr_find(s.params, s.nparams, "Measured:error_samples");
  cr_expect(v != NULL && strtoul(v, NULL, 10) == samples);
  v = snapshot_attr_find(s.params, s.nparams, "Measured:error_group_max");
  cr_expect(v != NULL && strtod(v, NULL) == group_max,
            "Measured:error_group_max %s, row 0 %.17g", v ? v : "(none)",
            group_max);
  snapshot_free(&s);
  /* measure off: the setting, nothing measured. */
  cr_assert_eq(RUN("run", "--n", "800", "--steps", "1", "--out", sp("off"),
                   "--progress", "off", "--plots", "off", "--measure", "off"),
               0);
  measured_columns("off/statistics.csv", 0, row, sizeof row);
  cr_assert_eq(sscanf(row, "%lf,%d", &theta, &order), 2, "'%s'", row);
  cr_expect_not_null(strstr(row, ",,,"), "'%s'", row);
  /* direct: no theta, no order. */
  cr_assert_eq(RUN("run", "--n", "300", "--steps", "1", "--out", sp("d"),
                   "--progress", "off", "--plots", "off", "--method", "direct"),
               0);
  measured_columns("d/statistics.csv", 0, row, sizeof row);
  cr_expect_str_eq(row, ",,,,,,");
}

/* Drops the attributes of attrs[0 .. *count) whose names start with one
 * of prefixes; returns how many. */
static size_t drop(snapshot_attr *attrs, size_t *count,
                   const char *const *prefixes, size_t nprefixes) {
  size_t kept = 0, dropped = 0;
  for (size_t k = 0; k < *count; k++) {
    int hit = 0;
    for (size_t j = 0; j < nprefixes; j++)
      hit |= strncmp(attrs[k].name, prefixes[j], strlen(prefixes[j])) == 0;
    if (hit) {
      free(attrs[k].name);
      free(attrs[k].value);
      dropped++;
      continue;
    }
    attrs[kept++] = attrs[k];
  }
  *count = kept;
  return dropped;
}

Test(run_measure, checkpoint_before_the_planner_restarts_choosing_afresh) {
  cr_assert_eq(RUN("run", "--n", "600", "--steps", "2", "--out", sp("a"),
                   "--progress", "off", "--plots", "off"),
               0);
  snapshot cp;
  cr_assert(snapshot_read(sp("a/checkpoint.hdf5"), &cp));
  const char *state[] = {"Choice"};
  cr_assert_eq(drop(cp.state, &cp.nstate, state, 1), 13); /* every field */
  const char *params[] = {"Gravity:measure", "Gravity:error_sample",
                          "Gravity:verify"};
  cr_assert_eq(drop(cp.params, &cp.nparams, params, 3), 3);
  cr_assert(snapshot_write(sp("a/old.hdf5"), &cp));
  snapshot_free(&cp);
  /* Its statistics as an older tilefmm wrote them: without the columns
   * of the measured error, nor units in the header. */
  char *text = read_text("a/statistics.csv");
  cr_assert_not_null(text);
  char *older = malloc(strlen(text) + 1), *o = older;
  const char old_header[] =
      "step,time,kinetic,potential,total,rel_energy_error,px,py,pz,lx,ly,lz,"
      "virial_ratio,com_x,com_y,com_z,leaf_size,wall_tree,wall_near,wall_far,"
      "wall_integrate,wall_io,wall_step\n";
  o += sprintf(o, "%s", old_header);
  for (char *line = strchr(text, '\n') + 1; *line != '\0';) {
    const size_t len = strcspn(line, "\n");
    const char *p = line;
    for (int comma = 0; comma < 23 && p != NULL; comma++)
      p = memchr(p + (comma > 0), ',', (size_t)(line + len - p));
    const size_t keep = p != NULL ? (size_t)(p - line) : len;
    memcpy(o, line, keep);
    o += keep;
    *o++ = '\n';
    line += len + (line[len] == '\n');
  }
  *o = '\0';
  cr_assert_null(strstr(older, "theta"), "%s", older);
  write_text("a/statistics.csv", older);
  free(text);
  free(older);
  cr_assert_eq(RUN("run", "--restart", sp("a/old.hdf5"), "--steps", "3",
                   "--progress", "off", "--plots", "off"),
               0);
  assert_stderr_has("holds no planner state");
  assert_stderr_has("chosen afresh");
  text = read_text("a/statistics.csv");
  cr_assert_not_null(strstr(text, "wall_step [s]" NEW_COLUMNS), "%s", text);
  free(text);
  char row[256];
  measured_columns("a/statistics.csv", 0, row, sizeof row);
  cr_expect_str_eq(row, ",,,,,,", "an older row continues empty");
  /* The restart's step measured again: its row has the error. */
  measured_columns("a/statistics.csv", 3, row, sizeof row);
  double theta, p99, max;
  int order;
  unsigned long samples;
  cr_expect_eq(
      sscanf(row, "%lf,%d,%lf,%lf,%lu", &theta, &order, &p99, &max, &samples),
      5, "row 3: '%s'", row);
}

/* The error criterion's epsilon is chosen by the planner and kept in the
 * checkpoint (ChoiceEpsilon), so that a restart continues bit for bit. */
Test(run_measure, error_criterion_restart_is_bit_identical) {
  cr_assert_eq(RUN("run", "--n", "1500", "--steps", "6", "--out", sp("a"),
                   "--mac", "error", "--snapshot-every", "3", "--progress",
                   "off", "--plots", "off"),
               0);
  cr_assert_eq(RUN("run", "--n", "1500", "--steps", "3", "--out", sp("b"),
                   "--mac", "error", "--snapshot-every", "3", "--progress",
                   "off", "--plots", "off"),
               0);
  snapshot cp;
  cr_assert(snapshot_read(sp("b/checkpoint.hdf5"), &cp));
  const char *eps = snapshot_attr_find(cp.state, cp.nstate, "ChoiceEpsilon");
  cr_assert_not_null(eps);
  cr_expect_gt(strtod(eps, NULL), 0, "ChoiceEpsilon %s", eps);
  snapshot_free(&cp);
  cr_assert_eq(RUN("run", "--restart", sp("b/checkpoint.hdf5"), "--steps", "6",
                   "--progress", "off", "--plots", "off"),
               0, "restart failed");
  snapshot a, b;
  cr_assert(snapshot_read(sp("a/checkpoint.hdf5"), &a));
  cr_assert(snapshot_read(sp("b/checkpoint.hdf5"), &b));
  cr_assert_eq(a.n, b.n);
  for (size_t i = 0; i < 3 * a.n; i++) {
    cr_expect_eq(a.pos[i], b.pos[i], "pos %zu", i);
    cr_expect_eq(a.vel[i], b.vel[i], "vel %zu", i);
  }
  snapshot_free(&a);
  snapshot_free(&b);
}
