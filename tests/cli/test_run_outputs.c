/* tilefmm run's outputs in time: an output list (--output-times,
 * Snapshots:output_list) gives snapshots whose time is each listed time
 * exactly, whose bodies are the run's own on a step and the step before
 * carried to the time between steps (checked against x + v tau + a
 * tau^2 / 2 computed here from that step's snapshot); bad lists are
 * refused naming the file and line; a restart writes only the times after
 * its checkpoint, the same bits as the run straight through. And a run to
 * --t-end ends with a snapshot at its end time (issue 31), and its summary
 * counts the files and bytes it wrote. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "read_snap.h"
#include "snapshot.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(run_outputs, .init = scratch_make, .fini = scratch_remove);

#define LIST "# Time\n0\n0.01  # between steps 1 and 2\n\n0.03125\n0.05\n0.2\n"

/* A run with steps of 1/128 to t = 1/16 and snapshots every step, and the
 * same run with the list: on a step (0, 1/32) the list's snapshot is the
 * step's bit for bit; between steps it is the step before carried to the
 * time; the time past the end (0.2) has none. */
Test(run_outputs, snapshots_at_exactly_the_listed_times) {
  write_text("times.txt", LIST);
  cr_assert_eq(RUN("run", "--n", "300", "--t-end", "0.0625", "--out", sp("l"),
                   "--output-times", sp("times.txt"), "--method", "direct",
                   "--progress", "off", "--plots", "off"),
               0);
  assert_stderr_has("1 of the 5 times");
  cr_assert_eq(RUN("run", "--n", "300", "--t-end", "0.0625", "--out", sp("e"),
                   "--snapshot-every", "1", "--method", "direct", "--progress",
                   "off", "--plots", "off"),
               0);
  const double want[] = {0, 0.01, 0.03125, 0.05};
  const int step_before[] = {0, 1, 4, 6};
  for (int j = 0; j < 4; j++) {
    char name[64], before[64];
    snprintf(name, sizeof name, "l/snapshot_%04d.hdf5", j);
    snprintf(before, sizeof before, "e/snapshot_%04d.hdf5", step_before[j]);
    snapshot s = read_snap(name), b = read_snap(before);
    cr_assert_eq(s.time, want[j], "%s: time %.17g", name, s.time);
    cr_assert_eq(s.n, b.n);
    cr_assert_not_null(b.acc);
    const double tau = want[j] - b.time;
    double worst = 0;
    for (size_t k = 0; k < 3 * s.n; k++) {
      const double x = b.pos[k] + tau * (b.vel[k] + 0.5 * tau * b.acc[k]);
      const double v = b.vel[k] + b.acc[k] * tau;
      /* Positions to round-off (the ones read back here went through the
       * snapshot's layout once more), velocities exactly. */
      worst = fmax(worst, fabs(s.pos[k] - x) / (1 + fabs(x)));
      cr_assert_eq(s.vel[k], v, "%s: velocity %zu", name, k);
      if (tau == 0)
        cr_assert(s.pos[k] == b.pos[k] && s.vel[k] == b.vel[k],
                  "%s: not the step's state bit for bit", name);
    }
    cr_assert_lt(worst, 1e-14, "%s: %.3g from the prediction", name, worst);
    if (tau != 0) /* the bodies moved: not the step before itself */
      cr_assert_neq(s.pos[0], b.pos[0]);
    snapshot_free(&s);
    snapshot_free(&b);
  }
  cr_assert(!exists("l/snapshot_0004.hdf5"), "a snapshot past the end");
}

/* The parameter file's Snapshots:output_list, with individual steps. */
Test(run_outputs, parameter_file_and_individual_steps) {
  write_text("times.txt", "0.01\n0.02\n");
  char yml[512];
  snprintf(yml, sizeof yml, "Snapshots:\n  output_list: %s\n", sp("times.txt"));
  write_text("p.yml", yml);
  cr_assert_eq(RUN("run", "--n", "200", "--t-end", "0.03125", "--eta", "0.025",
                   "--dt", "0.0078125", "--out", sp("b"), "--params",
                   sp("p.yml"), "--progress", "off", "--plots", "off"),
               0);
  for (int j = 0; j < 2; j++) {
    char name[64];
    snprintf(name, sizeof name, "b/snapshot_%04d.hdf5", j);
    snapshot s = read_snap(name);
    cr_assert_eq(s.time, 0.01 * (j + 1), "%s: time %.17g", name, s.time);
    snapshot_free(&s);
  }
  char *used = read_text("b/used_parameters.yml");
  cr_assert_not_null(strstr(used, "output_list:"), "%s", used);
  free(used);
}

/* A restart continues with the times after its checkpoint: the one
 * between (snapshot 0001, removed) is not written again, and the next is
 * the run straight through's bit for bit. */
Test(run_outputs, restart_continues_with_the_times_not_written) {
  write_text("times.txt", "0\n0.01\n0.05\n");
  const char *common[] = {"--n",           "300",        "--output-times",
                          sp("times.txt"), "--progress", "off",
                          "--plots",       "off"};
  (void)common;
  cr_assert_eq(RUN("run", "--n", "300", "--output-times", sp("times.txt"),
                   "--t-end", "0.0625", "--out", sp("s"), "--progress", "off",
                   "--plots", "off"),
               0);
  cr_assert_eq(RUN("run", "--n", "300", "--output-times", sp("times.txt"),
                   "--t-end", "0.03125", "--out", sp("r"), "--progress", "off",
                   "--plots", "off"),
               0);
  cr_assert(!exists("r/snapshot_0002.hdf5"));
  cr_assert_eq(remove(sp("r/snapshot_0001.hdf5")), 0);
  cr_assert_eq(RUN("run", "--restart", sp("r/checkpoint.hdf5"), "--t-end",
                   "0.0625", "--progress", "off", "--plots", "off"),
               0);
  cr_assert(!exists("r/snapshot_0001.hdf5"), "an earlier time written again");
  snapshot a = read_snap("s/snapshot_0002.hdf5"),
           b = read_snap("r/snapshot_0002.hdf5");
  cr_assert_eq(b.time, 0.05);
  cr_assert_eq(a.n, b.n);
  cr_assert_eq(memcmp(a.pos, b.pos, 3 * a.n * sizeof *a.pos), 0,
               "the restart's snapshot differs from the straight run's");
  snapshot_free(&a);
  snapshot_free(&b);
}

/* Each bad list refused (exit 2) naming the file and the line. */
Test(run_outputs, bad_lists_name_the_file_and_line) {
  const struct {
    const char *text, *needle;
  } bad[] = {
      {"0.1\nsoon\n", "times.txt:2: 'soon' is not a time"},
      {"0.1\n0.2 0.3\n", "times.txt:2: '0.2 0.3' is not a time"},
      {"# Time\n0.2\n0.1\n", "times.txt:3: the time 0.10000000000000001 is "
                             "not after"},
      {"0.2\n0.2\n", "times.txt:2: the time 0.20000000000000001 is not after"},
      {"-0.5\n", "times.txt:1: the time -0.5 is before the start"},
      {"0.1\nnan\n", "times.txt:2: the time nan is not finite"},
      {"inf\n", "times.txt:1: the time inf is not finite"},
      {"# only a comment\n\n", "times.txt: the output list holds no time"},
      {"# Redshift\n3\n", "times.txt:1: '# Redshift': tilefmm has no "
                          "cosmology"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    write_text("times.txt", bad[k].text);
    const int rc = RUN("run", "--n", "100", "--steps", "1", "--out", sp("x"),
                       "--output-times", sp("times.txt"), "--progress", "off",
                       "--plots", "off");
    cr_assert_eq(rc, 2, "case %zu: exit %d", k, rc);
    assert_stderr_has(bad[k].needle);
    cr_assert(!exists("x/snapshot_0000.hdf5"), "case %zu: a snapshot", k);
  }
  cr_assert_eq(RUN("run", "--n", "100", "--steps", "1", "--out", sp("x"),
                   "--output-times", sp("none.txt"), "--progress", "off"),
               2);
  assert_stderr_has("none.txt: cannot read the output list");
  write_text("times.txt", "0\n");
  cr_assert_eq(RUN("run", "--n", "100", "--steps", "1", "--out", sp("x"),
                   "--output-times", sp("times.txt"), "--snapshot-every", "2"),
               2);
  assert_stderr_has("--output-times (Snapshots:output_list) and "
                    "--snapshot-every both given");
}

/* A run to t = 1 with steps of 1/32 and a snapshot every 10 steps ends
 * with one at t = 1, numbered after the last (it ended at t = 0.9375:
 * issue 31); likewise by time. */
Test(run_outputs, final_snapshot_at_the_end_time) {
  cr_assert_eq(RUN("run", "--n", "100", "--dt", "0.03125", "--t-end", "1",
                   "--snapshot-every", "10", "--method", "direct", "--out",
                   sp("f"), "--progress", "off", "--plots", "off"),
               0);
  snapshot s = read_snap("f/snapshot_0003.hdf5");
  cr_assert_eq(s.time, 0.9375);
  snapshot_free(&s);
  s = read_snap("f/snapshot_0004.hdf5");
  cr_assert_eq(s.time, 1.0);
  snapshot_free(&s);
  cr_assert(!exists("f/snapshot_0005.hdf5"));
  cr_assert_eq(RUN("run", "--n", "100", "--dt", "0.03125", "--t-end", "0.5",
                   "--snapshot-dt", "0.15625", "--method", "direct", "--out",
                   sp("g"), "--progress", "off", "--plots", "off"),
               0);
  s = read_snap("g/snapshot_0004.hdf5");
  cr_assert_eq(s.time, 0.5);
  snapshot_free(&s);
  cr_assert(!exists("g/snapshot_0005.hdf5"));
}

static double file_bytes(const char *name) {
  struct stat st;
  cr_assert_eq(stat(sp(name), &st), 0, "%s: not written", name);
  return (double)st.st_size;
}

/* The summary's output line counts what the writer wrote: snapshots 0-4
 * and the checkpoints of steps 0 and 20 (the second replaces the first,
 * and is as large: the same datasets and attributes), as stat sees them. */
Test(run_outputs, summary_counts_the_files_written) {
  cr_assert_eq(RUN("run", "--n", "3000", "--steps", "20", "--snapshot-every",
                   "5", "--method", "direct", "--out", sp("o"), "--progress",
                   "off", "--plots", "off"),
               0);
  double want = 2 * file_bytes("o/checkpoint.hdf5");
  char name[64];
  for (int k = 0; k < 5; k++) {
    snprintf(name, sizeof name, "o/snapshot_%04d.hdf5", k);
    want += file_bytes(name);
  }
  cr_assert(!exists("o/snapshot_0005.hdf5"));
  char *out = read_text("stdout.txt");
  const char *line = strstr(out, "  output: ");
  cr_assert(line != NULL, "no output line:\n%s", out);
  long long files = 0;
  double mb = 0, write = -1, rate = -1, sync = -1, waited = -1, end = -1;
  const int got =
      sscanf(line,
             "  output: %lld files, %lf MB, written in %lf s (%lf GB/s) and "
             "synced in %lf s by the writer's thread; the steps waited %lf s "
             "for it, the end %lf s",
             &files, &mb, &write, &rate, &sync, &waited, &end);
  cr_assert_eq(got, 7, "output line not as documented: %s", line);
  cr_assert_eq(files, 7, "%lld files counted, 7 written", files);
  /* The line prints MB to one decimal: within half of the last. */
  cr_assert(fabs(mb - 1e-6 * want) <= 0.05 + 1e-9, "%.1f MB, want %.6f", mb,
            1e-6 * want);
  cr_assert(write > 0 && sync >= 0 && waited >= 0 && end >= 0, "%s", line);
  cr_assert(strstr(out, "  note: the steps waited") == NULL,
            "a note of waiting where the writer keeps up:\n%s", out);
  free(out);
}

/* A writer slower than the steps (each dataset write of the snapshots
 * held 0.1 s: hdf5_stall.c's slow disk): the summary says the steps
 * waited and names a cadence, one above the run's every 2 steps (at the
 * writer's speed the note is silent: summary_counts_the_files_written). */
Test(run_outputs, a_slow_writer_is_named_with_a_cadence) {
  if (access(TFMM_HDF5_STALL, R_OK) != 0)
    cr_skip_test("no %s", TFMM_HDF5_STALL);
  char cmd[4096];
  snprintf(
      cmd, sizeof cmd,
      "%sTFMM_HDF5_SLOW=snapshot_ LD_PRELOAD=%s %s run --n 2000 --steps 12 "
      "--snapshot-every 2 --method direct --progress off --plots off "
      "--out %s >%s 2>%s",
      preload_prefix(), TFMM_HDF5_STALL, cli_path(), sp("o"), sp("stdout.txt"),
      sp("stderr.txt"));
  cr_assert_eq(system(cmd), 0);
  char *out = read_text("stdout.txt");
  const char *note = strstr(out, "  note: the steps waited ");
  if (note == NULL && strstr(out, "the steps waited 0.000 s") != NULL)
    cr_skip_test("the writes could not be slowed (libhdf5 linked "
                 "statically?)");
  cr_assert(note != NULL, "no note of the wait:\n%s", out);
  const char *every = strstr(note, "a snapshot every ");
  cr_assert(every != NULL, "no cadence named: %s", note);
  long long k = 0;
  cr_assert_eq(sscanf(every, "a snapshot every %lld or more steps", &k), 1);
  cr_assert_gt(k, 2, "%s", note);
  free(out);
}

/* SWIFT's Snapshots:output_list_on: 0 turns the list off (the cadence
 * then), 1 needs a list, anything else is refused. */
Test(run_outputs, swift_output_list_on) {
  write_text("times.txt", "0.01\n");
  char yml[512];
  snprintf(yml, sizeof yml,
           "Snapshots:\n  output_list_on: 0\n  output_list: %s\n",
           sp("times.txt"));
  write_text("off.yml", yml);
  cr_assert_eq(RUN("run", "--n", "100", "--steps", "1", "--out", sp("o"),
                   "--params", sp("off.yml"), "--progress", "off", "--plots",
                   "off"),
               0);
  assert_stderr_has("output_list_on is 0");
  snapshot s = read_snap("o/snapshot_0000.hdf5");
  cr_assert_eq(s.time, 0.0, "the cadence's snapshot 0000 is the start");
  snapshot_free(&s);
  write_text("on.yml", "Snapshots:\n  output_list_on: 1\n");
  cr_assert_eq(RUN("run", "--n", "100", "--steps", "1", "--out", sp("p"),
                   "--params", sp("on.yml")),
               2);
  assert_stderr_has("output_list_on 1 needs Snapshots:output_list");
  write_text("two.yml", "Snapshots:\n  output_list_on: 2\n");
  cr_assert_eq(RUN("run", "--n", "100", "--steps", "1", "--out", sp("q"),
                   "--params", sp("two.yml")),
               2);
  assert_stderr_has("output_list_on");
  assert_stderr_has("0 or 1");
}

/* A restart may change the rule: the checkpoint's list gives way to a
 * cadence given now, and a list given now to the checkpoint's cadence. */
Test(run_outputs, restart_changes_the_rule) {
  write_text("times.txt", "0\n0.01\n");
  cr_assert_eq(RUN("run", "--n", "100", "--steps", "2", "--out", sp("a"),
                   "--output-times", sp("times.txt"), "--method", "direct",
                   "--progress", "off", "--plots", "off"),
               0);
  cr_assert_eq(RUN("run", "--restart", sp("a/checkpoint.hdf5"), "--steps", "4",
                   "--snapshot-every", "4", "--progress", "off", "--plots",
                   "off"),
               0);
  snapshot s = read_snap("a/snapshot_0001.hdf5");
  cr_assert_eq(s.time, 4 * 0.0078125, "the cadence's snapshot of step 4");
  snapshot_free(&s);
  write_text("later.txt", "0.03\n");
  cr_assert_eq(RUN("run", "--n", "100", "--steps", "2", "--out", sp("b"),
                   "--snapshot-dt", "0.0078125", "--method", "direct",
                   "--progress", "off", "--plots", "off"),
               0);
  cr_assert_eq(RUN("run", "--restart", sp("b/checkpoint.hdf5"), "--steps", "4",
                   "--output-times", sp("later.txt"), "--progress", "off",
                   "--plots", "off"),
               0);
  s = read_snap("b/snapshot_0000.hdf5");
  cr_assert_eq(s.time, 0.03, "the list's snapshot 0000");
  snapshot_free(&s);
}

/* The rows of text (after its header) with their last two fields cut:
 * the rows of a tilefmm before the worst group's columns. */
static char *rows_before_group(const char *text) {
  const char *rows = strchr(text, '\n') + 1;
  char *out = malloc(strlen(rows) + 1), *o = out;
  cr_assert_not_null(out);
  for (const char *line = rows; *line != '\0';) {
    const char *end = strchr(line, '\n');
    cr_assert_not_null(end);
    const char *cut = end;
    for (int k = 0; k < 2; k++)
      while (cut > line && *--cut != ',')
        ;
    memcpy(o, line, (size_t)(cut - line));
    o += cut - line;
    *o++ = '\n';
    line = end + 1;
  }
  *o = '\0';
  return out;
}

/* statistics.csv's header carries the units; a restart in a directory
 * whose file has the header of an older tilefmm (without units, or with
 * them but without the worst group's columns) continues its rows, the
 * columns they lack empty, under the header of this one. */
Test(run_outputs, statistics_header_with_units_and_an_older_one_continued) {
  const char header[] =
      "step,time [N-body time],kinetic [N-body energy],potential [N-body "
      "energy],total [N-body energy],rel_energy_error,px [N-body momentum],"
      "py [N-body momentum],pz [N-body momentum],lx [N-body angular "
      "momentum],ly [N-body angular momentum],lz [N-body angular momentum],"
      "virial_ratio,com_x [N-body length],com_y [N-body length],com_z "
      "[N-body length],leaf_size,wall_tree [s],wall_near [s],wall_far [s],"
      "wall_integrate [s],wall_io [s],wall_step [s],theta,order,error_p99,"
      "error_max,error_samples,error_group_p99,error_group_max\n";
  /* Without units; and with them, without the worst group's columns. */
  const char plain[] =
      "step,time,kinetic,potential,total,rel_energy_error,px,py,pz,lx,ly,lz,"
      "virial_ratio,com_x,com_y,com_z,leaf_size,wall_tree,wall_near,wall_far,"
      "wall_integrate,wall_io,wall_step,theta,order,error_p99,error_max,"
      "error_samples\n";
  const char group[] = ",error_group_p99,error_group_max\n";
  char no_group[sizeof header];
  snprintf(no_group, sizeof no_group, "%.*s\n",
           (int)(strlen(header) - strlen(group)), header);
  const char *const olders[] = {plain, no_group};
  for (int k = 0; k < 2; k++) {
    const char *dir = k == 0 ? "c" : "d";
    char csv[32];
    snprintf(csv, sizeof csv, "%s/statistics.csv", dir);
    cr_assert_eq(RUN("run", "--n", "100", "--steps", "2", "--out", sp(dir),
                     "--method", "direct", "--progress", "off", "--plots",
                     "off"),
                 0);
    char *text = read_text(csv);
    cr_assert_not_null(text);
    cr_assert_eq(strncmp(text, header, strlen(header)), 0, "%s", text);
    const char *rows = strchr(text, '\n') + 1;
    char *cut = rows_before_group(text);
    char *old = malloc(strlen(olders[k]) + strlen(cut) + 1);
    cr_assert_not_null(old);
    strcpy(old, olders[k]);
    strcat(old, cut);
    write_text(csv, old);
    char checkpoint[32];
    snprintf(checkpoint, sizeof checkpoint, "%s/checkpoint.hdf5", dir);
    cr_assert_eq(RUN("run", "--restart", sp(checkpoint), "--steps", "3",
                     "--progress", "off", "--plots", "off"),
                 0);
    char *after = read_text(csv);
    cr_assert_not_null(after);
    cr_assert_eq(strncmp(after, header, strlen(header)), 0, "%s", after);
    cr_assert_eq(strncmp(after + strlen(header), rows, strlen(rows)), 0,
                 "older header %d: the older rows are not continued with "
                 "the columns they lack empty:\n%s",
                 k, after);
    cr_assert_eq(strncmp(after + strlen(header) + strlen(rows), "3,", 2), 0,
                 "no row of step 3 after them: %s", after);
    free(text);
    free(cut);
    free(old);
    free(after);
  }
}
