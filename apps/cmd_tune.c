/* tilefmm tune: the leaf size L of a tree method measured, not guessed. L
 * moves work between the near field (bodies per leaf times the leaves in
 * each list: grows with L) and the far field (cells and their M2L or M2P
 * pairs: shrink as L grows). For each L of a doubling series this runs a
 * solver of its own, keeps the fastest of a few evaluations, measures the
 * accuracy on a sample against the double-precision reference (computed
 * once), chooses the fastest L whose error is within --max-error, and
 * writes the table as CSV and a plot of it through gnuplot. */
#define _POSIX_C_SOURCE 200809L
#include "body_input.h"
#include "bodyio.h"
#include "cli.h"
#include "error_stats.h"
#include "output.h"
#include "solver_cli.h"
#include "tune_options.h"
#include "tune_report.h"

#include "tilefmm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The bodies compared with the reference: one fixed sample, so that two
 * runs on the same input measure the same bodies. */
#define SAMPLE_SEED 1

/* ---- the bodies and the truth ------------------------------------------ */

/* The bodies from --in, or the Plummer sphere of --ic. A file's
 * physical units are said with their G, and a --G that contradicts them
 * is refused (*usage set), as validate does; the errors and times
 * measured are the same in any units, so the solvers keep their G. */
static int load_bodies(const tune_options *o, bodyio_bodies *b, int *usage) {
  *usage = 0;
  if (o->in != NULL)
    return body_input_read_relative("tune", o->in, o->types, o->G_given,
                                    o->solver.cfg.G, b, usage);
  memset(b, 0, sizeof *b);
  const size_t n = (size_t)o->n;
  double *vel = malloc(3 * n * sizeof *vel);
  b->pos = malloc(3 * n * sizeof *b->pos);
  b->mass = malloc(n * sizeof *b->mass);
  b->n = b->cap = n;
  int ok = vel != NULL && b->pos != NULL && b->mass != NULL;
  if (!ok)
    cli_error("out of memory for %zu bodies", n);
  else if (tfmm_ic_plummer(n, o->seed, b->pos, vel, b->mass) != TFMM_OK) {
    cli_error("cannot make a Plummer sphere of %zu bodies", n);
    ok = 0;
  }
  free(vel);
  return ok;
}

/* The reference accelerations at the sampled bodies, shared by every
 * leaf size. */
typedef struct truth {
  size_t k;        /* bodies compared */
  size_t *targets; /* their indices, ascending */
  double *acc;     /* 3k: the reference at them */
  double *scratch; /* k: the errors of one leaf size */
  double seconds;  /* wall time of the reference */
} truth;

static void truth_free(truth *t) {
  free(t->targets);
  free(t->acc);
  free(t->scratch);
}

static int truth_compute(tfmm_solver *solver, const bodyio_bodies *b,
                         uint64_t sample, truth *t) {
  t->k = sample == 0 || sample >= b->n ? b->n : (size_t)sample;
  t->targets = malloc(t->k * sizeof *t->targets);
  t->acc = malloc(3 * t->k * sizeof *t->acc);
  t->scratch = malloc(t->k * sizeof *t->scratch);
  if (t->targets == NULL || t->acc == NULL || t->scratch == NULL) {
    cli_error("out of memory for the reference at %zu bodies", t->k);
    return 0;
  }
  error_stats_sample(b->n, t->k, SAMPLE_SEED, t->targets);
  const double t0 = cli_seconds();
  if (tfmm_solver_reference_at(solver, b->n, b->pos, b->mass, t->k, t->targets,
                               t->acc, NULL) != TFMM_OK) {
    cli_error("reference: %s", tfmm_solver_message(solver));
    return 0;
  }
  t->seconds = cli_seconds() - t0;
  fprintf(stderr, "tilefmm tune: reference at %zu of %zu bodies: %.6f s\n",
          t->k, b->n, t->seconds);
  return 1;
}

/* The nearest-rank 99th percentile of the relative acceleration errors. */
static double error_p99(truth *t, const double *acc) {
  for (size_t j = 0; j < t->k; j++) {
    int absolute;
    t->scratch[j] = error_stats_relative(acc + 3 * t->targets[j],
                                         t->acc + 3 * j, 3, &absolute);
  }
  error_stats_sort(t->scratch, t->k);
  return error_stats_percentile(t->scratch, t->k, 99);
}

/* ---- the measurements -------------------------------------------------- */

/* The fastest row whose error is within max_error (a NaN is not), or -1. */
static int choose_row(const tune_table *tab, double max_error) {
  int chosen = -1;
  for (int k = 0; k < tab->rows; k++) {
    const tune_row *r = &tab->row[k];
    if (r->err_p99 <= max_error &&
        (chosen < 0 || r->best.time_total < tab->row[chosen].best.time_total))
      chosen = k;
  }
  return chosen;
}

/* min, 2 min, 4 min, ... up to max, and max itself. */
static int leaf_sizes(int min, int max, int *out) {
  int count = 0;
  for (int64_t leaf = min; leaf <= max; leaf *= 2)
    out[count++] = (int)leaf;
  if (out[count - 1] != max)
    out[count++] = max;
  return count;
}

/* Buffers of the method's output, reused by every leaf size. */
typedef struct forces {
  double *acc, *pot;
} forces;

/* Warm-up evaluations (one; with theta or order from the accuracy,
 * WARM_PLANNED, in which the planner measures its choice and tries the
 * cheaper settings it predicts: every leaf size is then timed at the
 * setting that meets the target there), then repeat timed ones; keeps
 * the fastest. */
enum { WARM_PLANNED = 4 };

static int measure_row(tfmm_solver *solver, const bodyio_bodies *b, int repeat,
                       int warm, forces *f, tune_row *row) {
  for (int r = 0; r < warm + repeat; r++) {
    if (tfmm_solver_compute(solver, b->n, b->pos, b->mass, f->acc, f->pot) !=
        TFMM_OK) {
      cli_error("leaf size %d: %s", row->leaf, tfmm_solver_message(solver));
      return 0;
    }
    const tfmm_stats *s = tfmm_solver_stats(solver);
    if (r == warm || (r > warm && s->time_total < row->best.time_total))
      row->best = *s;
  }
  return 1;
}

static void print_progress(const tune_row *row, int k, int rows) {
  const tfmm_stats *s = &row->best;
  fprintf(stderr,
          "tilefmm tune: [%d/%d] schedule %s, leaf %d: total %.6f s (near "
          "%.6f s on the %s, far %.6f s), p99 error %.3e\n",
          k + 1, rows, tfmm_schedule_name(s->schedule), row->leaf,
          s->time_total, s->near_time, tfmm_device_name(s->near_device),
          s->far_time, row->err_p99);
}

/* The schedules to compare: with --schedule auto on a GPU, gpu and
 * hybrid; else the one given (auto without a GPU is hybrid). */
static int schedules_of(const tfmm_config *c, tfmm_schedule_kind *out) {
  tfmm_plan plan = {.device = TFMM_DEVICE_CPU};
  tfmm_plan_resolve(c, 0, &plan, NULL, 0);
  const int gpu = plan.device == TFMM_DEVICE_GPU;
  if (c->schedule == TFMM_SCHEDULE_AUTO && gpu &&
      c->tree_device != TFMM_DEVICE_CPU && c->far_device != TFMM_DEVICE_CPU) {
    out[0] = TFMM_SCHEDULE_GPU;
    out[1] = TFMM_SCHEDULE_HYBRID;
    return 2;
  }
  out[0] =
      c->schedule == TFMM_SCHEDULE_AUTO ? TFMM_SCHEDULE_HYBRID : c->schedule;
  return 1;
}

/* Runs every schedule at every leaf size, each with a solver of its own. */
static int run_rows(const tune_options *o, const bodyio_bodies *b, truth *t,
                    tune_table *tab) {
  int sizes[TUNE_MAX_LEAVES], leaves[TUNE_MAX_ROWS];
  tfmm_schedule_kind kinds[TUNE_MAX_SCHEDULES], schedule[TUNE_MAX_ROWS];
  const int nleaf = leaf_sizes(o->leaf_min, o->leaf_max, sizes);
  tab->schedules = schedules_of(&o->solver.cfg, kinds);
  tab->rows = 0;
  for (int q = 0; q < tab->schedules; q++)
    for (int k = 0; k < nleaf; k++) {
      schedule[tab->rows] = kinds[q];
      leaves[tab->rows++] = sizes[k];
    }
  forces f = {malloc(3 * b->n * sizeof(double)), malloc(b->n * sizeof(double))};
  int rc = f.acc != NULL && f.pot != NULL ? CLI_OK : CLI_RUNTIME_ERROR;
  if (rc != CLI_OK)
    cli_error("out of memory for %zu bodies", b->n);
  for (int k = 0; rc == CLI_OK && k < tab->rows; k++) {
    tfmm_config cfg = o->solver.cfg;
    cfg.leaf_size = leaves[k];
    cfg.schedule = schedule[k];
    /* With theta and order auto, each leaf size at the setting the
     * planner settles on there (the warm-up below): the rows compare
     * leaf sizes at the accuracy asked, measured. tune judges the error
     * itself against --max-error: no verify. */
    cfg.verify = 0;
    tfmm_solver *solver = NULL;
    if ((rc = solver_cli_create(&cfg, &solver)) != CLI_OK)
      break;
    tune_row *row = &tab->row[k];
    row->leaf = leaves[k];
    row->schedule = schedule[k];
    const int planned = cfg.theta < 0 || cfg.order < 0;
    if (!measure_row(solver, b, o->repeat, planned ? WARM_PLANNED : 1, &f, row))
      rc = CLI_RUNTIME_ERROR;
    tfmm_solver_destroy(solver);
    if (rc == CLI_OK) {
      row->err_p99 = error_p99(t, f.acc);
      print_progress(row, k, tab->rows);
      if (row->best.time_total < tab->row[tab->fastest].best.time_total)
        tab->fastest = k;
    }
  }
  tab->chosen = choose_row(tab, o->max_error);
  free(f.acc);
  free(f.pot);
  return rc;
}

/* ---- the command ------------------------------------------------------- */

/* The input and the truth. A solver with the flags' configuration is
 * made first, so that one it refuses is reported before a large file is
 * read; it also computes the reference (with its G and eps). */
static int prepare(const tune_options *o, bodyio_bodies *b, truth *t) {
  tfmm_config cfg = o->solver.cfg;
  cfg.leaf_size = o->leaf_min;
  tfmm_solver *solver = NULL;
  int rc = solver_cli_create(&cfg, &solver);
  if (rc != CLI_OK)
    return rc;
  int usage = 0;
  if (!load_bodies(o, b, &usage) || !truth_compute(solver, b, o->sample, t))
    rc = usage ? CLI_USAGE_ERROR : CLI_RUNTIME_ERROR;
  tfmm_solver_destroy(solver);
  return rc;
}

/* The CSV, replaced atomically, or on standard output. */
static int write_csv(const tune_options *o, const tune_table *tab) {
  output out;
  if (!output_open(&out, o->csv))
    return 0;
  tune_report_csv(out.fp, o, tab);
  return output_close(&out);
}

/* The table for a person: on stdout, or on stderr when the CSV has
 * stdout. */
static int print_table(const tune_options *o, const tune_table *tab) {
  FILE *fp = output_is_stdout(o->csv) ? stderr : stdout;
  tune_report_print(fp, o, tab);
  if (fflush(fp) != 0 || ferror(fp)) {
    cli_error("%s: cannot write",
              fp == stdout ? "standard output" : "standard error");
    return 0;
  }
  return 1;
}

/* Checks the outputs, then reads, measures, reports and writes. */
static int tune(const tune_options *o) {
  if (!tune_options_check_outputs(o))
    return CLI_RUNTIME_ERROR;
  bodyio_bodies b;
  memset(&b, 0, sizeof b);
  truth t;
  memset(&t, 0, sizeof t);
  tune_table tab;
  memset(&tab, 0, sizeof tab);
  int rc = prepare(o, &b, &t);
  if (rc == CLI_OK)
    rc = run_rows(o, &b, &t, &tab);
  tab.n = b.n;
  tab.k = t.k;
  if (rc == CLI_OK && (!print_table(o, &tab) || !write_csv(o, &tab) ||
                       !tune_report_plot(o, &tab)))
    rc = CLI_RUNTIME_ERROR;
  if (rc == CLI_OK && tab.chosen < 0)
    rc = TUNE_NOT_MET;
  truth_free(&t);
  bodyio_free(&b);
  return rc;
}

int cmd_tune(int argc, char **argv) {
  tune_options o;
  switch (tune_options_parse(argc, argv, &o)) {
  case ARGS_HELP:
    tune_options_help(&o.solver.cfg);
    return CLI_OK;
  case ARGS_ERROR:
    fprintf(stderr, "Try 'tilefmm tune --help'.\n");
    return CLI_USAGE_ERROR;
  default:
    return tune(&o);
  }
}
