/* tilefmm validate: a method's forces measured against the
 * double-precision reference, on every body or on a random sample (the
 * brute-force check on a subsample of SWIFT). The errors are a measurement:
 * the exit status says only whether it could be made. */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "bodyio.h"
#include "cli.h"
#include "error_stats.h"
#include "solver_cli.h"

#include "tilefmm.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Up to FULL_MAX bodies the whole reference is affordable (O(N^2)); past
 * it a sample of DEFAULT_SAMPLE bodies, unless --sample says otherwise. */
#define FULL_MAX 20000
#define DEFAULT_SAMPLE 1000
#define DEFAULT_SEED 1

typedef struct validate_options {
  const char *in;
  uint64_t sample, seed;
  int sample_given;
  solver_cli solver;
} validate_options;

static void print_help(const tfmm_config *d) {
  printf(
      "Usage: tilefmm validate --in FILE [options]\n"
      "\n"
      "Computes the forces of the bodies in FILE with the chosen method and\n"
      "measures them against the double-precision reference (compensated\n"
      "sums): per body, the relative acceleration error |a - a_ref| /\n"
      "|a_ref| (the absolute error where |a_ref| = 0, said so) and the\n"
      "relative potential error |phi - phi_ref| / |phi_ref|, summarised by\n"
      "their median, 99th percentile and maximum (nearest rank: the p-th of\n"
      "n errors is the ceil(p n / 100)-th smallest). The reference covers\n"
      "every body when S >= N, or when N <= %d and --sample is not given;\n"
      "else S bodies drawn uniformly without replacement. FILE is read as\n"
      "by 'tilefmm forces'. The report goes to stdout, the method's\n"
      "timings to stderr.\n"
      "\n"
      "Options:\n"
      "  --in FILE         bodies to read (required)\n"
      "  --sample S        bodies to compare, >= 1 (default: all when\n"
      "                    N <= %d, else %d)\n"
      "  --seed K          seed of the sample, an integer in [0, 2^64)\n"
      "                    (default: %d)\n",
      FULL_MAX, FULL_MAX, DEFAULT_SAMPLE, DEFAULT_SEED);
  solver_cli_help(stdout, d);
  printf("  -h, --help        show this help\n"
         "\n"
         "Exit status: 0 when the errors were measured, whatever their size;\n"
         "1 on a runtime error, 2 on a usage error.\n");
}

static int sample_ok(const void *v) { return *(const uint64_t *)v >= 1; }

static args_result parse_options(int argc, char **argv, validate_options *o) {
  memset(o, 0, sizeof *o);
  o->seed = DEFAULT_SEED;
  args_option opts[SOLVER_CLI_FLAGS + 3] = {
      {.name = "--in", .kind = ARGS_STRING, .value = &o->in, .required = 1},
      {.name = "--sample",
       .kind = ARGS_U64,
       .value = &o->sample,
       .valid = sample_ok,
       .expect = "an integer >= 1"},
      {.name = "--seed",
       .kind = ARGS_U64,
       .value = &o->seed,
       .expect = "an integer in [0, 2^64)"},
  };
  solver_cli_init(&o->solver, opts + 3);
  const args_result r =
      args_parse(argc, argv, opts, sizeof opts / sizeof opts[0]);
  if (r == ARGS_OK) {
    o->sample_given = opts[1].seen;
    solver_cli_finish(&o->solver);
  }
  return r;
}

/* What the method computed and what it is measured against. */
typedef struct comparison {
  size_t n;                  /* bodies */
  double *acc, *pot;         /* the method's, 3n and n */
  double method_seconds;     /* wall time of the method's evaluation */
  size_t k;                  /* bodies compared */
  size_t *targets;           /* their indices, or NULL for all in order */
  double *ref_acc, *ref_pot; /* the reference at them, 3k and k */
  double ref_seconds;        /* wall time of the reference */
} comparison;

static void comparison_free(comparison *c) {
  free(c->acc);
  free(c->pot);
  free(c->targets);
  free(c->ref_acc);
  free(c->ref_pot);
}

static int compute_error(tfmm_solver *solver) {
  cli_error("%s", tfmm_solver_message(solver));
  return 0;
}

/* The method's forces on every body. */
static int run_method(tfmm_solver *solver, const bodyio_bodies *b,
                      comparison *c) {
  c->n = b->n;
  c->acc = malloc(3 * b->n * sizeof(double));
  c->pot = malloc(b->n * sizeof(double));
  if (c->acc == NULL || c->pot == NULL) {
    cli_error("out of memory for %zu bodies", b->n);
    return 0;
  }
  const double t0 = cli_seconds();
  if (tfmm_solver_compute(solver, b->n, b->pos, b->mass, c->acc, c->pot) !=
      TFMM_OK)
    return compute_error(solver);
  c->method_seconds = cli_seconds() - t0;
  return 1;
}

/* The reference on every body (targets NULL) or on the sample. */
static int run_reference(tfmm_solver *ref, const bodyio_bodies *b,
                         comparison *c) {
  c->ref_acc = malloc(3 * c->k * sizeof(double));
  c->ref_pot = malloc(c->k * sizeof(double));
  if (c->ref_acc == NULL || c->ref_pot == NULL) {
    cli_error("out of memory for the reference at %zu bodies", c->k);
    return 0;
  }
  const double t0 = cli_seconds();
  const tfmm_status st =
      c->targets == NULL
          ? tfmm_solver_compute(ref, b->n, b->pos, b->mass, c->ref_acc,
                                c->ref_pot)
          : tfmm_solver_reference_at(ref, b->n, b->pos, b->mass, c->k,
                                     c->targets, c->ref_acc, c->ref_pot);
  if (st != TFMM_OK)
    return compute_error(ref);
  c->ref_seconds = cli_seconds() - t0;
  return 1;
}

/* Chooses the bodies to compare: all, or a sample drawn from the seed. */
static int choose_targets(const validate_options *o, comparison *c) {
  const int full = o->sample_given ? o->sample >= c->n : c->n <= FULL_MAX;
  c->k = full ? c->n : o->sample_given ? (size_t)o->sample : DEFAULT_SAMPLE;
  if (full)
    return 1;
  c->targets = malloc(c->k * sizeof *c->targets);
  if (c->targets == NULL) {
    cli_error("out of memory for a sample of %zu bodies", c->k);
    return 0;
  }
  error_stats_sample(c->n, c->k, o->seed, c->targets);
  return 1;
}

/* Summaries of the acceleration and potential errors. */
typedef struct error_report {
  error_summary acc, pot;
  size_t acc_absolute, pot_absolute; /* bodies whose reference is 0 */
} error_report;

static int measure(const comparison *c, error_report *r) {
  double *ea = malloc(c->k * sizeof *ea), *ep = malloc(c->k * sizeof *ep);
  const int ok = ea != NULL && ep != NULL;
  if (!ok)
    cli_error("out of memory for the errors of %zu bodies", c->k);
  for (size_t t = 0; ok && t < c->k; t++) {
    const size_t i = c->targets != NULL ? c->targets[t] : t;
    int absolute;
    ea[t] =
        error_stats_relative(c->acc + 3 * i, c->ref_acc + 3 * t, 3, &absolute);
    r->acc_absolute += (size_t)absolute;
    ep[t] = error_stats_relative(c->pot + i, c->ref_pot + t, 1, &absolute);
    r->pot_absolute += (size_t)absolute;
  }
  if (ok) {
    r->acc = error_stats_summarize(ea, c->k);
    r->pot = error_stats_summarize(ep, c->k);
  }
  free(ea);
  free(ep);
  return ok;
}

static void print_method(const tfmm_config *cfg, const tfmm_stats *s) {
  printf("method:          %s", tfmm_method_name(s->method));
  if (s->method == TFMM_METHOD_FMM || s->method == TFMM_METHOD_BH)
    printf(" (theta %g, order %d, leaf %d, max depth %d)", cfg->theta,
           cfg->order, cfg->leaf_size, cfg->max_depth);
  else if (s->device == TFMM_DEVICE_GPU)
    printf(" (gpu tile %d, threads/body %d, unroll %d, bodies/thread %d)",
           s->gpu_tile, s->gpu_threads_per_body, s->gpu_unroll,
           s->gpu_bodies_per_thread);
  printf("\nG, eps:          %.17g, %.17g\n", cfg->G, cfg->eps);
  printf("device:          %s, %s\n", tfmm_device_name(s->device),
         s->device_name);
}

static void print_report(const validate_options *o, const tfmm_stats *s,
                         const comparison *c, const error_report *r) {
  printf("tilefmm validate: %zu bodies (%s)\n", c->n, o->in);
  print_method(&o->solver.cfg, s);
  if (c->targets == NULL)
    printf("compared:        all %zu bodies with the full reference\n"
           "                 (method reference, double precision)\n",
           c->n);
  else
    printf("compared:        a sample of %zu of %zu bodies, drawn uniformly\n"
           "                 without replacement (seed %" PRIu64 "), with "
           "the\n"
           "                 double-precision reference at those bodies\n",
           c->k, c->n, o->seed);
  printf("method time:     %.6f s\n", c->method_seconds);
  printf("reference time:  %.6f s\n", c->ref_seconds);
  printf("\n%-14s %13s %13s %13s\n", "relative error", "median", "p99", "max");
  printf("%-14s %13.4e %13.4e %13.4e\n", "acceleration", r->acc.median,
         r->acc.p99, r->acc.max);
  printf("%-14s %13.4e %13.4e %13.4e\n", "potential", r->pot.median, r->pot.p99,
         r->pot.max);
  printf("(percentiles by nearest rank: the p-th of n errors is the\n"
         " ceil(p n / 100)-th smallest)\n");
  if (r->acc_absolute > 0)
    printf("note: %zu of %zu bodies have |a_ref| = 0: their acceleration "
           "error is the absolute |a - a_ref|\n",
           r->acc_absolute, c->k);
  if (r->pot_absolute > 0)
    printf("note: %zu of %zu bodies have phi_ref = 0: their potential "
           "error is the absolute |phi - phi_ref|\n",
           r->pot_absolute, c->k);
}

/* Reads, computes with both solvers, measures and reports. */
static int validate(tfmm_solver *solver, tfmm_solver *ref,
                    const validate_options *o) {
  bodyio_bodies b;
  comparison c;
  memset(&c, 0, sizeof c);
  error_report r;
  memset(&r, 0, sizeof r);
  int ok = bodyio_read(o->in, &b) && run_method(solver, &b, &c) &&
           choose_targets(o, &c) && run_reference(ref, &b, &c) &&
           measure(&c, &r);
  if (ok) {
    const tfmm_stats *s = tfmm_solver_stats(solver);
    fprintf(stderr, "tilefmm validate: method %s, device %s (%s)\n",
            tfmm_method_name(s->method), tfmm_device_name(s->device),
            s->device_name);
    solver_cli_print_times(stderr, s);
    solver_cli_print_counts(stderr, s);
    print_report(o, s, &c, &r);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      cli_error("standard output: cannot write");
      ok = 0;
    }
  }
  comparison_free(&c);
  bodyio_free(&b);
  return ok ? CLI_OK : CLI_RUNTIME_ERROR;
}

int cmd_validate(int argc, char **argv) {
  validate_options o;
  switch (parse_options(argc - 1, argv + 1, &o)) {
  case ARGS_HELP:
    print_help(&o.solver.cfg);
    return CLI_OK;
  case ARGS_ERROR:
    fprintf(stderr, "Try 'tilefmm validate --help'.\n");
    return CLI_USAGE_ERROR;
  default:
    break;
  }
  /* Both solvers first: a configuration refused is reported before a
   * large file is read. The truth is the reference method on the CPU, with
   * the same G, eps and threads. */
  tfmm_config ref_cfg = o.solver.cfg;
  ref_cfg.method = TFMM_METHOD_REFERENCE;
  ref_cfg.device = TFMM_DEVICE_CPU;
  tfmm_solver *solver = NULL, *ref = NULL;
  int rc = solver_cli_create(&o.solver.cfg, &solver);
  if (rc == CLI_OK && (rc = solver_cli_create(&ref_cfg, &ref)) != CLI_OK)
    rc = CLI_RUNTIME_ERROR;
  if (rc == CLI_OK)
    rc = validate(solver, ref, &o);
  tfmm_solver_destroy(solver);
  tfmm_solver_destroy(ref);
  return rc;
}
