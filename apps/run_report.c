/* What 'tilefmm run' tells (see run_report.h). */
#define _POSIX_C_SOURCE 200809L
#include "run_report.h"

#include "atomic_file.h"
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CSV_COLUMNS                                                            \
  "step,time,kinetic,potential,total,rel_energy_error,px,py,pz,lx,ly,lz,"      \
  "virial_ratio,com_x,com_y,com_z,leaf_size,wall_tree,wall_near,wall_far,"     \
  "wall_integrate,wall_io,wall_step"

/* The measured error's columns, then the worst group's. */
#define CSV_MEASURED ",theta,order,error_p99,error_max,error_samples"
#define CSV_GROUP ",error_group_p99,error_group_max"

/* The headers of older tilefmm: with units but without the worst group's
 * columns (the header of the run's units without CSV_GROUP), without
 * units (csv_plain), and before that without the measured error's
 * columns (csv_before); their rows are continued with the columns they
 * lack empty. A restart rewrites each as the header of the run's units
 * (make_header). */
static const char csv_plain[] = CSV_COLUMNS CSV_MEASURED "\n";
static const char csv_before[] = CSV_COLUMNS "\n";
#define CSV_EMPTY ",,,,,"
#define CSV_EMPTY_GROUP ",,"

static char *join(const char *dir, const char *name) {
  const size_t len = strlen(dir) + strlen(name) + 2;
  char *p = malloc(len);
  if (p != NULL)
    snprintf(p, len, "%s/%s", dir, name);
  return p;
}

/* Rows are a few hundred bytes; a longer line is no row of ours. */
#define MAX_ROW 4096

/* Copies the header and the rows of steps <= last of in to out. A last
 * line with no newline is a row torn by a crash or a full disk: dropped.
 * Returns the step of the last row kept (-1 for none), or -2 when in is
 * not a statistics file. */
static int64_t copy_rows(FILE *in, FILE *out, int64_t last,
                         const char *header) {
  char line[MAX_ROW];
  int first = 1;
  /* The empty columns an older row lacks. */
  const char *missing = "";
  int64_t kept = -1;
  /* The header of the run's units before the worst group's columns. */
  char no_group[sizeof line];
  const size_t group = strlen(CSV_GROUP "\n"), head = strlen(header);
  snprintf(no_group, sizeof no_group, "%.*s\n",
           (int)(head >= group ? head - group : 0), header);
  while (fgets(line, sizeof line, in) != NULL) {
    const size_t len = strlen(line);
    if (len == 0 || line[len - 1] != '\n') {
      if (feof(in) && !first)
        break;   /* torn */
      return -2; /* too long, a NUL byte, or a torn header */
    }
    if (first) {
      first = 0;
      if (strcmp(line, csv_before) == 0)
        missing = CSV_EMPTY CSV_EMPTY_GROUP;
      else if (strcmp(line, csv_plain) == 0 || strcmp(line, no_group) == 0)
        missing = CSV_EMPTY_GROUP;
      else if (strcmp(line, header) != 0)
        return -2;
      fputs(header, out);
      continue;
    }
    char *end;
    errno = 0;
    const long long step = strtoll(line, &end, 10);
    if (end == line || *end != ',' || errno != 0 || step < 0 || step <= kept)
      return -2;
    if (step <= last) {
      if (missing[0] != '\0') /* the row, then the empty columns */
        fprintf(out, "%.*s%s\n", (int)(len - 1), line, missing);
      else
        fputs(line, out);
      kept = step;
    }
  }
  if (ferror(in))
    return -2;
  if (first)
    fputs(header, out);
  return kept;
}

/* Cuts path back to the rows of steps <= last (the checkpoint's step),
 * which must end with that step's row: a run writes and syncs a row
 * before the checkpoint that covers it. */
static int cut_csv(const char *path, int64_t last, const char *header,
                   int64_t *last_row) {
  FILE *in = fopen(path, "r");
  if (in == NULL)
    return 1; /* none: a new one is made */
  *last_row = last;
  atomic_file af;
  int ok = atomic_file_open(&af, path);
  if (ok) {
    const int64_t kept = copy_rows(in, af.fp, last, header);
    if (kept == -2)
      cli_error("%s: not a statistics file of tilefmm run (move it away to "
                "restart here)",
                path);
    else if (kept != last)
      cli_error("%s: its rows end at step %" PRId64 ", not at the "
                "checkpoint's step %" PRId64 ": rows are missing (move it "
                "away to restart here)",
                path, kept, last);
    ok = kept == last && atomic_file_commit(&af);
    if (!ok)
      atomic_file_discard(&af);
  }
  fclose(in);
  return ok;
}

/* The header: the columns with a dimension carry its unit in brackets,
 * "time [kpc/(km/s)]", "com_x [N-body length]"; the dimensionless ones
 * (step, rel_energy_error, virial_ratio, leaf_size, theta, order, the
 * relative errors and the sample count) are bare (docs/formats.md). */
static void make_header(const units *u, char *buf, size_t size) {
  units_labels l;
  units_labels_make(u, &l);
  snprintf(buf, size,
           "step,time [%s],kinetic [%s],potential [%s],total [%s],"
           "rel_energy_error,px [%s],py [%s],pz [%s],lx [%s],ly [%s],lz [%s],"
           "virial_ratio,com_x [%s],com_y [%s],com_z [%s],leaf_size,"
           "wall_tree [s],wall_near [s],wall_far [s],wall_integrate [s],"
           "wall_io [s],wall_step [s]" CSV_MEASURED CSV_GROUP "\n",
           l.time, l.energy, l.energy, l.energy, l.momentum, l.momentum,
           l.momentum, l.angular_momentum, l.angular_momentum,
           l.angular_momentum, l.length, l.length, l.length);
}

int run_report_open(run_report *r, const char *dir, const units *u,
                    int64_t from_step, int64_t last_step, int restart,
                    int progress) {
  memset(r, 0, sizeof *r);
  make_header(u, r->header, sizeof r->header);
  r->first = from_step;
  r->last = last_step;
  r->last_row = -1;
  r->progress = progress;
  if (dir == NULL) { /* a rank other than 0: no file, the same steps */
    r->started = cli_seconds();
    return 1;
  }
  r->csv_path = join(dir, "statistics.csv");
  if (r->csv_path == NULL) {
    cli_error("out of memory");
    return 0;
  }
  if (restart && !cut_csv(r->csv_path, from_step, r->header, &r->last_row)) {
    free(r->csv_path);
    return 0;
  }
  r->csv = fopen(r->csv_path, restart ? "a" : "w");
  if (r->csv == NULL) {
    cli_error("%s: cannot write: %s", r->csv_path, strerror(errno));
    free(r->csv_path);
    return 0;
  }
  if (ftell(r->csv) == 0)
    fputs(r->header, r->csv);
  r->started = cli_seconds();
  printf("%6s %12s %17s %10s %8s %8s %8s %8s %8s %8s\n", "step", "time", "E",
         "dE/E", "tree", "near", "far", "integr", "io", "step[s]");
  return 1;
}

static void clear_progress(run_report *r) {
  if (r->progress_drawn) {
    fputs("\r\033[K", stderr);
    r->progress_drawn = 0;
  }
}

/* The columns of the setting and the measured error: theta and order
 * for the tree methods, the error when the evaluation measured it, the
 * worst group's when it measured that; empty otherwise. */
static void measured_columns(const tfmm_stats *s, char *buf, size_t size) {
  const int tree = s->method == TFMM_METHOD_FMM || s->method == TFMM_METHOD_BH;
  if (!tree || s->n == 0) {
    snprintf(buf, size, "%s", CSV_EMPTY CSV_EMPTY_GROUP);
    return;
  }
  if (!s->error.measured) {
    snprintf(buf, size, ",%.9g,%d,,," CSV_EMPTY_GROUP, s->theta, s->order);
    return;
  }
  const int len =
      snprintf(buf, size, ",%.9g,%d,%.17g,%.17g,%zu", s->theta, s->order,
               s->error.p99, s->error.max, s->error.samples);
  if (len < 0 || (size_t)len >= size)
    return;
  if (s->error.group_measured > 0)
    snprintf(buf + len, size - (size_t)len, ",%.17g,%.17g", s->error.group_p99,
             s->error.group_max);
  else
    snprintf(buf + len, size - (size_t)len, "%s", CSV_EMPTY_GROUP);
}

int run_report_step(run_report *r, int64_t step, double time, double err,
                    const tfmm_diagnostics *d, const run_times *t,
                    const tfmm_stats *s) {
  r->worst_error = fmax(r->worst_error, fabs(err));
  r->final_error = err;
  clear_progress(r);
  printf("%6" PRId64 " %12.6g %17.10e %10.3e %8.4f %8.4f %8.4f %8.4f %8.4f "
         "%8.4f\n",
         step, time, d->total, err, t->tree, t->near, t->far, t->integrate,
         t->io, t->step);
  fflush(stdout);
  if (r->csv == NULL) {
    r->last_row = step;
    return 1;
  }
  char measured[256];
  measured_columns(s, measured, sizeof measured);
  fprintf(r->csv,
          "%" PRId64 ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,"
          "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%.6f,%.6f,%.6f,%.6f,%.6f,"
          "%.6f%s\n",
          step, time, d->kinetic, d->potential, d->total, err, d->momentum[0],
          d->momentum[1], d->momentum[2], d->angular_momentum[0],
          d->angular_momentum[1], d->angular_momentum[2], d->virial_ratio,
          d->centre_of_mass[0], d->centre_of_mass[1], d->centre_of_mass[2],
          s->leaf_size, t->tree, t->near, t->far, t->integrate, t->io, t->step,
          measured);
  if (fflush(r->csv) != 0 || ferror(r->csv)) {
    cli_error("%s: cannot write: %s", r->csv_path, strerror(errno));
    return 0;
  }
  r->last_row = step;
  return 1;
}

int run_report_energy(run_report *r, int64_t step, double time, double err,
                      double max) {
  const double e = fabs(err);
  if (!(e <= RUN_ENERGY_WARNING) && !r->energy_warned) {
    clear_progress(r);
    fprintf(stderr,
            "tilefmm run: warning: step %" PRId64 " (t = %g): the energy has "
            "drifted by dE/E = %+.3e, past %g: the step is too long for the "
            "orbits (a smaller --dt, or --eta), or the initial conditions "
            "are not in the run's units\n",
            step, time, err, RUN_ENERGY_WARNING);
    r->energy_warned = 1;
  }
  if (max > 0 && !(e <= max)) {
    cli_error("step %" PRId64 " (t = %g): the energy error |dE/E| = %.3e "
              "passed --max-energy-error %g: the run stops here (its last "
              "checkpoint is the last good state; --max-energy-error 0 lets "
              "it go on)",
              step, time, e, max);
    return 0;
  }
  return 1;
}

int run_report_sync(run_report *r) {
  if (r->csv == NULL)
    return 1;
  if (fflush(r->csv) != 0 || ferror(r->csv) || fsync(fileno(r->csv)) != 0) {
    cli_error("%s: cannot write: %s", r->csv_path, strerror(errno));
    return 0;
  }
  return 1;
}

static void format_duration(double s, char *buf, size_t size) {
  if (!(s >= 0) || s > 1e7) {
    snprintf(buf, size, "--:--");
    return;
  }
  const long total = lround(s);
  if (total >= 3600)
    snprintf(buf, size, "%ld:%02ld:%02ld", total / 3600, total / 60 % 60,
             total % 60);
  else
    snprintf(buf, size, "%02ld:%02ld", total / 60, total % 60);
}

void run_report_tick(run_report *r, int64_t step, double time,
                     const run_times *t) {
  r->sum.tree += t->tree;
  r->sum.near += t->near;
  r->sum.far += t->far;
  r->sum.integrate += t->integrate;
  r->sum.io += t->io;
  r->sum.step += t->step;
  r->steps_timed++;
  if (!r->progress)
    return;
  const double elapsed = cli_seconds() - r->started;
  const double per_step = elapsed / (double)(step - r->first);
  char left[32];
  format_duration(per_step * (double)(r->last - step), left, sizeof left);
  fprintf(stderr,
          "\r\033[Kstep %" PRId64 "/%" PRId64 " (%.0f%%)  t = %.6g  "
          "%.2f steps/s  %s left",
          step, r->last,
          100.0 * (double)(step - r->first) / (double)(r->last - r->first),
          time, 1.0 / per_step, left);
  fflush(stderr);
  r->progress_drawn = 1;
}

/* The cadence at which a writer of rate bytes a second keeps up with
 * snapshots of `bytes` each and steps of step_s seconds: the fewest steps
 * between snapshots whose time covers one snapshot's write (at least 1). */
static int64_t output_cadence(double bytes, double rate, double step_s) {
  if (!(rate > 0) || !(step_s > 0) || !(bytes > 0))
    return 1;
  const double steps = ceil(bytes / rate / step_s);
  return steps < 1 ? 1 : steps > 1e15 ? (int64_t)1e15 : (int64_t)steps;
}

/* When the steps waited for the writer more than 5 % of their time: what
 * the snapshots ask and what the writer gave, and the cadence that would
 * not wait. */
static void output_advice(const run_report *r) {
  const run_output *o = &r->output;
  if (o->files == 0 || !(o->write > 0) || !(o->waited > 0.05 * r->sum.step) ||
      r->steps_timed == 0)
    return;
  const double rate = o->bytes / o->write, per_file = o->bytes / o->files;
  const double step = (r->sum.step - o->waited) / (double)r->steps_timed;
  printf("  note: the steps waited %.2f s (%.0f %%) for the writer, which "
         "wrote %.1f MB/s; a file is %.1f MB",
         o->waited, 100.0 * o->waited / r->sum.step, 1e-6 * rate,
         1e-6 * per_file);
  if (o->snapshot_every > 0)
    printf(": a snapshot every %" PRId64 " or more steps "
           "(--snapshot-every), fewer fields or single precision "
           "(--snapshot-fields, --snapshot-precision single) would not wait",
           output_cadence(per_file, rate, step));
  printf("\n");
}

int run_report_close(run_report *r, size_t n, const char *device,
                     const char *solver) {
  clear_progress(r);
  const double k = r->steps_timed > 0 ? (double)r->steps_timed : 1.0;
  printf("\nrun: %zu bodies on %s, steps %" PRId64 " to %" PRId64
         ": %.3f s wall, %.3f steps/s\n",
         n, device, r->first, r->last, cli_seconds() - r->started,
         r->sum.step > 0 ? (double)r->steps_timed / r->sum.step : 0.0);
  printf("  forces: %s\n", solver);
  printf("  mean per step: tree %.4f s, near %.4f s, far %.4f s, "
         "integrate %.4f s, io %.4f s, step %.4f s\n",
         r->sum.tree / k, r->sum.near / k, r->sum.far / k, r->sum.integrate / k,
         r->sum.io / k, r->sum.step / k);
  const run_output *o = &r->output;
  printf("  output: %" PRId64 " files, %.1f MB, written in %.3f s (%.2f GB/s) "
         "and synced in %.3f s by the writer's thread; the steps waited "
         "%.3f s for it, the end %.3f s\n",
         o->files, 1e-6 * o->bytes, o->write,
         o->write > 0 ? 1e-9 * o->bytes / o->write : 0.0, o->sync, o->waited,
         r->last_writes);
  output_advice(r);
  printf("  energy: final dE/E %.3e, worst |dE/E| %.3e\n", r->final_error,
         r->worst_error);
  int ok = 1;
  if (r->csv != NULL && fclose(r->csv) != 0) {
    cli_error("%s: cannot write: %s", r->csv_path, strerror(errno));
    ok = 0;
  }
  free(r->csv_path);
  r->csv = NULL;
  return ok;
}

void run_report_abort(run_report *r) {
  clear_progress(r);
  if (r->csv != NULL)
    fclose(r->csv);
  free(r->csv_path);
  r->csv = NULL;
  r->csv_path = NULL;
}
