/* The solver handle: configuration, device choice, dispatch to a method,
 * statistics and the message of the last failure. */
#include "accuracy.h"
#include "solver_handle.h"

#include "bodies.h"
#include "farfield/expansion.h"
#include "gpu.h"
#include "hierarchical.h"
#include "internal.h"
#include "leaf_auto.h"
#include "nearfield/direct_cpu.h"
#include "nearfield/interaction.h"
#include "nearfield/reference.h"
#include "plan.h"
#include "team.h"
#include "tree/octree.h"
#include "tree/targets.h"
#include "units.h"

#include <math.h>
#include <omp.h>
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
  tfmm_dist_destroy(s->dist);
  tfmm_gpu_destroy(s->gpu);
  free(s->scaled_pos);
  free(s->scaled_mass);
  tfmm_workspace_release(&s->work);
  free(s->staged.v);
  free(s->active_out.v);
  free(s->cpu_in);
  free(s->cpu_out);
  free(s);
}

const char *tfmm_solver_message(const tfmm_solver *s) {
  return s == NULL ? "solver is NULL" : s->err.message;
}

const tfmm_stats *tfmm_solver_stats(const tfmm_solver *s) {
  return s == NULL ? NULL : &s->stats;
}

tfmm_dist *tfmm_solver_dist_of(const tfmm_solver *s) {
  return s == NULL ? NULL : s->dist;
}

int tfmm_solver_ranks(const tfmm_solver *s) {
  return s == NULL ? 1 : tfmm_dist_size(s->dist);
}

int tfmm_solver_rank(const tfmm_solver *s) {
  return s == NULL ? 0 : tfmm_dist_rank(s->dist);
}

const tfmm_dist_stats *tfmm_solver_dist_stats(const tfmm_solver *s) {
  return s == NULL ? NULL : &s->dist_stats;
}

tfmm_device tfmm_solver_device(const tfmm_solver *s) {
  return s == NULL ? TFMM_DEVICE_CPU : s->device;
}

/* With eps = 0 a pair at one point has an infinite force: refuse it. The
 * single-precision methods check the points they will really use. */
static tfmm_status check_distinct(tfmm_solver *s, size_t n, const double *xyz,
                                  size_t stride, const char *what) {
  size_t i = 0, j = 0;
  int found = tfmm_bodies_find_coincident(n, xyz, stride, &i, &j);
  if (found < 0)
    return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                          "no memory for the coincidence check of %zu bodies",
                          n);
  if (found)
    return tfmm_error_set(&s->err, TFMM_ERR_COINCIDENT,
                          "bodies %zu and %zu are at one point%s and eps = 0: "
                          "their force is infinite (set eps > 0)",
                          i, j, what);
  return TFMM_OK;
}

static tfmm_pair_params pair_params(const tfmm_config *c) {
  /* The direct method has no accuracy target: auto is single. */
  tfmm_pair_params p = {c->softening, c->eps,
                        c->precision == TFMM_PRECISION_DOUBLE
                            ? TFMM_PRECISION_DOUBLE
                            : TFMM_PRECISION_SINGLE};
  return p;
}

/* The first body (among the active ones, active not NULL) whose results
 * are not finite, or n. */
static size_t first_nonfinite(size_t n, const unsigned char *active,
                              const double *acc, const double *pot) {
  size_t bad = n;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) reduction(min : bad) num_threads(team)
  for (size_t i = 0; i < n; i++)
    if ((active == NULL || active[i]) &&
        (!isfinite(acc[3 * i]) || !isfinite(acc[3 * i + 1]) ||
         !isfinite(acc[3 * i + 2]) || (pot != NULL && !isfinite(pot[i]))))
      bad = i < bad ? i : bad;
  return bad;
}

static tfmm_status run_reference(tfmm_solver *s, size_t n, const double *pos,
                                 const double *mass, double *acc, double *pot) {
  double t0 = tfmm_wtime();
  if (tfmm_eps_vanishes(s->run.eps, 0)) {
    tfmm_status st = check_distinct(s, n, pos, 3, "");
    if (st != TFMM_OK)
      return st;
  }
  double t1 = tfmm_wtime();
  tfmm_reference_compute_active(n, pos, mass, s->run.G, s->run.eps,
                                s->run.softening == TFMM_SOFTENING_SPLINE,
                                s->active, acc, pot);
  s->stats.time[TFMM_PHASE_PREPARE] = t1 - t0;
  s->stats.time[TFMM_PHASE_NEAR] = tfmm_wtime() - t1;
  size_t bad = first_nonfinite(n, s->active, acc, pot);
  if (bad < n)
    return tfmm_error_set(&s->err, TFMM_ERR_NONFINITE,
                          "body %zu: force is not finite (bodies nearly "
                          "coincident for this eps?)",
                          bad);
  return TFMM_OK;
}

/* The tree methods check for coincident bodies themselves, from the tree's
 * sorted keys. */
static tfmm_status run_tree(tfmm_solver *s, size_t n, const double *pos,
                            const double *mass, double *acc, double *pot) {
  tfmm_status st =
      tfmm_hierarchical_compute(&s->run, s->leaf, s->gpu, &s->work, n, pos,
                                mass, s->active, acc, pot, &s->stats, &s->err);
  if (st != TFMM_OK)
    return st;
  /* The times of a subset say little of the whole: only whole evaluations
   * steer the leaf size. */
  if (s->run.leaf_size == TFMM_LEAF_AUTO && s->active == NULL)
    s->leaf =
        tfmm_leaf_auto_next(s->leaf, s->stats.near_time, s->stats.far_time);
  size_t bad = first_nonfinite(n, s->active, acc, pot);
  if (bad < n)
    return tfmm_error_set(&s->err, TFMM_ERR_NONFINITE,
                          "body %zu: force is not finite (bodies nearly "
                          "coincident with eps = 0?)",
                          bad);
  return TFMM_OK;
}

static tfmm_status reserve_cpu(tfmm_solver *s, size_t n) {
  if (n <= s->cpu_capacity)
    return TFMM_OK;
  float *in = realloc(s->cpu_in, 4 * n * sizeof *in);
  if (in != NULL)
    s->cpu_in = in;
  float *out = realloc(s->cpu_out, 4 * n * sizeof *out);
  if (out != NULL)
    s->cpu_out = out;
  if (in == NULL || out == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                          "no memory for %zu bodies", n);
  s->cpu_capacity = n;
  return TFMM_OK;
}

/* Single-precision packed bodies, back in double for the coincidence
 * check: two bodies may differ in double yet meet in float. */
static tfmm_status check_distinct_f32(tfmm_solver *s, size_t n,
                                      const float *xyzm) {
  double *xyz = malloc(4 * n * sizeof *xyz);
  if (xyz == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                          "no memory for the coincidence check");
  for (size_t k = 0; k < 4 * n; k++)
    xyz[k] = xyzm[k];
  tfmm_status st = check_distinct(s, n, xyz, 4, " in single precision");
  free(xyz);
  return st;
}

/* Result k of the packed results, in their precision. */
static inline double result_at(const void *res, int f64, size_t k) {
  return f64 ? ((const double *)res)[k] : (double)((const float *)res)[k];
}

/* Scales by G into the caller's arrays and refuses non-finite results, at
 * the active bodies only when the evaluation is at a subset. res: 4n
 * values, doubles when f64, else floats. */
static tfmm_status finish_direct(tfmm_solver *s, size_t n, const void *res,
                                 int f64, double *acc, double *pot) {
  const double G = s->run.G;
  const unsigned char *active = s->active;
  size_t bad = n;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) reduction(min : bad) num_threads(team)
  for (size_t i = 0; i < n; i++) {
    if (active != NULL && !active[i])
      continue;
    double v[4];
    for (int k = 0; k < 4; k++)
      v[k] = result_at(res, f64, 4 * i + k);
    for (int k = 0; k < 3; k++)
      acc[3 * i + k] = G * v[k];
    if (pot != NULL)
      pot[i] = G * v[3];
    if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]) ||
        !isfinite(v[3]))
      bad = i < bad ? i : bad;
  }
  if (bad < n)
    return tfmm_error_set(&s->err, TFMM_ERR_NONFINITE,
                          "body %zu: force is not finite in %s precision "
                          "(bodies nearly coincident with eps = 0?)",
                          bad, f64 ? "double" : "single");
  return TFMM_OK;
}

/* All pairs on the CPU in double precision. */
static tfmm_status run_direct_f64(tfmm_solver *s, size_t n, const double *pos,
                                  const double *mass, double *acc,
                                  double *pot) {
  double t0 = tfmm_wtime();
  if (tfmm_eps_vanishes(s->run.eps, 0)) {
    tfmm_status st = check_distinct(s, n, pos, 3, "");
    if (st != TFMM_OK)
      return st;
  }
  double *out = malloc(4 * n * sizeof *out), center[3];
  if (out == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                          "no memory for %zu bodies", n);
  tfmm_bodies_center(n, pos, center);
  const tfmm_soft_f64 kern =
      tfmm_soft_make_f64(s->run.softening == TFMM_SOFTENING_SPLINE, s->run.eps);
  double t1 = tfmm_wtime();
  s->stats.time[TFMM_PHASE_PREPARE] = t1 - t0;
  int rc =
      tfmm_direct_cpu_compute_f64(n, pos, mass, center, &kern, s->active, out);
  s->stats.time[TFMM_PHASE_NEAR] = tfmm_wtime() - t1;
  if (rc != 0) {
    free(out);
    return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                          "no memory for %zu bodies", n);
  }
  const double G = s->run.G;
  for (size_t i = 0; i < n; i++) {
    if (s->active != NULL && !s->active[i])
      continue;
    for (int k = 0; k < 3; k++)
      acc[3 * i + k] = G * out[4 * i + k];
    if (pot != NULL)
      pot[i] = G * out[4 * i + 3];
  }
  free(out);
  size_t bad = first_nonfinite(n, s->active, acc, pot);
  if (bad < n)
    return tfmm_error_set(&s->err, TFMM_ERR_NONFINITE,
                          "body %zu: force is not finite", bad);
  return TFMM_OK;
}

/* Packs the bodies relative to their centre in the precision of the sums
 * (floats or doubles, 4 a body) and, with eps = 0, refuses bodies that
 * meet once packed: two bodies may differ in double yet meet in float. */
static tfmm_status pack_direct(tfmm_solver *s, size_t n, const double *pos,
                               const double *mass, int f64, void *in) {
  double center[3];
  tfmm_bodies_center(n, pos, center);
  if (f64) {
    tfmm_bodies_pack_f64(n, pos, mass, center, in);
    return tfmm_eps_vanishes(s->run.eps, 0) ? check_distinct(s, n, in, 4, "")
                                            : TFMM_OK;
  }
  tfmm_bodies_pack_f32(n, pos, mass, center, in);
  return tfmm_eps_vanishes(s->run.eps, 1) ? check_distinct_f32(s, n, in)
                                          : TFMM_OK;
}

/* All pairs: on the GPU in either precision (kernels/direct_tiled.cu), on
 * the CPU in single precision here and in double in run_direct_f64. */
static tfmm_status run_direct(tfmm_solver *s, size_t n, const double *pos,
                              const double *mass, double *acc, double *pot) {
  const int f64 = s->run.precision == TFMM_PRECISION_DOUBLE;
  const int gpu = s->device == TFMM_DEVICE_GPU;
  if (f64 && !gpu)
    return run_direct_f64(s, n, pos, mass, acc, pot);
  double t0 = tfmm_wtime();
  void *in = NULL, *out = NULL;
  tfmm_status st = gpu ? tfmm_gpu_reserve(s->gpu, n,
                                          f64 ? TFMM_PRECISION_DOUBLE
                                              : TFMM_PRECISION_SINGLE,
                                          &in, &out, &s->err)
                       : reserve_cpu(s, n);
  if (st != TFMM_OK)
    return st;
  if (!gpu) {
    in = s->cpu_in;
    out = s->cpu_out;
  }
  if ((st = pack_direct(s, n, pos, mass, f64, in)) != TFMM_OK)
    return st;
  const tfmm_pair_params pair = pair_params(&s->run);
  double t1 = tfmm_wtime();
  s->stats.time[TFMM_PHASE_PREPARE] = t1 - t0;
  if (gpu) {
    tfmm_gpu_direct_params p = {s->run.gpu_tile,
                                s->run.gpu_threads_per_body,
                                s->run.gpu_unroll,
                                s->run.gpu_bodies_per_thread,
                                pair,
                                pot != NULL};
    tfmm_gpu_times t;
    if ((st = tfmm_gpu_direct(s->gpu, &p, n, &t, &s->err)) != TFMM_OK)
      return st;
    s->stats.time[TFMM_PHASE_UPLOAD] = t.upload;
    s->stats.time[TFMM_PHASE_NEAR] = t.kernel;
    s->stats.time[TFMM_PHASE_DOWNLOAD] = t.download;
    s->stats.gpu_tile = p.tile;
    s->stats.gpu_threads_per_body = p.threads_per_body;
    s->stats.gpu_unroll = p.unroll;
    s->stats.gpu_bodies_per_thread = p.bodies_per_thread;
  } else {
    const tfmm_soft_f32 kern =
        tfmm_soft_make_f32(pair.softening == TFMM_SOFTENING_SPLINE, pair.eps);
    if (tfmm_direct_cpu_compute(n, in, &kern, s->active, out) != 0)
      return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                            "no memory for %zu bodies", n);
    s->stats.time[TFMM_PHASE_NEAR] = tfmm_wtime() - t1;
  }
  double t2 = tfmm_wtime();
  st = finish_direct(s, n, out, f64, acc, pot);
  s->stats.time[TFMM_PHASE_FINISH] = tfmm_wtime() - t2;
  return st;
}

static tfmm_status check_call(tfmm_solver *s, size_t n, const double *pos,
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
  return tfmm_bodies_check(n, pos, mass, &s->err);
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

/* Results of k bodies back to the caller's units with G; a force or
 * potential beyond the range of double there is an error, naming the
 * body (among the active ones, active not NULL). */
static tfmm_status to_caller_units(tfmm_solver *s, size_t k,
                                   const unsigned char *active, double *acc,
                                   double *pot) {
  tfmm_units_unscale(&s->units, s->cfg.G, k, acc, pot);
  size_t bad = first_nonfinite(k, active, acc, pot);
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
  const double *ipos = s->scaled_pos, *imass = s->scaled_mass;
  if (st == TFMM_OK)
    switch (s->cfg.method) {
    case TFMM_METHOD_REFERENCE:
      st = run_reference(s, n, ipos, imass, acc, pot);
      break;
    case TFMM_METHOD_DIRECT:
      st = run_direct(s, n, ipos, imass, acc, pot);
      break;
    default:
      st = run_tree(s, n, ipos, imass, acc, pot);
      break;
    }
  if (st == TFMM_OK)
    st = to_caller_units(s, n, s->active, acc, pot);
  s->stats.softening_separation =
      ldexp(s->stats.softening_separation, s->units.length_exp);
  omp_set_num_threads(saved_threads);
  if (st != TFMM_OK)
    return st;
  if (!tfmm_method_is_tree(s->cfg.method))
    s->stats.interactions = (double)n * (double)(n - 1);
  s->stats.time_total = tfmm_wtime() - t0;
  return TFMM_OK;
}

tfmm_status tfmm_solver_compute(tfmm_solver *s, size_t n, const double *pos,
                                const double *mass, double *acc, double *pot) {
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  if (s->dist != NULL)
    return tfmm_dist_compute(s, n, pos, mass, NULL, acc, pot);
  double t0 = tfmm_wtime();
  s->err.message[0] = '\0';
  tfmm_status st = check_call(s, n, pos, mass, acc);
  if (st != TFMM_OK)
    return st;
  s->active = NULL;
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
  if (s->dist != NULL)
    return tfmm_dist_compute(s, n, pos, mass, active, acc, pot);
  if (active == NULL)
    return tfmm_solver_compute(s, n, pos, mass, acc, pot);
  double t0 = tfmm_wtime();
  s->err.message[0] = '\0';
  tfmm_status st = check_call(s, n, pos, mass, acc);
  if (st != TFMM_OK)
    return st;
  const size_t k = tfmm_targets_count(n, active);
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
  pos = s->scaled_pos;
  mass = s->scaled_mass;
  if (tfmm_eps_vanishes(s->run.eps, 0))
    for (size_t t = 0; t < k; t++) {
      const double *x = pos + 3 * targets[t];
      for (size_t j = 0; j < n; j++)
        if (j != targets[t] && pos[3 * j] == x[0] && pos[3 * j + 1] == x[1] &&
            pos[3 * j + 2] == x[2])
          return tfmm_error_set(&s->err, TFMM_ERR_COINCIDENT,
                                "bodies %zu and %zu are at one point and eps "
                                "= 0: their force is infinite (set eps > 0)",
                                targets[t] < j ? targets[t] : j,
                                targets[t] < j ? j : targets[t]);
    }
  tfmm_reference_at(n, pos, mass, s->run.G, s->run.eps,
                    s->run.softening == TFMM_SOFTENING_SPLINE, k, targets, acc,
                    pot);
  size_t bad = first_nonfinite(k, NULL, acc, pot);
  if (bad < k)
    return tfmm_error_set(&s->err, TFMM_ERR_NONFINITE,
                          "target %zu (body %zu): force is not finite "
                          "(bodies nearly coincident for this eps?)",
                          bad, targets[bad]);
  return to_caller_units(s, k, NULL, acc, pot);
}
