/* Solver flags, creation and statistics for the commands (see
 * solver_cli.h). */
#define _POSIX_C_SOURCE 200809L
#include "solver_cli.h"

#include "cli.h"
#include "mpi_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "64", or "auto" for TFMM_LEAF_AUTO: the default of --leaf. */
static const char *leaf_word(int leaf_size, char buf[16]) {
  if (leaf_size == TFMM_LEAF_AUTO)
    return "auto";
  snprintf(buf, 16, "%d", leaf_size);
  return buf;
}

const char *solver_cli_tol(double tol, char buf[32]) {
  if (tol > 0 && isfinite(tol)) {
    const int e = (int)floor(log10(tol));
    const double m = tol / pow(10.0, e);
    /* A mantissa of at most 3 significant digits that gives tol back. */
    char mant[16];
    snprintf(mant, sizeof mant, "%.3g", m);
    if (strtod(mant, NULL) * pow(10.0, e) == tol ||
        fabs(strtod(mant, NULL) * pow(10.0, e) - tol) <= 1e-12 * tol) {
      if (e == 0)
        snprintf(buf, 32, "%s", mant);
      else
        snprintf(buf, 32, "%se%d", mant, e);
      return buf;
    }
  }
  snprintf(buf, 32, "%g", tol);
  return buf;
}

/* "auto" (chosen from the accuracy target), or the number: defaults of
 * --theta and --order. */
static const char *theta_word(double theta, char buf[32]) {
  if (theta == TFMM_FROM_ACCURACY)
    return "auto: chosen from --accuracy";
  snprintf(buf, 32, "%g", theta);
  return buf;
}
static const char *order_word(int order, char buf[32]) {
  if (order == TFMM_FROM_ACCURACY)
    return "auto: chosen from --accuracy";
  snprintf(buf, 32, "%d", order);
  return buf;
}

/* The physics: what is computed, whatever the method. */
static void help_physics(FILE *fp, const tfmm_config *d) {
  char tol[32];
  fprintf(
      fp,
      "  --eps E           softening length, >= 0; for the spline the\n"
      "                    Plummer-equivalent length (its support is\n"
      "                    2.8 E) (default: %g)\n"
      "  --softening S     plummer: phi = -1 / (r^2 + E^2)^(1/2), the\n"
      "                    chapter's; spline: GADGET-2's cubic spline,\n"
      "                    exactly Newtonian beyond 2.8 E (default: %s)\n"
      "  --G G             gravitational constant, > 0 (default: %g)\n"
      "  --precision P     single, double or auto: floating point of the\n"
      "                    pairwise sums (near field, direct); auto: single\n"
      "                    for targets >= 3e-4, double below (direct:\n"
      "                    single) (default: %s)\n"
      "  --accuracy TOL    target of the 99th percentile of the relative\n"
      "                    acceleration error |a - a_ref| / |a_ref|, in\n"
      "                    (0, 0.1]: the tree methods choose theta and order\n"
      "                    to meet it, and keep Plummer softening out of the\n"
      "                    far field to within it (default: %s)\n"
      "  --threads N       OpenMP threads for CPU work, 0 for OpenMP's\n"
      "                    choice (default: %d)\n",
      d->eps, tfmm_softening_name(d->softening), d->G,
      tfmm_precision_name(d->precision), solver_cli_tol(d->accuracy, tol),
      d->num_threads);
}

void solver_cli_help(FILE *fp, const tfmm_config *d, int with_leaf) {
  char leaf[16], theta[32], order[32];
  fprintf(
      fp,
      "  --method M        fmm (fast multipole), bh (Barnes-Hut), direct\n"
      "                    (all pairs, tiled, in --precision) or\n"
      "                    reference (all pairs, double, compensated sums)\n"
      "                    (default: %s)\n"
      "  --device D        auto, cpu or gpu. With a GPU (gpu, or auto\n"
      "                    with one present) every stage runs there: fmm\n"
      "                    and bh build the tree, lists, far and near\n"
      "                    field on it (the gpu schedule; --schedule\n"
      "                    hybrid keeps the lists on the CPU), direct runs\n"
      "                    whole on it; cpu runs every stage on the CPU;\n"
      "                    reference runs on the CPU only (default: %s)\n",
      tfmm_method_name(d->method), tfmm_device_name(d->device));
  help_physics(fp, d);
  fprintf(fp,
          "Measured accuracy (tree methods; docs/accuracy.md):\n"
          "  --measure M       auto, always or off: when an evaluation\n"
          "                    measures its own error against exact sums at\n"
          "                    a sample of the bodies; auto: when theta or\n"
          "                    order is auto (they are then chosen from the\n"
          "                    measurement, and measured again every %d\n"
          "                    evaluations); off: from the calibration\n"
          "                    alone (default: %s)\n"
          "  --error-sample K  bodies sampled, 0 to choose from N\n"
          "                    (default: %d)\n"
          "  --verify          measure, and fail (exit 1) when the measured\n"
          "                    99th percentile is above --accuracy (the\n"
          "                    forces are still written)\n",
          TFMM_RECHECK_EVERY, solver_cli_measure_name(d->measure),
          d->error_sample);
  fprintf(
      fp,
      "Tree methods (fmm, bh):\n"
      "  --theta T         opening angle in [0, 1]: cells A and B interact\n"
      "                    through expansions when r_A + r_B < T d; 0 makes\n"
      "                    every pair near (all pairs through the leaf\n"
      "                    lists: for validation); auto: chosen with the\n"
      "                    order to meet --accuracy at the least cost\n"
      "                    (default: %s)\n"
      "  --order P         expansion order in [0, %d] (0: monopole), or\n"
      "                    auto (default: %s)\n"
      "  --mac C           opening criterion: geometric (one theta for all\n"
      "                    cells), mass (theta grows for light cells,\n"
      "                    Dehnen 2002) or error (each interaction's error\n"
      "                    bound against the target's acceleration, Dehnen\n"
      "                    2014; theta is then a cap) (default: %s)\n"
      "  --far-kernel K    with plummer softening, the kernel the far\n"
      "                    field's expansions carry: newton (1/r; cell\n"
      "                    pairs closer than the softening's separation\n"
      "                    are opened), softened (Plummer's kernel in\n"
      "                    Cartesian Taylor expansions to order 12, no\n"
      "                    separation; eps > 0, far field on the cpu) or\n"
      "                    auto (softened from %d bodies with eps >= 1e-4\n"
      "                    of their size, --accuracy >= 1e-3, theta or\n"
      "                    order auto and the far field on the cpu, else\n"
      "                    newton) (default: %s)\n",
      theta_word(d->theta, theta), TFMM_MAX_ORDER, order_word(d->order, order),
      tfmm_mac_name(d->mac), TFMM_SOFT_AUTO_MIN_BODIES,
      tfmm_far_kernel_name(d->far_kernel));
  if (with_leaf)
    fprintf(fp,
            "  --leaf L          most bodies a leaf holds: an integer >= 1, "
            "or\n"
            "                    auto to let the solver balance the near "
            "field\n"
            "                    against the far field at every evaluation\n"
            "                    (see 'tilefmm tune') (default: %s)\n",
            leaf_word(d->leaf_size, leaf));
  fprintf(
      fp,
      "  --max-depth D     deepest tree level in [1, %d] (default: %d)\n"
      "  --schedule S      auto, gpu or hybrid: how tree methods use the\n"
      "                    machine; gpu runs every stage on the gpu (tree,\n"
      "                    multipoles, lists, near and far fields, one\n"
      "                    stream); hybrid is the seed's design, the lists\n"
      "                    on the cpu; auto: gpu from %d bodies with a gpu\n"
      "                    (default: %s)\n"
      "  --tree-device D   hybrid: auto, cpu or gpu: where the tree and its\n"
      "                    multipoles are built; gpu copies them back for\n"
      "                    the lists on the cpu (the same tree, the same\n"
      "                    forces); auto: the gpu from %d bodies when the\n"
      "                    near field is on one (default: %s)\n"
      "  --far-device D    hybrid: auto, cpu or gpu: where the far field runs; "
      "gpu\n"
      "                    (with the tree there) gives the cpu's results\n"
      "                    bit for bit; auto: the gpu when the tree is\n"
      "                    there (default: %s)\n"
      "GPU kernel tunables (GPU Gems 3, section 31.4):\n"
      "  --gpu-tile P      bodies per shared-memory tile: 0 to choose from\n"
      "                    N, or a multiple of 32 in [32, 256] (default: %d)\n"
      "  --gpu-threads-per-body Q\n"
      "                    threads sharing one body: 0 to choose from N, or\n"
      "                    a power of two with P*Q <= 1024 (512 when R = 4)\n"
      "                    and P*P*Q <= 232448 (default: %d)\n"
      "  --gpu-unroll U    inner-loop unroll: 1, 2, 4, 8, 16 or 32\n"
      "                    (default: %d)\n"
      "  --gpu-bodies-per-thread R\n"
      "                    bodies per thread: 0 to choose from N, or 1, 2\n"
      "                    or 4 (default: %d)\n",
      TFMM_MAX_TREE_DEPTH, d->max_depth, TFMM_TREE_GPU_MIN_BODIES,
      tfmm_schedule_name(d->schedule), TFMM_TREE_GPU_MIN_BODIES,
      tfmm_device_name(d->tree_device), tfmm_device_name(d->far_device),
      d->gpu_tile, d->gpu_threads_per_body, d->gpu_unroll,
      d->gpu_bodies_per_thread);
}

/* Rules of the flags: the library checks the same, but here the message
 * can name the flag. */
static int non_negative(const void *v) { return *(const double *)v >= 0; }
static int positive(const void *v) { return *(const double *)v > 0; }
static int accuracy_ok(const void *v) {
  const double a = *(const double *)v;
  return a > 0 && a <= 0.1;
}
static int threads_ok(const void *v) {
  return *(const int *)v >= 0 && *(const int *)v <= TFMM_MAX_THREADS;
}

/* "auto" (TFMM_FROM_ACCURACY), or a finite number in [0, 1] written as
 * the whole word. Returns 0 for anything else. */
static int parse_theta(const char *word, double *out) {
  if (strcmp(word, "auto") == 0) {
    *out = TFMM_FROM_ACCURACY;
    return 1;
  }
  if (*word == '\0' || strchr(" \t\n\v\f\r", *word) != NULL)
    return 0;
  char *end;
  const double t = strtod(word, &end);
  if (*end != '\0' || !isfinite(t) || !(t >= 0 && t <= 1))
    return 0;
  *out = t;
  return 1;
}
static int theta_ok(const void *v) {
  double t;
  return parse_theta(*(const char *const *)v, &t);
}

/* "auto" (auto_value), or decimal digits with an optional sign making an
 * integer in [lo, hi]. Returns 0 for anything else. */
static int parse_auto_int(const char *word, int auto_value, long lo, long hi,
                          int *out) {
  if (strcmp(word, "auto") == 0) {
    *out = auto_value;
    return 1;
  }
  const char *digits = word + (*word == '+' || *word == '-');
  if (*digits < '0' || *digits > '9')
    return 0;
  errno = 0;
  char *end;
  const long v = strtol(word, &end, 10);
  if (*end != '\0' || errno == ERANGE || v < lo || v > hi)
    return 0;
  *out = (int)v;
  return 1;
}

/* "auto" (TFMM_FROM_ACCURACY), or an order in [0, TFMM_MAX_ORDER]. */
static int parse_order(const char *word, int *out) {
  return parse_auto_int(word, TFMM_FROM_ACCURACY, 0, TFMM_MAX_ORDER, out);
}
static int order_ok(const void *v) {
  int p;
  return parse_order(*(const char *const *)v, &p);
}

/* "auto" (TFMM_LEAF_AUTO), or a leaf size >= 1. */
static int parse_leaf(const char *word, int *out) {
  return parse_auto_int(word, TFMM_LEAF_AUTO, 1, INT_MAX, out);
}
static int leaf_ok(const void *v) {
  int leaf;
  return parse_leaf(*(const char *const *)v, &leaf);
}
static int depth_ok(const void *v) {
  const int d = *(const int *)v;
  return d >= 1 && d <= TFMM_MAX_TREE_DEPTH;
}
static int is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }
static int tile_ok(const void *v) {
  const int p = *(const int *)v;
  return p == 0 || (p >= 32 && p <= 256 && p % 32 == 0);
}
static int threads_per_body_ok(const void *v) {
  const int q = *(const int *)v;
  return q == 0 || (is_pow2(q) && q <= 1024);
}
static int unroll_ok(const void *v) {
  const int u = *(const int *)v;
  return is_pow2(u) && u <= 32;
}
static int bodies_per_thread_ok(const void *v) {
  const int r = *(const int *)v;
  return r == 0 || r == 1 || r == 2 || r == 4;
}
static int method_ok(const void *v) {
  tfmm_method m;
  return tfmm_method_parse(*(const char *const *)v, &m) == TFMM_OK;
}
static int device_ok(const void *v) {
  tfmm_device d;
  return tfmm_device_parse(*(const char *const *)v, &d) == TFMM_OK;
}

static int schedule_ok(const void *v) {
  tfmm_schedule_kind k;
  return tfmm_schedule_parse(*(const char *const *)v, &k) == TFMM_OK;
}
static int softening_ok(const void *v) {
  tfmm_softening x;
  return tfmm_softening_parse(*(const char *const *)v, &x) == TFMM_OK;
}
static int precision_ok(const void *v) {
  tfmm_precision x;
  return tfmm_precision_parse(*(const char *const *)v, &x) == TFMM_OK;
}
static int mac_ok(const void *v) {
  tfmm_mac_kind x;
  return tfmm_mac_parse(*(const char *const *)v, &x) == TFMM_OK;
}

static int far_kernel_ok(const void *v) {
  tfmm_far_kernel x;
  return tfmm_far_kernel_parse(*(const char *const *)v, &x) == TFMM_OK;
}

static const char *const measure_names[] = {"auto", "always", "off"};

const char *solver_cli_measure_name(tfmm_measure m) {
  return m >= 0 && m <= TFMM_MEASURE_OFF ? measure_names[m] : "unknown";
}

static int parse_measure(const char *word, int *out) {
  for (int k = 0; k <= TFMM_MEASURE_OFF; k++)
    if (strcmp(word, measure_names[k]) == 0) {
      *out = k;
      return 1;
    }
  return 0;
}
static int measure_ok(const void *v) {
  int m;
  return parse_measure(*(const char *const *)v, &m);
}
static int sample_ok(const void *v) {
  return *(const int *)v >= 0 && *(const int *)v <= (1 << 24);
}

void solver_cli_init(solver_cli *sc, args_option *opts) {
  memset(sc, 0, sizeof *sc);
  tfmm_config *c = &sc->cfg;
  tfmm_config_defaults(c);
  /* A word, so that run's parameters write and read it back. */
  sc->measure = solver_cli_measure_name(c->measure);
  sc->far_kernel = tfmm_far_kernel_name(c->far_kernel);
  const args_option flags[SOLVER_CLI_FLAGS] = {
      {.name = "--method",
       .kind = ARGS_STRING,
       .value = &sc->method,
       .valid = method_ok,
       .expect = "reference, direct, fmm or bh"},
      {.name = "--device",
       .kind = ARGS_STRING,
       .value = &sc->device,
       .valid = device_ok,
       .expect = "auto, cpu or gpu"},
      {.name = "--schedule",
       .kind = ARGS_STRING,
       .value = &sc->schedule,
       .valid = schedule_ok,
       .expect = "auto, gpu or hybrid"},
      {.name = "--tree-device",
       .kind = ARGS_STRING,
       .value = &sc->tree_device,
       .valid = device_ok,
       .expect = "auto, cpu or gpu"},
      {.name = "--far-device",
       .kind = ARGS_STRING,
       .value = &sc->far_device,
       .valid = device_ok,
       .expect = "auto, cpu or gpu"},
      {.name = "--eps",
       .kind = ARGS_DOUBLE,
       .value = &c->eps,
       .valid = non_negative,
       .expect = "a number >= 0"},
      {.name = "--softening",
       .kind = ARGS_STRING,
       .value = &sc->softening,
       .valid = softening_ok,
       .expect = "plummer or spline"},
      {.name = "--G",
       .kind = ARGS_DOUBLE,
       .value = &c->G,
       .valid = positive,
       .expect = "a number > 0"},
      {.name = "--precision",
       .kind = ARGS_STRING,
       .value = &sc->precision,
       .valid = precision_ok,
       .expect = "single or double"},
      {.name = "--accuracy",
       .kind = ARGS_DOUBLE,
       .value = &c->accuracy,
       .valid = accuracy_ok,
       .expect = "a number in (0, 0.1]"},
      {.name = "--threads",
       .kind = ARGS_INT,
       .value = &c->num_threads,
       .valid = threads_ok,
       .expect = "an integer in [0, 1024]"},
      {.name = "--theta",
       .kind = ARGS_STRING,
       .value = &sc->theta,
       .valid = theta_ok,
       .expect = "auto or a number in [0, 1]"},
      {.name = "--order",
       .kind = ARGS_STRING,
       .value = &sc->order,
       .valid = order_ok,
       .expect = "auto or an integer in [0, 20]"},
      {.name = "--mac",
       .kind = ARGS_STRING,
       .value = &sc->mac,
       .valid = mac_ok,
       .expect = "geometric, mass or error"},
      {.name = "--far-kernel",
       .kind = ARGS_STRING,
       .value = &sc->far_kernel,
       .valid = far_kernel_ok,
       .expect = "auto, newton or softened"},
      {.name = "--leaf",
       .kind = ARGS_STRING,
       .value = &sc->leaf,
       .valid = leaf_ok,
       .expect = "auto or an integer >= 1"},
      {.name = "--max-depth",
       .kind = ARGS_INT,
       .value = &c->max_depth,
       .valid = depth_ok,
       .expect = "an integer in [1, 21]"},
      {.name = "--gpu-tile",
       .kind = ARGS_INT,
       .value = &c->gpu_tile,
       .valid = tile_ok,
       .expect = "0 or a multiple of 32 in [32, 256]"},
      {.name = "--gpu-threads-per-body",
       .kind = ARGS_INT,
       .value = &c->gpu_threads_per_body,
       .valid = threads_per_body_ok,
       .expect = "0 or a power of two <= 1024"},
      {.name = "--gpu-unroll",
       .kind = ARGS_INT,
       .value = &c->gpu_unroll,
       .valid = unroll_ok,
       .expect = "1, 2, 4, 8, 16 or 32"},
      {.name = "--gpu-bodies-per-thread",
       .kind = ARGS_INT,
       .value = &c->gpu_bodies_per_thread,
       .valid = bodies_per_thread_ok,
       .expect = "0, 1, 2 or 4"},
      {.name = "--measure",
       .kind = ARGS_STRING,
       .value = &sc->measure,
       .valid = measure_ok,
       .expect = "auto, always or off"},
      {.name = "--error-sample",
       .kind = ARGS_INT,
       .value = &c->error_sample,
       .valid = sample_ok,
       .expect = "an integer in [0, 16777216]"},
      {.name = "--verify", .kind = ARGS_FLAG, .value = &c->verify},
  };
  memcpy(opts, flags, sizeof flags);
}

void solver_cli_finish(solver_cli *sc) {
  /* The words were checked by their flags' rules (*_ok above). */
  tfmm_config *c = &sc->cfg;
  if (sc->method != NULL)
    tfmm_method_parse(sc->method, &c->method);
  if (sc->device != NULL)
    tfmm_device_parse(sc->device, &c->device);
  if (sc->schedule != NULL)
    tfmm_schedule_parse(sc->schedule, &c->schedule);
  if (sc->tree_device != NULL)
    tfmm_device_parse(sc->tree_device, &c->tree_device);
  if (sc->far_device != NULL)
    tfmm_device_parse(sc->far_device, &c->far_device);
  if (sc->leaf != NULL)
    parse_leaf(sc->leaf, &c->leaf_size);
  if (sc->theta != NULL)
    parse_theta(sc->theta, &c->theta);
  if (sc->order != NULL)
    parse_order(sc->order, &c->order);
  if (sc->softening != NULL)
    tfmm_softening_parse(sc->softening, &c->softening);
  if (sc->precision != NULL)
    tfmm_precision_parse(sc->precision, &c->precision);
  if (sc->mac != NULL)
    tfmm_mac_parse(sc->mac, &c->mac);
  if (sc->far_kernel != NULL)
    tfmm_far_kernel_parse(sc->far_kernel, &c->far_kernel);
  if (sc->measure != NULL) {
    int m = TFMM_MEASURE_AUTO;
    parse_measure(sc->measure, &m);
    c->measure = (tfmm_measure)m;
  }
}

const char *solver_cli_theta_order(const tfmm_config *cfg, double theta,
                                   int order, char *buf, size_t size) {
  if (cfg->method != TFMM_METHOD_FMM && cfg->method != TFMM_METHOD_BH) {
    snprintf(buf, size, "%s", "");
    return buf;
  }
  snprintf(buf, size, "theta %g%s, order %d%s", theta,
           cfg->theta == TFMM_FROM_ACCURACY ? " (auto)" : "", order,
           cfg->order == TFMM_FROM_ACCURACY ? " (auto)" : "");
  return buf;
}

int solver_cli_planned(const tfmm_config *cfg) {
  return (cfg->method == TFMM_METHOD_FMM || cfg->method == TFMM_METHOD_BH) &&
         (cfg->theta == TFMM_FROM_ACCURACY ||
          cfg->order == TFMM_FROM_ACCURACY) &&
         cfg->measure != TFMM_MEASURE_OFF && cfg->mac != TFMM_MAC_ERROR &&
         !cfg->near_only;
}

void solver_cli_resolve(const tfmm_config *cfg, double *theta, int *order) {
  tfmm_config c = *cfg;
  if (mpi_cli_ranks() > 1) /* what the ranks' planner aims at */
    c.accuracy = cfg->accuracy / TFMM_SPLIT_MARGIN;
  if (tfmm_config_resolve(&c, theta, order, NULL, NULL, 0) != TFMM_OK) {
    *theta = cfg->theta;
    *order = cfg->order;
  }
}

typedef tfmm_status (*solver_maker)(tfmm_solver **, const tfmm_config *);

static int create(const tfmm_config *cfg, tfmm_solver **solver,
                  solver_maker make) {
  if (cfg->method != TFMM_METHOD_REFERENCE)
    cli_gpu_warn(cfg->device == TFMM_DEVICE_AUTO);
  const tfmm_status st = make(solver, cfg);
  if (st == TFMM_OK)
    return CLI_OK;
  cli_error("%s", *solver != NULL ? tfmm_solver_message(*solver)
                                  : tfmm_status_name(st));
  tfmm_solver_destroy(*solver);
  *solver = NULL;
  return st == TFMM_ERR_INVALID_ARGUMENT ? CLI_USAGE_ERROR : CLI_RUNTIME_ERROR;
}

int solver_cli_create(const tfmm_config *cfg, tfmm_solver **solver) {
  return create(cfg, solver, tfmm_solver_create);
}

int solver_cli_create_ranks(const tfmm_config *cfg, tfmm_solver **solver) {
  return create(cfg, solver, mpi_cli_solver_create);
}

static int is_tree_method(tfmm_method m) {
  return m == TFMM_METHOD_FMM || m == TFMM_METHOD_BH;
}

void solver_cli_print_time(FILE *fp, const char *name, double seconds) {
  fprintf(fp, "  %-14s %12.6f s\n", name, seconds);
}

/* The stages of the tree phase, indented under it. */
static void print_tree_stages(FILE *fp, const tfmm_stats *s) {
  const struct {
    const char *name;
    double t;
  } stages[] = {{"  keys", s->tree_time.keys},
                {"  sort", s->tree_time.sort},
                {"  permute", s->tree_time.permute},
                {"  build", s->tree_time.build},
                {"  moments", s->tree_time.moments}};
  for (size_t k = 0; k < sizeof stages / sizeof stages[0]; k++)
    solver_cli_print_time(fp, stages[k].name, stages[k].t);
}

/* Whether phase p took time in this evaluation. Barnes-Hut has no
 * downward pass (its M2P writes the bodies' far field): the clock reads
 * around the empty stage are not a time worth reporting. */
static int phase_ran(const tfmm_stats *s, int p) {
  if (p == TFMM_PHASE_DOWNWARD && s->method == TFMM_METHOD_BH)
    return 0;
  return s->time[p] != 0;
}

/* A timing line with a note after it: "  name   seconds s  (note)". */
static void print_time_note(FILE *fp, const char *name, double seconds,
                            const char *note) {
  fprintf(fp, "  %-14s %12.6f s  (%s)\n", name, seconds, note);
}

/* The near and far fields measured apart, and how long they overlapped:
 * on the GPU the near field runs during the far field (the gpu schedule:
 * two streams from the lists on). */
static void print_near_far(FILE *fp, const tfmm_stats *s) {
  if (s->schedule == TFMM_SCHEDULE_GPU) {
    print_time_note(fp, "near field", s->near_time,
                    "gpu: its inputs and kernels");
    print_time_note(fp, "far field", s->far_time,
                    "gpu: multipoles, M2L, L2L, L2P, M2P");
    print_time_note(fp, "overlap", s->overlap,
                    "near and far fields both running, two streams");
    return;
  }
  const int gpu = s->near_device == TFMM_DEVICE_GPU;
  print_time_note(fp, "near field", s->near_time,
                  gpu ? "gpu: first upload to last download" : "cpu");
  print_time_note(fp, "near kernel", s->near_kernel_time, gpu ? "gpu" : "cpu");
  print_time_note(fp, "far field", s->far_time,
                  tfmm_device_name(s->far_device));
  print_time_note(fp, "overlap", s->overlap,
                  gpu ? "near and far fields both running"
                      : "none: one after the other on the cpu");
}

void solver_cli_print_times(FILE *fp, const tfmm_stats *s) {
  for (int p = 0; p < TFMM_PHASE_COUNT; p++) {
    if (!phase_ran(s, p))
      continue;
    solver_cli_print_time(fp, tfmm_phase_name((tfmm_phase)p), s->time[p]);
    if (p == TFMM_PHASE_TREE && is_tree_method(s->method))
      print_tree_stages(fp, s);
  }
  if (is_tree_method(s->method))
    print_near_far(fp, s);
  solver_cli_print_time(fp, "total", s->time_total);
}

/* The tree, the leaf size and the counts of the near and far fields; c
 * says which of theta, order and L were chosen ("(auto)"). */
static void print_tree_counts(FILE *fp, const tfmm_stats *s,
                              const tfmm_config *c) {
  char tol[32];
  fprintf(fp,
          "  theta %g%s, order %d%s; accuracy target %s, opening criterion "
          "%s\n",
          s->theta, c->theta == TFMM_FROM_ACCURACY ? " (auto)" : "", s->order,
          c->order == TFMM_FROM_ACCURACY ? " (auto)" : "",
          solver_cli_tol(c->accuracy, tol), tfmm_mac_name(c->mac));
  fprintf(fp, "  leaf size: %d%s\n", s->leaf_size,
          c->leaf_size == TFMM_LEAF_AUTO ? " (auto)" : "");
  fprintf(fp,
          "  tree: depth %d, %" PRId64 " cells, %" PRId64 " leaves, "
          "bodies per leaf min %" PRId64 " mean %.1f max %" PRId64 "\n",
          s->tree_depth, s->tree_cells, s->tree_leaves, s->leaf_min,
          s->leaf_mean, s->leaf_max);
  fprintf(fp,
          "  near field: %.6g interactions on the %s, %.6g interactions/s "
          "(kernel)\n",
          s->interactions, tfmm_device_name(s->near_device), s->near_rate);
  fprintf(fp,
          "  schedule %s: tree and upward pass on the %s, lists on the "
          "%s, far field on the %s, near field on the %s\n",
          tfmm_schedule_name(s->schedule), tfmm_device_name(s->tree_device),
          tfmm_device_name(s->lists_device), tfmm_device_name(s->far_device),
          tfmm_device_name(s->near_device));
  if (s->device_bytes > 0)
    fprintf(fp, "  device memory: %.1f MB kept, %.0f bytes a body\n",
            (double)s->device_bytes / 1e6,
            (double)s->device_bytes / (double)s->n);
  if (s->method == TFMM_METHOD_FMM)
    fprintf(fp, "  far field: %.6g M2L translations on the %s", s->m2l,
            tfmm_device_name(s->far_device));
  else
    fprintf(fp, "  far field: %.6g M2P cell-body evaluations on the %s", s->m2p,
            tfmm_device_name(s->far_device));
  fprintf(fp, ", kernel %s%s, softening separation %g\n",
          tfmm_far_kernel_name(s->far_kernel),
          c->far_kernel == TFMM_FAR_KERNEL_AUTO ? " (auto)" : "",
          s->softening_separation);
}

void solver_cli_print_counts(FILE *fp, const tfmm_stats *s,
                             const tfmm_config *cfg) {
  fprintf(fp, "  softening %s, eps %g, precision %s\n",
          tfmm_softening_name(cfg->softening), cfg->eps,
          tfmm_precision_name(cfg->precision));
  if (is_tree_method(s->method)) {
    print_tree_counts(fp, s, cfg);
  } else {
    const double rate = s->time_total > 0 ? s->interactions / s->time_total : 0;
    fprintf(fp, "  %.6g interactions, %.6g interactions/s\n", s->interactions,
            rate);
  }
  /* The all-pairs kernel's shape; the tree methods' leaf-list kernel has
   * none of these tunables. */
  if (s->device == TFMM_DEVICE_GPU && !is_tree_method(s->method))
    fprintf(fp,
            "  gpu kernel: tile %d, threads/body %d, unroll %d, "
            "bodies/thread %d\n",
            s->gpu_tile, s->gpu_threads_per_body, s->gpu_unroll,
            s->gpu_bodies_per_thread);
}

void solver_cli_print_measured(FILE *fp, const tfmm_stats *s) {
  if (s->error.measured) {
    /* Every body measured (confidence 1): the p99 itself, no bound. */
    char seen[96] = "every body measured";
    if (s->error.confidence < 1)
      snprintf(seen, sizeof seen, "<= %.3g at %.0f %% confidence",
               s->error.p99_bound, 100 * s->error.confidence);
    fprintf(fp,
            "  measured error: median %.3g, p99 %.3g (%s), max %.3g at body "
            "%" PRId64 "; %zu bodies sampled, %.6f s\n",
            s->error.median, s->error.p99, seen, s->error.max,
            s->error.worst_body, s->error.samples, s->error.time);
    if (s->error.group_measured > 0)
      fprintf(fp,
              "  worst group: the leaf of body %" PRId64 ", %zu bodies, %zu "
              "measured: median %.3g, p99 %.3g, max %.3g\n",
              s->error.worst_body, s->error.group_bodies,
              s->error.group_measured, s->error.group_median,
              s->error.group_p99, s->error.group_max);
  }
  if (s->plan[0] != '\0')
    fprintf(fp, "  plan: %s\n", s->plan);
}
