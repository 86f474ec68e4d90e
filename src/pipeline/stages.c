#include "pipeline/stages.h"

#include "team.h"

#include "farfield/passes.h"
#include "farfield/soft_passes.h"
#include "nearfield/p2p_cpu.h"
#include "tree/accel_estimate.h"
#include "tree/coincident.h"
#include "tree/mac.h"
#include "tree/targets.h"

#include <stdlib.h>
#include <string.h>

static tfmm_status no_memory(tfmm_eval *e, const char *what) {
  return tfmm_error_set(e->err, TFMM_ERR_NO_MEMORY, "no memory for %s", what);
}

/* With eps = 0 (or one whose square underflows) a pair at one point has
 * an infinite force: refuse it, naming both bodies (found from the tree's
 * sorted keys). */
static tfmm_status refuse_coincident(tfmm_eval *e) {
  int64_t i = 0, j = 0;
  int found = tfmm_octree_find_coincident(&e->w->tree, &i, &j);
  if (found < 0)
    return no_memory(e, "the coincidence check");
  if (found)
    return tfmm_error_set(e->err, TFMM_ERR_COINCIDENT,
                          "bodies %lld and %lld are at one point and eps = 0: "
                          "their force is infinite (set eps > 0)",
                          (long long)i, (long long)j);
  return TFMM_OK;
}

static void tree_stats(const tfmm_octree *t, tfmm_stats *s) {
  s->tree_depth = t->depth;
  s->tree_cells = t->ncells;
  s->tree_leaves = t->nleaves;
  tfmm_octree_occupancy(t, &s->leaf_min, &s->leaf_mean, &s->leaf_max);
  s->tree_time.keys = t->times.keys;
  s->tree_time.sort = t->times.sort;
  s->tree_time.permute = t->times.permute;
  s->tree_time.build = t->times.build;
  s->tree_time.moments = t->times.moments;
}

tfmm_status tfmm_stage_tree(tfmm_eval *e) {
  tfmm_workspace *w = e->w;
  tfmm_stats *s = e->stats;
  tfmm_workspace_clear(w);
  double t0 = tfmm_wtime();
  const tfmm_config *c = e->cfg;
  const double box[4] = {c->box_min[0], c->box_min[1], c->box_min[2],
                         c->box_size};
  tfmm_status st =
      tfmm_octree_build_in(&w->tree, e->n, e->pos, e->mass, e->leaf_size,
                           c->max_depth, c->box_size > 0 ? box : NULL, e->err);
  s->time[TFMM_PHASE_TREE] = tfmm_wtime() - t0;
  s->tree_device = TFMM_DEVICE_CPU;
  return tfmm_stage_tree_built(e, st);
}

tfmm_status tfmm_stage_tree_built(tfmm_eval *e, tfmm_status st) {
  tfmm_stats *s = e->stats;
  s->leaf_size = e->leaf_size;
  s->near_device = e->gpu != NULL ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU;
  s->far_device = TFMM_DEVICE_CPU; /* far_gpu says otherwise */
  if (st == TFMM_OK &&
      tfmm_eps_vanishes(e->cfg->eps, e->set.precision == TFMM_PRECISION_SINGLE))
    st = refuse_coincident(e);
  if (st == TFMM_OK)
    tree_stats(&e->w->tree, s);
  return st;
}

/* Targets of at most this many bodies take accepted sources by M2P rather
 * than M2L. Measured on these operators (one core): M2L 0.4 us at p = 4 and
 * 2.1 us at p = 8, M2P 0.28-0.30 us per body, L2P 0.05-0.4 us per body, so
 * M2P is cheaper only for a single body, where it is also more accurate.
 * (Taking every target of up to (p + 1)^2 bodies by M2P cut the 99th
 * percentile error of a Plummer sphere by 2-30x but cost 5-20x the time.) */
const int64_t TFMM_M2P_BODIES = 1;

/* Replaces a per-cell array of the workspace by a new one (or NULL). */
static void keep(tfmm_doubles *d, double *v, int64_t count) {
  free(d->v);
  d->v = v;
  d->cap = v != NULL ? (size_t)count : 0;
}

/* The far field's operators: the kernel the plan resolved. */
static const tfmm_far_ops *far_ops(const tfmm_eval *e) {
  return e->set.far_kernel == TFMM_FAR_KERNEL_SOFTENED ? &TFMM_FAR_OPS_SOFTENED
                                                       : &TFMM_FAR_OPS_NEWTON;
}

/* The far field's and the CPU near field's buffers, for this tree. */
static int reserve(tfmm_eval *e) {
  tfmm_workspace *w = e->w;
  const int fmm = e->cfg->method == TFMM_METHOD_FMM;
  const int far = !e->cfg->near_only, cpu_near = e->gpu == NULL;
  const size_t n = e->n, cells = (size_t)w->tree.ncells;
  const size_t size = far_ops(e)->size(e->set.order);
  if ((far && tfmm_doubles_reserve(&w->M, cells * size) != 0) ||
      (far && fmm && tfmm_doubles_reserve(&w->L, cells * size) != 0) ||
      tfmm_doubles_reserve(&w->far_phi, n) != 0 ||
      tfmm_doubles_reserve(&w->far_g, 3 * n) != 0 ||
      (cpu_near && tfmm_doubles_reserve(&w->near_a, 3 * n) != 0) ||
      (cpu_near && tfmm_doubles_reserve(&w->near_p, n) != 0))
    return -1;
  /* The far field adds into these; the near field's are written whole. */
  memset(w->far_phi.v, 0, n * sizeof *w->far_phi.v);
  memset(w->far_g.v, 0, 3 * n * sizeof *w->far_g.v);
  return 0;
}

/* The targets of each cell when the evaluation is at a subset, else NULL:
 * what the lists and the downward passes skip cells by. */
static const int32_t *cell_targets(const tfmm_eval *e) {
  return e->active != NULL ? e->w->targets.v : NULL;
}

tfmm_status tfmm_stage_lists(tfmm_eval *e) {
  const tfmm_config *cfg = e->cfg;
  tfmm_workspace *w = e->w;
  const tfmm_octree *t = &w->tree;
  const int p = e->set.order;
  double t0 = tfmm_wtime();
  if (e->active != NULL &&
      (tfmm_int32s_reserve(&w->targets, (size_t)t->ncells) != 0 ||
       tfmm_targets_per_cell(t, e->active, w->targets.v) != 0))
    return no_memory(e, "the targets of each cell");
  if (cfg->mac == TFMM_MAC_MASS) {
    keep(&w->theta_src, tfmm_mac_mass_thetas(t, e->set.theta, p), t->ncells);
    if (w->theta_src.v == NULL)
      return no_memory(e, "the opening criterion");
  }
  if (cfg->mac == TFMM_MAC_ERROR) {
    keep(&w->accel,
         w->prior_acc != NULL
             ? tfmm_accel_prior(t, w->prior_acc, w->prior_scale)
             : tfmm_accel_estimate(t, cfg->eps),
         t->ncells);
    if (w->accel.v == NULL)
      return no_memory(e, "the opening criterion");
  }
  const double soft_term =
      tfmm_mac_soft_term(cfg->mac == TFMM_MAC_ERROR,
                         cfg->softening == TFMM_SOFTENING_PLUMMER, cfg->eps);
  const tfmm_mac mac = {e->set.theta,
                        e->set.separation,
                        cfg->mac == TFMM_MAC_MASS ? w->theta_src.v : NULL,
                        cfg->mac == TFMM_MAC_ERROR ? w->accel.v : NULL,
                        e->set.mac_epsilon,
                        p,
                        soft_term};
  tfmm_status st =
      cfg->method == TFMM_METHOD_FMM
          ? tfmm_lists_build_fmm_at(t, &mac, TFMM_M2P_BODIES, cell_targets(e),
                                    &w->lists, e->err)
          : tfmm_lists_build_bh_at(t, &mac, cell_targets(e), &w->lists, e->err);
  if (st != TFMM_OK)
    return st;
  if (reserve(e) != 0)
    return tfmm_error_set(e->err, TFMM_ERR_NO_MEMORY,
                          "no memory for the expansions of %lld cells",
                          (long long)t->ncells);
  e->stats->time[TFMM_PHASE_LISTS] = tfmm_wtime() - t0;
  return TFMM_OK;
}

static tfmm_pair_params pair_params(const tfmm_eval *e) {
  const tfmm_pair_params pair = {e->cfg->softening, e->cfg->eps,
                                 e->set.precision};
  return pair;
}

tfmm_status tfmm_stage_near_launch(tfmm_eval *e) {
  if (e->gpu == NULL)
    return TFMM_OK;
  const tfmm_pair_params pair = pair_params(e);
  double t0 = tfmm_wtime();
  tfmm_status st = tfmm_p2p_gpu_pack(e->gpu, &e->w->tree, &e->w->lists.near,
                                     e->w->lists.near_interactions,
                                     pair.precision, &e->near, e->err);
  if (st == TFMM_OK)
    st = tfmm_p2p_gpu_launch(e->gpu, &pair, e->pot != NULL, &e->near, e->err);
  if (st == TFMM_OK)
    e->stats->time[TFMM_PHASE_PREPARE] = e->near.launched - t0;
  return st;
}

tfmm_status tfmm_stage_upward(tfmm_eval *e) {
  double t0 = tfmm_wtime();
  tfmm_far_upward(far_ops(e), &e->w->tree, e->set.order, e->w->M.v);
  e->stats->time[TFMM_PHASE_UPWARD] = tfmm_wtime() - t0;
  return TFMM_OK;
}

tfmm_status tfmm_stage_m2l(tfmm_eval *e) {
  double t0 = tfmm_wtime();
  if (e->cfg->method == TFMM_METHOD_FMM)
    tfmm_far_m2l(far_ops(e), &e->w->tree, &e->w->lists.m2l, e->set.order,
                 e->cfg->eps, e->w->M.v, e->w->L.v);
  e->stats->time[TFMM_PHASE_FAR] += tfmm_wtime() - t0;
  return TFMM_OK;
}

tfmm_status tfmm_stage_downward(tfmm_eval *e) {
  double t0 = tfmm_wtime();
  if (e->cfg->method == TFMM_METHOD_FMM)
    tfmm_far_downward_at(far_ops(e), &e->w->tree, e->set.order, cell_targets(e),
                         e->w->L.v, e->w->far_phi.v, e->w->far_g.v);
  e->stats->time[TFMM_PHASE_DOWNWARD] = tfmm_wtime() - t0;
  return TFMM_OK;
}

tfmm_status tfmm_stage_m2p(tfmm_eval *e) {
  double t0 = tfmm_wtime();
  tfmm_far_m2p_at(far_ops(e), &e->w->tree, &e->w->lists.m2p, e->set.order,
                  e->cfg->eps, cell_targets(e), e->w->M.v, e->w->far_phi.v,
                  e->w->far_g.v);
  /* M2P counts as far. */
  e->stats->time[TFMM_PHASE_FAR] += tfmm_wtime() - t0;
  return TFMM_OK;
}

/* Seconds during which [a0, a1] and [b0, b1] overlap. */
static double overlap(double a0, double a1, double b0, double b1) {
  double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
  return hi > lo ? hi - lo : 0;
}

tfmm_status tfmm_stage_near_finish(tfmm_eval *e) {
  tfmm_stats *s = e->stats;
  s->far_time = e->far_end - e->far_begin;
  if (e->gpu != NULL) {
    tfmm_gpu_times g;
    tfmm_status st = tfmm_p2p_gpu_wait(e->gpu, &e->near, &g, e->err);
    if (st != TFMM_OK)
      return st;
    e->near_out = e->near.host.out;
    /* The leaves no one float origin serves, again in double on the CPU
     * (near_frame.h): none on ordinary inputs. */
    const tfmm_pair_params pair = pair_params(e);
    double t0 = tfmm_wtime();
    if (pair.precision != TFMM_PRECISION_DOUBLE)
      st = tfmm_p2p_cpu_exact(&e->w->tree, &e->w->lists.near, &pair,
                              e->near.host.out, e->err);
    if (st != TFMM_OK)
      return st;
    /* Counted with the packing: CPU work of the GPU's near field. */
    s->time[TFMM_PHASE_PREPARE] += tfmm_wtime() - t0;
    s->time[TFMM_PHASE_UPLOAD] = g.upload;
    s->time[TFMM_PHASE_NEAR] = g.kernel;
    s->time[TFMM_PHASE_DOWNLOAD] = g.download;
    s->near_time = g.upload + g.kernel + g.download;
    s->near_kernel_time = g.kernel;
    s->overlap = overlap(e->far_begin, e->far_end, e->near.launched,
                         e->near.launched + s->near_time);
    return TFMM_OK;
  }
  const tfmm_pair_params pair = pair_params(e);
  double t0 = tfmm_wtime();
  tfmm_status st = tfmm_p2p_cpu(&e->w->tree, &e->w->lists.near, &pair,
                                e->w->near_a.v, e->w->near_p.v, e->err);
  s->time[TFMM_PHASE_NEAR] = s->near_time = s->near_kernel_time =
      tfmm_wtime() - t0;
  return st;
}

/* a = G (grad Phi_far + a_near), phi = G (phi_near - Phi_far), back in the
 * input order, at the targets only (e->active). The near field is in the
 * workspace (CPU) or in near_out, 4 values per body, doubles if the precision
 * is double else floats (GPU). */
tfmm_status tfmm_stage_combine(tfmm_eval *e) {
  double t0 = tfmm_wtime();
  const tfmm_workspace *w = e->w;
  const tfmm_octree *t = &w->tree;
  const int f64 = e->set.precision == TFMM_PRECISION_DOUBLE;
  const float *g32 = f64 ? NULL : e->near_out;
  const double *g64 = f64 ? e->near_out : NULL;
  const double G = e->cfg->G;
  const double *far_g = w->far_g.v, *far_phi = w->far_phi.v;
  const double *near_a = w->near_a.v, *near_p = w->near_p.v;
  double *acc = e->acc, *pot = e->pot;
  const unsigned char *active = e->active;
  const int team = tfmm_team(t->n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (int64_t k = 0; k < (int64_t)t->n; k++) {
    int64_t i = t->order[k];
    if (active != NULL && !active[i])
      continue;
    double a[4];
    for (int d = 0; d < 4; d++)
      a[d] = g32 != NULL   ? g32[4 * k + d]
             : g64 != NULL ? g64[4 * k + d]
             : d < 3       ? near_a[3 * k + d]
                           : near_p[k];
    for (int d = 0; d < 3; d++)
      acc[3 * i + d] = G * (far_g[3 * k + d] + a[d]);
    if (pot != NULL)
      pot[i] = G * (a[3] - far_phi[k]);
  }
  e->stats->time[TFMM_PHASE_FINISH] = tfmm_wtime() - t0;
  return TFMM_OK;
}
