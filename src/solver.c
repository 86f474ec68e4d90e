/* The solver handle: the configuration and the plan made from it, the
 * device, dispatch to a method (pipeline/allpairs.h, hierarchical.h),
 * units, statistics and the message of the last failure. */
#include "solver_handle.h"

#include "bodies.h"
#include "hierarchical.h"
#include "leaf_auto.h"
#include "pipeline/allpairs.h"
#include "plan.h"
#include "team.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The device and the first leaf size from the plan (plan.h); the GPU's
 * context when the plan puts the solver there. */
static tfmm_status open_device(tfmm_solver *s) {
  tfmm_status st = tfmm_plan_device(&s->cfg, &s->device, &s->err);
  s->leaf = tfmm_plan_leaf(&s->cfg, s->device);
  if (st != TFMM_OK || s->device != TFMM_DEVICE_GPU)
    return st;
  return tfmm_gpu_create(&s->gpu, s->cfg.gpu_id, &s->err);
}

tfmm_status tfmm_solver_create(tfmm_solver **out, const tfmm_config *cfg) {
  if (out == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  tfmm_solver *s = calloc(1, sizeof *s);
  *out = s;
  if (s == NULL)
    return TFMM_ERR_NO_MEMORY;
  if (cfg == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "configuration is NULL");
  s->cfg = *cfg;
  tfmm_status st = tfmm_config_check(&s->cfg, &s->err);
  if (st == TFMM_OK)
    st = open_device(s);
  return st;
}

void tfmm_solver_destroy(tfmm_solver *s) {
  if (s == NULL)
    return;
  if (s->over != NULL)
    s->over->destroy(s->over_ctx);
  tfmm_gpu_destroy(s->gpu);
  free(s->scaled_pos);
  free(s->scaled_mass);
  tfmm_workspace_release(&s->work);
  free(s->staged.v);
  free(s->active_out.v);
  tfmm_allpairs_scratch_release(&s->direct);
  free(s);
}

tfmm_gpu *tfmm_solver_gpu_context(const tfmm_solver *s) {
  return s != NULL && s->device == TFMM_DEVICE_GPU ? s->gpu : NULL;
}

/* The planner state the evaluations of s use: the layer's above for a
 * handle over one (solver_over.h), else the solver's own. */
static tfmm_choice *plan_of(tfmm_solver *s) {
  tfmm_choice *above = s->over != NULL ? s->over->choice(s->over_ctx) : NULL;
  return above != NULL ? above : &s->plan;
}

tfmm_status tfmm_solver_choice(const tfmm_solver *s, tfmm_choice *out) {
  if (s == NULL || out == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  *out = *plan_of((tfmm_solver *)s);
  return TFMM_OK;
}

tfmm_status tfmm_solver_set_choice(tfmm_solver *s, const tfmm_choice *c) {
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  if (c == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT, "choice is NULL");
  if (c->chosen &&
      (!(c->theta >= 0 && c->theta <= 1) || c->order < 0 ||
       c->order > TFMM_MAX_ORDER || c->since < 0 || !(c->factor >= 0)))
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "choice: theta %g, order %d, factor %g, since %d "
                          "out of range",
                          c->theta, c->order, c->factor, c->since);
  *plan_of(s) = *c;
  return TFMM_OK;
}

void tfmm_solver_set_setting(tfmm_solver *s, double theta, int order,
                             double mac_epsilon) {
  if (s == NULL)
    return;
  s->cfg.theta = theta;
  s->cfg.order = order;
  if (s->cfg.mac == TFMM_MAC_ERROR)
    s->cfg.mac_epsilon = mac_epsilon;
}

const char *tfmm_solver_message(const tfmm_solver *s) {
  return s == NULL ? "solver is NULL" : s->err.message;
}

const tfmm_stats *tfmm_solver_stats(const tfmm_solver *s) {
  return s == NULL ? NULL : &s->stats;
}

int tfmm_solver_ranks(const tfmm_solver *s) {
  return s == NULL || s->over == NULL ? 1 : s->over->ranks(s->over_ctx);
}

int tfmm_solver_rank(const tfmm_solver *s) {
  return s == NULL || s->over == NULL ? 0 : s->over->rank(s->over_ctx);
}

const tfmm_dist_stats *tfmm_solver_dist_stats(const tfmm_solver *s) {
  return s == NULL ? NULL : &s->dist_stats;
}

tfmm_device tfmm_solver_device(const tfmm_solver *s) {
  return s == NULL ? TFMM_DEVICE_CPU : s->device;
}

/* The tree methods check for coincident bodies themselves, from the tree's
 * sorted keys. */
typedef struct host_eval {
  tfmm_solver *s;
  size_t n;
  const double *pos, *mass;
  double *acc, *pot;
  tfmm_leaf_raise raise;
} host_eval;

/* The largest leaf size tfmm_solver_leaf_raise goes to. */
#define TFMM_LEAF_RAISE_MAX 4096

int tfmm_solver_leaf_raise(tfmm_solver *s, tfmm_status st, tfmm_leaf_raise *r) {
  const int64_t many = s->work.gpu.lists.lists.too_many;
  s->work.gpu.lists.lists.too_many = 0; /* read once */
  if (st != TFMM_ERR_UNSUPPORTED || many <= 0 || s->leaf >= TFMM_LEAF_RAISE_MAX)
    return 0;
  /* The factor that brings the entries under the cap with a quarter to
   * spare, as a power of 2. */
  const int64_t cap = s->work.list_cap > 0 ? s->work.list_cap : INT32_MAX;
  const double need = 1.25 * sqrt((double)many / (double)cap);
  int leaf = 2 * s->leaf;
  while (leaf < TFMM_LEAF_RAISE_MAX && leaf < need * s->leaf)
    leaf *= 2;
  if (r->leaf_from == 0)
    r->leaf_from = s->leaf;
  r->entries = many;
  s->leaf = leaf < TFMM_LEAF_RAISE_MAX ? leaf : TFMM_LEAF_RAISE_MAX;
  return 1;
}

void tfmm_solver_leaf_raise_note(tfmm_solver *s, const tfmm_leaf_raise *r) {
  if (r->leaf_from == 0)
    return;
  const size_t used = strlen(s->stats.plan);
  const int64_t cap = s->work.list_cap > 0 ? s->work.list_cap : INT32_MAX;
  snprintf(s->stats.plan + used, sizeof s->stats.plan - used,
           "; leaf size raised from %d to %d: a list held %.3g entries, past "
           "%.3g",
           r->leaf_from, s->leaf, (double)r->entries, (double)cap);
}

static tfmm_status eval_host(void *ctx, size_t measure_k, double confidence,
                             uint64_t seed) {
  host_eval *h = ctx;
  tfmm_solver *s = h->s;
  s->work.measure_k = measure_k;
  s->work.measure_seed = seed;
  s->work.measure_confidence = confidence;
  tfmm_status st;
  do
    st = tfmm_hierarchical_compute(&s->run, s->leaf, s->gpu, &s->work, h->n,
                                   h->pos, h->mass, s->active, h->acc, h->pot,
                                   &s->stats, &s->err);
  while (tfmm_solver_leaf_raise(s, st, &h->raise));
  return st;
}

static tfmm_status run_tree(tfmm_solver *s, size_t n, const double *pos,
                            const double *mass, double *acc, double *pot) {
  host_eval h = {s, n, pos, mass, acc, pot, {0, 0}};
  tfmm_status st =
      tfmm_planner_run(&s->plan, &s->cfg, &s->run, n, s->leaf, s->gpu != NULL,
                       s->active == NULL, &s->stats, &s->err, eval_host, &h);
  tfmm_plan_far_kernel_note(&s->cfg, s->gpu != NULL, n, s->run.eps,
                            s->stats.plan, sizeof s->stats.plan);
  tfmm_solver_leaf_raise_note(s, &h.raise);
  if (st != TFMM_OK)
    return st;
  /* The times of a subset say little of the whole: only whole evaluations
   * steer the leaf size. */
  if (s->run.leaf_size == TFMM_LEAF_AUTO && s->active == NULL)
    s->leaf =
        tfmm_leaf_auto_next(s->leaf, s->stats.near_time, s->stats.far_time);
  size_t bad = tfmm_bodies_first_nonfinite(n, s->active, acc, pot);
  if (bad < n)
    return tfmm_error_set(&s->err, TFMM_ERR_NONFINITE,
                          "body %zu: force is not finite (bodies nearly "
                          "coincident with eps = 0?)",
                          bad);
  return TFMM_OK;
}

/* The arguments of a call, not yet the bodies. */
static tfmm_status check_args(tfmm_solver *s, size_t n, const double *pos,
                              const double *mass, const double *acc) {
  if (n == 0)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT, "no bodies");
  if (pos == NULL || mass == NULL || acc == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "positions, masses and accelerations must not be "
                          "NULL");
  if (n > ((size_t)1 << 31) - 1)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "%zu bodies: at most 2^31 - 1 are supported", n);
  if (s->device == TFMM_DEVICE_GPU && s->gpu == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_NO_DEVICE,
                          "the solver has no GPU (creation failed)");
  return TFMM_OK;
}

static tfmm_status check_call(tfmm_solver *s, size_t n, const double *pos,
                              const double *mass, const double *acc) {
  tfmm_status st = check_args(s, n, pos, mass, acc);
  return st != TFMM_OK ? st : tfmm_bodies_check(n, pos, mass, &s->err);
}

/* The bodies into internal units (units.h), and s->run: cfg with eps in
 * those units and G = 1. */
static tfmm_status to_internal_units(tfmm_solver *s, size_t n,
                                     const double *pos, const double *mass) {
  if (n > s->scaled_capacity) {
    double *p = realloc(s->scaled_pos, 3 * n * sizeof *p);
    if (p != NULL)
      s->scaled_pos = p;
    double *m = realloc(s->scaled_mass, n * sizeof *m);
    if (m != NULL)
      s->scaled_mass = m;
    if (p == NULL || m == NULL)
      return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                            "no memory for %zu bodies", n);
    s->scaled_capacity = n;
  }
  s->units = tfmm_units_choose(n, pos, mass, s->cfg.box_size);
  tfmm_units_scale(&s->units, n, pos, mass, s->scaled_pos, s->scaled_mass);
  tfmm_solver_set_run(s);
  return TFMM_OK;
}

/* s->run: cfg with eps and the cube in the internal units of s->units,
 * and G = 1. */
void tfmm_solver_set_run(tfmm_solver *s) {
  s->run = s->cfg;
  s->run.eps = ldexp(s->cfg.eps, -s->units.length_exp);
  s->run.box_size = ldexp(s->cfg.box_size, -s->units.length_exp);
  for (int d = 0; d < 3; d++)
    s->run.box_min[d] = ldexp(s->cfg.box_min[d], -s->units.length_exp);
  s->run.G = 1;
}

void tfmm_solver_set_prior_accel(tfmm_solver *s, const double *acc,
                                 int on_device) {
  if (s == NULL)
    return;
  s->prior_acc = acc;
  s->prior_on_device = on_device;
}

void tfmm_solver_keep_tree(tfmm_solver *s, int on) {
  if (s != NULL)
    s->work.keep_tree = on != 0;
}

void tfmm_solver_rebuild_tree(tfmm_solver *s) {
  if (s != NULL)
    s->work.tree_life.kept = 0;
}

void tfmm_solver_set_list_cap(tfmm_solver *s, int64_t cap) {
  if (s != NULL)
    s->work.list_cap = cap;
}

/* a = G 2^(j - 2k) a' (units.h): a' = a 2^(2k - j) / G. */
void tfmm_solver_use_prior(tfmm_solver *s, const double *acc) {
  const int mac_error = s->cfg.mac == TFMM_MAC_ERROR;
  s->work.prior_acc = mac_error ? acc : NULL;
  s->work.prior_scale =
      ldexp(1.0 / s->cfg.G, 2 * s->units.length_exp - s->units.mass_exp);
}

/* Whether x times G 2^e is below double's normal range (2^-1022), x not
 * 0: then it comes out subnormal or 0 (issue 29). In logarithms, as the
 * product itself may underflow or overflow on the way. */
static int below_double(double x, double G, int e) {
  return x != 0 && log2(fabs(x)) + log2(G) + e < -1022;
}

/* The first of k bodies (active ones, active not NULL) whose acceleration
 * or potential in internal units leaves double's range once in the
 * caller's (units.h: a = G 2^(j - 2k) a', phi = G 2^(j - k) phi'), or k. */
static size_t first_underflow(const tfmm_solver *s, size_t k,
                              const unsigned char *active, const double *acc,
                              const double *pot) {
  const int ea = s->units.mass_exp - 2 * s->units.length_exp;
  const int ep = s->units.mass_exp - s->units.length_exp;
  for (size_t i = 0; i < k; i++) {
    if (active != NULL && !active[i])
      continue;
    const double *a = acc + 3 * i;
    const double most = fmax(fabs(a[0]), fmax(fabs(a[1]), fabs(a[2])));
    if (below_double(most, s->cfg.G, ea) ||
        (pot != NULL && below_double(pot[i], s->cfg.G, ep)))
      return i;
  }
  return k;
}

/* Results of k bodies back to the caller's units with G; a force or
 * potential beyond the range of double there, above or below, is an
 * error naming the body (among the active ones, active not NULL). */
static tfmm_status to_caller_units(tfmm_solver *s, size_t k,
                                   const unsigned char *active, double *acc,
                                   double *pot) {
  const size_t low = first_underflow(s, k, active, acc, pot);
  tfmm_units_unscale(&s->units, s->cfg.G, k, acc, pot);
  if (low < k)
    return tfmm_error_set(&s->err, TFMM_ERR_NONFINITE,
                          "body %zu: its acceleration or potential (G = %g "
                          "times the sums) is below the range of double "
                          "precision: it would come out as 0",
                          low, s->cfg.G);
  size_t bad = tfmm_bodies_first_nonfinite(k, active, acc, pot);
  if (bad < k)
    return tfmm_error_set(&s->err, TFMM_ERR_NONFINITE,
                          "body %zu: its acceleration or potential (G = %g "
                          "times the sums) is beyond the range of double "
                          "precision",
                          bad, s->cfg.G);
  return TFMM_OK;
}

void tfmm_solver_describe(tfmm_solver *s) {
  tfmm_stats *st = &s->stats;
  if (s->device == TFMM_DEVICE_GPU)
    snprintf(st->device_name, sizeof st->device_name, "GPU %d: %s",
             s->cfg.gpu_id, tfmm_gpu_name(s->gpu));
  else
    snprintf(st->device_name, sizeof st->device_name, "CPU (%d threads)",
             omp_get_max_threads());
}

/* The method's results at the bodies in internal units (ipos, imass), in
 * the precision s->run asks for. */
static tfmm_status evaluate(tfmm_solver *s, size_t n, const double *ipos,
                            const double *imass, double *acc, double *pot) {
  const tfmm_allpairs all = {
      .run = &s->run,
      .gpu = s->device == TFMM_DEVICE_GPU ? s->gpu : NULL,
      .scratch = &s->direct,
      .active = s->active,
      .stats = &s->stats,
      .err = &s->err,
  };
  switch (s->cfg.method) {
  case TFMM_METHOD_REFERENCE:
    return tfmm_allpairs_reference(&all, n, ipos, imass, acc, pot);
  case TFMM_METHOD_DIRECT:
    return tfmm_allpairs_direct(&all, n, ipos, imass, acc, pot);
  default:
    return run_tree(s, n, ipos, imass, acc, pot);
  }
}

/* Single precision and the range of an input (issue 29). In internal units
 * the bodies span about 1 (units.h), and float resolves them to 2^-24.
 * direct packs every body relative to one centre: an eps below 2^-20 of
 * the span (16 units of the last place) leaves pairs at eps apart with no
 * separation that float resolves. The tree methods write each leaf in its
 * own frame (near_frame.h), which keeps separations, but their kernel's
 * 1 / rho^3 at rho = eps below 2^-32 (2^96, summed over up to 2^31 sources)
 * overflows float. An eps above 2^32 of the span leaves pulls of
 * m r / eps^3 < 2^-96 r, which float (down to 2^-126) flushes to 0 for a
 * light body or a short separation (eps 1e17 gave accelerations of 0).
 * Each runs in double. With eps = 0 the smallest
 * separation sets these limits, which no pass finds: a single-precision
 * evaluation whose sums come out non-finite, or whose bodies meet once
 * rounded to float, is run again in double, which either holds the range
 * or fails for the reason double gives. */
#define TFMM_SINGLE_EPS_DIRECT -20
#define TFMM_SINGLE_EPS_TREE -32
#define TFMM_SINGLE_EPS_CEILING 32

static int single_precision(const tfmm_solver *s) {
  if (s->cfg.method == TFMM_METHOD_REFERENCE)
    return 0;
  if (tfmm_method_is_tree(s->cfg.method))
    return s->stats.precision == TFMM_PRECISION_SINGLE;
  return s->run.precision != TFMM_PRECISION_DOUBLE;
}

/* Whether eps alone puts the input beyond single precision (above). */
static int eps_beyond_single(const tfmm_solver *s) {
  if (s->cfg.method == TFMM_METHOD_REFERENCE ||
      s->run.precision == TFMM_PRECISION_DOUBLE || !(s->run.eps > 0))
    return 0;
  const int floor = tfmm_method_is_tree(s->cfg.method) ? TFMM_SINGLE_EPS_TREE
                                                       : TFMM_SINGLE_EPS_DIRECT;
  return s->run.eps < ldexp(1, floor) ||
         s->run.eps > ldexp(1, TFMM_SINGLE_EPS_CEILING);
}

/* The note in the plan line of an evaluation run in double for its range:
 * eps against the span, or sums that single could not hold. */
static void note_double(tfmm_solver *s, int for_eps) {
  const size_t used = strlen(s->stats.plan);
  const char *sep = used > 0 ? "; " : "";
  if (for_eps)
    snprintf(s->stats.plan + used, sizeof s->stats.plan - used,
             "%sin double: single precision cannot hold eps %g against a "
             "span of 2^%d",
             sep, s->cfg.eps, s->units.length_exp);
  else
    snprintf(s->stats.plan + used, sizeof s->stats.plan - used,
             "%sin double: single precision's sums could not hold these bodies",
             sep);
  s->stats.precision = TFMM_PRECISION_DOUBLE;
}

/* evaluate, in double where single precision cannot hold the input. */
static tfmm_status evaluate_in_range(tfmm_solver *s, size_t n,
                                     const double *ipos, const double *imass,
                                     double *acc, double *pot) {
  if (eps_beyond_single(s)) {
    s->run.precision = TFMM_PRECISION_DOUBLE;
    tfmm_status st = evaluate(s, n, ipos, imass, acc, pot);
    note_double(s, 1);
    return st;
  }
  tfmm_status st = evaluate(s, n, ipos, imass, acc, pot);
  if ((st != TFMM_ERR_NONFINITE && st != TFMM_ERR_COINCIDENT) ||
      !single_precision(s))
    return st;
  s->run.precision = TFMM_PRECISION_DOUBLE;
  s->err.message[0] = '\0';
  st = evaluate(s, n, ipos, imass, acc, pot);
  note_double(s, 0);
  return st;
}

/* Sums that underflowed in internal units: every acceleration below
 * double's normal range although the bodies are not all at one point. The
 * body at an extreme of the bodies' extent has all the others on one
 * side (every mass is positive), and so a pull that is not 0: when that
 * comes out below 2^-1022, the sums have left the range (eps of 2^340
 * times the span). */
static tfmm_status sums_in_range(tfmm_solver *s, size_t n, const double *acc) {
  double most = 0;
  for (size_t i = 0; i < 3 * n; i++)
    most = fmax(most, fabs(acc[i]));
  /* near_only leaves out the far field: zero sums are then expected
   * (leaves of one body, each list holding only itself). */
  if (n < 2 || most >= 0x1p-1022 || s->cfg.near_only)
    return TFMM_OK;
  const double *x = s->scaled_pos;
  for (size_t i = 3; i < 3 * n; i++)
    if (x[i] != x[i % 3])
      return tfmm_error_set(&s->err, TFMM_ERR_NONFINITE,
                            "the accelerations are below the range of double "
                            "precision (eps %g against a span of 2^%d): they "
                            "would come out as 0",
                            s->cfg.eps, s->units.length_exp);
  return TFMM_OK;
}

/* One evaluation of checked bodies, begun at t0, at s->active (NULL: every
 * body): the method's results at those bodies in acc and pot, in the
 * caller's units. */
static tfmm_status compute(tfmm_solver *s, size_t n, const double *pos,
                           const double *mass, double *acc, double *pot,
                           double t0) {
  tfmm_status st = TFMM_OK;
  /* omp_set_num_threads changes only this thread's setting: restore it. */
  int saved_threads = omp_get_max_threads();
  if (s->cfg.num_threads > 0)
    omp_set_num_threads(s->cfg.num_threads);
  tfmm_stats fresh = {
      .method = s->cfg.method, .device = s->device, .n = n, .targets = n};
  s->stats = fresh;
  tfmm_solver_describe(s);
  st = to_internal_units(s, n, pos, mass);
  tfmm_solver_use_prior(s, s->prior_on_device ? NULL : s->prior_acc);
  if (st == TFMM_OK)
    st = evaluate_in_range(s, n, s->scaled_pos, s->scaled_mass, acc, pot);
  if (st == TFMM_OK && s->active == NULL)
    st = sums_in_range(s, n, acc);
  /* A verified evaluation that missed its target still gives its results
   * in the caller's units. */
  const tfmm_status computed = st;
  tfmm_solver_use_prior(s, NULL);
  if (st == TFMM_OK || st == TFMM_ERR_ACCURACY)
    st = to_caller_units(s, n, s->active, acc, pot);
  if (st == TFMM_OK)
    st = computed;
  s->stats.softening_separation =
      ldexp(s->stats.softening_separation, s->units.length_exp);
  omp_set_num_threads(saved_threads);
  if (st != TFMM_OK && st != TFMM_ERR_ACCURACY)
    return st;
  if (!tfmm_method_is_tree(s->cfg.method))
    s->stats.interactions = (double)n * (double)(n - 1);
  s->stats.time_total = tfmm_wtime() - t0;
  return st;
}

tfmm_status tfmm_solver_compute(tfmm_solver *s, size_t n, const double *pos,
                                const double *mass, double *acc, double *pot) {
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  if (s->over != NULL)
    return s->over->compute(s->over_ctx, n, pos, mass, NULL, acc, pot,
                            &s->stats, &s->dist_stats, &s->err);
  double t0 = tfmm_wtime();
  s->err.message[0] = '\0';
  s->active = NULL;
  /* Under the gpu schedule the bodies are checked on the device. */
  if (tfmm_solver_host_on_gpu(s, n)) {
    tfmm_status st = check_args(s, n, pos, mass, acc);
    return st != TFMM_OK
               ? st
               : tfmm_solver_compute_host_gpu(s, n, pos, mass, acc, pot, t0);
  }
  tfmm_status st = check_call(s, n, pos, mass, acc);
  if (st != TFMM_OK)
    return st;
  return compute(s, n, pos, mass, acc, pot, t0);
}

/* The statistics of an evaluation at no body: nothing computed. */
void tfmm_solver_no_targets(tfmm_solver *s, size_t n, double t0) {
  tfmm_stats fresh = {
      .method = s->cfg.method, .device = s->device, .n = n, .targets = 0};
  s->stats = fresh;
  tfmm_solver_describe(s);
  s->stats.time_total = tfmm_wtime() - t0;
}

tfmm_status tfmm_solver_compute_active(tfmm_solver *s, size_t n,
                                       const double *pos, const double *mass,
                                       const unsigned char *active, double *acc,
                                       double *pot) {
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  if (s->over != NULL)
    return s->over->compute(s->over_ctx, n, pos, mass, active, acc, pot,
                            &s->stats, &s->dist_stats, &s->err);
  if (active == NULL)
    return tfmm_solver_compute(s, n, pos, mass, acc, pot);
  double t0 = tfmm_wtime();
  s->err.message[0] = '\0';
  tfmm_status st = check_call(s, n, pos, mass, acc);
  if (st != TFMM_OK)
    return st;
  const size_t k = tfmm_bodies_count_active(n, active);
  if (k == 0) {
    tfmm_solver_no_targets(s, n, t0);
    return TFMM_OK;
  }
  /* The methods write the targets' entries of whole arrays: these, so
   * that the caller's other entries are never touched. */
  if (tfmm_doubles_reserve(&s->active_out, 4 * n) != 0)
    return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                          "no memory for the results of %zu bodies", n);
  double *sacc = s->active_out.v, *spot = pot != NULL ? sacc + 3 * n : NULL;
  s->active = active;
  st = compute(s, n, pos, mass, sacc, spot, t0);
  s->active = NULL;
  if (st != TFMM_OK)
    return st;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (size_t i = 0; i < n; i++) {
    if (!active[i])
      continue;
    for (int d = 0; d < 3; d++)
      acc[3 * i + d] = sacc[3 * i + d];
    if (pot != NULL)
      pot[i] = spot[i];
  }
  s->stats.targets = k;
  s->stats.time_total = tfmm_wtime() - t0;
  return TFMM_OK;
}

tfmm_status tfmm_solver_reference_at(tfmm_solver *s, size_t n,
                                     const double *pos, const double *mass,
                                     size_t k, const size_t *targets,
                                     double *acc, double *pot) {
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  s->err.message[0] = '\0';
  tfmm_status st = check_call(s, n, pos, mass, acc);
  if (st != TFMM_OK)
    return st;
  if (k > 0 && targets == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "targets must not be NULL");
  for (size_t t = 0; t < k; t++)
    if (targets[t] >= n)
      return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                            "target %zu: index %zu is not below n = %zu", t,
                            targets[t], n);
  if ((st = to_internal_units(s, n, pos, mass)) != TFMM_OK)
    return st;
  if ((st = tfmm_allpairs_reference_at(&s->run, n, s->scaled_pos,
                                       s->scaled_mass, k, targets, acc, pot,
                                       &s->err)) != TFMM_OK)
    return st;
  return to_caller_units(s, k, NULL, acc, pot);
}
