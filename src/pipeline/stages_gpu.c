/* The stages that build the tree and its multipoles on the GPU for the
 * hybrid schedule (kernels/tree_gpu_hybrid.h): the same tree and the same
 * multipoles as tfmm_stage_tree and tfmm_stage_upward, so the stages
 * after them run unchanged; and the far field on the GPU from the CPU's
 * lists, with the results of the CPU's far-field stages. */
#include "pipeline/stages.h"

#include "farfield/expansion.h"

tfmm_status tfmm_stage_tree_gpu(tfmm_eval *e) {
  tfmm_workspace *w = e->w;
  tfmm_stats *s = e->stats;
  tfmm_workspace_clear(w);
  double t0 = tfmm_wtime();
  const tfmm_config *c = e->cfg;
  const tfmm_tree_gpu_params params = {
      .leaf_size = e->leaf_size,
      .max_depth = c->max_depth,
      .timed = 1,
      .box = {c->box_min[0], c->box_min[1], c->box_min[2], c->box_size}};
  tfmm_tree_gpu_hybrid_times times;
  tfmm_status st =
      tfmm_tree_gpu_hybrid_build(&w->gpu_tree, e->cfg->gpu_id, e->n, e->pos,
                                 e->mass, &params, &w->tree, &times, e->err);
  s->time[TFMM_PHASE_TREE] = tfmm_wtime() - t0;
  s->tree_device = TFMM_DEVICE_GPU;
  if (st == TFMM_OK) {
    /* The GPU's stages (CUDA events, milliseconds) in the CPU's slots;
     * the copies in and out are in the phase's time only. */
    const tfmm_tree_gpu_times *g = &w->gpu_tree.tree.times;
    w->tree.times.keys = 1e-3 * g->keys;
    w->tree.times.sort = 1e-3 * g->sort;
    w->tree.times.permute = 1e-3 * g->gather;
    w->tree.times.build = 1e-3 * g->cells;
    w->tree.times.moments = 1e-3 * g->moments;
  }
  return tfmm_stage_tree_built(e, st);
}

/* P2M and M2M on the GPU; the multipoles copied to w->M when copy_back. */
static tfmm_status upward(tfmm_eval *e, int copy_back) {
  tfmm_workspace *w = e->w;
  const size_t size = tfmm_expansion_size(e->set.order);
  if (tfmm_doubles_reserve(&w->M, (size_t)w->tree.ncells * size) != 0)
    return tfmm_error_set(e->err, TFMM_ERR_NO_MEMORY,
                          "no memory for the multipoles of %lld cells",
                          (long long)w->tree.ncells);
  double seconds = 0;
  tfmm_status st = tfmm_tree_gpu_hybrid_upward(
      &w->gpu_tree, e->set.order, copy_back ? w->M.v : NULL, &seconds, e->err);
  e->stats->time[TFMM_PHASE_UPWARD] = seconds;
  return st;
}

tfmm_status tfmm_stage_upward_gpu(tfmm_eval *e) { return upward(e, 1); }

tfmm_status tfmm_stage_upward_gpu_resident(tfmm_eval *e) {
  return upward(e, 0);
}

tfmm_status tfmm_stage_far_gpu(tfmm_eval *e) {
  tfmm_workspace *w = e->w;
  const tfmm_lists *l = &w->lists;
  const tfmm_tree_gpu_hybrid_list m2l = {l->m2l.ntargets, l->m2l.offset,
                                         l->m2l.index},
                                  m2p = {l->m2p.ntargets, l->m2p.offset,
                                         l->m2p.index};
  const int fmm = e->cfg->method == TFMM_METHOD_FMM;
  double seconds = 0;
  tfmm_status st = tfmm_tree_gpu_hybrid_far(
      &w->gpu_tree, e->set.order, fmm ? &m2l : NULL, &m2p, w->far_phi.v,
      w->far_g.v, &seconds, e->err);
  e->stats->time[TFMM_PHASE_FAR] = seconds;
  e->stats->far_device = TFMM_DEVICE_GPU;
  return st;
}
