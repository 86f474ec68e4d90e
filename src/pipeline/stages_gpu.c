/* The stages that build the tree and its multipoles on the GPU for the
 * hybrid schedule (kernels/tree/tree_gpu_hybrid.h): the same tree and the same
 * multipoles as tfmm_stage_tree and tfmm_stage_upward, so the stages
 * after them run unchanged; and the far field on the GPU from the CPU's
 * lists, with the results of the CPU's far-field stages. Then the gpu
 * schedule's stages (kernels/schedule/pipeline_gpu.h), which keep everything on
 * the device. Both use the workspace's one GPU tree (w->gpu.base) in the
 * evaluation's device context (e->gpu), which holds their memory. */
#include "pipeline/stages.h"

#include "farfield/expansion.h"
#include "internal.h"
#include "tree/mac_rule.h"

/* The GPU tree's parameters: the leaf size, depth and cube of e. */
static tfmm_tree_gpu_params tree_params(const tfmm_eval *e) {
  const tfmm_config *c = e->cfg;
  const tfmm_tree_gpu_params params = {
      .leaf_size = e->leaf_size,
      .max_depth = c->max_depth,
      .timed = 1,
      .box = {c->box_min[0], c->box_min[1], c->box_min[2], c->box_size}};
  return params;
}

tfmm_status tfmm_stage_tree_gpu_upload(tfmm_eval *e) {
  tfmm_workspace *w = e->w;
  tfmm_workspace_clear(w);
  double t0 = tfmm_wtime();
  tfmm_status st = tfmm_tree_gpu_hybrid_upload(&w->gpu.base, e->gpu, e->n,
                                               e->pos, e->mass, e->err);
  e->stats->time[TFMM_PHASE_TREE] = tfmm_wtime() - t0;
  e->stats->tree_device = TFMM_DEVICE_GPU;
  return st;
}

tfmm_status tfmm_stage_tree_gpu(tfmm_eval *e) {
  double t0 = tfmm_wtime();
  const tfmm_tree_gpu_params params = tree_params(e);
  e->w->tree_life.kept = 0; /* the gpu schedule's tree, built over */
  tfmm_status st = tfmm_tree_gpu_hybrid_build(&e->w->gpu.base, &params, e->err);
  e->stats->time[TFMM_PHASE_TREE] += tfmm_wtime() - t0;
  return st;
}

tfmm_status tfmm_stage_tree_gpu_download(tfmm_eval *e) {
  tfmm_workspace *w = e->w;
  double t0 = tfmm_wtime();
  tfmm_status st =
      tfmm_tree_gpu_hybrid_download(&w->gpu.base, &w->tree, e->err);
  e->stats->time[TFMM_PHASE_TREE] += tfmm_wtime() - t0;
  if (st == TFMM_OK) {
    /* The GPU's stages (CUDA events, milliseconds) in the CPU's slots;
     * the copies in and out are in the phase's time only. */
    const tfmm_tree_gpu_times *g = &w->gpu.base.tree.times;
    w->tree.times.keys = 1e-3 * g->keys;
    w->tree.times.sort = 1e-3 * g->sort;
    w->tree.times.permute = 1e-3 * g->gather;
    w->tree.times.build = 1e-3 * g->cells;
    w->tree.times.moments = 1e-3 * g->moments;
  }
  return tfmm_stage_tree_built(e, st);
}

/* P2M and M2M on the GPU, the CPU's bits (not the fast M2M of the gpu
 * schedule), kept there. */
tfmm_status tfmm_stage_upward_gpu(tfmm_eval *e) {
  double t0 = tfmm_wtime();
  tfmm_status st =
      tfmm_tree_gpu_hybrid_upward(&e->w->gpu.base, e->set.order, 0, e->err);
  e->stats->time[TFMM_PHASE_UPWARD] = tfmm_wtime() - t0;
  return st;
}

tfmm_status tfmm_stage_upward_gpu_download(tfmm_eval *e) {
  tfmm_workspace *w = e->w;
  double t0 = tfmm_wtime();
  const size_t size = tfmm_expansion_size(e->set.order);
  if (tfmm_doubles_reserve(&w->M, (size_t)w->tree.ncells * size) != 0)
    return tfmm_error_set(e->err, TFMM_ERR_NO_MEMORY,
                          "no memory for the multipoles of %lld cells",
                          (long long)w->tree.ncells);
  tfmm_status st =
      tfmm_tree_gpu_hybrid_upward_download(&w->gpu.base, w->M.v, e->err);
  e->stats->time[TFMM_PHASE_UPWARD] += tfmm_wtime() - t0;
  return st;
}

tfmm_status tfmm_stage_far_gpu_upload(tfmm_eval *e) {
  const tfmm_lists *l = &e->w->lists;
  const tfmm_tree_gpu_hybrid_list m2l = {l->m2l.ntargets, l->m2l.offset,
                                         l->m2l.index},
                                  m2p = {l->m2p.ntargets, l->m2p.offset,
                                         l->m2p.index};
  const int fmm = e->cfg->method == TFMM_METHOD_FMM;
  double t0 = tfmm_wtime();
  tfmm_status st = tfmm_tree_gpu_hybrid_far_upload(
      &e->w->gpu.base, fmm ? &m2l : NULL, &m2p, e->err);
  e->stats->time[TFMM_PHASE_FAR] = tfmm_wtime() - t0;
  e->stats->far_device = TFMM_DEVICE_GPU;
  return st;
}

tfmm_status tfmm_stage_far_gpu(tfmm_eval *e) {
  double t0 = tfmm_wtime();
  tfmm_status st = tfmm_tree_gpu_hybrid_far(&e->w->gpu.base, e->err);
  e->stats->time[TFMM_PHASE_FAR] += tfmm_wtime() - t0;
  return st;
}

tfmm_status tfmm_stage_far_gpu_download(tfmm_eval *e) {
  tfmm_workspace *w = e->w;
  double t0 = tfmm_wtime();
  tfmm_status st = tfmm_tree_gpu_hybrid_far_download(&w->gpu.base, w->far_phi.v,
                                                     w->far_g.v, e->err);
  e->stats->time[TFMM_PHASE_FAR] += tfmm_wtime() - t0;
  return st;
}

/* ---- The gpu schedule -----------------------------------------------------
 */

tfmm_status tfmm_stage_gpu_upload(tfmm_eval *e) {
  tfmm_workspace *w = e->w;
  tfmm_workspace_clear(w);
  return tfmm_pipeline_gpu_upload(&w->gpu, e->gpu, e->n, e->pos, e->mass,
                                  e->on_device, e->stream, e->err);
}

/* What the tree of e is built for (tree_life.h). */
static tfmm_tree_shape tree_shape(const tfmm_eval *e,
                                  const tfmm_tree_gpu_params *p) {
  tfmm_tree_shape shape = {.n = e->n,
                           .leaf_size = p->leaf_size,
                           .max_depth = p->max_depth,
                           .acc_exp = e->acc_exp,
                           .pot_exp = e->pot_exp};
  for (int k = 0; k < 4; k++)
    shape.box[k] = p->box[k];
  return shape;
}

tfmm_status tfmm_stage_gpu_tree(tfmm_eval *e) {
  tfmm_workspace *w = e->w;
  tfmm_stats *s = e->stats;
  const tfmm_config *c = e->cfg;
  const tfmm_tree_gpu_params params = tree_params(e);
  const int vanishes =
      tfmm_eps_vanishes(c->eps, e->set.precision == TFMM_PRECISION_SINGLE);
  /* The kept tree refit (tree_life.h): for the caller's bodies moved, at
   * a subset of them, and never without softening, where the coincident
   * bodies' check below reads the keys of a build. */
  const tfmm_tree_shape shape = tree_shape(e, &params);
  const int refit =
      e->on_device && w->keep_tree && !vanishes &&
      tfmm_tree_life_refits(&w->tree_life, &shape, e->active != NULL);
  tfmm_status st = refit
                       ? tfmm_pipeline_gpu_refit(&w->gpu, params.timed, e->err)
                       : tfmm_pipeline_gpu_tree(&w->gpu, &params, e->err);
  if (st != TFMM_OK)
    w->tree_life.kept = 0;
  else if (refit)
    tfmm_tree_life_refit(&w->tree_life, w->gpu.base.tree.growth);
  else
    tfmm_tree_life_built(&w->tree_life, &shape);
  s->tree_refits = refit ? w->tree_life.refits : 0;
  s->tree_growth = w->gpu.base.tree.growth;
  if (st == TFMM_OK && vanishes) {
    /* Bodies at one point share a key: only then is the tree brought to
     * the CPU, where tfmm_stage_tree_built names the pair. */
    int64_t equal = 0;
    st = tfmm_pipeline_gpu_maybe_coincident(&w->gpu, &equal, e->err);
    if (st == TFMM_OK && equal > 0) {
      st = tfmm_pipeline_gpu_copy_tree(&w->gpu, &w->tree, e->err);
      st = tfmm_stage_tree_built(e, st);
    }
  }
  s->schedule = TFMM_SCHEDULE_GPU;
  s->tree_device = s->lists_device = s->near_device = s->far_device =
      TFMM_DEVICE_GPU;
  s->leaf_size = e->leaf_size;
  if (st != TFMM_OK)
    return st;
  const tfmm_tree_gpu *t = &w->gpu.base.tree;
  s->tree_depth = t->depth;
  s->tree_cells = t->ncells;
  s->tree_leaves = t->nleaves;
  s->leaf_mean = (double)t->n / (double)t->nleaves;
  s->tree_time.keys = 1e-3 * t->times.keys;
  s->tree_time.sort = 1e-3 * t->times.sort;
  s->tree_time.permute = 1e-3 * t->times.gather;
  s->tree_time.build = 1e-3 * t->times.cells;
  s->tree_time.moments = 1e-3 * t->times.moments;
  return TFMM_OK;
}

tfmm_status tfmm_stage_gpu_targets(tfmm_eval *e) {
  return tfmm_pipeline_gpu_targets(&e->w->gpu, e->active, e->on_device, e->err);
}

/* The kernel of the far field's expansions (tfmm_far_kernel, resolved). */
static tfmm_pipeline_gpu_kernel far_kernel(const tfmm_eval *e) {
  const tfmm_pipeline_gpu_kernel k = {
      e->set.far_kernel == TFMM_FAR_KERNEL_SOFTENED, e->cfg->eps};
  return k;
}

tfmm_status tfmm_stage_gpu_upward(tfmm_eval *e) {
  const tfmm_pipeline_gpu_kernel k = far_kernel(e);
  return tfmm_pipeline_gpu_upward(&e->w->gpu, e->set.order, &k, e->err);
}

tfmm_status tfmm_stage_gpu_lists(tfmm_eval *e) {
  const tfmm_config *c = e->cfg;
  const double eps = c->eps;
  const tfmm_traverse_gpu_params params = {
      .barnes_hut = c->method == TFMM_METHOD_BH,
      .mac = c->mac,
      .theta = e->set.theta,
      .separation = e->set.separation,
      .epsilon = e->set.mac_epsilon,
      .order = e->set.order,
      .soft_term =
          tfmm_mac_soft_term(c->mac == TFMM_MAC_ERROR,
                             c->softening == TFMM_SOFTENING_PLUMMER, eps),
      .eps = eps,
      .prior_acc = e->w->prior_acc,
      .prior_scale = e->w->prior_scale,
      .m2p_bodies = TFMM_M2P_BODIES,
      .list_cap = e->w->list_cap};
  return tfmm_pipeline_gpu_lists(&e->w->gpu, &params, e->err);
}

tfmm_status tfmm_stage_gpu_near(tfmm_eval *e) {
  const tfmm_pair_params pair = {e->cfg->softening, e->cfg->eps,
                                 e->set.precision};
  return tfmm_pipeline_gpu_near(&e->w->gpu, &pair, e->pot != NULL,
                                tfmm_gpu_sm_count(e->gpu), e->err);
}

tfmm_status tfmm_stage_gpu_far(tfmm_eval *e) {
  const tfmm_pipeline_gpu_kernel k = far_kernel(e);
  return tfmm_pipeline_gpu_far(&e->w->gpu, e->set.order, &k,
                               e->cfg->method == TFMM_METHOD_FMM,
                               !e->cfg->near_only, e->set.precision, e->err);
}

tfmm_status tfmm_stage_gpu_finish(tfmm_eval *e) {
  e->finish_begin = tfmm_wtime();
  const tfmm_pipeline_gpu_output out = {.acc = e->acc,
                                        .pot = e->pot,
                                        .on_device =
                                            e->on_device && !e->host_results,
                                        .G = e->cfg->G,
                                        .to_caller = e->on_device,
                                        .caller_G = e->caller_G,
                                        .acc_exp = e->acc_exp,
                                        .pot_exp = e->pot_exp};
  return tfmm_pipeline_gpu_finish(&e->w->gpu, &out, e->err);
}

tfmm_status tfmm_stage_gpu_download(tfmm_eval *e) {
  tfmm_pipeline_gpu *g = &e->w->gpu;
  tfmm_stats *s = e->stats;
  tfmm_pipeline_gpu_times t;
  tfmm_status st = tfmm_pipeline_gpu_download(g, &t, e->err);
  if (st != TFMM_OK)
    return st;
  if (g->first_nonfinite >= 0)
    return tfmm_error_set(e->err, TFMM_ERR_NONFINITE,
                          "body %lld: force is not finite (bodies nearly "
                          "coincident with eps = 0?)",
                          (long long)g->first_nonfinite);
  if (g->first_beyond >= 0)
    return tfmm_error_set(e->err, TFMM_ERR_NONFINITE,
                          "body %lld: its acceleration or potential (G = %g "
                          "times the sums) is beyond the range of double "
                          "precision",
                          (long long)g->first_beyond, e->caller_G);
  /* The stages' device times (CUDA events, milliseconds); the copy of the
   * results is the wait after the last event. */
  s->time[TFMM_PHASE_UPLOAD] = 1e-3 * t.upload;
  s->time[TFMM_PHASE_TREE] = 1e-3 * t.tree;
  s->time[TFMM_PHASE_UPWARD] = 1e-3 * t.upward;
  s->time[TFMM_PHASE_LISTS] = 1e-3 * t.lists;
  s->time[TFMM_PHASE_NEAR] = 1e-3 * t.near;
  s->time[TFMM_PHASE_FAR] = 1e-3 * t.far;
  s->time[TFMM_PHASE_FINISH] = 1e-3 * t.finish;
  s->time[TFMM_PHASE_DOWNLOAD] =
      tfmm_wtime() - e->finish_begin - 1e-3 * t.finish;
  if (s->time[TFMM_PHASE_DOWNLOAD] < 0)
    s->time[TFMM_PHASE_DOWNLOAD] = 0;
  s->near_time = s->near_kernel_time = 1e-3 * t.near;
  s->far_time = 1e-3 * (t.upward + t.far);
  s->overlap = 1e-3 * t.overlap;
  const tfmm_traverse_gpu_lists *l = &g->lists.lists;
  s->interactions = l->near_interactions;
  if (s->near_kernel_time > 0)
    s->near_rate = s->interactions / s->near_kernel_time;
  s->m2l = e->cfg->near_only || e->cfg->method != TFMM_METHOD_FMM
               ? 0
               : (double)l->m2l_count;
  s->m2p = e->cfg->near_only ? 0 : l->m2p_evaluations;
  s->leaf_min = g->leaf_min;
  s->leaf_max = g->leaf_max;
  s->device_bytes = tfmm_pipeline_gpu_bytes(g);
  e->counted = 1;
  return TFMM_OK;
}
