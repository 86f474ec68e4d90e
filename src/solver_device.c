/* The solver's entry points for bodies that live on the GPU
 * (tfmm_solver_compute_device, tfmm_solver_compute_active_device): under
 * the gpu schedule the bodies stay on the device, otherwise they are
 * staged through the host around the host's entry points. */
#include "solver_handle.h"

#include "hierarchical.h"
#include "leaf_auto.h"
#include "plan.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* One evaluation as the planner asks for it (planner.h). */
typedef struct device_eval {
  tfmm_solver *s;
  size_t n;
  const double *pos, *mass; /* scaled, in the tree's buffer */
  const unsigned char *active;
  double *acc, *pot;
  const tfmm_hierarchical_device_out *out;
  /* Where the bodies came from, to bring them into the tree's buffer
   * again: the far field's results overwrite it (pipeline_gpu_state.cuh),
   * so a second evaluation in one call (the planner choosing again) puts
   * and scales them anew. host_pos NULL: the caller's device arrays. */
  const double *d_pos, *d_mass, *host_pos, *host_mass;
  int evaluated;
  tfmm_leaf_raise raise;
} device_eval;

/* The bodies into the tree's buffer again, scaled. */
static tfmm_status rescale(device_eval *h) {
  tfmm_solver *s = h->s;
  tfmm_pipeline_gpu *pl = &s->work.gpu;
  const double *d_pos = h->d_pos, *d_mass = h->d_mass;
  tfmm_status st = TFMM_OK;
  if (h->host_pos != NULL)
    st = tfmm_pipeline_gpu_put(pl, s->gpu, h->n, h->host_pos, h->host_mass,
                               &d_pos, &d_mass, &s->err);
  if (st == TFMM_OK)
    st = tfmm_pipeline_gpu_scale(pl, h->n, d_pos, d_mass, s->units.length_exp,
                                 s->units.mass_exp, &h->pos, &h->mass, &s->err);
  return st;
}

static tfmm_status eval_device(void *ctx, size_t measure_k, double confidence,
                               uint64_t seed) {
  device_eval *h = ctx;
  tfmm_solver *s = h->s;
  for (;;) {
    if (h->evaluated) {
      tfmm_status st = rescale(h);
      if (st != TFMM_OK)
        return st;
    }
    h->evaluated = 1;
    s->work.measure_k = measure_k;
    s->work.measure_seed = seed;
    s->work.measure_confidence = confidence;
    tfmm_status st = tfmm_hierarchical_compute_device(
        &s->run, s->leaf, s->gpu, &s->work, h->n, h->pos, h->mass, h->active,
        h->acc, h->pot, h->out, &s->stats, &s->err);
    if (!tfmm_solver_leaf_raise(s, st, &h->raise))
      return st;
  }
}

/* A tree method under the gpu schedule on bodies that live on the GPU:
 * checked, brought into internal units and back, and evaluated there; no
 * copy through the host. The same results as the host's stages would give
 * bit for bit (the same stages on the same numbers). d_active: the targets
 * (a device array), or NULL: every body. host_out: d_acc and d_pot are
 * host arrays (tfmm_solver_compute_host_gpu), whose bodies host_pos and
 * host_mass are (NULL otherwise). Begun at t0. */
static tfmm_status run_tree_device(tfmm_solver *s, size_t n,
                                   const double *d_pos, const double *d_mass,
                                   const unsigned char *d_active, double *d_acc,
                                   double *d_pot, void *stream, int host_out,
                                   const double *host_pos,
                                   const double *host_mass, double t0) {
  tfmm_stats fresh = {
      .method = s->cfg.method, .device = s->device, .n = n, .targets = n};
  s->stats = fresh;
  tfmm_solver_describe(s);
  tfmm_pipeline_gpu *pl = &s->work.gpu;
  double b[7];
  tfmm_status st = tfmm_pipeline_gpu_bounds(pl, s->gpu, n, d_pos, d_mass,
                                            stream, b, &s->err);
  if (st != TFMM_OK)
    return st;
  if (d_active != NULL) {
    size_t k = 0;
    st = tfmm_pipeline_gpu_count_targets(pl, n, d_active, &k, &s->err);
    if (st != TFMM_OK)
      return st;
    if (k == 0) {
      tfmm_solver_no_targets(s, n, t0);
      return TFMM_OK;
    }
    s->stats.targets = k;
  }
  s->units = tfmm_units_from_bounds(b, b + 3, b[6], s->cfg.box_size);
  tfmm_solver_set_run(s);
  const double *pos = NULL, *mass = NULL;
  st = tfmm_pipeline_gpu_scale(pl, n, d_pos, d_mass, s->units.length_exp,
                               s->units.mass_exp, &pos, &mass, &s->err);
  if (st != TFMM_OK)
    return st;
  s->stats.time[TFMM_PHASE_PREPARE] = tfmm_wtime() - t0;
  /* The caller's previous accelerations, when on the device with it. */
  tfmm_solver_use_prior(s,
                        s->prior_on_device && !host_out ? s->prior_acc : NULL);
  const tfmm_hierarchical_device_out out = {
      .stream = stream,
      .host_results = host_out,
      .caller_G = s->cfg.G,
      .acc_exp = s->units.mass_exp - 2 * s->units.length_exp,
      .pot_exp = s->units.mass_exp - s->units.length_exp};
  device_eval h = {.s = s,
                   .n = n,
                   .pos = pos,
                   .mass = mass,
                   .active = d_active,
                   .acc = d_acc,
                   .pot = d_pot,
                   .out = &out,
                   .d_pos = d_pos,
                   .d_mass = d_mass,
                   .host_pos = host_pos,
                   .host_mass = host_mass};
  st = tfmm_planner_run(&s->plan, &s->cfg, &s->run, n, s->leaf, 1,
                        d_active == NULL, &s->stats, &s->err, eval_device, &h);
  tfmm_plan_far_kernel_note(&s->cfg, 1, n, s->run.eps, s->stats.plan,
                            sizeof s->stats.plan);
  tfmm_solver_use_prior(s, NULL);
  s->stats.softening_separation =
      ldexp(s->stats.softening_separation, s->units.length_exp);
  tfmm_solver_leaf_raise_note(s, &h.raise);
  if (st != TFMM_OK && st != TFMM_ERR_ACCURACY)
    return st;
  if (s->run.leaf_size == TFMM_LEAF_AUTO && d_active == NULL)
    s->leaf =
        tfmm_leaf_auto_next(s->leaf, s->stats.near_time, s->stats.far_time);
  s->stats.time_total = tfmm_wtime() - t0;
  return st;
}

/* The checks of a call on device-resident bodies. */
static tfmm_status check_device_call(tfmm_solver *s, size_t n,
                                     const double *d_pos, const double *d_mass,
                                     const double *d_acc) {
  if (n == 0 || d_pos == NULL || d_mass == NULL || d_acc == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          n == 0 ? "no bodies"
                                 : "positions, masses and accelerations "
                                   "must not be NULL");
  if (!tfmm_has_cuda())
    return tfmm_error_set(&s->err, TFMM_ERR_UNSUPPORTED,
                          "device-resident bodies: this tilefmm was built "
                          "without CUDA");
  if (s->device != TFMM_DEVICE_GPU || s->gpu == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_NO_DEVICE,
                          "device-resident bodies need a solver on the GPU "
                          "(device gpu, or auto with a GPU present)");
  if (n > ((size_t)1 << 31) - 1)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "%zu bodies: at most 2^31 - 1 are supported", n);
  return TFMM_OK;
}

/* Under the gpu schedule, the evaluation on the device, with the
 * solver's thread count. */
static tfmm_status run_on_device(tfmm_solver *s, size_t n, const double *d_pos,
                                 const double *d_mass,
                                 const unsigned char *d_active, double *d_acc,
                                 double *d_pot, void *stream) {
  /* omp_set_num_threads changes only this thread's setting. */
  int saved_threads = omp_get_max_threads();
  if (s->cfg.num_threads > 0)
    omp_set_num_threads(s->cfg.num_threads);
  tfmm_status st = run_tree_device(s, n, d_pos, d_mass, d_active, d_acc, d_pot,
                                   stream, 0, NULL, NULL, tfmm_wtime());
  omp_set_num_threads(saved_threads);
  return st;
}

int tfmm_solver_host_on_gpu(const tfmm_solver *s, size_t n) {
  return s->device == TFMM_DEVICE_GPU && s->gpu != NULL &&
         tfmm_method_is_tree(s->cfg.method) &&
         tfmm_hierarchical_gpu_schedule(&s->cfg, s->gpu, n);
}

tfmm_status tfmm_solver_compute_host_gpu(tfmm_solver *s, size_t n,
                                         const double *pos, const double *mass,
                                         double *acc, double *pot, double t0) {
  int saved_threads = omp_get_max_threads();
  if (s->cfg.num_threads > 0)
    omp_set_num_threads(s->cfg.num_threads);
  const double *d_pos = NULL, *d_mass = NULL;
  tfmm_status st = tfmm_pipeline_gpu_put(&s->work.gpu, s->gpu, n, pos, mass,
                                         &d_pos, &d_mass, &s->err);
  const double up = tfmm_wtime() - t0;
  if (st == TFMM_OK)
    st = run_tree_device(s, n, d_pos, d_mass, NULL, acc, pot, NULL, 1, pos,
                         mass, t0);
  omp_set_num_threads(saved_threads);
  if (st == TFMM_OK) { /* the copy up is the upload, not the preparation */
    s->stats.time[TFMM_PHASE_UPLOAD] += up;
    s->stats.time[TFMM_PHASE_PREPARE] -= up;
  }
  return st;
}

tfmm_status tfmm_solver_reserve(tfmm_solver *s, size_t n) {
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  s->err.message[0] = '\0';
  if (n == 0 || n > ((size_t)1 << 31) - 1)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "reserve: %zu bodies: 1 to 2^31 - 1 are supported",
                          n);
  /* Only the gpu schedule on host arrays takes memory before it
   * computes; a solver over several processes reserves in its ranks'
   * evaluations. */
  if (s->over != NULL || !tfmm_solver_host_on_gpu(s, n))
    return TFMM_OK;
  int saved_threads = omp_get_max_threads();
  if (s->cfg.num_threads > 0)
    omp_set_num_threads(s->cfg.num_threads);
  tfmm_status st = tfmm_pipeline_gpu_reserve(&s->work.gpu, s->gpu, n, &s->err);
  omp_set_num_threads(saved_threads);
  return st;
}

/* Otherwise through the host: the bodies (and targets, d_active not NULL,
 * with the results they leave as they are) down, the host's call, the
 * results up. */
static tfmm_status run_staged(tfmm_solver *s, size_t n, const double *d_pos,
                              const double *d_mass,
                              const unsigned char *d_active, double *d_acc,
                              double *d_pot, void *stream) {
  /* 8n doubles, then the n bytes of d_active. */
  if (tfmm_doubles_reserve(&s->staged, 8 * n + (n + 7) / 8) != 0)
    return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                          "no memory to stage %zu bodies", n);
  double *pos = s->staged.v, *mass = pos + 3 * n, *acc = mass + n,
         *pot = acc + 3 * n;
  unsigned char *active = (unsigned char *)(pot + n);
  const int with_pot = d_pot != NULL;
  tfmm_gpu *g = s->gpu;
  tfmm_error *err = &s->err;
  tfmm_status st =
      tfmm_gpu_copy(g, pos, d_pos, 3 * n * sizeof *pos, 0, stream, err);
  if (st == TFMM_OK)
    st = tfmm_gpu_copy(g, mass, d_mass, n * sizeof *mass, 0, stream, err);
  if (st == TFMM_OK && d_active != NULL)
    st = tfmm_gpu_copy(g, active, d_active, n, 0, stream, err);
  /* The results the targets leave, and the previous accelerations of the
   * error criterion when they are d_acc's (the simulation's): d_acc down,
   * the host's prior for the call. */
  const int prior = s->prior_acc == d_acc && s->prior_on_device;
  if (st == TFMM_OK && (d_active != NULL || prior))
    st = tfmm_gpu_copy(g, acc, d_acc, 3 * n * sizeof *acc, 0, stream, err);
  if (st == TFMM_OK && d_active != NULL && with_pot)
    st = tfmm_gpu_copy(g, pot, d_pot, n * sizeof *pot, 0, stream, err);
  if (prior)
    tfmm_solver_set_prior_accel(s, acc, 0);
  if (st == TFMM_OK)
    st = tfmm_solver_compute_active(s, n, pos, mass,
                                    d_active != NULL ? active : NULL, acc,
                                    with_pot ? pot : NULL);
  if (prior)
    tfmm_solver_set_prior_accel(s, d_acc, 1);
  if (st == TFMM_OK && s->stats.targets == 0)
    return TFMM_OK; /* nothing written */
  if (st == TFMM_OK)
    st = tfmm_gpu_copy(g, d_acc, acc, 3 * n * sizeof *acc, 1, stream, err);
  if (st == TFMM_OK && with_pot)
    st = tfmm_gpu_copy(g, d_pot, pot, n * sizeof *pot, 1, stream, err);
  return st;
}

tfmm_status tfmm_solver_compute_device(tfmm_solver *s, size_t n,
                                       const double *d_pos,
                                       const double *d_mass, double *d_acc,
                                       double *d_pot, void *stream) {
  return tfmm_solver_compute_active_device(s, n, d_pos, d_mass, NULL, d_acc,
                                           d_pot, stream);
}

tfmm_status tfmm_solver_compute_active_device(
    tfmm_solver *s, size_t n, const double *d_pos, const double *d_mass,
    const unsigned char *d_active, double *d_acc, double *d_pot, void *stream) {
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  s->err.message[0] = '\0';
  if (s->over != NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_UNSUPPORTED,
                          "a solver over several processes takes its bodies "
                          "on the host (tfmm_solver_compute)");
  tfmm_status st = check_device_call(s, n, d_pos, d_mass, d_acc);
  if (st != TFMM_OK)
    return st;
  if (tfmm_method_is_tree(s->cfg.method) &&
      tfmm_hierarchical_gpu_schedule(&s->cfg, s->gpu, n))
    return run_on_device(s, n, d_pos, d_mass, d_active, d_acc, d_pot, stream);
  return run_staged(s, n, d_pos, d_mass, d_active, d_acc, d_pot, stream);
}
