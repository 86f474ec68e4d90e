/* tilefmm validate: a method's forces measured against the
 * double-precision reference, on every body or on a random sample (the
 * brute-force check on a subsample of SWIFT), and the 99th percentile of
 * the relative acceleration error judged against the accuracy target
 * (tfmm_config.accuracy): the exit status says whether it was met.
 *
 * With --near, two checks of the tree methods' near field, each with a
 * criterion it passes or fails: the GPU's sums over the leaf lists against
 * the CPU's over the same lists, and the method with theta = 0 (every pair
 * near) against the reference. */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "body_input.h"
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

/* --near: theta = 0 puts all N (N - 1) pairs in the leaf lists, and the
 * work and the lists grow as N^2: at NEAR_MAX bodies 2.4 GB of memory and
 * 51 s on 2 CPU cores (3.3 s on the H100 machine). */
#define NEAR_MAX 200000
/* The criteria of the --near checks, on the 99th percentiles of the
 * relative errors (the figures). GPU against CPU: the same
 * single-precision pair terms summed in another order. The GPU keeps one
 * float sum per target over its whole list, the CPU adds each leaf pair's
 * float sum into a double, and the near field alone of a body in a dense
 * core nearly cancels, which magnifies the difference. Measured on an H100
 * (Plummer, theta 0.5, leaf 64): median 1.2e-7; p99 5.2e-7 at N = 3000,
 * 7.7e-7 at 20000, but 1.0e-6 at 100000 and 1.3e-6 at 200000, past the
 * bound. Every pair near against the reference: p99 4e-7 (CPU) and 6e-7
 * (GPU) at N = 3000, 3.3e-6 (GPU) at 200000. */
#define NEAR_GPU_P99 1e-6
#define NEAR_ALL_P99 1e-5
/* The exit status when the accuracy target was missed, or with --near
 * when a check missed its criterion. */
#define VALIDATE_CHECK_FAILED 3

typedef struct validate_options {
  const char *in, *ic; /* the bodies: a file or a model (plummer) */
  const char *types;   /* --types: a snapshot's types to read */
  uint64_t n, ic_seed; /* the model's bodies and seed */
  uint64_t sample, seed;
  int sample_given, near;
  int G_given; /* --G was given */
  solver_cli solver;
} validate_options;

static void print_help(const tfmm_config *d) {
  printf(
      "Usage: tilefmm validate (--in FILE | --ic plummer --n N) [--near]\n"
      "                        [options]\n"
      "\n"
      "Computes the forces of the bodies in FILE (or of a Plummer sphere of\n"
      "N bodies; a FILE in physical units is said with their G, and a --G\n"
      "contradicting them refused) with the chosen method and measures them\n"
      "against the double-precision reference (compensated sums): per\n"
      "body, the relative acceleration error |a - a_ref| / |a_ref| (the\n"
      "absolute error where |a_ref| = 0, said so) and the relative\n"
      "potential error |phi - phi_ref| / |phi_ref|, summarised by their\n"
      "median, 99th percentile and maximum (nearest rank: the p-th of n\n"
      "errors is the ceil(p n / 100)-th smallest). The 99th percentile of\n"
      "the acceleration error is judged against the accuracy target\n"
      "(--accuracy, from which the tree methods choose theta and order\n"
      "unless --theta and --order are given): 'target 1e-3: met' or\n"
      "'target 1e-3: NOT met'. The reference covers every body when\n"
      "S >= N, or when N <= %d and --sample is not given; else S bodies\n"
      "drawn uniformly without replacement. FILE is read as by 'tilefmm\n"
      "forces'; --ic plummer makes the bodies of 'tilefmm ic plummer'. The\n"
      "report goes to stdout, the method's timings to stderr.\n"
      "\n"
      "Options:\n"
      "  --in FILE         bodies to read, as 'tilefmm forces' reads them\n"
      "  --types LIST      the particle types of a snapshot to read, as\n"
      "                    gravitating bodies: 0,1,4 or all (default: the\n"
      "                    file's one type; gas or several types need it)\n"
      "  --ic plummer      or: a Plummer sphere, as 'tilefmm ic plummer'\n"
      "  --n N             its number of bodies, >= 1 (with --ic)\n"
      "  --ic-seed K       its random seed, an integer in [0, 2^64)\n"
      "                    (default: %d)\n"
      "  --sample S        bodies to compare, >= 1 (default: all when\n"
      "                    N <= %d, else %d)\n"
      "  --seed K          seed of the sample, an integer in [0, 2^64)\n"
      "                    (default: %d)\n"
      "  --near            check the near field of fmm or bh instead (at\n"
      "                    most %d bodies; see below)\n",
      FULL_MAX, DEFAULT_SEED, FULL_MAX, DEFAULT_SAMPLE, DEFAULT_SEED, NEAR_MAX);
  solver_cli_help(stdout, d, 1);
  printf(
      "  -h, --help        show this help\n"
      "\n"
      "Near-field checks (--near), each passed or failed:\n"
      "  check 1: near field, GPU against CPU over the same lists: the\n"
      "     method with its far field left out (tfmm_config.near_only),\n"
      "     once on the GPU and once on the CPU, over the same leaf lists;\n"
      "     every body compared, the CPU's sums as the truth. Passes when\n"
      "     the 99th percentiles of the acceleration and potential errors\n"
      "     are <= %.0e. The maximum is reported but not gated: the same\n"
      "     single-precision terms summed in another order differ by their\n"
      "     rounding, which a body whose near-field pull nearly cancels\n"
      "     turns into a large relative error. Skipped, saying why, with\n"
      "     --device cpu or without a usable GPU.\n"
      "  check 2: every pair near (theta = 0) against all pairs: the\n"
      "     method with theta = 0, which accepts no pair of cells, so that\n"
      "     every pair of bodies goes through the leaf lists (N (N - 1)\n"
      "     interactions, checked), on --device, against the\n"
      "     double-precision reference as above (every body, or a sample).\n"
      "     Passes when both 99th percentiles are <= %.0e: single-precision\n"
      "     pair terms, each leaf's sums in its own frame.\n"
      "\n"
      "Exit status: 0 when the 99th percentile of the acceleration error\n"
      "met the accuracy target, and with --near when every check that ran\n"
      "passed; %d when it missed the target, or with --near when a check\n"
      "failed (the errors are reported all the same); 1 on a runtime\n"
      "error, 2 on a usage error.\n",
      NEAR_GPU_P99, NEAR_ALL_P99, VALIDATE_CHECK_FAILED);
}

static int sample_ok(const void *v) { return *(const uint64_t *)v >= 1; }
static int ic_ok(const void *v) {
  return strcmp(*(const char *const *)v, "plummer") == 0;
}
/* At least one body, and few enough that 3n doubles can be addressed. */
static int count_ok(const void *v) {
  const uint64_t n = *(const uint64_t *)v;
  return n >= 1 && n <= SIZE_MAX / (3 * sizeof(double));
}

/* args.h knows flags with values only: the switch --near is taken out of
 * argv before the rest is parsed. Every other flag of validate takes a
 * value, so the word after a flag written without '=' is its value (a
 * file may be called --near), never the switch. Returns 1 when --near was
 * there, 0 when not, -1 after printing what is wrong. */
static int take_near(int *argc, char **argv) {
  int found = 0, kept = 0;
  for (int i = 0; i < *argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--near") == 0) {
      if (found) {
        cli_error("--near: given more than once");
        return -1;
      }
      found = 1;
      continue;
    }
    if (strncmp(a, "--near=", 7) == 0) {
      cli_error("--near: takes no value");
      return -1;
    }
    argv[kept++] = argv[i];
    if (strncmp(a, "--", 2) == 0 && strchr(a, '=') == NULL &&
        strcmp(a, "--help") != 0 && i + 1 < *argc)
      argv[kept++] = argv[++i];
  }
  *argc = kept;
  return found;
}

/* The rules joining flags: one source of bodies, and the model's flags
 * with the model only. */
static int inputs_ok(const validate_options *o, const args_option *n_opt,
                     const args_option *seed_opt) {
  if (o->in != NULL && o->ic != NULL)
    cli_error("--in and --ic: give one of the two");
  else if (o->in == NULL && o->ic == NULL)
    cli_error("missing required flag --in (or --ic plummer --n N)");
  else if (o->ic != NULL && !n_opt->seen)
    cli_error("--ic %s: missing --n N, its number of bodies", o->ic);
  else if (o->ic == NULL && n_opt->seen)
    cli_error("--n: only with --ic (the bodies of --in are counted)");
  else if (o->ic == NULL && seed_opt->seen)
    cli_error("--ic-seed: only with --ic");
  else if (o->ic != NULL && o->types != NULL)
    cli_error("--types: only with --in");
  else
    return 1;
  return 0;
}

static args_result parse_options(int argc, char **argv, validate_options *o) {
  memset(o, 0, sizeof *o);
  o->seed = o->ic_seed = DEFAULT_SEED;
  enum { IN, TYPES, IC, N, IC_SEED, SAMPLE, SEED, OWN };
  args_option opts[SOLVER_CLI_FLAGS + OWN] = {
      [IN] = {.name = "--in", .kind = ARGS_STRING, .value = &o->in},
      [TYPES] = {.name = BODY_INPUT_TYPES_FLAG,
                 .kind = ARGS_STRING,
                 .value = &o->types,
                 .valid = body_input_types_ok,
                 .expect = BODY_INPUT_TYPES_EXPECT},
      [IC] = {.name = "--ic",
              .kind = ARGS_STRING,
              .value = &o->ic,
              .valid = ic_ok,
              .expect = "plummer"},
      [N] = {.name = "--n",
             .kind = ARGS_U64,
             .value = &o->n,
             .valid = count_ok,
             .expect = "an integer >= 1"},
      [IC_SEED] = {.name = "--ic-seed",
                   .kind = ARGS_U64,
                   .value = &o->ic_seed,
                   .expect = "an integer in [0, 2^64)"},
      [SAMPLE] = {.name = "--sample",
                  .kind = ARGS_U64,
                  .value = &o->sample,
                  .valid = sample_ok,
                  .expect = "an integer >= 1"},
      [SEED] = {.name = "--seed",
                .kind = ARGS_U64,
                .value = &o->seed,
                .expect = "an integer in [0, 2^64)"},
  };
  solver_cli_init(&o->solver, opts + OWN);
  const int near = take_near(&argc, argv);
  if (near < 0)
    return ARGS_ERROR;
  o->near = near;
  args_result r = args_parse(argc, argv, opts, sizeof opts / sizeof opts[0]);
  if (r == ARGS_OK && !inputs_ok(o, &opts[N], &opts[IC_SEED]))
    r = ARGS_ERROR;
  if (r == ARGS_OK) {
    o->sample_given = opts[SAMPLE].seen;
    for (size_t k = OWN; k < sizeof opts / sizeof opts[0]; k++)
      if (opts[k].name != NULL && strcmp(opts[k].name, "--G") == 0)
        o->G_given = opts[k].seen;
    solver_cli_finish(&o->solver);
  }
  return r;
}

/* The bodies: read from --in, or made by --ic plummer. A file's
 * physical units are said with their G, and a --G that contradicts them
 * is refused (*usage set); the errors measured are relative, the same in
 * any units, so the solvers keep the G they were made with. */
static int load_bodies(const validate_options *o, bodyio_bodies *b,
                       int *usage) {
  *usage = 0;
  if (o->in != NULL)
    return body_input_read_relative("validate", o->in, o->types, o->G_given,
                                    o->solver.cfg.G, b, usage);
  memset(b, 0, sizeof *b);
  const size_t n = (size_t)o->n;
  b->pos = malloc(3 * n * sizeof(double));
  b->mass = malloc(n * sizeof(double));
  double *vel = malloc(3 * n * sizeof(double));
  int ok = b->pos != NULL && b->mass != NULL && vel != NULL;
  if (!ok)
    cli_error("--ic plummer: out of memory for %zu bodies", n);
  tfmm_status st;
  if (ok &&
      (st = tfmm_ic_plummer(n, o->ic_seed, b->pos, vel, b->mass)) != TFMM_OK) {
    cli_error("--ic plummer: %s", tfmm_status_name(st));
    ok = 0;
  }
  free(vel);
  b->n = b->cap = n;
  return ok;
}

/* Where the bodies came from, for the report's first line. */
static void describe_input(const validate_options *o, char *buf, size_t size) {
  if (o->in != NULL)
    snprintf(buf, size, "%s", o->in);
  else
    snprintf(buf, size, "ic plummer --n %" PRIu64 " --ic-seed %" PRIu64, o->n,
             o->ic_seed);
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

static int is_tree_method(tfmm_method m) {
  return m == TFMM_METHOD_FMM || m == TFMM_METHOD_BH;
}

/* The theta, order and leaf size are the ones the evaluation used (s),
 * which the solver chose where cfg says auto (TFMM_FROM_ACCURACY,
 * TFMM_LEAF_AUTO). */
static void print_method(const tfmm_config *cfg, const tfmm_stats *s) {
  printf("method:          %s", tfmm_method_name(s->method));
  if (is_tree_method(s->method))
    printf(" (theta %g%s, order %d%s, leaf %d%s, max depth %d%s)", s->theta,
           cfg->theta == TFMM_FROM_ACCURACY ? " auto" : "", s->order,
           cfg->order == TFMM_FROM_ACCURACY ? " auto" : "", s->leaf_size,
           cfg->leaf_size == TFMM_LEAF_AUTO ? " auto" : "", cfg->max_depth,
           cfg->mac == TFMM_MAC_MASS    ? ", mac mass"
           : cfg->mac == TFMM_MAC_ERROR ? ", mac error"
                                        : "");
  else if (s->device == TFMM_DEVICE_GPU)
    printf(" (gpu tile %d, threads/body %d, unroll %d, bodies/thread %d)",
           s->gpu_tile, s->gpu_threads_per_body, s->gpu_unroll,
           s->gpu_bodies_per_thread);
  printf("\nG, eps:          %.17g, %.17g\n", cfg->G, cfg->eps);
  /* The tree methods report the precision auto resolved to. */
  tfmm_precision prec = is_tree_method(s->method) ? s->precision
                        : cfg->precision == TFMM_PRECISION_DOUBLE
                            ? TFMM_PRECISION_DOUBLE
                            : TFMM_PRECISION_SINGLE;
  printf("softening:       %s, precision %s%s\n",
         tfmm_softening_name(cfg->softening), tfmm_precision_name(prec),
         cfg->precision == TFMM_PRECISION_AUTO ? " (auto)" : "");
  printf("device:          %s, %s\n", tfmm_device_name(s->device),
         s->device_name);
}

/* The bodies compared and the truth they are compared with. */
static void print_compared(const validate_options *o, const comparison *c) {
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
}

static void print_errors(const comparison *c, const error_report *r) {
  printf("\n%-14s %13s %13s %13s\n", "relative error", "median", "p99", "max");
  printf("%-14s %13.4e %13.4e %13.4e\n", "acceleration", r->acc.median,
         r->acc.p99, r->acc.max);
  printf("%-14s %13.4e %13.4e %13.4e\n", "potential", r->pot.median, r->pot.p99,
         r->pot.max);
  if (r->acc_absolute > 0)
    printf("note: %zu of %zu bodies have |a_ref| = 0: their acceleration "
           "error is the absolute |a - a_ref|\n",
           r->acc_absolute, c->k);
  if (r->pot_absolute > 0)
    printf("note: %zu of %zu bodies have phi_ref = 0: their potential "
           "error is the absolute |phi - phi_ref|\n",
           r->pot_absolute, c->k);
}

static void print_percentile_rule(void) {
  printf("(percentiles by nearest rank: the p-th of n errors is the\n"
         " ceil(p n / 100)-th smallest)\n");
}

/* Whether the 99th percentile of the acceleration error met the target;
 * says so, with how theta and order were chosen. A NaN misses it. */
static int print_target(const tfmm_config *cfg, const tfmm_stats *s,
                        const error_report *r) {
  char tol[32];
  solver_cli_tol(cfg->accuracy, tol);
  const int met = r->acc.p99 <= cfg->accuracy;
  printf("\ntarget %s: %s (p99 acceleration error %.4e %s %s", tol,
         met ? "met" : "NOT met", r->acc.p99, met ? "<=" : ">", tol);
  if (is_tree_method(s->method)) {
    const int chosen =
        cfg->theta == TFMM_FROM_ACCURACY || cfg->order == TFMM_FROM_ACCURACY;
    printf(";\n                 theta %g, order %d %s", s->theta, s->order,
           chosen ? "chosen from the target" : "as given");
  }
  printf(")\n");
  return met;
}

/* The report on stdout; returns whether the target was met. */
static int print_report(const validate_options *o, const tfmm_stats *s,
                        const comparison *c, const error_report *r) {
  char input[160];
  describe_input(o, input, sizeof input);
  printf("tilefmm validate: %zu bodies (%s)\n", c->n, input);
  print_method(&o->solver.cfg, s);
  print_compared(o, c);
  printf("method time:     %.6f s\n", c->method_seconds);
  printf("reference time:  %.6f s\n", c->ref_seconds);
  print_errors(c, r);
  print_percentile_rule();
  return print_target(&o->solver.cfg, s, r);
}

/* The solver's timings and counts on stderr, under a heading. */
static void print_timings(const char *what, const tfmm_stats *s,
                          const tfmm_config *cfg) {
  fprintf(stderr, "tilefmm validate: %smethod %s, device %s (%s)\n", what,
          tfmm_method_name(s->method), tfmm_device_name(s->device),
          s->device_name);
  solver_cli_print_times(stderr, s);
  solver_cli_print_counts(stderr, s, cfg);
  solver_cli_print_measured(stderr, s);
}

static int flush_stdout(void) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli_error("standard output: cannot write");
    return 0;
  }
  return 1;
}

/* Reads, computes with both solvers, measures and reports. */
static int validate(tfmm_solver *solver, tfmm_solver *ref,
                    const validate_options *o) {
  bodyio_bodies b;
  comparison c;
  memset(&c, 0, sizeof c);
  error_report r;
  memset(&r, 0, sizeof r);
  int usage = 0;
  int ok = load_bodies(o, &b, &usage) && run_method(solver, &b, &c) &&
           choose_targets(o, &c) && run_reference(ref, &b, &c) &&
           measure(&c, &r);
  int met = 0;
  if (ok) {
    const tfmm_stats *s = tfmm_solver_stats(solver);
    print_timings("", s, &o->solver.cfg);
    met = print_report(o, s, &c, &r);
    ok = flush_stdout();
  }
  comparison_free(&c);
  bodyio_free(&b);
  return usage ? CLI_USAGE_ERROR
         : !ok ? CLI_RUNTIME_ERROR
         : met ? CLI_OK
               : VALIDATE_CHECK_FAILED;
}

/* ---- --near: two checks of the tree methods' near field ---------------- */

typedef enum check_outcome {
  CHECK_ERROR, /* a runtime error, already printed */
  CHECK_FAIL,
  CHECK_PASS,
  CHECK_SKIPPED
} check_outcome;

static const char *outcome_name(check_outcome c) {
  return c == CHECK_PASS ? "PASS" : c == CHECK_FAIL ? "FAIL" : "skipped";
}

static check_outcome verdict(int pass) {
  printf("result:          %s\n", pass ? "PASS" : "FAIL");
  return pass ? CHECK_PASS : CHECK_FAIL;
}

/* Why check 1 cannot run here, or NULL when it can. */
static const char *gpu_check_skipped(tfmm_device device) {
  if (device == TFMM_DEVICE_CPU)
    return "--device cpu was asked for";
  if (!tfmm_has_cuda())
    return "this build has no CUDA backend";
  if (tfmm_gpu_count() == 0)
    return "no usable GPU was found";
  return NULL;
}

static void print_gpu_check(const validate_options *o, const tfmm_stats *gs,
                            const tfmm_stats *cs, const comparison *c,
                            const error_report *r, int same_lists) {
  print_method(&o->solver.cfg, gs);
  printf("against:         %s, %s\n", tfmm_device_name(cs->device),
         cs->device_name);
  printf("field:           the near field alone (near_only: no far field),\n"
         "                 the sums over the leaf lists\n");
  if (same_lists)
    printf("lists:           %.0f interactions, the same on both devices\n",
           gs->interactions);
  else
    printf("lists:           %.0f interactions on the GPU, %.0f on the CPU:\n"
           "                 the devices did not sum the same pairs\n",
           gs->interactions, cs->interactions);
  printf("compared:        all %zu bodies: the GPU's near field against the\n"
         "                 CPU's\n",
         c->n);
  printf("gpu time:        %.6f s\n", c->method_seconds);
  printf("cpu time:        %.6f s\n", c->ref_seconds);
  print_errors(c, r);
  printf("criterion:       p99 <= %.0e for acceleration and potential, over\n"
         "                 the same lists; the max is reported, not gated\n"
         "                 (single-precision sums in another order can\n"
         "                 cancel)\n",
         NEAR_GPU_P99);
}

/* Check 1: the near field alone (near_only) on the CPU, then on the GPU;
 * the CPU's sums are the truth. The GPU solver takes the leaf size of the
 * CPU's evaluation, so that both build the same tree and lists also with
 * TFMM_LEAF_AUTO (whose first L depends on the device). */
static check_outcome gpu_check(const validate_options *o,
                               const bodyio_bodies *b) {
  printf("\ncheck 1: near field, GPU against CPU over the same lists\n");
  const char *skip = gpu_check_skipped(o->solver.cfg.device);
  if (skip != NULL) {
    printf("skipped:         %s; this check needs a GPU\n", skip);
    return CHECK_SKIPPED;
  }
  tfmm_config cfg = o->solver.cfg;
  cfg.near_only = 1;
  cfg.device = TFMM_DEVICE_CPU;
  tfmm_solver *cpu = NULL, *gpu = NULL;
  comparison c;
  memset(&c, 0, sizeof c);
  error_report r;
  memset(&r, 0, sizeof r);
  tfmm_stats cs, gs;
  c.k = b->n;
  int ok = solver_cli_create(&cfg, &cpu) == CLI_OK && run_reference(cpu, b, &c);
  if (ok) {
    cs = *tfmm_solver_stats(cpu);
    cfg.leaf_size = cs.leaf_size;
    cfg.device = TFMM_DEVICE_GPU;
    ok = solver_cli_create(&cfg, &gpu) == CLI_OK && run_method(gpu, b, &c) &&
         measure(&c, &r);
  }
  check_outcome out = CHECK_ERROR;
  if (ok) {
    gs = *tfmm_solver_stats(gpu);
    print_timings("check 1, cpu: ", &cs, &cfg);
    print_timings("check 1, gpu: ", &gs, &cfg);
    const int same_lists =
        gs.interactions == cs.interactions && gs.tree_leaves == cs.tree_leaves;
    print_gpu_check(o, &gs, &cs, &c, &r, same_lists);
    if (same_lists && cs.interactions == 0) {
      /* Single-body leaves have radius 0 and accept every other leaf:
       * both fields are zero, and agreeing on zero proves nothing. */
      printf(
          "result:          skipped: the lists hold no pair at this theta\n"
          "                 and leaf size, so there is nothing to compare\n");
      out = CHECK_SKIPPED;
    } else {
      out = verdict(same_lists && r.acc.p99 <= NEAR_GPU_P99 &&
                    r.pot.p99 <= NEAR_GPU_P99);
    }
  }
  tfmm_solver_destroy(cpu);
  tfmm_solver_destroy(gpu);
  comparison_free(&c);
  return out;
}

/* Check 2: the method with theta = 0 (every pair near), far field and
 * all, on the device asked for, against the reference. */
static check_outcome all_pairs_check(tfmm_solver *all, const tfmm_config *cfg,
                                     tfmm_solver *ref,
                                     const validate_options *o,
                                     const bodyio_bodies *b) {
  comparison c;
  memset(&c, 0, sizeof c);
  error_report r;
  memset(&r, 0, sizeof r);
  check_outcome out = CHECK_ERROR;
  if (run_method(all, b, &c) && choose_targets(o, &c) &&
      run_reference(ref, b, &c) && measure(&c, &r)) {
    const tfmm_stats *s = tfmm_solver_stats(all);
    print_timings("check 2: ", s, cfg);
    const double pairs = (double)b->n * (double)(b->n - 1);
    const int every_pair = s->interactions == pairs;
    printf("\ncheck 2: every pair near (theta = 0) against all pairs\n");
    print_method(cfg, s);
    printf("lists:           %.0f interactions %s N (N - 1) = %.0f%s\n",
           s->interactions, every_pair ? "=" : "!=", pairs,
           every_pair ? ":\n                 every pair is near"
                      : ":\n                 not every pair went through "
                        "the lists");
    print_compared(o, &c);
    printf("method time:     %.6f s\n", c.method_seconds);
    printf("reference time:  %.6f s\n", c.ref_seconds);
    print_errors(&c, &r);
    printf("criterion:       p99 <= %.0e for acceleration and potential, and\n"
           "                 every pair near (single-precision pair terms)\n",
           NEAR_ALL_P99);
    out = verdict(every_pair && r.acc.p99 <= NEAR_ALL_P99 &&
                  r.pot.p99 <= NEAR_ALL_P99);
  }
  comparison_free(&c);
  return out;
}

/* Reads, runs both checks and reports them. */
static int validate_near(tfmm_solver *all, const tfmm_config *all_cfg,
                         tfmm_solver *ref, const validate_options *o) {
  bodyio_bodies b;
  int usage = 0;
  if (!load_bodies(o, &b, &usage)) {
    bodyio_free(&b);
    return usage ? CLI_USAGE_ERROR : CLI_RUNTIME_ERROR;
  }
  if (b.n > NEAR_MAX) {
    cli_error("%s holds %zu bodies: --near is limited to %d (theta = 0 "
              "makes every pair near: N (N - 1) interactions)",
              o->in, b.n, NEAR_MAX);
    bodyio_free(&b);
    return CLI_USAGE_ERROR;
  }
  char input[160];
  describe_input(o, input, sizeof input);
  printf("tilefmm validate --near: %zu bodies (%s)\n", b.n, input);
  const check_outcome one = gpu_check(o, &b);
  const check_outcome two = one == CHECK_ERROR
                                ? CHECK_ERROR
                                : all_pairs_check(all, all_cfg, ref, o, &b);
  bodyio_free(&b);
  if (one == CHECK_ERROR || two == CHECK_ERROR)
    return CLI_RUNTIME_ERROR;
  printf("\n");
  print_percentile_rule();
  printf("summary:         check 1 %s, check 2 %s\n", outcome_name(one),
         outcome_name(two));
  if (!flush_stdout())
    return CLI_RUNTIME_ERROR;
  return one == CHECK_FAIL || two == CHECK_FAIL ? VALIDATE_CHECK_FAILED
                                                : CLI_OK;
}

/* The rules of --near that the flags alone decide. */
static int near_usage_ok(const validate_options *o) {
  if (!is_tree_method(o->solver.cfg.method)) {
    cli_error("--near checks the near field of the tree methods (--method "
              "fmm or bh): --method %s has none",
              tfmm_method_name(o->solver.cfg.method));
    return 0;
  }
  if (o->ic != NULL && o->n > NEAR_MAX) {
    cli_error("--n %" PRIu64 ": --near is limited to %d bodies (theta = 0 "
              "makes every pair near: N (N - 1) interactions)",
              o->n, NEAR_MAX);
    return 0;
  }
  return 1;
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
  if (o.near && !near_usage_ok(&o))
    return CLI_USAGE_ERROR;
  /* Both solvers first: a configuration refused is reported before a
   * large file is read. The truth is the reference method on the CPU, with
   * the same G, eps and threads. With --near the method's solver is check
   * 2's, theta = 0. */
  tfmm_config cfg = o.solver.cfg, ref_cfg = o.solver.cfg;
  if (o.near)
    cfg.theta = 0;
  ref_cfg.method = TFMM_METHOD_REFERENCE;
  ref_cfg.device = TFMM_DEVICE_CPU;
  tfmm_solver *solver = NULL, *ref = NULL;
  int rc = solver_cli_create(&cfg, &solver);
  if (rc == CLI_OK && (rc = solver_cli_create(&ref_cfg, &ref)) != CLI_OK)
    rc = CLI_RUNTIME_ERROR;
  if (rc == CLI_OK)
    rc = o.near ? validate_near(solver, &cfg, ref, &o)
                : validate(solver, ref, &o);
  tfmm_solver_destroy(solver);
  tfmm_solver_destroy(ref);
  return rc;
}
