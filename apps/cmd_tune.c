/* tilefmm tune: the leaf size L of a tree method measured, not guessed. L
 * moves work between the near field (bodies per leaf times the leaves in
 * each list: grows with L) and the far field (cells and their M2L or M2P
 * pairs: shrink as L grows). For each L of a doubling series this runs a
 * solver of its own, keeps the fastest of a few evaluations, measures the
 * accuracy on a sample against the double-precision reference (computed
 * once), chooses the fastest L whose error is within --max-error, and
 * writes the table as CSV and a plot of it through gnuplot. */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "atomic_file.h"
#include "body_input.h"
#include "bodyio.h"
#include "cli.h"
#include "error_stats.h"
#include "gnuplot.h"
#include "solver_cli.h"

#include "tilefmm.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_LEAF_MIN 16
#define DEFAULT_LEAF_MAX 4096
#define DEFAULT_REPEAT 3
#define DEFAULT_SAMPLE 1000
#define DEFAULT_SEED 1
#define DEFAULT_CSV "tune.csv"
#define DEFAULT_PNG "tune.png"
/* The bodies compared with the reference: one fixed sample, so that two
 * runs on the same input measure the same bodies. */
#define SAMPLE_SEED 1
/* Doubling from 1 passes INT_MAX after 31 sizes; leaf-max may add one. */
#define MAX_LEAVES 32
/* Schedules compared: gpu and hybrid. */
#define MAX_SCHEDULES 2
#define MAX_ROWS (MAX_LEAVES * MAX_SCHEDULES)
/* The exit status when no leaf size met --max-error (as validate's when
 * the accuracy target is missed). */
#define TUNE_NOT_MET 3

typedef struct tune_options {
  const char *in, *ic, *csv, *png;
  const char *types; /* --types: a snapshot's types to read */
  uint64_t n, seed, sample;
  int leaf_min, leaf_max, repeat;
  double max_error; /* the largest p99 error a chosen L may have */
  solver_cli solver;
  int argc; /* the command line, for the CSV's header */
  char **argv;
} tune_options;

static void print_help(const tfmm_config *d) {
  char tol[32];
  printf(
      "Usage: tilefmm tune (--in FILE | --ic plummer --n N [--seed S])\n"
      "                    [--leaf-min A] [--leaf-max B] [--repeat K]\n"
      "                    [--sample S] [--max-error E] [--csv FILE]\n"
      "                    [--png FILE]\n"
      "                    [solver options]\n"
      "\n"
      "Measures a tree method (fmm or bh) at the leaf sizes A, 2A, 4A, ...\n"
      "up to B (B itself included), one solver each: a warm-up evaluation\n"
      "(four with theta or order auto, in which the solver measures its\n"
      "error and settles on the cheapest theta and order that meet\n"
      "--accuracy at that leaf size: each point then meets the target),\n"
      "then K timed ones of which the fastest (by total time) is kept. For\n"
      "each it reports the tree's depth and leaves, the near-field\n"
      "interactions, the M2L (fmm) or M2P (bh) count, the near-field time\n"
      "(on the GPU: from the first upload to the last download, during the\n"
      "far field), the far-field time (CPU), the total time, and the 99th\n"
      "percentile (nearest rank) of the relative acceleration error\n"
      "|a - a_ref| / |a_ref| over S bodies, a_ref from the double-precision\n"
      "reference computed once. Then the fastest leaf size overall, and\n"
      "the one chosen: the fastest whose p99 error is at most E. Each\n"
      "evaluation computes potentials too, as 'tilefmm forces' does.\n"
      "\n"
      "The table goes to stdout and, with the command line, the date and\n"
      "the device in '#' comment lines, to a CSV file; a plot of the near,\n"
      "far and total times against L, with the p99 error and E on a second\n"
      "axis, goes to a PNG file, drawn by gnuplot.\n"
      "Without gnuplot the CSV is still written, with a warning. Progress,\n"
      "one line per leaf size, goes to stderr. Both files are replaced\n"
      "atomically: a failed run leaves existing ones untouched.\n"
      "\n"
      "Options:\n"
      "  --in FILE         bodies to read, as 'tilefmm forces' reads them\n"
      "  --types LIST      the particle types of a snapshot to read\n"
      "                    (0,1,4 or all), as 'tilefmm forces --types'\n"
      "  --ic plummer      or a Plummer sphere made here (instead of --in)\n"
      "  --n N             its bodies, >= 1 (required with --ic)\n"
      "  --seed S          its random seed, an integer in [0, 2^64)\n"
      "                    (default: %d)\n"
      "  --leaf-min A      smallest leaf size, >= 1 (default: %d)\n"
      "  --leaf-max B      largest leaf size, >= A (default: %d)\n"
      "  --repeat K        timed evaluations per leaf size, >= 1\n"
      "                    (default: %d)\n"
      "  --sample S        bodies compared with the reference, 0 for all\n"
      "                    (O(N^2)); the same sample for every leaf size\n"
      "                    (default: %d)\n"
      "  --max-error E     the largest 99th percentile error a chosen leaf\n"
      "                    size may have, > 0 (default: the accuracy\n"
      "                    target, --accuracy, %s)\n"
      "  --csv FILE        the table (default: %s)\n"
      "  --png FILE        the plot (default: %s)\n"
      "Solver options (as for 'tilefmm forces'; --leaf is what tune\n"
      "varies, so it is not accepted; the method must be fmm or bh):\n",
      DEFAULT_SEED, DEFAULT_LEAF_MIN, DEFAULT_LEAF_MAX, DEFAULT_REPEAT,
      DEFAULT_SAMPLE, solver_cli_tol(d->accuracy, tol), DEFAULT_CSV,
      DEFAULT_PNG);
  solver_cli_help(stdout, d);
  printf("  -h, --help        show this help\n"
         "\n"
         "Exit status: 0 on success (also without gnuplot), %d when no leaf\n"
         "size met --max-error (the table, CSV and plot are written all the\n"
         "same), 1 on a runtime error (gnuplot failing is one), 2 on a\n"
         "usage error.\n",
         TUNE_NOT_MET);
}

static int positive_int(const void *v) { return *(const int *)v >= 1; }
static int positive(const void *v) { return *(const double *)v > 0; }
static int count_ok(const void *v) {
  const uint64_t n = *(const uint64_t *)v;
  return n >= 1 && n <= SIZE_MAX / (3 * sizeof(double));
}
static int model_ok(const void *v) {
  return strcmp(*(const char *const *)v, "plummer") == 0;
}

/* The command's own flags, before the solver's. */
enum {
  OPT_IN,
  OPT_TYPES,
  OPT_IC,
  OPT_N,
  OPT_SEED,
  OPT_LEAF_MIN,
  OPT_LEAF_MAX,
  OPT_REPEAT,
  OPT_SAMPLE,
  OPT_MAX_ERROR,
  OPT_CSV,
  OPT_PNG,
  OPT_OWN
};

/* The rules that join several flags, each message naming them. */
static int check_combination(const tune_options *o, const args_option *opts) {
  const args_option *in = &opts[OPT_IN], *ic = &opts[OPT_IC], *n = &opts[OPT_N],
                    *seed = &opts[OPT_SEED];
  if (in->seen && ic->seen)
    cli_error("--in and --ic: give one of them, not both");
  else if (!in->seen && !ic->seen)
    cli_error("missing input: give --in FILE or --ic plummer --n N");
  else if (ic->seen && !n->seen)
    cli_error("--ic plummer: missing required flag --n");
  else if (ic->seen && opts[OPT_TYPES].seen)
    cli_error("--types: only with --in");
  else if (!ic->seen && (n->seen || seed->seen))
    cli_error("%s: only with --ic", n->seen ? "--n" : "--seed");
  else if (o->leaf_min > o->leaf_max)
    cli_error("--leaf-min %d is greater than --leaf-max %d", o->leaf_min,
              o->leaf_max);
  else if (o->solver.leaf != NULL)
    cli_error("--leaf: tune varies the leaf size itself; give --leaf-min "
              "and --leaf-max instead");
  else if (o->solver.cfg.method != TFMM_METHOD_FMM &&
           o->solver.cfg.method != TFMM_METHOD_BH)
    cli_error("--method %s: tune needs a tree method, fmm or bh",
              tfmm_method_name(o->solver.cfg.method));
  else
    return 1;
  return 0;
}

static args_result parse_options(int argc, char **argv, tune_options *o) {
  memset(o, 0, sizeof *o);
  o->seed = DEFAULT_SEED;
  o->sample = DEFAULT_SAMPLE;
  o->leaf_min = DEFAULT_LEAF_MIN;
  o->leaf_max = DEFAULT_LEAF_MAX;
  o->repeat = DEFAULT_REPEAT;
  o->csv = DEFAULT_CSV;
  o->png = DEFAULT_PNG;
  o->argc = argc;
  o->argv = argv;
  args_option opts[OPT_OWN + SOLVER_CLI_FLAGS] = {
      [OPT_IN] = {.name = "--in", .kind = ARGS_STRING, .value = &o->in},
      [OPT_TYPES] = {.name = BODY_INPUT_TYPES_FLAG,
                     .kind = ARGS_STRING,
                     .value = &o->types,
                     .valid = body_input_types_ok,
                     .expect = BODY_INPUT_TYPES_EXPECT},
      [OPT_IC] = {.name = "--ic",
                  .kind = ARGS_STRING,
                  .value = &o->ic,
                  .valid = model_ok,
                  .expect = "plummer"},
      [OPT_N] = {.name = "--n",
                 .kind = ARGS_U64,
                 .value = &o->n,
                 .valid = count_ok,
                 .expect = "an integer >= 1"},
      [OPT_SEED] = {.name = "--seed",
                    .kind = ARGS_U64,
                    .value = &o->seed,
                    .expect = "an integer in [0, 2^64)"},
      [OPT_LEAF_MIN] = {.name = "--leaf-min",
                        .kind = ARGS_INT,
                        .value = &o->leaf_min,
                        .valid = positive_int,
                        .expect = "an integer >= 1"},
      [OPT_LEAF_MAX] = {.name = "--leaf-max",
                        .kind = ARGS_INT,
                        .value = &o->leaf_max,
                        .valid = positive_int,
                        .expect = "an integer >= 1"},
      [OPT_REPEAT] = {.name = "--repeat",
                      .kind = ARGS_INT,
                      .value = &o->repeat,
                      .valid = positive_int,
                      .expect = "an integer >= 1"},
      [OPT_SAMPLE] = {.name = "--sample",
                      .kind = ARGS_U64,
                      .value = &o->sample,
                      .expect = "an integer >= 0 (0: all bodies)"},
      [OPT_MAX_ERROR] = {.name = "--max-error",
                         .kind = ARGS_DOUBLE,
                         .value = &o->max_error,
                         .valid = positive,
                         .expect = "a number > 0"},
      [OPT_CSV] = {.name = "--csv", .kind = ARGS_STRING, .value = &o->csv},
      [OPT_PNG] = {.name = "--png", .kind = ARGS_STRING, .value = &o->png},
  };
  solver_cli_init(&o->solver, opts + OPT_OWN);
  const args_result r =
      args_parse(argc - 1, argv + 1, opts, sizeof opts / sizeof opts[0]);
  if (r != ARGS_OK)
    return r;
  solver_cli_finish(&o->solver);
  if (!opts[OPT_MAX_ERROR].seen)
    o->max_error = o->solver.cfg.accuracy;
  return check_combination(o, opts) ? ARGS_OK : ARGS_ERROR;
}

/* ---- the bodies and the truth ------------------------------------------ */

/* The bodies from --in, or the Plummer sphere of --ic. */
static int load_bodies(const tune_options *o, bodyio_bodies *b) {
  if (o->in != NULL)
    return body_input_read(o->in, o->types, b);
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

typedef struct tune_row {
  tfmm_schedule_kind schedule; /* the schedule asked for */
  int leaf;                    /* the L asked for */
  tfmm_stats best;             /* the fastest timed evaluation */
  double err_p99;
} tune_row;

typedef struct tune_table {
  int rows;
  int schedules; /* rows are leaf sizes of one schedule, then the next */
  tune_row row[MAX_ROWS];
  int fastest; /* the row of least total time */
  int chosen;  /* the fastest row with err_p99 <= max_error, or -1 */
} tune_table;

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
  int sizes[MAX_LEAVES], leaves[MAX_ROWS];
  tfmm_schedule_kind kinds[MAX_SCHEDULES], schedule[MAX_ROWS];
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

/* ---- the report -------------------------------------------------------- */

static const char *far_name(tfmm_method m) {
  return m == TFMM_METHOD_FMM ? "M2L" : "M2P";
}
static double far_count(const tfmm_stats *s) {
  return s->method == TFMM_METHOD_FMM ? s->m2l : s->m2p;
}

/* "3000 bodies (plummer, seed 1), method fmm, theta 0.3 (auto), ...":
 * theta and order as the evaluations used them (s). */
static void describe_run(FILE *fp, const tune_options *o, size_t n,
                         const tfmm_stats *s) {
  const tfmm_config *c = &o->solver.cfg;
  if (o->in != NULL)
    fprintf(fp, "%zu bodies (%s)", n, o->in);
  else
    fprintf(fp, "%zu bodies (plummer, seed %" PRIu64 ")", n, o->seed);
  char tree[96], tol[32];
  fprintf(fp,
          ", method %s, %s, accuracy %s, mac %s, softening %s, eps %g, "
          "precision %s, G %g, max depth %d",
          tfmm_method_name(c->method),
          solver_cli_theta_order(c, s->theta, s->order, tree, sizeof tree),
          solver_cli_tol(c->accuracy, tol), tfmm_mac_name(c->mac),
          tfmm_softening_name(c->softening), c->eps,
          tfmm_precision_name(c->precision), c->G, c->max_depth);
}

static void print_table(const tune_options *o, const tune_table *tab, size_t n,
                        const truth *t) {
  const tfmm_stats *s0 = &tab->row[0].best;
  const char *near = tfmm_device_name(s0->near_device);
  printf("tilefmm tune: ");
  describe_run(stdout, o, n, s0);
  printf("\ndevice: %s (%s)\n", tfmm_device_name(s0->device), s0->device_name);
  for (int k = 0; k < tab->rows; k += tab->rows / tab->schedules) {
    const tfmm_stats *s = &tab->row[k].best;
    printf("schedule %s: tree and upward pass on the %s, lists on the %s, "
           "far field on the %s, near field on the %s\n",
           tfmm_schedule_name(s->schedule), tfmm_device_name(s->tree_device),
           tfmm_device_name(s->lists_device), tfmm_device_name(s->far_device),
           tfmm_device_name(s->near_device));
  }
  printf("times: the fastest of %d evaluations after the warm-up, in "
         "seconds\n"
         "error: 99th percentile (nearest rank) of |a - a_ref| / |a_ref|\n"
         "       over %zu bodies, a_ref the double-precision reference\n\n",
         o->repeat, t->k);
  char near_col[16];
  snprintf(near_col, sizeof near_col, "near (%s)", near);
  char tol[32];
  solver_cli_tol(o->max_error, tol);
  char within[40];
  snprintf(within, sizeof within, "<= %s", tol);
  printf("%8s %6s %5s %9s %12s %12s %11s %11s %11s %10s %9s\n", "schedule",
         "leaf", "depth", "leaves", "interactions", far_name(s0->method),
         near_col, "far", "total", "p99 error", within);
  for (int k = 0; k < tab->rows; k++) {
    const tune_row *r = &tab->row[k];
    const tfmm_stats *s = &r->best;
    printf("%8s %6d %5d %9" PRId64
           " %12.6g %12.6g %11.6f %11.6f %11.6f %10.3e %9s\n",
           tfmm_schedule_name(r->schedule), r->leaf, s->tree_depth,
           s->tree_leaves, s->interactions, far_count(s), s->near_time,
           s->far_time, s->time_total, r->err_p99,
           r->err_p99 <= o->max_error ? "yes" : "no");
  }
  const tune_row *best = &tab->row[tab->fastest];
  printf("\nfastest: schedule %s, leaf size %d (total %.6f s, p99 error "
         "%.3e)\n",
         tfmm_schedule_name(best->schedule), best->leaf, best->best.time_total,
         best->err_p99);
  if (tab->chosen >= 0) {
    const tune_row *c = &tab->row[tab->chosen];
    printf("chosen: schedule %s, leaf size %d (total %.6f s, p99 error %.3e "
           "<= %s: the fastest within --max-error)\n",
           tfmm_schedule_name(c->schedule), c->leaf, c->best.time_total,
           c->err_p99, tol);
  } else {
    int k0 = 0;
    for (int k = 1; k < tab->rows; k++)
      if (tab->row[k].err_p99 < tab->row[k0].err_p99)
        k0 = k;
    printf("chosen: none: no leaf size met --max-error %s (the most "
           "accurate, leaf size %d, has p99 error %.3e): lower --theta or "
           "raise --order, or leave them to --accuracy\n",
           tol, tab->row[k0].leaf, tab->row[k0].err_p99);
  }
}

/* A word of the command line, quoted for a POSIX shell when it needs it;
 * control characters become '?' so that the comment stays one line. */
static void write_word(FILE *fp, const char *w) {
  static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
                              "tuvwxyz0123456789_-+=/.,:@%";
  if (*w != '\0' && strspn(w, plain) == strlen(w)) {
    fputs(w, fp);
    return;
  }
  fputc('\'', fp);
  for (; *w != '\0'; w++) {
    if (*w == '\'')
      fputs("'\\''", fp);
    else
      fputc((unsigned char)*w < ' ' ? '?' : *w, fp);
  }
  fputc('\'', fp);
}

static void write_comments(FILE *fp, const tune_options *o,
                           const tune_table *tab, size_t n, const truth *t) {
  const tfmm_stats *s0 = &tab->row[0].best;
  fputs("# command: tilefmm", fp);
  for (int k = 0; k < o->argc; k++) {
    fputc(' ', fp);
    write_word(fp, o->argv[k]);
  }
  char date[32] = "unknown";
  const time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm) != NULL)
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf(fp,
          "\n# date: %s\n# device: %s, %s; tree and upward pass on the "
          "%s, lists on the cpu, far field on the %s, near field on the "
          "%s\n# run: ",
          date, tfmm_device_name(s0->device), s0->device_name,
          tfmm_device_name(s0->tree_device), tfmm_device_name(s0->far_device),
          tfmm_device_name(s0->near_device));
  describe_run(fp, o, n, s0);
  fprintf(fp,
          "\n# times in seconds: the fastest of %d evaluations after a "
          "warm-up\n# acc_err_p99: 99th percentile (nearest rank) of |a - "
          "a_ref| / |a_ref| over %zu bodies\n# fastest leaf size: %d\n"
          "# fastest schedule: %s\n# max error: %.17g\n",
          o->repeat, t->k, tab->row[tab->fastest].leaf,
          tfmm_schedule_name(tab->row[tab->fastest].schedule), o->max_error);
  if (tab->chosen >= 0)
    fprintf(fp, "# chosen leaf size: %d\n# chosen schedule: %s\n",
            tab->row[tab->chosen].leaf,
            tfmm_schedule_name(tab->row[tab->chosen].schedule));
  else
    fprintf(fp, "# chosen leaf size: none (no p99 error within the max)\n");
}

static int write_csv(const tune_options *o, const tune_table *tab, size_t n,
                     const truth *t) {
  atomic_file af;
  if (!atomic_file_open(&af, o->csv))
    return 0;
  write_comments(af.fp, o, tab, n, t);
  fprintf(af.fp,
          "leaf,depth,leaves,near_interactions,%s,near_s,far_s,total_s,"
          "acc_err_p99,schedule\n",
          tab->row[0].best.method == TFMM_METHOD_FMM ? "m2l" : "m2p");
  for (int k = 0; k < tab->rows; k++) {
    const tune_row *r = &tab->row[k];
    const tfmm_stats *s = &r->best;
    fprintf(af.fp, "%d,%d,%" PRId64 ",%.0f,%.0f,%.9g,%.9g,%.9g,%.6e,%s\n",
            r->leaf, s->tree_depth, s->tree_leaves, s->interactions,
            far_count(s), s->near_time, s->far_time, s->time_total, r->err_p99,
            tfmm_schedule_name(r->schedule));
  }
  return atomic_file_commit(&af);
}

/* ---- the plot ---------------------------------------------------------- */

/* The script: near, far and total time against L, both axes logarithmic;
 * the p99 error on the right-hand axis (logarithmic), with --max-error as
 * a dashed line. The CSV's header line names the columns (columnhead). */
typedef struct tune_plot {
  const tune_options *o;
  const tune_table *tab;
} tune_plot;

static void write_script(FILE *gp, const char *png_path, void *ctx) {
  const tune_options *o = ((const tune_plot *)ctx)->o;
  const tune_table *tab = ((const tune_plot *)ctx)->tab;
  const tfmm_stats *s0 = &tab->row[0].best;
  gnuplot_png_terminal(gp, 900, 600, png_path);
  fprintf(gp,
          "set datafile separator ','\n"
          "set key autotitle columnhead below horizontal\n"
          "set logscale x 2\nset logscale y\nset grid\n"
          "set xrange [%g:%g]\n"
          "set xlabel 'leaf size L (bodies)'\n"
          "set ylabel 'seconds (fastest of %d)'\n"
          "set y2label 'p99 relative acceleration error'\n"
          "set logscale y2\nset y2tics\nset ytics nomirror\n"
          "set format y2 '%%.0e'\n"
          "set title 'tilefmm tune: %s, N = %zu, theta %g, order %d, %s'\n",
          o->leaf_min / sqrt(2.0), o->leaf_max * sqrt(2.0), o->repeat,
          tfmm_method_name(s0->method), s0->n, s0->theta, s0->order,
          tfmm_device_name(s0->device));
  fputs("set xtics (", gp);
  for (int k = 0; k < tab->rows; k++)
    fprintf(gp, "%s%d", k > 0 ? ", " : "", tab->row[k].leaf);
  /* The chosen L (else the fastest) marked, its label on the side with
   * room. */
  const int mark = tab->chosen >= 0 ? tab->chosen : tab->fastest;
  const int leaf = tab->row[mark].leaf;
  const int left = 2 * mark < tab->rows;
  fprintf(gp,
          ")\nset arrow from %d, graph 0 to %d, graph 1 nohead dashtype 2\n"
          "set label '%s: %s%sL = %d' at %d, graph 0.95 %s offset %d, 0\n",
          leaf, leaf, tab->chosen >= 0 ? "chosen" : "fastest",
          tab->schedules > 1 ? tfmm_schedule_name(tab->row[mark].schedule) : "",
          tab->schedules > 1 ? ", " : "", leaf, leaf, left ? "left" : "right",
          left ? 1 : -1);
  /* The error axis spans the errors and E. */
  double lo = o->max_error, hi = o->max_error;
  for (int k = 0; k < tab->rows; k++) {
    const double e = tab->row[k].err_p99;
    if (e > 0 && isfinite(e)) {
      lo = fmin(lo, e);
      hi = fmax(hi, e);
    }
  }
  char tol[32];
  fprintf(gp, "set y2range [%g:%g]\n", lo / 3, hi * 3);
  /* Each schedule's rows (consecutive, nleaf of them) as its own lines. */
  const int nleaf = tab->rows / tab->schedules;
  fputs("plot ", gp);
  for (int q = 0; q < tab->schedules; q++) {
    const tfmm_stats *s = &tab->row[q * nleaf].best;
    const char *name = tfmm_schedule_name(s->schedule);
    if (q > 0)
      fputs(", \\\n  ", gp);
    gnuplot_string(gp, o->csv);
    fprintf(gp,
            " every ::%d::%d using 1:6 with linespoints lw 2 title '%s: near "
            "field (%s)', \\\n"
            "  '' every ::%d::%d using 1:7 with linespoints lw 2 title '%s: "
            "far field (%s)', \\\n"
            "  '' every ::%d::%d using 1:8 with linespoints lw 3 title '%s: "
            "total', \\\n"
            "  '' every ::%d::%d using 1:9 axes x1y2 with linespoints lw 2 "
            "dashtype 3 title '%s: p99 error (right axis)'",
            q * nleaf, q * nleaf + nleaf - 1, name,
            tfmm_device_name(s->near_device), q * nleaf, q * nleaf + nleaf - 1,
            name, tfmm_device_name(s->far_device), q * nleaf,
            q * nleaf + nleaf - 1, name, q * nleaf, q * nleaf + nleaf - 1,
            name);
  }
  fprintf(gp,
          ", \\\n  %.17g axes x1y2 with lines dashtype 2 lc rgb 'red' "
          "title 'max error %s'\n",
          o->max_error, solver_cli_tol(o->max_error, tol));
}

/* The plot, or a warning when there is no gnuplot: the CSV is the result,
 * the plot a convenience. */
static int plot(const tune_options *o, const tune_table *tab) {
  if (gnuplot_on_path()) {
    tune_plot ctx = {o, tab};
    return gnuplot_draw(o->png, o->csv, write_script, &ctx);
  }
  fprintf(stderr,
          "tilefmm: warning: gnuplot not found on PATH: no plot written to "
          "%s.\n"
          "  The table is in %s. To plot it, install gnuplot (Debian:\n"
          "  apt-get install gnuplot-nox) and run:\n"
          "  gnuplot -e \"set terminal png; set output '%s'; set datafile "
          "separator ','; set key autotitle columnhead; set logscale xy; "
          "plot '%s' using 1:6 with lp, '' using 1:7 with lp, '' using 1:8 "
          "with lp\"\n"
          "  (columns 1: leaf size; 6, 7, 8: near, far and total seconds;\n"
          "  9: the p99 error)\n",
          o->png, o->csv, o->png, o->csv);
  return 1;
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
  if (!load_bodies(o, b) || !truth_compute(solver, b, o->sample, t))
    rc = CLI_RUNTIME_ERROR;
  tfmm_solver_destroy(solver);
  return rc;
}

/* Reads, measures, reports and writes. */
static int tune(const tune_options *o) {
  bodyio_bodies b;
  memset(&b, 0, sizeof b);
  truth t;
  memset(&t, 0, sizeof t);
  tune_table tab;
  memset(&tab, 0, sizeof tab);
  int rc = prepare(o, &b, &t);
  if (rc == CLI_OK)
    rc = run_rows(o, &b, &t, &tab);
  if (rc == CLI_OK) {
    print_table(o, &tab, b.n, &t);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      cli_error("standard output: cannot write");
      rc = CLI_RUNTIME_ERROR;
    }
  }
  if (rc == CLI_OK && (!write_csv(o, &tab, b.n, &t) || !plot(o, &tab)))
    rc = CLI_RUNTIME_ERROR;
  if (rc == CLI_OK && tab.chosen < 0)
    rc = TUNE_NOT_MET;
  truth_free(&t);
  bodyio_free(&b);
  return rc;
}

int cmd_tune(int argc, char **argv) {
  tune_options o;
  switch (parse_options(argc, argv, &o)) {
  case ARGS_HELP:
    print_help(&o.solver.cfg);
    return CLI_OK;
  case ARGS_ERROR:
    fprintf(stderr, "Try 'tilefmm tune --help'.\n");
    return CLI_USAGE_ERROR;
  default:
    return tune(&o);
  }
}
